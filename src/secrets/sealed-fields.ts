import { isSealed, SecretUnreadableError, type SecretsCipher } from './cipher';

type Leaf = (value: unknown, context: string) => unknown;

/**
 * Seals and opens the secret fields of one collection's records (see SECRET_FIELDS).
 * Without a cipher, values are stored as they are, and a sealed value found in Redis fails
 * loudly instead of being used. Plain values stored before SECRETS_KEY was set still open.
 */
export class SealedFields {
  constructor(
    private readonly kind: string,
    private readonly paths: readonly string[],
    private readonly cipher?: SecretsCipher,
  ) {}

  /** The record as it is written to Redis. */
  seal(id: string, record: unknown): unknown {
    const cipher = this.cipher;
    if (!cipher) return record;
    return this.mapLeaves(id, record, (value, context) => (typeof value === 'string' ? cipher.seal(value, context) : value));
  }

  /** The record as read from Redis, with every secret in clear. */
  open(id: string, stored: unknown): unknown {
    return this.mapLeaves(id, stored, (value, context) => {
      if (!isSealed(value)) return value;
      if (!this.cipher) {
        throw new SecretUnreadableError(`secret at ${context} is sealed under key ${value.kid}, but SECRETS_KEY is not set`, value.kid);
      }
      return this.cipher.open(value, context);
    });
  }

  /** True when a secret of the stored record is in clear or sealed under a key other than the current one. */
  needsReseal(stored: unknown): boolean {
    const cipher = this.cipher;
    if (!cipher) return false;
    let stale = false;
    this.mapLeaves('', stored, (value) => {
      if (typeof value === 'string' || (isSealed(value) && value.kid !== cipher.currentKid)) stale = true;
      return value;
    });
    return stale;
  }

  private mapLeaves(id: string, record: unknown, leaf: Leaf): unknown {
    let out = record;
    for (const path of this.paths) {
      const context = `${this.kind}/${id}/${path}`;
      out = mapAt(out, path.split('.'), (value) => leaf(value, context));
    }
    return out;
  }
}

/** A copy of `node` with `fn` applied at the path; nodes off the path are shared, not copied. */
function mapAt(node: unknown, segments: string[], fn: (value: unknown) => unknown): unknown {
  if (segments.length === 0) return fn(node);
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
  const [head, ...rest] = segments;
  const each = head.endsWith('[]');
  const name = each ? head.slice(0, -2) : head;
  if (!Object.hasOwn(node, name)) return node;
  const child = (node as Record<string, unknown>)[name];
  if (each && !Array.isArray(child)) return node;
  const mapped = each ? (child as unknown[]).map((element) => mapAt(element, rest, fn)) : mapAt(child, rest, fn);
  return { ...node, [name]: mapped };
}
