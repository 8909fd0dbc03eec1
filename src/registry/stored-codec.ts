import { LogThrottle } from '../observability/log-throttle';
import type { Logger } from '../observability/logger';
import { SecretUnreadableError } from '../secrets/cipher';
import type { SealedFields } from '../secrets/sealed-fields';

const UNREADABLE_LOG_EVERY_MS = 10_000;

/**
 * A collection's records as stored in Redis: JSON with the secret fields sealed (SealedFields).
 * A secret no key of this process opens is logged (once per id per 10 s) and thrown.
 */
export class StoredCodec<T> {
  private readonly unreadableLogged = new LogThrottle(UNREADABLE_LOG_EVERY_MS, 1000);

  constructor(
    readonly kind: string,
    readonly fields: SealedFields,
    private readonly logger: Logger,
  ) {}

  encode(id: string, value: T): string {
    return JSON.stringify(this.fields.seal(id, value));
  }

  /** Throws SecretUnreadableError (logged) for a secret no key of this process opens. */
  decode(id: string, raw: string): T {
    return this.open(id, JSON.parse(raw));
  }

  /** The parsed stored record, opened; throws SecretUnreadableError (logged). */
  open(id: string, stored: unknown): T {
    try {
      return this.fields.open(id, stored) as T;
    } catch (error) {
      if (error instanceof SecretUnreadableError) this.logUnreadable(id, error);
      throw error;
    }
  }

  /** Once per id per 10 s: a sender retrying against a broken record must not flood the log. */
  private logUnreadable(id: string, error: SecretUnreadableError): void {
    if (!this.unreadableLogged.firstInWindow(id)) return;
    this.logger.error(
      { collection: this.kind, id, kid: error.kid, err: { message: error.message } },
      'registry: a stored secret cannot be opened; set the key that sealed it as SECRETS_KEY or SECRETS_KEY_PREVIOUS, or store the record again',
    );
  }
}
