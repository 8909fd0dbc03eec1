/**
 * busboy hands its listeners only the parts whose Content-Disposition is `form-data`: a part
 * without one, or with another type (`attachment`), is skipped in silence, so a file sent that
 * way would vanish from a 2xx. RFC 7578 §4.2 makes such a part malformed (contract §2.5: 400).
 * This counts a body's parts as busboy delimits them, with the same search (streamsearch, on
 * `\r\n--<boundary>`, the body read as if a CRLF preceded it), so that the parser can compare
 * it with the parts its listeners heard.
 */
import { multipartBoundary } from './multipart-boundary';

interface StreamSearch {
  push(chunk: Buffer, position?: number): number;
}
type StreamSearchCallback = (isMatch: boolean, data: Buffer | undefined, start: number, end: number) => void;
// busboy's own search (streamsearch is its dependency, and ours), which ships no type declarations.
const StreamSearchClass = require('streamsearch') as new (needle: string, callback: StreamSearchCallback) => StreamSearch;

const CRLF = Buffer.from('\r\n');
const CR = 13;
const LF = 10;
const DASH = 45;

/** Where the search stands just after a delimiter: a CRLF opens a part, `--` ends the body. */
const enum After {
  Nothing,
  Delimiter,
  DelimiterCr,
  DelimiterDash,
  End,
}

export class PartCounter {
  /** Parts opened so far (a delimiter followed by CRLF, before the closing `--`). */
  parts = 0;
  private after = After.Nothing;
  private readonly search: StreamSearch;

  private constructor(boundary: string) {
    this.search = new StreamSearchClass(`\r\n--${boundary}`, (isMatch, data, start, end) => {
      if (data) for (let i = start; i < end && this.after !== After.Nothing && this.after !== After.End; i++) this.step(data[i]);
      if (isMatch && this.after !== After.End) this.after = After.Delimiter;
    });
    this.search.push(CRLF);
  }

  /** A counter for a multipart Content-Type, or undefined without a boundary (busboy refuses those itself). */
  static for(contentType: string): PartCounter | undefined {
    const boundary = multipartBoundary(contentType);
    return boundary ? new PartCounter(boundary) : undefined;
  }

  push(chunk: Buffer): void {
    if (this.after !== After.End) this.search.push(chunk);
  }

  private step(byte: number): void {
    if (this.after === After.Delimiter) {
      this.after = byte === CR ? After.DelimiterCr : byte === DASH ? After.DelimiterDash : After.Nothing;
    } else if (this.after === After.DelimiterCr) {
      if (byte === LF) this.parts++;
      this.after = After.Nothing;
    } else if (this.after === After.DelimiterDash) {
      this.after = byte === DASH ? After.End : After.Nothing;
    }
  }
}

/** A part busboy skipped: refused as RFC 7578 §4.2 refuses it. */
export const PART_WITHOUT_FORM_DATA =
  'a part has no Content-Disposition: form-data (RFC 7578 §4.2): every part must be form-data with a non-empty name parameter';
