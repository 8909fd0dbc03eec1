/**
 * Scenario 4: thousands of malformed and hostile requests against one gateway (embedded mode),
 * each written byte for byte on its own connection, in a shuffled (seeded) order, 24 at a time,
 * while a few slow senders dribble bytes and /healthz is probed.
 *
 * Then the attacks of issue 9 (attacks.ts): held unsigned and forged 3 MB bodies, unsigned
 * floods and wrong tokens against a tenant's quota, trickling bodies, token guessing on the
 * admin API, while two other tenants keep sending.
 *
 * Pass: every request is answered with a 4xx (well-formed `__proto__` payloads may be
 * accepted: they are published sanitised, which is checked in the sink), or, for malformed
 * framing and slow senders, the connection is closed by Node's HTTP parser or a timeout
 * (counted separately); zero 5xx; the other tenants answered 2xx during the attacks and the
 * attacked one's quota whole; the process alive, and its live heap and RSS (after full collections) back near their start.
 */
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import twilio from 'twilio';
import { signWhatsAppBody } from '../helpers/meta-signature';
import type { RunningGateway } from '../helpers/server';
import { ATTACK_ADMIN_TOKEN, judgeAttacks, registerVictims, runAttacks } from './attacks';
import {
  APP_SECRET,
  BEARER,
  CHANNEL_ID,
  gatewayWith,
  PHONE_NUMBER_ID,
  PROVIDER_PATHS,
  PROVIDER_SECRET,
  SECURED_PATH,
  TELEGRAM_CHANNEL_ID,
  TELEGRAM_SECRET,
  TRIGGER_PATH,
  TWILIO_ACCOUNT_SID,
  TWILIO_AUTH_TOKEN,
  TWILIO_CHANNEL_ID,
  TYPED_PATH,
  VERIFY_TOKEN,
  workDir,
} from './fixtures';
import { COLLECTABLE, liveMemory } from './live-memory';
import { Cleanup, log, percentile, rawExchange, Report, rssMiB, sampleRss, send, sleep, type RawOutcome } from './lib';

const CONCURRENCY = 24;
/** Live memory (heap and external, after a full collection) the flood may leave behind: bounded stores, caches, the delivery log. */
const LIVE_ALLOWANCE_MIB = 32;
/**
 * RSS also holds what the allocator keeps after the peak (about 40 MiB here, more under load);
 * this bound catches native memory that grows with the number of requests.
 */
const RSS_ALLOWANCE_MIB = 128;
const SLOW_DRIBBLE_MS = 200;
const SLOW_BYTES = 35; // about 7 s of dribbling each
const WARM_UP_GOOD = 200;
/** Where the flood's failed authentications come from (the gateway trusts X-Forwarded-For from loopback). */
const GUESSERS = { signature: '203.0.113.200', handshake: '203.0.113.201', token: '203.0.113.202' };

/** What counts as a correct answer. */
type Expect =
  /** a 4xx status */
  | 'client-error'
  /** exactly 401: a forged, stale or malformed provider signature */
  | 'unauthorized'
  /** a 4xx, or the connection closed without an answer (Node's parser refused the framing) */
  | 'client-error-or-closed'
  /** a well-formed hostile payload: 2xx (published sanitised) or 4xx */
  | 'sanitised'
  /** a slow sender: a 4xx, closed by the server, or still open when the client gives up */
  | 'slow';

type Chunk = Buffer | string | { pauseMs: number };

interface Case {
  category: string;
  label: string;
  chunks: Chunk[];
  expect: Expect;
  timeoutMs?: number;
}

interface Result {
  c: Case;
  outcome: RawOutcome;
  ok: boolean;
}

// ---------------------------------------------------------------------------------------------
// Building requests byte for byte

/** A seeded PRNG (mulberry32): the same requests in the same order on every run. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (max: number) => Math.floor(next() * max),
    pick<T>(items: readonly T[]): T {
      return items[Math.floor(next() * items.length)];
    },
    bytes(n: number): Buffer {
      const out = Buffer.alloc(n);
      for (let i = 0; i < n; i++) out[i] = Math.floor(next() * 256);
      return out;
    },
  };
}

interface RequestSpec {
  method?: string;
  path?: string;
  headers?: Array<[string, string]>;
  body?: Buffer | string;
  /** Send the body chunked, in pieces of this many bytes. */
  chunked?: number;
  /** Content-Length to declare instead of the body's (null: none). */
  contentLength?: number | null;
  version?: string;
}

function head(spec: RequestSpec, body: Buffer): string {
  const lines = [`${spec.method ?? 'POST'} ${spec.path ?? `/api/webhooks/trigger/${TRIGGER_PATH}`} ${spec.version ?? 'HTTP/1.1'}`];
  const headers = spec.headers ?? [];
  const has = (name: string) => headers.some(([n]) => n.toLowerCase() === name);
  if (!has('host')) lines.push('Host: 127.0.0.1');
  if (!has('connection')) lines.push('Connection: close');
  for (const [name, value] of headers) lines.push(`${name}: ${value}`);
  if (spec.chunked) lines.push('Transfer-Encoding: chunked');
  else if (spec.contentLength !== null && (body.length > 0 || spec.contentLength !== undefined)) {
    lines.push(`Content-Length: ${spec.contentLength ?? body.length}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

function request(spec: RequestSpec): Chunk[] {
  const body = typeof spec.body === 'string' ? Buffer.from(spec.body, 'utf8') : (spec.body ?? Buffer.alloc(0));
  const top = Buffer.from(head(spec, body), 'latin1');
  if (!spec.chunked) return [Buffer.concat([top, body])];
  const chunks: Chunk[] = [top];
  for (let at = 0; at < body.length; at += spec.chunked) {
    const piece = body.subarray(at, at + spec.chunked);
    chunks.push(Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]));
  }
  chunks.push('0\r\n\r\n');
  return chunks;
}

const json = (contentType = 'application/json'): Array<[string, string]> => [['Content-Type', contentType]];

function multipart(boundary: string, parts: Array<{ name: string; filename?: string; mime?: string; data: Buffer | string }>): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    let disposition = `Content-Disposition: form-data; name="${part.name}"`;
    if (part.filename) disposition += `; filename="${part.filename}"`;
    const type = part.mime ? `\r\nContent-Type: ${part.mime}` : '';
    pieces.push(Buffer.from(`--${boundary}\r\n${disposition}${type}\r\n\r\n`), Buffer.from(part.data), Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

function whatsappPayload(n: number): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'WABA',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550000000', phone_number_id: PHONE_NUMBER_ID },
              contacts: [{ profile: { name: 'Rel' }, wa_id: '15551230000' }],
              messages: [{ from: '15551230000', id: `wamid.rel-${n}`, timestamp: '1700000000', type: 'text', text: { body: `hello ${n}` } }],
            },
          },
        ],
      },
    ],
  });
}

// ---------------------------------------------------------------------------------------------
// The generator

export function generateCases(): Case[] {
  const rnd = prng(0x5eed);
  const cases: Case[] = [];
  const add = (category: string, label: string, chunks: Chunk[], expect: Expect = 'client-error', timeoutMs?: number) =>
    cases.push({ category, label, chunks, expect, timeoutMs });
  const wa = `/api/channels/whatsapp/${CHANNEL_ID}`;
  const signed = (body: Buffer | string): Array<[string, string]> => [
    ['Content-Type', 'application/json'],
    ['X-Hub-Signature-256', signWhatsAppBody(Buffer.from(body), APP_SECRET)],
  ];

  // Broken JSON: valid documents mutated until JSON.parse refuses them.
  const docs = [
    JSON.stringify({ event: 'order.created', id: 'o-1', data: { amount: 12.5, items: [1, 2, 3], note: 'ünïcode ✓' } }),
    JSON.stringify([1, 2, { a: null, b: [true, false] }]),
    JSON.stringify({ nested: { deep: { x: [true, false, null], s: 'a"b\\c' } }, n: -1.5e-3 }),
    JSON.stringify({ text: 'line\nbreak', list: ['a', 'b'], empty: {} }),
  ];
  const mutate = (text: string): string => {
    switch (rnd.int(9)) {
      case 0:
        return text.slice(0, 1 + rnd.int(text.length - 1));
      case 1: {
        const at = rnd.int(text.length);
        return text.slice(0, at) + rnd.pick(['{', '}', '[', ']', ':', ',', '"', "'", '\\', 'x']) + text.slice(at + 1);
      }
      case 2:
        return text.replace(/[}\]]$/, (end) => `,${end}`);
      case 3:
        return text.replace(/"/g, "'");
      case 4:
        return `${text}${rnd.pick([' x', '{"b":2}', ',', ']', 'null'])}`;
      case 5:
        return text.replace(/:\s*[^,}\]]+/, rnd.pick([':NaN', ':Infinity', ':undefined', ':0x10', ':01', ':.5', ':+1']));
      case 6:
        return `// comment\n${text}`;
      case 7:
        return text.replace(/"([a-z]+)":/, '$1:');
      default: {
        const at = 1 + rnd.int(text.length - 2);
        return `${text.slice(0, at)}"\u0001\u0007"${text.slice(at)}`;
      }
    }
  };
  const broken = (): string => {
    for (;;) {
      const text = mutate(rnd.pick(docs));
      if (text.trim().length === 0) continue;
      try {
        JSON.parse(text);
      } catch {
        return text;
      }
    }
  };
  const jsonTypes = ['application/json', 'application/json; charset=utf-8', 'application/cloudevents+json', 'application/vnd.api+json'];
  for (let i = 0; i < 1000; i++) add('broken JSON', 'trigger', request({ headers: json(rnd.pick(jsonTypes)), body: broken() }));
  for (let i = 0; i < 100; i++) add('broken JSON', 'form payload', request({
    headers: json('application/x-www-form-urlencoded'),
    body: `payload=${encodeURIComponent(`{${broken()}`)}`,
  }));
  for (let i = 0; i < 100; i++) {
    const body = broken();
    add('broken JSON', 'whatsapp, signed', request({ path: wa, headers: signed(body), body }));
  }

  // Wrong and missing content types.
  const wrongTypes = [
    'application/xml', 'text/xml', 'text/html', 'image/png', 'application/octet-stream', 'garbage', '', ';',
    'application/jsonx', 'application/json-seq', 'multipart/mixed; boundary=x', 'text/csv', '*/*', 'application/*',
    'text/*', 'application/x-www-form-urlencoded2', 'application/json; charset=bogus-charset', 'text/plain; charset=x-unknown',
  ];
  for (let i = 0; i < 540; i++) {
    const type = rnd.pick(wrongTypes);
    add('content type', type === '' ? 'empty' : type.split(';')[0], request({ headers: json(type), body: '{"a":1}' }));
  }
  for (let i = 0; i < 60; i++) add('content type', 'missing', request({ headers: [], body: '{"a":1}' }));

  // Truncated and malformed multipart.
  for (let i = 0; i < 500; i++) {
    const boundary = `----rel${rnd.int(1e9)}`;
    const body = multipart(boundary, [
      { name: 'a', data: 'value' },
      { name: 'f', filename: 'x.bin', mime: 'application/octet-stream', data: rnd.bytes(256 + rnd.int(4096)) },
      { name: 'b[]', data: 'two' },
    ]);
    const end = body.lastIndexOf(Buffer.from(`\r\n--${boundary}--`));
    const cut = 1 + rnd.int(end - 1);
    add('multipart', 'truncated', request({ headers: json(`multipart/form-data; boundary=${boundary}`), body: body.subarray(0, cut) }));
  }
  const sample = multipart('xyz', [{ name: 'a', data: 'v' }]);
  for (let i = 0; i < 25; i++) add('multipart', 'no boundary', request({ headers: json('multipart/form-data'), body: sample }));
  for (let i = 0; i < 25; i++) add('multipart', 'empty boundary', request({ headers: json('multipart/form-data; boundary='), body: sample }));
  for (let i = 0; i < 25; i++) add('multipart', 'other boundary', request({ headers: json('multipart/form-data; boundary=abc'), body: sample }));
  for (let i = 0; i < 25; i++) add('multipart', 'no blank line after part headers', request({
    headers: json('multipart/form-data; boundary=xyz'),
    body: '--xyz\r\nContent-Disposition: form-data; name="a"\r\nvalue\r\n--xyz--\r\n',
  }));

  // Huge header counts and sizes.
  const junk = (count: number, size: number): Array<[string, string]> =>
    Array.from({ length: count }, (_, k) => [`X-Junk-${k}`, 'v'.repeat(size)] as [string, string]);
  for (let i = 0; i < 100; i++) add('headers', '500 headers (12 KB)', request({ headers: [...json(), ...junk(500, 12)], body: broken() }));
  for (let i = 0; i < 100; i++) add('headers', 'one 20 KB header', request({ headers: [...json(), ['X-Big', 'b'.repeat(20_000)]], body: '{}' }));
  for (let i = 0; i < 50; i++) add('headers', '3000 headers (40 KB)', request({ headers: [...json(), ...junk(3000, 2)], body: '{}' }));
  for (let i = 0; i < 50; i++) add('headers', '400 Authorization headers', request({
    path: `/api/webhooks/trigger/${SECURED_PATH}`,
    headers: [...json(), ['X-Forwarded-For', GUESSERS.token], ...Array.from({ length: 400 }, () => ['Authorization', 'Bearer wrong-token'] as [string, string])],
    body: '{}',
  }));

  // Deep nesting (100k levels).
  const DEPTH = 100_000;
  const deepArrays = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
  const deepObjects = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH);
  const deepProto = '['.repeat(DEPTH) + '{"__proto__":{"polluted":"yes"}}' + ']'.repeat(DEPTH);
  for (let i = 0; i < 10; i++) {
    add('deep nesting', 'arrays, balanced', request({ headers: json(), body: deepArrays }));
    add('deep nesting', 'arrays, never closed', request({ headers: json(), body: '['.repeat(DEPTH) }));
    add('deep nesting', 'objects, balanced', request({ headers: json(), body: deepObjects }));
    add('deep nesting', 'arrays around __proto__', request({ headers: json(), body: deepProto }));
    add('deep nesting', 'form payload', request({
      headers: json('application/x-www-form-urlencoded'),
      body: `payload=${'%5B'.repeat(DEPTH)}${'%5D'.repeat(DEPTH)}`,
    }));
    add('deep nesting', 'declared object field (form)', request({
      path: `/api/webhooks/trigger/${TYPED_PATH}`,
      headers: json('application/x-www-form-urlencoded'),
      body: `meta=${'%7B%22a%22%3A'.repeat(DEPTH / 10)}1${'%7D'.repeat(DEPTH / 10)}`,
    }));
    add('deep nesting', 'whatsapp, signed', request({ path: wa, headers: signed(deepArrays), body: deepArrays }));
  }

  // __proto__ and constructor.prototype: well-formed ones are published sanitised, broken ones refused.
  const protoBodies = [
    '{"__proto__":{"polluted":"yes"},"a":1}',
    '{"constructor":{"prototype":{"polluted":"yes"}},"a":1}',
    '{"\\u005f_proto__":{"polluted":"yes"},"a":1}',
    '{"a":{"__proto__":{"polluted":"yes"}},"b":[{"__proto__":{"polluted":"yes"}}]}',
    '[{"__proto__":{"polluted":"yes"}}]',
  ];
  for (let i = 0; i < 100; i++) add('__proto__', 'JSON, well-formed', request({ headers: json(), body: rnd.pick(protoBodies) }), 'sanitised');
  for (let i = 0; i < 25; i++) add('__proto__', 'form fields', request({
    headers: json('application/x-www-form-urlencoded'),
    body: '__proto__=x&constructor=y&prototype=z&__proto__[polluted]=yes&a=1',
  }), 'sanitised');
  for (let i = 0; i < 25; i++) add('__proto__', 'multipart parts', request({
    headers: json('multipart/form-data; boundary=pp'),
    body: multipart('pp', [{ name: '__proto__', data: 'x' }, { name: 'constructor', data: 'y' }, { name: 'a', data: '1' }]),
  }), 'sanitised');
  for (let i = 0; i < 25; i++) add('__proto__', 'header named __proto__', request({
    headers: [...json(), ['__proto__', 'polluted'], ['constructor', 'x']],
    body: '{"a":1}',
  }), 'sanitised');
  for (let i = 0; i < 100; i++) add('__proto__', 'JSON, broken', request({ headers: json(), body: rnd.pick(protoBodies).slice(0, -1) }));
  for (let i = 0; i < 25; i++) add('__proto__', 'declared number polluted', request({
    path: `/api/webhooks/trigger/${TYPED_PATH}`,
    headers: json(),
    body: '{"__proto__":{"amount":1},"amount":"not a number"}',
  }));

  // Invalid UTF-8.
  const badBytes = [[0xff], [0xc3, 0x28], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xf4, 0x90, 0x80, 0x80]];
  const invalid = (before: string, after: string) => Buffer.concat([Buffer.from(before), Buffer.from(rnd.pick(badBytes)), Buffer.from(after)]);
  for (let i = 0; i < 150; i++) add('invalid UTF-8', 'JSON', request({ headers: json(), body: invalid('{"a":"', '"}') }));
  for (let i = 0; i < 100; i++) add('invalid UTF-8', 'text', request({ headers: json('text/plain'), body: invalid('hello ', ' world') }));
  for (let i = 0; i < 100; i++) add('invalid UTF-8', 'form', request({ headers: json('application/x-www-form-urlencoded'), body: invalid('a=', '&b=2') }));
  for (let i = 0; i < 50; i++) add('invalid UTF-8', 'UTF-16 with an odd byte count', request({ headers: json('application/json; charset=utf-16le'), body: '{"a":1}' }));
  for (let i = 0; i < 50; i++) {
    const body = invalid('{"object":"', '"}');
    add('invalid UTF-8', 'whatsapp, signed', request({ path: wa, headers: signed(body), body }));
  }
  for (let i = 0; i < 50; i++) add('invalid UTF-8', 'header bytes + broken JSON', [
    Buffer.concat([
      Buffer.from(`POST /api/webhooks/trigger/${TRIGGER_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nX-Odd: `),
      Buffer.from(rnd.pick(badBytes)),
      Buffer.from('\r\nContent-Length: 5\r\n\r\n{"a":'),
    ]),
  ]);

  // Bad WhatsApp signatures, unknown channels, bad handshakes. Each kind of failed
  // authentication comes from its own address: past AUTH_FAILURE_LIMIT that address gets 429,
  // and the correctly signed hostile bodies above (from 127.0.0.1) must still reach the parser.
  const hex = (n: number) => rnd.bytes(n).toString('hex');
  for (let i = 0; i < 400; i++) {
    const body = whatsappPayload(i);
    const valid = signWhatsAppBody(Buffer.from(body), APP_SECRET);
    const bad = rnd.pick([
      undefined,
      '',
      `sha256=${hex(32)}`,
      signWhatsAppBody(Buffer.from(body), 'another-secret'),
      signWhatsAppBody(Buffer.from(`${body} `), APP_SECRET),
      `sha1=${hex(20)}`,
      valid.slice(0, -1),
      `${valid}aa`,
      valid.replace('sha256=', 'SHA256='),
      `sha256=${'z'.repeat(64)}`,
      `sha256=${hex(32)}, ${valid}`.slice(0, 200),
    ]);
    const headers: Array<[string, string]> = [['Content-Type', 'application/json'], ['X-Forwarded-For', GUESSERS.signature]];
    if (bad !== undefined) headers.push(['X-Hub-Signature-256', bad]);
    add('WhatsApp signature', bad === undefined ? 'missing' : 'wrong', request({ path: wa, headers, body }));
  }
  for (let i = 0; i < 30; i++) add('WhatsApp signature', 'unknown channel', request({ path: '/api/channels/whatsapp/nope', headers: signed('{}'), body: '{}' }));
  const handshake = [
    `hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=123`,
    `hub.mode=subscribe&hub.challenge=123`,
    `hub.mode=unsubscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=123`,
    `hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=%3Cscript%3Ealert(1)%3C%2Fscript%3E`,
    `hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=${'9'.repeat(300)}`,
    `hub.mode=subscribe&hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`,
  ];
  for (let i = 0; i < 70; i++) add('WhatsApp signature', 'bad handshake', request({ method: 'GET', path: `${wa}?${rnd.pick(handshake)}`, headers: [['X-Forwarded-For', GUESSERS.handshake]] }));

  // Forged and malformed Telegram updates: 401 for a missing or wrong secret (checked before
  // the body is read), 400 for a right secret on a body that is not an update.
  const tg = `/api/channels/telegram/${TELEGRAM_CHANNEL_ID}`;
  const update = (n: number) => JSON.stringify({ update_id: 900_000 + n, message: { message_id: n, date: 1700000000, chat: { id: 42, type: 'private' }, text: `hi ${n}` } });
  const tgSecrets: Array<string | undefined> = [
    undefined,
    '',
    'wrong-secret',
    TELEGRAM_SECRET.toUpperCase(),
    // (Not `${secret} `: HTTP drops a header value's surrounding whitespace, so that is the secret.)
    `-${TELEGRAM_SECRET}`,
    TELEGRAM_SECRET.slice(0, -1),
    `${TELEGRAM_SECRET}${TELEGRAM_SECRET}`,
    's'.repeat(8_000),
  ];
  for (let i = 0; i < 200; i++) {
    const secret = rnd.pick(tgSecrets);
    const headers: Array<[string, string]> = [['Content-Type', 'application/json']];
    if (secret !== undefined) headers.push(['X-Telegram-Bot-Api-Secret-Token', secret]);
    add('Telegram secret', secret === undefined ? 'missing' : 'wrong', request({ path: tg, headers, body: update(i) }));
  }
  const tgSigned: Array<[string, string]> = [['Content-Type', 'application/json'], ['X-Telegram-Bot-Api-Secret-Token', TELEGRAM_SECRET]];
  for (let i = 0; i < 60; i++) add('Telegram body', 'broken JSON, right secret', request({ path: tg, headers: tgSigned, body: broken() }));
  const notUpdates = ['{}', '[]', 'null', '{"update_id":"1"}', '{"update_id":-5}', '{"message":{"text":"x"}}', '"text"'];
  for (let i = 0; i < 40; i++) add('Telegram body', 'not an update, right secret', request({ path: tg, headers: tgSigned, body: rnd.pick(notUpdates) }));
  for (let i = 0; i < 20; i++) add('Telegram body', 'invalid UTF-8, right secret', request({ path: tg, headers: tgSigned, body: invalid('{"update_id":1,"message":{"text":"', '"}}') }));
  for (let i = 0; i < 10; i++) add('Telegram body', 'deep nesting, right secret', request({ path: tg, headers: tgSigned, body: deepArrays }));
  for (let i = 0; i < 10; i++) add('Telegram body', 'unknown channel', request({ path: '/api/channels/telegram/nope', headers: tgSigned, body: update(i) }));

  // Forged and malformed Twilio callbacks: 401 for a missing or wrong signature, 400/413/415 for
  // a signed body the gateway cannot read. Twilio signs the URL it called: here Host 127.0.0.1.
  const tw = `/api/channels/twilio/${TWILIO_CHANNEL_ID}`;
  const twUrl = (path: string) => `http://127.0.0.1${path}`;
  const inbound = (n: number) =>
    new URLSearchParams({ AccountSid: TWILIO_ACCOUNT_SID, MessageSid: `SM${hex(16)}`, From: '+14155550100', To: '+15005550006', Body: `hello ${n}`, NumMedia: '0' }).toString();
  const sign = (url: string, form: string, token = TWILIO_AUTH_TOKEN) => {
    const params: Record<string, string[]> = {};
    for (const [name, value] of new URLSearchParams(form)) (params[name] ??= []).push(value);
    return twilio.getExpectedTwilioSignature(token, url, params);
  };
  const form = (signature: string | undefined, contentType = 'application/x-www-form-urlencoded'): Array<[string, string]> =>
    signature === undefined ? [['Content-Type', contentType]] : [['Content-Type', contentType], ['X-Twilio-Signature', signature]];
  for (let i = 0; i < 240; i++) {
    const body = inbound(i);
    const valid = sign(twUrl(tw), body);
    const bad = rnd.pick([
      undefined,
      '',
      rnd.bytes(20).toString('base64'),
      sign(twUrl(tw), body, 'another-auth-token'),
      sign(`https://127.0.0.1${tw}`, body),
      sign(twUrl(`${tw}?x=1`), body),
      sign(twUrl(tw), body.replace('hello', 'HELLO')),
      valid.slice(0, -2),
      `${valid}${valid}`,
      valid.toLowerCase(),
      'x'.repeat(6_000),
    ]);
    add('Twilio signature', bad === undefined ? 'missing' : 'wrong', request({ path: tw, headers: form(bad), body }));
  }
  const jsonBody = '{"AccountSid":"AC0","MessageSid":"SM1","From":"+1","Body":"x"}';
  const hashed = (body: string) => `${tw}?bodySHA256=${createHash('sha256').update(body).digest('hex')}`;
  for (let i = 0; i < 30; i++) add('Twilio signature', 'bodySHA256 of another body', request({
    path: hashed(jsonBody),
    headers: [['Content-Type', 'application/json'], ['X-Twilio-Signature', sign(twUrl(hashed(jsonBody)), '')]],
    body: jsonBody.replace('"x"', '"y"'),
  }));
  for (let i = 0; i < 30; i++) {
    const body = broken();
    add('Twilio body', 'broken JSON under a valid bodySHA256', request({
      path: hashed(body),
      headers: [['Content-Type', 'application/json'], ['X-Twilio-Signature', sign(twUrl(hashed(body)), '')]],
      body,
    }));
  }
  for (let i = 0; i < 20; i++) add('Twilio body', 'JSON array under a valid bodySHA256', request({
    path: hashed('[1,2]'),
    headers: [['Content-Type', 'application/json'], ['X-Twilio-Signature', sign(twUrl(hashed('[1,2]')), '')]],
    body: '[1,2]',
  }));
  for (let i = 0; i < 30; i++) add('Twilio body', 'invalid UTF-8 form', request({ path: tw, headers: form(rnd.bytes(20).toString('base64')), body: invalid('Body=', '&From=%2B1') }));
  for (let i = 0; i < 20; i++) add('Twilio body', 'malformed form, forged', request({ path: tw, headers: form('Zm9yZ2Vk'), body: rnd.pick(['%ZZ=%', '=&=&==', 'a=%E0%A4%A', '&&&&', `${'%'.repeat(500)}`]) }));
  for (let i = 0; i < 20; i++) add('Twilio body', 'text/plain, signed', request({ path: tw, headers: form(sign(twUrl(tw), ''), 'text/plain'), body: 'hello' }));
  for (let i = 0; i < 10; i++) {
    const many = Array.from({ length: 300 }, (_, k) => `P${k}=v`).join('&');
    add('Twilio body', '300 parameters, signed', request({ path: tw, headers: form(sign(twUrl(tw), many)), body: many }));
  }
  for (let i = 0; i < 10; i++) add('Twilio body', 'unknown channel', request({ path: '/api/channels/twilio/nope', headers: form('x'), body: inbound(i) }));
  for (let i = 0; i < 10; i++) add('Twilio body', 'GET', request({ method: 'GET', path: tw }));

  // Wrong methods.
  const known = ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'M-SEARCH', 'PURGE'];
  for (let i = 0; i < 220; i++) {
    const method = rnd.pick(known);
    add('method', method, request({ method, path: rnd.pick([`/api/webhooks/trigger/${TRIGGER_PATH}`, `/api/webhooks/trigger/nope`]), headers: json(), body: '{}' }));
  }
  for (let i = 0; i < 40; i++) add('method', 'PUT/DELETE on a channel', request({ method: rnd.pick(['PUT', 'DELETE', 'PATCH']), path: wa, headers: json(), body: '{}' }));
  for (let i = 0; i < 30; i++) add('method', 'unknown method', request({ method: rnd.pick(['FOO', 'BREW', 'POSTX', 'post']), headers: json(), body: '{}' }), 'client-error-or-closed');
  for (let i = 0; i < 10; i++) add('method', 'CONNECT', ['CONNECT 127.0.0.1:6379 HTTP/1.1\r\nHost: 127.0.0.1:6379\r\n\r\n'], 'client-error-or-closed');

  // Path traversal and odd paths.
  const paths = [
    '/api/webhooks/trigger/../../etc/passwd',
    '/api/webhooks/trigger/..%2F..%2Fetc%2Fpasswd',
    '/api/webhooks/trigger/%2e%2e',
    `/api/webhooks/trigger/${TRIGGER_PATH}%00`,
    '/api/webhooks/trigger/%ZZ',
    '/api/webhooks/trigger/%',
    `/api/webhooks/trigger/${'a'.repeat(129)}`,
    `/api/webhooks/trigger/${'a'.repeat(10_000)}`,
    `//api/webhooks/trigger/${TRIGGER_PATH}`,
    `/API/WEBHOOKS/TRIGGER/${TRIGGER_PATH.toUpperCase()}`,
    `/api/webhooks/trigger/${TRIGGER_PATH}/..`,
    `/api/webhooks/trigger/${TRIGGER_PATH}/extra`,
    '/api/channels/whatsapp/../../admin/triggers',
    '/admin/triggers/x',
    '/admin/triggers?limit=-1&cursor=%00',
    '/metrics/../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/api\\webhooks\\trigger\\open',
    '/api/webhooks/trigger/',
    '/api/webhooks/trigger',
    '/api/webhooks/trigger/%E2%80%AE',
    '/.env',
    '/healthz/../admin',
  ];
  for (let i = 0; i < 400; i++) {
    const path = rnd.pick(paths);
    add('odd path', path.length > 60 ? `${path.slice(0, 40)}…(${path.length})` : path, request({ path, headers: json(), body: broken() }));
  }
  for (let i = 0; i < 30; i++) add('odd path', '20 KB path', request({ path: `/api/webhooks/trigger/${'a'.repeat(20_000)}`, headers: json(), body: '{}' }));
  for (let i = 0; i < 30; i++) add('odd path', 'query pollution', request({
    path: `/api/webhooks/trigger/${TRIGGER_PATH}?__proto__[polluted]=1&constructor[prototype][x]=1&a=%ZZ`,
    headers: json(),
    body: broken(),
  }));
  for (let i = 0; i < 20; i++) add('odd path', 'absolute-form target', request({ path: `http://evil.example/api/webhooks/trigger/${TRIGGER_PATH}`, headers: json(), body: broken() }));
  for (let i = 0; i < 10; i++) add('odd path', 'asterisk', request({ method: 'OPTIONS', path: '*' }));
  for (let i = 0; i < 10; i++) add('odd path', 'raw non-ASCII bytes', [
    Buffer.concat([Buffer.from('POST /api/webhooks/trigger/'), Buffer.from([0xc3, 0xa9, 0xff]), Buffer.from(' HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')]),
  ], 'client-error-or-closed');

  // Oversize bodies: declared, chunked, and past the multipart and form limits.
  const big = (n: number) => Buffer.alloc(n, 0x61);
  for (let i = 0; i < 15; i++) add('oversize', 'declared 2 MB, 64 KB sent', [
    Buffer.from(head({ headers: json() }, Buffer.alloc(0)).replace('\r\n\r\n', '\r\nContent-Length: 2000000\r\n\r\n'), 'latin1'),
    big(65_536),
  ], 'client-error', 10_000);
  for (let i = 0; i < 15; i++) add('oversize', 'chunked 1.5 MB', request({ headers: json(), body: Buffer.concat([Buffer.from('{"a":"'), big(1_500_000), Buffer.from('"}')]), chunked: 65_536 }), 'client-error', 10_000);
  for (let i = 0; i < 10; i++) add('oversize', 'chunked 4 MB to a channel', request({ path: wa, headers: signed('{}'), body: big(4_000_000), chunked: 65_536 }), 'client-error', 10_000);
  for (let i = 0; i < 10; i++) add('oversize', 'multipart file over MAX_FILE_BYTES', request({
    headers: json('multipart/form-data; boundary=big'),
    body: multipart('big', [{ name: 'f', filename: 'big.bin', mime: 'application/octet-stream', data: big(600_000) }]),
  }));
  for (let i = 0; i < 5; i++) add('oversize', 'form with 300 fields', request({
    headers: json('application/x-www-form-urlencoded'),
    body: Array.from({ length: 300 }, (_, k) => `f${k}=v`).join('&'),
  }));
  for (let i = 0; i < 5; i++) add('oversize', 'multipart with 12 files', request({
    headers: json('multipart/form-data; boundary=many'),
    body: multipart('many', Array.from({ length: 12 }, (_, k) => ({ name: `f${k}`, filename: `${k}.txt`, mime: 'text/plain', data: 'x' }))),
  }));

  // Authentication failures.
  const auths: Array<Array<[string, string]>> = [
    [],
    [['Authorization', 'Bearer wrong-token']],
    [['Authorization', `Basic ${Buffer.from(`u:${BEARER}`).toString('base64')}`]],
    [['Authorization', `Bearer ${BEARER}x`]],
    [['Authorization', `Bearer ${BEARER.slice(0, -1)}`]],
    [['Authorization', 'Bearer']],
    [['X-Api-Key', BEARER]],
    [['Authorization', `Bearer ${'t'.repeat(10_000)}`]],
    [['Authorization', `Bearer ${BEARER} ${BEARER}`]],
  ];
  for (let i = 0; i < 300; i++) add('auth', 'wrong or missing token', request({ path: `/api/webhooks/trigger/${SECURED_PATH}`, headers: [...json(), ['X-Forwarded-For', GUESSERS.token], ...rnd.pick(auths)], body: '{"a":1}' }));

  // Provider signatures (contract §10): forged, stale and malformed, each answered 401. Each
  // forgery comes from its own address: past AUTH_FAILURE_LIMIT failures from one address on
  // one trigger, the throttle answers 429 before the signature is looked at.
  let forger = 0;
  for (const [label, spec] of providerSignatureCases()) {
    for (let i = 0; i < 20; i++) {
      const from = `198.51.100.${(forger++ % 250) + 1}`;
      add('provider signature', label, request({ ...spec, headers: [...(spec.headers ?? []), ['X-Forwarded-For', from]] }), 'unauthorized');
    }
  }

  // Malformed framing (Node's parser answers 400 and closes, or just closes).
  const top = `POST /api/webhooks/trigger/${TRIGGER_PATH}`;
  const framings: Array<[string, string]> = [
    ['bad HTTP version', `${top} HTTP/9.9\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}`],
    ['header without colon', `${top} HTTP/1.1\r\nHost x\r\nContent-Length: 2\r\n\r\n{}`],
    ['Content-Length and Transfer-Encoding', `${top} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
    ['two Content-Lengths', `${top} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{} `],
    ['negative Content-Length', `${top} HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}`],
    ['non-numeric Content-Length', `${top} HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n{}`],
    ['bad chunk size', `${top} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`],
    ['chunk size overflow', `${top} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n{}\r\n0\r\n\r\n`],
    ['NUL in a header value', `${top} HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\nContent-Length: 2\r\n\r\n{}`],
    ['space in a header name', `${top} HTTP/1.1\r\nHost: x\r\nBad Header: x\r\nContent-Length: 2\r\n\r\n{}`],
    ['space before the colon', `${top} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\nContent-Length: 2\r\n\r\n{}`],
    ['obsolete line folding', `${top} HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  folded\r\nContent-Type: application/json\r\nContent-Length: 1\r\n\r\n{`],
    ['bare LF line ends', `${top} HTTP/1.1\nHost: x\nConnection: close\nContent-Type: application/json\nContent-Length: 1\n\n{`],
    ['TLS ClientHello', '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003'],
    ['body longer than Content-Length', `${top} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{"a":1}GARBAGE\r\n\r\n`],
    ['HTTP/1.0 without Host', `${top} HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 1\r\n\r\n{`],
    ['Transfer-Encoding gzip only', `${top} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n{}`],
    ['Transfer-Encoding chunked, identity', `${top} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
    ['chunk without its CRLF', `${top} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n`],
    ['request line only spaces', '      \r\n\r\n'],
  ];
  for (let i = 0; i < 300; i++) {
    const [label, raw] = rnd.pick(framings);
    add('framing', label, [Buffer.from(raw, 'latin1')], 'client-error-or-closed');
  }
  return cases;
}

/** For each signed-sender trigger: a forged signature, a correctly signed stale one, and malformed or missing headers. */
function providerSignatureCases(): Array<[string, RequestSpec]> {
  const body = '{"id":"evt_rel","type":"invoice.paid","event_id":"Ev1","update_id":1,"message":{}}';
  const hex = (key: string, data: string) => createHmac('sha256', key).update(data).digest('hex');
  const stale = Math.floor(Date.now() / 1000) - 3600;
  const at = (path: string) => `/api/webhooks/trigger/${path}`;
  const with_ = (path: string, headers: Array<[string, string]>): RequestSpec => ({ path: at(path), headers: [...json(), ...headers], body });
  const p = PROVIDER_PATHS;
  return [
    ['github forged', with_(p.github, [['X-Hub-Signature-256', `sha256=${hex('not-the-secret', body)}`], ['X-GitHub-Event', 'push']])],
    ['github malformed', with_(p.github, [['X-Hub-Signature-256', 'sha256=zz'], ['X-GitHub-Event', 'push']])],
    ['github missing', with_(p.github, [['X-GitHub-Event', 'push']])],
    ['stripe forged', with_(p.stripe, [['Stripe-Signature', `t=${Math.floor(Date.now() / 1000)},v1=${hex('whsec_forged', body)}`]])],
    ['stripe stale', with_(p.stripe, [['Stripe-Signature', `t=${stale},v1=${hex(PROVIDER_SECRET, `${stale}.${body}`)}`]])],
    ['stripe malformed', with_(p.stripe, [['Stripe-Signature', 't=soon,v1=' + 'x'.repeat(5000)]])],
    ['slack stale', with_(p.slack, [['X-Slack-Request-Timestamp', String(stale)], ['X-Slack-Signature', `v0=${hex(PROVIDER_SECRET, `v0:${stale}:${body}`)}`]])],
    ['slack future', with_(p.slack, [['X-Slack-Request-Timestamp', String(stale + 7200)], ['X-Slack-Signature', `v0=${hex(PROVIDER_SECRET, `v0:${stale + 7200}:${body}`)}`]])],
    ['standard-webhooks forged', with_(p['standard-webhooks'], [['webhook-id', 'msg_1'], ['webhook-timestamp', String(Math.floor(Date.now() / 1000))], ['webhook-signature', 'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=']])],
    ['standard-webhooks unknown versions only', with_(p['standard-webhooks'], [['webhook-id', 'msg_1'], ['webhook-timestamp', String(Math.floor(Date.now() / 1000))], ['webhook-signature', 'v1a,abc v2,def']])],
    ['telegram wrong token', with_(p.telegram, [['X-Telegram-Bot-Api-Secret-Token', `${PROVIDER_SECRET}x`]])],
  ];
}

/** Senders that dribble one byte every 200 ms: four finish a broken request, two never end their headers. */
function slowSenders(): Case[] {
  const cases: Case[] = [];
  const body = '{"slow": tru';
  const full = `POST /api/webhooks/trigger/${TRIGGER_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nX-Slow: ${'s'.repeat(SLOW_BYTES - body.length - 4)}\r\n\r\n${body}`;
  const dribble = (text: string): Chunk[] => text.split('').flatMap((ch) => [ch, { pauseMs: SLOW_DRIBBLE_MS }]);
  const split = full.length - SLOW_BYTES;
  for (let i = 0; i < 4; i++) {
    cases.push({ category: 'slow sender', label: 'dribbles a broken request', chunks: [full.slice(0, split), ...dribble(full.slice(split))], expect: 'slow', timeoutMs: 15_000 });
  }
  const endless = `POST /api/webhooks/trigger/${TRIGGER_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slowloris: ${'l'.repeat(SLOW_BYTES)}`;
  for (let i = 0; i < 2; i++) {
    cases.push({
      category: 'slow sender',
      label: 'never ends its headers',
      chunks: [endless.slice(0, -SLOW_BYTES), ...dribble(endless.slice(-SLOW_BYTES))],
      expect: 'slow',
      timeoutMs: SLOW_BYTES * SLOW_DRIBBLE_MS + 1000,
    });
  }
  return cases;
}

function judge(c: Case, o: RawOutcome): boolean {
  const clientError = o.status !== undefined && o.status >= 400 && o.status < 500;
  switch (c.expect) {
    case 'client-error':
      return clientError;
    case 'unauthorized':
      return o.status === 401;
    case 'client-error-or-closed':
      return clientError || (o.status === undefined && o.closed);
    case 'sanitised':
      return clientError || (o.status !== undefined && o.status >= 200 && o.status < 300);
    case 'slow':
      return clientError || (o.status === undefined && (o.closed || o.timedOut));
  }
}

function shuffle<T>(items: T[], seed: number): T[] {
  const rnd = prng(seed);
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = rnd.int(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const mib = (bytes: number) => bytes / 1048576;

async function exchange(gateway: RunningGateway, c: Case): Promise<Result> {
  const outcome = await rawExchange(gateway.port, c.chunks, c.timeoutMs ?? 5000);
  return { c, outcome, ok: judge(c, outcome) };
}

export async function badInputScenario(): Promise<Report> {
  const report = new Report('4. bad input');
  const cleanup = new Cleanup();
  try {
    const { dir, triggersFile } = workDir(cleanup, 'bad');
    const eventsDir = join(dir, 'events');
    const gateway = await gatewayWith(
      cleanup,
      {
      EVENTS_DIR: eventsDir,
      TRIGGERS_FILE: triggersFile,
      ADMIN_TOKEN: ATTACK_ADMIN_TOKEN,
      // Attackers and tenants are told apart by X-Forwarded-For (attacks.ts).
      TRUST_PROXY: 'loopback',
      // The throttle the attacks' checks count on (20 failures, then 429).
      AUTH_FAILURE_LIMIT: '20/60',
      // The product's timeouts (the fixture shortens them for the other scenarios).
      SHUTDOWN_GRACE_MS: '25000',
      REQUEST_TIMEOUT_MS: '15000',
      HEADERS_TIMEOUT_MS: '10000',
      },
      COLLECTABLE,
    );
    const pid = gateway.child.pid!;
    await registerVictims(gateway, 0);
    await registerVictims(gateway, 1);

    // Warm up: good requests, then one request of each kind, then one round of the attacks. V8 grows its heap for the first
    // multi-megabyte bodies and keeps it (heap used goes back down, RSS does not); the start
    // RSS is taken after that, so the check is about growth with the number of requests.
    const coldRss = rssMiB(pid)!;
    for (let i = 0; i < WARM_UP_GOOD; i++) {
      await send(gateway.url, `/api/webhooks/trigger/${TRIGGER_PATH}`, { headers: { 'content-type': 'application/json' }, body: `{"warm":${i}}` });
    }
    const cases = shuffle(generateCases(), 42);
    const kinds = new Map<string, Case>();
    for (const c of cases) if (!kinds.has(`${c.category}/${c.label}`)) kinds.set(`${c.category}/${c.label}`, c);
    // Twice, at the flood's concurrency: the allocator's high-water mark depends on how many
    // large bodies are in memory at once.
    for (let round = 0; round < 2; round++) {
      const warm = [...kinds.values()];
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let c = warm.shift(); c; c = warm.shift()) await exchange(gateway, c);
        }),
      );
    }
    // And one round of the attacks: they hold the most memory at once.
    log('  warm-up round of the attacks of issue 9');
    await runAttacks(gateway, 0);
    // Memory is compared right after full collections: what is live, not what V8 has yet to collect.
    const start = await liveMemory(gateway);
    const rss = sampleRss(pid);

    const slow = slowSenders();
    log(`  ${cases.length} hostile requests, ${CONCURRENCY} at a time, plus ${slow.length} slow senders`);

    // Probes /healthz while the slow senders dribble.
    const probes: number[] = [];
    let probing = true;
    // Held up would mean probes that fail (5 s bound) or wait for the slow senders to finish.
    let slowDone = false;
    let answeredWhileSlow = 0;
    const prober = (async () => {
      while (probing && probes.length < 200) {
        const probe = await send(gateway.url, '/healthz', { method: 'GET', timeoutMs: 5000 });
        probes.push(probe.status === 200 ? probe.ms : Infinity);
        if (probe.status === 200 && !slowDone) answeredWhileSlow++;
        await sleep(200);
      }
    })();
    const slowResults = Promise.all(slow.map((c) => exchange(gateway, c)));
    void slowResults.then(() => (slowDone = true));

    const started = performance.now();
    const results: Result[] = [];
    const queue = cases.slice();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let c = queue.shift(); c; c = queue.shift()) results.push(await exchange(gateway, c));
      }),
    );
    const floodMs = performance.now() - started;
    log(`  flood done in ${(floodMs / 1000).toFixed(1)} s; waiting for the slow senders`);
    results.push(...(await slowResults));
    log('  the attacks of issue 9 (held, forged and trickling bodies, floods, guessing) while two tenants send');
    const attacks = await runAttacks(gateway, 1);
    probing = false;
    await prober;
    const peakRss = rss.stop();

    const end = await liveMemory(gateway);
    const health = await send(gateway.url, '/healthz', { method: 'GET', timeoutMs: 5000 });
    const alive = gateway.child.exitCode === null && gateway.child.signalCode === null;

    // Per-category numbers.
    const categories = new Map<string, Result[]>();
    for (const r of results) {
      let list = categories.get(r.c.category);
      if (!list) categories.set(r.c.category, (list = []));
      list.push(r);
    }
    const statusText = (o: RawOutcome) => (o.status !== undefined ? String(o.status) : o.timedOut ? 'open@bound' : 'closed');
    log('  category            sent   answers');
    for (const [category, list] of categories) {
      const counts = new Map<string, number>();
      for (const r of list) counts.set(statusText(r.outcome), (counts.get(statusText(r.outcome)) ?? 0) + 1);
      const answers = [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}×${v}`).join(' ');
      log(`  ${category.padEnd(19)} ${String(list.length).padStart(5)}  ${answers}  p99 ${Math.round(percentile(list.map((r) => r.outcome.ms), 99))} ms`);
    }

    const serverErrors = results.filter((r) => r.outcome.status !== undefined && r.outcome.status >= 500);
    const attackServerErrors = attacks.statuses.filter((status) => status >= 500);
    const wrong = results.filter((r) => !r.ok);
    const fourxx = results.filter((r) => r.outcome.status !== undefined && r.outcome.status >= 400 && r.outcome.status < 500).length;
    const closed = results.filter((r) => r.outcome.status === undefined && r.outcome.closed).length;
    const openAtBound = results.filter((r) => r.outcome.status === undefined && r.outcome.timedOut).length;
    const accepted = results.filter((r) => r.outcome.status !== undefined && r.outcome.status < 300).length;
    const metricsText = (await send(gateway.adminUrl, '/metrics', { method: 'GET' })).body;
    const metric5xx = metricsText
      .split('\n')
      .filter((line) => line.startsWith('igw_http_requests_total{') && /status="5\d\d"/.test(line))
      .reduce((n, line) => n + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);

    report.check('at least 5,000 hostile requests sent', cases.length >= 5000, `${cases.length} + ${slow.length} slow senders in ${(floodMs / 1000).toFixed(1)} s`);
    report.check(
      'zero 5xx',
      serverErrors.length === 0 && attackServerErrors.length === 0 && metric5xx === 0,
      `${serverErrors.length + attackServerErrors.length} seen by the clients (${attacks.statuses.length} answers in the attacks), ${metric5xx} in igw_http_requests_total` +
        (serverErrors.length > 0 ? `; e.g. ${serverErrors.slice(0, 5).map((r) => `${r.c.category}/${r.c.label} → ${r.outcome.status}`).join(', ')}` : ''),
    );
    const examples = new Map<string, string>();
    for (const r of wrong) examples.set(`${r.c.category}/${r.c.label}`, statusText(r.outcome));
    report.check(
      'each answered with a 4xx (closed by the parser for bad framing, by a timeout for slow senders; sanitised 2xx for well-formed __proto__)',
      wrong.length === 0,
      `${fourxx} 4xx, ${closed} closed without an answer, ${openAtBound} slow senders still open at the client's bound, ${accepted} 2xx (sanitised), ` +
        `${wrong.length} wrong` +
        (wrong.length > 0 ? `: ${[...examples].slice(0, 8).map(([k, v]) => `${k} → ${v}`).join('; ')}` : ''),
    );

    // Sanitised: nothing published carries __proto__ or constructor.prototype.
    const file = join(eventsDir, 'workflow.triggers.ndjson');
    const published = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    const hostile = published.filter((line) => /"__proto__"\s*:|"constructor"\s*:\s*\{"prototype"/.test(line));
    const sanitisedSent = results.filter((r) => r.c.expect === 'sanitised' && r.outcome.status !== undefined && r.outcome.status < 300).length;
    report.check(
      'well-formed __proto__ payloads are published without __proto__ or constructor.prototype',
      hostile.length === 0,
      `${sanitisedSent} accepted (identical bodies without a key are fingerprint replays), ${published.length} records in the sink (${WARM_UP_GOOD} warm-up), ${hostile.length} carrying a prototype key`,
    );

    const probeMax = Math.max(0, ...probes);
    report.check(
      'the slow senders do not hold up other requests',
      answeredWhileSlow > 0 && probeMax !== Infinity,
      `${probes.length} /healthz probes, ${answeredWhileSlow} answered while the slow senders dribbled, ` +
        `${probes.filter((ms) => ms === Infinity).length} failed, slowest ${probeMax === Infinity ? 'failed' : `${Math.round(probeMax)} ms`}; ` +
        `slow senders: ${results.filter((r) => r.c.category === 'slow sender').map((r) => statusText(r.outcome)).join(', ')}`,
    );
    for (const [name, ok, detail] of judgeAttacks(attacks)) report.check(name, ok, detail);
    const fatal = gateway
      .output()
      .split('\n')
      .filter((line) => /"level":(50|60)|Error|error:/.test(line))
      .slice(-3)
      .map((line) => line.slice(0, 600));
    report.check(
      'the process is alive and /healthz answers 200',
      alive && health.status === 200,
      `alive ${alive}, /healthz ${health.status ?? health.error}` + (alive ? '' : `, exit ${gateway.child.exitCode ?? gateway.child.signalCode}; last errors: ${fatal.join(' || ')}`),
    );
    report.check(
      `live memory after a full collection back near its start (heap + external: end < start + ${LIVE_ALLOWANCE_MIB} MiB)`,
      mib(end.heapUsed + end.external) < mib(start.heapUsed + start.external) + LIVE_ALLOWANCE_MIB,
      `V8 heap used ${mib(start.heapUsed).toFixed(0)} → ${mib(end.heapUsed).toFixed(0)} MiB, external ${mib(start.external).toFixed(0)} → ${mib(end.external).toFixed(0)} MiB`,
    );
    report.check(
      `RSS after a full collection back near its start (end < start + ${RSS_ALLOWANCE_MIB} MiB)`,
      mib(end.rss) < mib(start.rss) + RSS_ALLOWANCE_MIB,
      `start ${mib(start.rss).toFixed(0)} MiB, peak ${peakRss.toFixed(0)} MiB, end ${mib(end.rss).toFixed(0)} MiB ` +
        `(cold ${coldRss.toFixed(0)} MiB before a warm-up of ${WARM_UP_GOOD} good requests and two of each of the ${kinds.size} kinds)`,
    );

    report.row = {
      sent: `${cases.length} + ${slow.length} slow`,
      acknowledged: `${accepted} (sanitised __proto__)`,
      found: `${published.length - WARM_UP_GOOD} new records, ${hostile.length} unsafe`,
      duplicated: '-',
      other: `4xx ${fourxx}, closed ${closed}, open@bound ${openAtBound}, 5xx ${serverErrors.length}; RSS ${mib(start.rss).toFixed(0)}/${peakRss.toFixed(0)}/${mib(end.rss).toFixed(0)} MiB`,
    };
  } catch (error) {
    report.crashed(error);
  } finally {
    await cleanup.run();
  }
  return report;
}
