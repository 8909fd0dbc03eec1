import type { FamilyRefused } from './result';

/**
 * A valid token of someone else on the same platform (another tenant, app, org or project):
 * 403 `sender_not_allowed`, naming who it was for the delivery log when it is short text.
 */
export function senderNotAllowed(sender: unknown): FamilyRefused {
  return { ok: false, reason: 'sender_not_allowed', ...(typeof sender === 'string' && sender.length <= 256 ? { sender } : {}) };
}

/** `aud` is `expected`, or a list holding it. */
export function audienceIs(aud: unknown, expected: string): boolean {
  return aud === expected || (Array.isArray(aud) && aud.includes(expected));
}

/** One kind when every item names the same, else undefined (the caller's default applies). */
export function sharedKind(kinds: readonly unknown[]): string | undefined {
  const first = kinds[0];
  if (typeof first !== 'string' || first.length === 0 || first.length > 128) return undefined;
  return kinds.every((kind) => kind === first) ? first : undefined;
}
