import type { EventTrace } from '../http/context';
import { randomText } from '../random-pool';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): reading a sender's `traceparent`
 * and `tracestate`, and writing the ones a published event carries. No OpenTelemetry here:
 * this runs on every request whether or not spans are exported.
 */

/** A trace context as it travels: ids in lower-case hex, flags as a byte. */
export interface SpanRef {
  traceId: string;
  /** The id of the span (the sender's, or ours) the next hop is a child of. */
  spanId: string;
  flags: number;
}

/** The sender's context, when it sent a valid one. */
export interface IncomingTrace {
  parent?: SpanRef;
  /** Only with a valid parent; normalised (no blanks, no empty members), dropped when invalid. */
  tracestate?: string;
}

export const SAMPLED = 0x01;
/** The flags this gateway understands (sampled, and level 2's random trace id); other bits are cleared. */
const KNOWN_FLAGS = 0x03;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);
/** version 00: exactly `00-<32 hex>-<16 hex>-<2 hex>`; a later version may append `-...` fields. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const MAX_TRACESTATE_MEMBERS = 32;
/** W3C: a vendor must propagate at least 512 characters; longer values are dropped whole, never cut. */
const MAX_TRACESTATE_LENGTH = 512;
const TRACESTATE_KEY = /^(?:[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})$/;
/** 1-256 printable ASCII characters except `,` and `=`, not ending in a space. */
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/** A `traceparent` value, or undefined when it is not valid (W3C §3.2, including future versions). */
export function parseTraceparent(value: string | undefined): SpanRef | undefined {
  if (value === undefined || value.length < 55) return undefined;
  const match = TRACEPARENT.exec(value);
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff') return undefined;
  // Version 00 has exactly four fields; a later version is read by its first four.
  if (version === '00' && rest !== undefined) return undefined;
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return undefined;
  return { traceId, spanId, flags: parseInt(flags, 16) & KNOWN_FLAGS };
}

/**
 * A `tracestate` value normalised (`k1=v1,k2=v2`), or undefined when absent, empty or invalid:
 * a list the gateway cannot read is not passed on (W3C §3.3: at most 32 members, unique keys).
 */
export function parseTracestate(value: string | undefined): string | undefined {
  if (value === undefined || value.length > MAX_TRACESTATE_LENGTH) return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const raw of value.split(',')) {
    const member = raw.trim();
    if (member === '') continue;
    const eq = member.indexOf('=');
    if (eq <= 0) return undefined;
    const key = member.slice(0, eq);
    const memberValue = member.slice(eq + 1);
    if (!TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(memberValue) || keys.has(key)) return undefined;
    keys.add(key);
    members.push(member);
  }
  if (members.length === 0 || members.length > MAX_TRACESTATE_MEMBERS) return undefined;
  return members.join(',');
}

/**
 * The sender's trace context. Node joins repeated headers with ", ": two `traceparent`
 * headers are invalid (W3C), two `tracestate` headers are one list, as the spec wants.
 */
export function incomingTrace(headers: IncomingHttpHeaders): IncomingTrace {
  const header = headers.traceparent;
  const parent = parseTraceparent(typeof header === 'string' ? header : undefined);
  if (!parent) return {};
  const state = headers.tracestate;
  const tracestate = parseTracestate(typeof state === 'string' ? state : undefined);
  return tracestate === undefined ? { parent } : { parent, tracestate };
}

export function formatTraceparent(ref: SpanRef): string {
  return `00-${ref.traceId}-${ref.spanId}-${(ref.flags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * Without span export: the event continues the sender's trace as it came (the gateway adds
 * no span nobody can see, so the consumer's span hangs under the sender's), or starts a new
 * sampled trace when the sender sent none or an invalid one.
 */
export function passThroughTrace(incoming: IncomingTrace): EventTrace {
  const ref = incoming.parent ?? { traceId: newTraceId(), spanId: newSpanId(), flags: SAMPLED };
  const traceparent = formatTraceparent(ref);
  return incoming.tracestate === undefined ? { traceparent } : { traceparent, tracestate: incoming.tracestate };
}

function randomHex(bytes: number): string {
  for (;;) {
    const hex = randomText(bytes, 'hex');
    // All zeros is invalid; with 8 or 16 random bytes this is astronomically rare.
    if (!/^0+$/.test(hex)) return hex;
  }
}

export function newTraceId(): string {
  return randomHex(16);
}

export function newSpanId(): string {
  return randomHex(8);
}
