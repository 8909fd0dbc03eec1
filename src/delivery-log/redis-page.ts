import { InvalidCursorError, type DeliveryEntry, type DeliveryPage } from './delivery-log';

/** One row of XREVRANGE: the stream id and its fields (`e`, the entry's JSON). */
export type StreamRow = [id: string, fields: string[]];

/** Where a page starts in each share's stream: an XREVRANGE `end` argument. */
export interface StreamPositions {
  main: string;
  unauthenticated: string;
}

const CURSOR = /^([0-9]{1,20})-([0-9]{1,20})(u?)$/;
const MAX_U64 = 2n ** 64n - 1n;
/** Stream ids take Redis's clock: a cursor this far past the gateway's clock was never given out. */
export const CURSOR_CLOCK_SKEW_MS = 60_000;

/**
 * The pages' order merges the two streams newest first by stream id, the main share first when
 * both streams have the same id. The cursor is the last entry shown: its id, with a `u` when it
 * came from the unauthenticated share. So the next page starts strictly below it in the main
 * stream, and in the other stream strictly below it too, or at it when it came from the main one.
 */
export function parseCursor(cursor: string, nowMs: number = Date.now()): StreamPositions {
  const match = CURSOR.exec(cursor);
  if (!match) throw new InvalidCursorError();
  const [, ms, seq, share] = match;
  // Redis refuses ids past 64 bits, and `(0-0` (nothing is below it): neither was given out.
  if (BigInt(ms) > MAX_U64 || BigInt(seq) > MAX_U64 || (BigInt(ms) === 0n && BigInt(seq) === 0n)) throw new InvalidCursorError();
  // Nor an id from the future (contract §13.1: out of range is 400, as the memory log answers).
  if (BigInt(ms) > BigInt(Math.floor(nowMs)) + BigInt(CURSOR_CLOCK_SKEW_MS)) throw new InvalidCursorError();
  const id = `${ms}-${seq}`;
  return { main: `(${id}`, unauthenticated: share === 'u' ? `(${id}` : id };
}

/** The first `limit` entries of the two shares' rows (each newest first, up to limit + 1 read). */
export function mergedPage(main: StreamRow[], unauthenticated: StreamRow[], limit: number): DeliveryPage {
  const entries: DeliveryEntry[] = [];
  let m = 0;
  let u = 0;
  let last = '';
  while (m < main.length || u < unauthenticated.length) {
    const fromMain = u >= unauthenticated.length || (m < main.length && compareIds(main[m][0], unauthenticated[u][0]) >= 0);
    if (entries.length === limit) return { entries, nextCursor: last };
    const row = fromMain ? main[m++] : unauthenticated[u++];
    entries.push(JSON.parse(row[1][1]) as DeliveryEntry);
    last = fromMain ? row[0] : `${row[0]}u`;
  }
  return { entries, nextCursor: null };
}

/** Stream ids compared as the pairs of numbers they are. */
function compareIds(a: string, b: string): number {
  const [aMs, aSeq] = a.split('-');
  const [bMs, bSeq] = b.split('-');
  return compareDigits(aMs, bMs) || compareDigits(aSeq, bSeq);
}

function compareDigits(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
