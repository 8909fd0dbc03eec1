/*
 * What every channel mapper produces (contract §3, §4, §11): drafts of chat events, plus the
 * items of a delivery that were read but are not published, so the accept path can count and
 * log them. Mappers are pure; the accept path claims, publishes and completes.
 */

/** The channel names: each channel module adds its own (src/providers/channel-record.ts). */
export type { ChatProvider } from './channel-record';
export type ChatEventType = 'chat.tap' | 'chat.message' | 'chat.status';

export interface ChatEventDraft {
  type: ChatEventType;
  /**
   * The CloudEvent subject and the record key's tail (`<channelId>:<subject>`): the contact's
   * phone, digits only (WhatsApp, Twilio), a business-scoped user id, or a Telegram chat id.
   */
  subject: string;
  /** Names the event for good within its channel: a message id, `<messageId>:<status>`, an update id. */
  dedupeKey: string;
  /** The contract §4 chat `data`. */
  data: Record<string, unknown>;
}

/** An item of a delivery that cannot be read: skipped, counted and logged, never published. */
export interface SkippedItem {
  /** Where in the payload, e.g. `['entry', 0, 'changes', 1, 'value', 'messages', 2]`. */
  path: Array<string | number>;
  /** What is wrong with it; never the item's content. */
  problem: string;
}

export interface ChatMapping {
  events: ChatEventDraft[];
  /** Items that fail their schema. */
  invalid: SkippedItem[];
  /** Items addressed to someone else (another phone_number_id or AccountSid). */
  foreign: number;
  /** Items read and acknowledged that are not chat events (e.g. a Telegram poll update). */
  ignored: number;
}

/** Thrown by a mapper when the delivery as a whole is not of its provider (→ 400). */
export class ChatPayloadError extends Error {
  readonly details: unknown;

  constructor(message: string, details: unknown) {
    super(message);
    this.name = 'ChatPayloadError';
    this.details = details;
  }
}

export function emptyMapping(): ChatMapping {
  return { events: [], invalid: [], foreign: 0, ignored: 0 };
}

export function digitsOnly(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const digits = value.replace(/\D/g, '');
  return digits.length > 0 ? digits : null;
}

/** A zod-style issue list → the first problem, as one line without values. */
export function firstProblem(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): {
  path: Array<string | number>;
  problem: string;
} {
  const [issue] = issues;
  if (!issue) return { path: [], problem: 'invalid' };
  return {
    path: issue.path.map((key) => (typeof key === 'number' ? key : String(key))),
    problem: issue.message,
  };
}
