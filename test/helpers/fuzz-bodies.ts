/**
 * Seeded generators of hostile request bodies for the parser fuzz test: multipart (boundaries,
 * part headers, missing names, odd filenames, charsets, truncation, duplicated headers), JSON,
 * form-urlencoded and text, each then mutated at the byte level. Deterministic: the same seed
 * gives the same body, so a failure names its seed and can be replayed.
 */

/** mulberry32: a tiny 32-bit PRNG, plenty for picking test inputs. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  /** `n` bytes: up to 256 random ones, repeated (cheap at any size). */
  bytes(n: number): Buffer {
    const seed = Buffer.alloc(Math.min(n, 256));
    for (let i = 0; i < seed.length; i++) seed[i] = this.int(256);
    return n <= seed.length ? seed : Buffer.alloc(n, seed);
  }
  /** A size that is usually small and sometimes large (up to `max`). */
  size(max: number): number {
    return this.chance(0.85) ? this.int(64) : this.int(max);
  }
}

export interface FuzzBody {
  contentType?: string;
  body: Buffer;
  /** One line for a failure message. */
  what: string;
}

const NAMES = ['a', 'x[]', 'doc', 'count', 'flag', 'obj', '__proto__', 'constructor', 'prototype', '', ' ', 'ünï', 'a"b', 'a;b', 'payload', 'x'.repeat(300)];
const FILENAMES = [
  'report.pdf', '../../etc/passwd', '..\\..\\boot.ini', 'invoice\u202Efdp.exe', 'a\u0000b.txt', 'r\u00e9sum\u00e9.txt', '', '.', '..', 'x'.repeat(1000),
  'a\r\nX-Injected: 1', '\u2066x\u2069.js', 'emoji\u{1F600}.png', 'C:\\Users\\x.doc',
];
const CHARSETS = ['utf-8', 'UTF-8', 'utf-16le', 'iso-8859-1', 'latin1', 'bogus-charset', 'utf-7', 'ascii', 'windows-1252', '"utf-8"', ''];
const MIME = ['text/plain', 'application/octet-stream', 'application/json', 'image/png', 'text/plain; charset=', '', 'x/', '/', 'a'.repeat(200)];

function text(rng: Rng, max = 2000): string {
  const n = rng.size(max);
  const kinds = [
    () => rng.bytes(n).toString('latin1'),
    () => 'x'.repeat(n),
    () => Array.from({ length: Math.min(n, 64) }, () => String.fromCodePoint(rng.pick([0x41, 0xe9, 0x202e, 0x1f600, 0xfffd, 0x00, 0x0d, 0x0a, 0x22, 0x5c, 0x26, 0x3d, 0x25]))).join('').repeat(Math.ceil(n / 64)),
    () => rng.pick(['{"type":"url","data":"s3://other/key"}', '{"type":"file","data":"data:text/plain;base64,YQ=="}', '{"type":"file","data":"http://169.254.169.254/"}', '12', 'true', '[1,2]', '{"__proto__":{"x":1}}']),
  ];
  return rng.pick(kinds)();
}

function dispositionFor(rng: Rng): string {
  const params: string[] = [];
  if (rng.chance(0.85)) params.push(rng.chance(0.9) ? `name="${rng.pick(NAMES)}"` : rng.pick(['name=', 'name', 'name=unquoted', 'NAME="a"', `name="a"; name="b"`]));
  if (rng.chance(0.35)) {
    const filename = rng.pick(FILENAMES);
    params.push(
      rng.pick([
        `filename="${filename}"`,
        `filename*=UTF-8''${encodeURIComponent(filename)}`,
        `filename*=bogus''${encodeURIComponent(filename)}`,
        `filename*=UTF-8''%E2%80%AE%ZZ`,
        'filename=',
        `filename="${filename}`,
      ]),
    );
  }
  const type = rng.chance(0.93) ? 'form-data' : rng.pick(['attachment', 'inline', '', 'FORM-DATA']);
  return [type, ...params].join('; ');
}

function multipart(rng: Rng): FuzzBody {
  const boundary = rng.pick(['b', 'fuzz-boundary', '----WebKitFormBoundary7MA4YWxkTrZu0gW', 'x'.repeat(70), 'x'.repeat(200), 'a b', '"quoted"', '--', '']);
  const lines: Buffer[] = [];
  const parts = rng.int(6);
  for (let i = 0; i < parts; i++) {
    const headers: string[] = [];
    if (rng.chance(0.95)) headers.push(`Content-Disposition: ${dispositionFor(rng)}`);
    if (rng.chance(0.1)) headers.push(`Content-Disposition: ${dispositionFor(rng)}`);
    if (rng.chance(0.4)) headers.push(`Content-Type: ${rng.pick(MIME)}${rng.chance(0.5) ? `; charset=${rng.pick(CHARSETS)}` : ''}`);
    if (rng.chance(0.1)) headers.push(`Content-Transfer-Encoding: ${rng.pick(['base64', 'quoted-printable', '8bit', 'binary', 'x'])}`);
    if (rng.chance(0.05)) headers.push('X-Header-Without-Colon');
    const data = rng.chance(0.5) ? Buffer.from(text(rng, 80_000)) : rng.bytes(rng.size(100_000));
    lines.push(Buffer.from(`--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n`), data, Buffer.from('\r\n'));
  }
  if (rng.chance(0.85)) lines.push(Buffer.from(`--${boundary}--\r\n`));
  const declared = rng.chance(0.9) ? boundary : rng.pick(['other', '']);
  const contentType = rng.pick([
    `multipart/form-data; boundary=${declared}`,
    `multipart/form-data; boundary="${declared}"`,
    `multipart/form-data;boundary=${declared}; charset=${rng.pick(CHARSETS)}`,
    'multipart/form-data',
    `Multipart/Form-Data; BOUNDARY=${declared}`,
    `multipart/mixed; boundary=${declared}`,
  ]);
  return { contentType, body: Buffer.concat(lines), what: `multipart (${parts} parts, boundary ${JSON.stringify(boundary.slice(0, 20))})` };
}

function jsonValue(rng: Rng, depth: number): unknown {
  const scalar = () => rng.pick<unknown>([null, true, 1, -0.5, 1e308, text(rng, 300), '', { type: 'url', data: 's3://b/k' }]);
  if (depth > 4 || rng.chance(0.4)) return scalar();
  if (rng.chance(0.5)) return Array.from({ length: rng.int(5) }, () => jsonValue(rng, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = rng.int(5); i > 0; i--) out[rng.pick(NAMES)] = jsonValue(rng, depth + 1);
  return out;
}

function json(rng: Rng): FuzzBody {
  const shapes = [
    () => JSON.stringify(jsonValue(rng, 0)),
    () => '['.repeat(rng.int(400)) + ']'.repeat(rng.int(400)),
    () => `{"a":${'{"a":'.repeat(rng.int(300))}1${'}'.repeat(rng.int(300))}}`,
    () => '{"\\u005f_proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}',
    () => JSON.stringify({ doc: rng.pick([{ type: 'url', data: 's3://other-tenant/k' }, { type: 'file', data: `data:text/plain;base64,${rng.bytes(rng.size(4000)).toString('base64')}` }, { type: 'file', data: 'file:///etc/passwd' }, 'x', [1]]), count: text(rng, 20), obj: text(rng, 50) }),
    () => `{"s":"${'\\'.repeat(rng.int(5))}${text(rng, 100_000)}"}`,
    () => '\ufeff{"bom":true}',
    () => `${'1'.repeat(rng.int(400))}e99999`,
  ];
  const contentType = rng.pick(['application/json', `application/json; charset=${rng.pick(CHARSETS)}`, 'application/vnd.api+json', 'application/json;', 'APPLICATION/JSON']);
  return { contentType, body: Buffer.from(rng.pick(shapes)()), what: 'json' };
}

function formText(rng: Rng): string {
  const pairs: string[] = [];
  for (let i = rng.chance(0.05) ? 300 : rng.int(8); i > 0; i--) {
    const name = rng.chance(0.8) ? encodeURIComponent(rng.pick(NAMES)) : rng.pick(['%zz', '%C3', '%', '', '=', '&', 'a%00b']);
    const value = rng.chance(0.7) ? encodeURIComponent(text(rng, 20_000)) : rng.pick(['%E2%80%AE', '%ff%fe', '%', '%%%', '+++', '%7B%22type%22%3A%22url%22%2C%22data%22%3A%22s3%3A%2F%2Fo%2Fk%22%7D']);
    pairs.push(rng.chance(0.9) ? `${name}=${value}` : name);
  }
  if (rng.chance(0.1)) return `payload=${encodeURIComponent(JSON.stringify(jsonValue(rng, 0)))}`;
  return pairs.join(rng.chance(0.9) ? '&' : '&&');
}

function form(rng: Rng): FuzzBody {
  const contentType = rng.pick(['application/x-www-form-urlencoded', `application/x-www-form-urlencoded; charset=${rng.pick(CHARSETS)}`]);
  return { contentType, body: Buffer.from(formText(rng)), what: 'form' };
}

function other(rng: Rng): FuzzBody {
  const contentType = rng.pick<string | undefined>([
    'text/plain', `text/plain; charset=${rng.pick(CHARSETS)}`, undefined, '', 'application/xml', 'multipart/', ';', 'text/plain; charset="', 'a'.repeat(2000),
  ]);
  return { contentType, body: rng.chance(0.5) ? Buffer.from(text(rng, 50_000)) : rng.bytes(rng.size(50_000)), what: 'text/other' };
}

/** Byte-level damage: truncation, flipped bytes, a repeated slice, stray CR/LF or boundaries. */
export function mutate(rng: Rng, body: Buffer): Buffer {
  let out = body;
  for (let round = rng.int(3); round > 0; round--) {
    const at = out.length === 0 ? 0 : rng.int(out.length);
    switch (rng.int(6)) {
      case 0:
        out = out.subarray(0, at);
        break;
      case 1:
        out = Buffer.from(out);
        for (let i = rng.int(8); i > 0 && out.length > 0; i--) out[rng.int(out.length)] = rng.int(256);
        break;
      case 2:
        out = Buffer.concat([out.subarray(0, at), out.subarray(at, at + rng.int(200)), out.subarray(at)]);
        break;
      case 3:
        out = Buffer.concat([out.subarray(0, at), Buffer.from(rng.pick(['\r\n', '\r\n\r\n', '--', '\r\n--b\r\n', '\0', '\xff', '"', '\\'])), out.subarray(at)]);
        break;
      case 4:
        out = Buffer.concat([out.subarray(0, at), Buffer.from([0xc3]), out.subarray(at)]); // a lone UTF-8 lead byte
        break;
      default:
        break; // left as generated
    }
  }
  return out;
}

/** One hostile body for a webhook trigger. */
export function webhookBody(rng: Rng): FuzzBody {
  const generated = rng.pick([multipart, multipart, json, form, other])(rng);
  return rng.chance(0.5) ? { ...generated, body: mutate(rng, generated.body), what: `${generated.what}, mutated` } : generated;
}

/** A Twilio-shaped form body: a fixture's parameters, changed and extended. */
export function twilioForm(rng: Rng, fixtures: readonly string[]): string {
  const params = new URLSearchParams(rng.pick(fixtures));
  for (let i = rng.int(4); i > 0; i--) {
    const name = rng.pick(['Body', 'From', 'To', 'NumMedia', 'MediaUrl0', 'MediaContentType0', 'ButtonPayload', 'ButtonText', 'MessageStatus', 'AccountSid', 'MessageSid', 'ErrorCode', 'Latitude', ...NAMES]);
    const value = rng.pick([text(rng, 5000), '', '99999999999', '-1', 'whatsapp:', 'whatsapp:+1', 'AC' + 'f'.repeat(32), 'http://169.254.169.254/', 'NaN']);
    if (rng.chance(0.3)) params.append(name, value);
    else if (rng.chance(0.2)) params.delete(name);
    else params.set(name, value);
  }
  return params.toString();
}
