/**
 * Parts of a name (header, query parameter, setting) that mark its value as a credential.
 * Deliberately wide: a name that merely looks like one (`idempotency-key`, `author`) is
 * treated as one too; withholding a harmless value costs less than publishing a secret.
 */
const CREDENTIAL_PARTS = /auth|key|token|secret|sig|hmac|passw|pwd|session|cookie|credential/i;
/** Short names that are credentials on their own, compared whole. */
const CREDENTIAL_NAMES = new Set(['pass', 'pw', 'jwt']);

export function isCredentialName(name: string): boolean {
  return CREDENTIAL_PARTS.test(name) || CREDENTIAL_NAMES.has(name.toLowerCase());
}
