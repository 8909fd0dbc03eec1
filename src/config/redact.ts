import { isCredentialName } from '../secrets/names';
import { placeholderIn } from '../secrets/placeholder';
import { redactUrl, urlCredentials } from '../secrets/url';

/** A setting whose whole value is a secret: named like a credential, and not a file path. */
export function isSecretSetting(name: string): boolean {
  return isCredentialName(name) && !name.endsWith('_FILE') && !SWITCHES.has(name);
}

/** Settings named after keys that are on/off switches, not keys (contract §10.1 F). */
const SWITCHES = new Set(['KEY_FETCH']);

/**
 * Settings as they may be logged. Driven by names and values, not by a list, so a setting
 * added later is covered: a secret setting's text becomes `[set]`; in every other text
 * (also inside arrays) the credentials a URL can carry (user-info, `password=`-style query
 * parameters) are masked.
 */
export function redactConfig(config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const redacted: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(config)) {
    redacted[name] = typeof value === 'string' && isSecretSetting(name) ? '[set]' : maskUrls(value);
  }
  return redacted;
}

function maskUrls(value: unknown): unknown {
  if (typeof value === 'string') return redactUrl(value);
  if (Array.isArray(value)) return value.map(maskUrls);
  return value;
}

/** One problem line per secret setting (or URL credential) left at a well-known placeholder. */
export function placeholderProblems(config: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(config)) {
    if (typeof value !== 'string') continue;
    const candidates = isSecretSetting(name) ? [value] : urlCredentials(value);
    for (const candidate of candidates) {
      const match = placeholderIn(candidate);
      if (match) {
        const what = isSecretSetting(name) ? 'is' : 'carries a credential that is';
        problems.push(`${name}: ${what} a well-known placeholder (${match}); set a random value, e.g. openssl rand -hex 32`);
        break;
      }
    }
  }
  return problems;
}
