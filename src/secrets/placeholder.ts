/**
 * Values copied from an example or left at a shipped default: anyone who has read the same
 * example knows them. Compared on the value lower-cased with everything but letters and digits
 * removed, so `REPLACE-ME-with-a-long-random-token`, `change_me` and `<your-token>` all match.
 */
const PLACEHOLDER_PARTS = [
  'replaceme',
  'changeme',
  'changethis',
  'placeholder',
  'example',
  'yourtoken',
  'yoursecret',
  'yourpassword',
  'yourkey',
  'insertyour',
  'putyour',
  'setme',
  'fillme',
];
const PLACEHOLDER_VALUES = new Set([
  'secret',
  'password',
  'passw0rd',
  'token',
  'admin',
  'changeit',
  'default',
  'test',
  'dummy',
  'sample',
  'letmein',
]);

/** The well-known placeholder `value` matches, or undefined for a value that is not one. */
export function placeholderIn(value: string): string | undefined {
  const normalized = value.toLowerCase().replace(/[^a-z0-9]/g, '');
  const part = PLACEHOLDER_PARTS.find((p) => normalized.includes(p));
  if (part) return part;
  if (PLACEHOLDER_VALUES.has(normalized)) return normalized;
  if (normalized === '') return 'no letters or digits';
  if (/^(.)\1{3,}$/.test(normalized)) return 'one character repeated';
  return undefined;
}
