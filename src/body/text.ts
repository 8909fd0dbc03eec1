import { TextDecoder } from 'node:util';
import { Refusal } from '../outcomes/refusal';
import { ForeignFileValue, parseJsonSafely } from './safe-json';

/** A body's bytes as text in its charset; 415-style refusals for an unknown charset, 400 for bytes that are not in it. */
export function decodeText(raw: Buffer, charset = 'utf-8'): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: true, ignoreBOM: false });
  } catch {
    throw new Refusal('unsupported_charset', `unsupported charset ${JSON.stringify(charset.slice(0, 40))}`);
  }
  try {
    return decoder.decode(raw);
  } catch {
    throw new Refusal('invalid_encoding', `the body is not valid ${charset}`);
  }
}

/**
 * A body's JSON. With `foreignFileValue`, a `{ type: "url", data }` object in it is refused with
 * what that returns (contract §2.5); without, it is a value like any other.
 */
export function parseJsonText(text: string, foreignFileValue?: (path: string) => Error): unknown {
  try {
    return parseJsonSafely(text, { forbidUrlFileValues: foreignFileValue !== undefined });
  } catch (error) {
    if (error instanceof ForeignFileValue && foreignFileValue) throw foreignFileValue(error.path);
    throw new Refusal('invalid_json', 'malformed JSON body', { problem: (error as Error).message.slice(0, 200) });
  }
}

/** A UTF-8 JSON body as bytes → its value; 400 for invalid UTF-8 or malformed JSON. */
export function parseJsonBytes(raw: Buffer): unknown {
  return parseJsonText(decodeText(raw));
}
