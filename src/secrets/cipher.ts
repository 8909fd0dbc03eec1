import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { StoreUnavailableError } from '../store-error';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A secret as stored at rest: `{ "$sealed": "aes-256-gcm", kid, iv, tag, ct }` (base64 parts). */
export interface SealedSecret {
  $sealed: typeof ALGORITHM;
  /** Which key sealed it: the first 8 bytes of the key's SHA-256, hex. */
  kid: string;
  iv: string;
  tag: string;
  ct: string;
}

export function isSealed(value: unknown): value is SealedSecret {
  return typeof value === 'object' && value !== null && (value as { $sealed?: unknown }).$sealed !== undefined;
}

/**
 * A stored secret that cannot be opened: sealed under a key this process does not have, or
 * altered. Never used as a secret; the trigger or channel that holds it answers 503.
 */
export class SecretUnreadableError extends StoreUnavailableError {
  constructor(
    message: string,
    readonly kid: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'SecretUnreadableError';
  }
}

export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/**
 * AES-256-GCM with a current key (seals and opens) and optionally a previous one (opens only,
 * during a rotation). Each value gets a random 96-bit IV; `context` (where the value lives,
 * e.g. `channels/wa-1/appSecret`) is authenticated, so a sealed value copied into another
 * record or field does not open.
 */
export class SecretsCipher {
  private readonly keys = new Map<string, Buffer>();
  readonly currentKid: string;

  constructor(
    private readonly current: Buffer,
    previous?: Buffer,
  ) {
    if (current.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes');
    this.currentKid = keyId(current);
    this.keys.set(this.currentKid, current);
    if (previous) {
      if (previous.length !== 32) throw new Error('SECRETS_KEY_PREVIOUS must be 32 bytes');
      this.keys.set(keyId(previous), previous);
    }
  }

  seal(plain: string, context: string): SealedSecret {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.current, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return {
      $sealed: ALGORITHM,
      kid: this.currentKid,
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      ct: ct.toString('base64'),
    };
  }

  /** The secret in clear; throws SecretUnreadableError when no key of ours opens it. */
  open(sealed: SealedSecret, context: string): string {
    const kid = typeof sealed.kid === 'string' ? sealed.kid : '?';
    if (sealed.$sealed !== ALGORITHM) {
      throw new SecretUnreadableError(`secret at ${context} is sealed with ${String(sealed.$sealed)}, which this gateway cannot open`, kid);
    }
    const key = this.keys.get(kid);
    if (!key) {
      throw new SecretUnreadableError(
        `secret at ${context} is sealed under key ${kid}, which is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS`,
        kid,
      );
    }
    try {
      const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(sealed.iv, 'base64'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]).toString('utf8');
    } catch (error) {
      throw new SecretUnreadableError(`secret at ${context} under key ${kid} does not authenticate (altered or moved)`, kid, {
        cause: error,
      });
    }
  }
}

/** The cipher the settings ask for: none without SECRETS_KEY. Keys are validated by the config schema. */
export function cipherFromSettings(settings: { SECRETS_KEY?: string; SECRETS_KEY_PREVIOUS?: string }): SecretsCipher | undefined {
  if (!settings.SECRETS_KEY) return undefined;
  const previous = settings.SECRETS_KEY_PREVIOUS ? Buffer.from(settings.SECRETS_KEY_PREVIOUS, 'base64') : undefined;
  return new SecretsCipher(Buffer.from(settings.SECRETS_KEY, 'base64'), previous);
}
