import { createHmac } from 'node:crypto';
import twilio from 'twilio';

export const BENCH_TOKEN = 'bench-token-0123456789';
export const BENCH_APP_SECRET = 'bench-app-secret';
export const BENCH_TRIGGER = 'bench';
export const BENCH_CHANNEL = 'bench-wa';
export const BENCH_PHONE_NUMBER_ID = '1000000001';
export const BENCH_TELEGRAM_CHANNEL = 'bench-tg';
export const BENCH_TELEGRAM_SECRET = 'bench-telegram-secret-token';
export const BENCH_TWILIO_CHANNEL = 'bench-tw';
export const BENCH_TWILIO_ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
export const BENCH_TWILIO_TOKEN = 'bench-twilio-auth-token';
/** The gateway's PUBLIC_BASE_URL in the bench: Twilio signs the public URL, whatever port the gateway listens on. */
export const BENCH_PUBLIC_BASE_URL = 'https://bench.example.com';

export interface Scenario {
  name: string;
  /** The path on the gateway; the floor and the naive receiver accept any path. */
  path: string;
  headers: Record<string, string>;
  /** A new body (and extra headers) for the n-th request. */
  request(n: number): { body: string | Buffer; headers?: Record<string, string> };
  /** Run against the file targets (inline vs by reference, bench/files.ts) instead of the usual ones. */
  files?: true;
  /** The payload of one request, for the MB/s line of the large-payload scenarios. */
  payloadBytes?: number;
  /** The same requests for wrk: `{n}` in the body and header values is the request's number. */
  wrk?: { body: string; headers?: Record<string, string> };
  /** Connections for this scenario when not the run's default (large bodies must fit the body budget). */
  connections?: number;
}

const auth = { authorization: `Bearer ${BENCH_TOKEN}` };
const trigger = `/api/webhooks/trigger/${BENCH_TRIGGER}`;

const json = (n: number | string, pad = '') => JSON.stringify({ event: 'order.created', id: `o-${n}`, data: { amount: 12.5, pad } });
const keyed = { 'idempotency-key': 'k-{n}' };

const BOUNDARY = 'benchboundary7MA4YWxkTrZu0gW';
const fileOf256k = Buffer.alloc(256 * 1024, 7);
function multipart(n: number): Buffer {
  const part = (name: string, filename: string) =>
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="id"\r\n\r\n${n}\r\n`),
    part('file[]', 'a.bin'), fileOf256k, Buffer.from('\r\n'),
    part('file[]', 'b.bin'), fileOf256k, Buffer.from('\r\n'),
    Buffer.from(`--${BOUNDARY}--\r\n`),
  ]);
}

const fileOf5MB = Buffer.alloc(5_000_000, 9);
const largePad = 'p'.repeat(6_000_000);
/** Its bulk outside `event`, `id` and `data` (what `common` carries inline), as in a GitHub push. */
const largeJson = (n: number) => JSON.stringify({ event: 'export.ready', id: `e-${n}`, rows: largePad });
function multipartWith5MBFile(n: number): Buffer {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="id"\r\n\r\n${n}\r\n`),
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="doc"; filename="doc.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
    fileOf5MB,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

function whatsappBatch(n: number): string {
  const messages = Array.from({ length: 10 }, (_, i) => ({
    from: `4915100000${String(i).padStart(3, '0')}`,
    id: `wamid.bench-${n}-${i}`,
    timestamp: '1760000000',
    type: 'text',
    text: { body: `hello ${n}/${i}` },
  }));
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [{ id: 'waba-1', changes: [{ field: 'messages', value: {
      messaging_product: 'whatsapp',
      metadata: { display_phone_number: '15550000000', phone_number_id: BENCH_PHONE_NUMBER_ID },
      contacts: messages.map((m) => ({ wa_id: m.from, profile: { name: 'Bench' } })),
      messages,
    } }] }],
  });
}

const twilioPath = `/api/channels/twilio/${BENCH_TWILIO_CHANNEL}`;

/** An inbound WhatsApp message as Twilio form-encodes it, signed as Twilio signs it. */
function twilioInbound(n: number): { body: string; headers: Record<string, string> } {
  const params = new URLSearchParams({
    SmsMessageSid: `SM${String(n).padStart(32, '0')}`,
    NumMedia: '0',
    ProfileName: 'Bench',
    MessageType: 'text',
    WaId: '4915100000001',
    SmsStatus: 'received',
    Body: `hello ${n}`,
    To: 'whatsapp:+14155238886',
    NumSegments: '1',
    MessageSid: `SM${String(n).padStart(32, '0')}`,
    AccountSid: BENCH_TWILIO_ACCOUNT_SID,
    From: 'whatsapp:+4915100000001',
    ApiVersion: '2010-04-01',
  });
  const signature = twilio.getExpectedTwilioSignature(BENCH_TWILIO_TOKEN, BENCH_PUBLIC_BASE_URL + twilioPath, Object.fromEntries(params));
  return { body: params.toString(), headers: { 'x-twilio-signature': signature } };
}

/**
 * The `X-Hub-Signature-256` Meta sends: `sha256=` + hex HMAC-SHA256 of the raw body keyed with the
 * App Secret (Meta documents the scheme and publishes no signing library). Written here so the
 * bench never signs with the gateway's own verification code.
 */
function signWhatsAppBody(body: string, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;
}

function telegramUpdate(n: number): string {
  return JSON.stringify({
    update_id: n,
    message: {
      message_id: n,
      from: { id: 1111111, is_bot: false, first_name: 'Bench' },
      chat: { id: 1111111, first_name: 'Bench', type: 'private' },
      date: 1760000000,
      text: `hello ${n}`,
    },
  });
}

/**
 * A JSON body of `bytes` bytes with a unique idempotency key per request. The padding sits
 * outside `data`: the event repeats a body's `event`, `id` and `data` as common fields, so
 * padding inside `data` would double the record and a 1 MB body would exceed MAX_RECORD_BYTES.
 */
function jsonOfSize(name: string, bytes: number, connections?: number): Scenario {
  const body = (n: number | string) => JSON.stringify({ event: 'order.created', id: `o-${n}`, blob: '' });
  const pad = 'x'.repeat(bytes - body(0).length);
  const padded = (n: number | string) => JSON.stringify({ event: 'order.created', id: `o-${n}`, blob: pad });
  return {
    name,
    path: trigger,
    headers: { ...auth, 'content-type': 'application/json' },
    request: (n) => ({ body: padded(n), headers: { 'idempotency-key': `k-${n}` } }),
    wrk: { body: padded('{n}'), headers: keyed },
    ...(connections && { connections }),
  };
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'small JSON + bearer',
    path: trigger,
    headers: { ...auth, 'content-type': 'application/json' },
    request: (n) => ({ body: json(n), headers: { 'idempotency-key': `k-${n}` } }),
    wrk: { body: json('{n}'), headers: keyed },
  },
  {
    name: 'small JSON, 2000 connections',
    path: trigger,
    headers: { ...auth, 'content-type': 'application/json' },
    request: (n) => ({ body: json(n), headers: { 'idempotency-key': `k-${n}` } }),
    wrk: { body: json('{n}'), headers: keyed },
    connections: 2000,
  },
  jsonOfSize('JSON 1 KB', 1000),
  jsonOfSize('JSON 64 KB', 64_000),
  // 8 × 1 MB in flight stays within the default body budget's per-route share (16 MiB).
  jsonOfSize('JSON 1 MB', 990_000, 8),
  {
    name: 'urlencoded',
    path: trigger,
    headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
    request: (n) => ({ body: `event=order.created&id=o-${n}&amount=12.5&note=hello+world`, headers: { 'idempotency-key': `k-${n}` } }),
    wrk: { body: 'event=order.created&id=o-{n}&amount=12.5&note=hello+world', headers: keyed },
  },
  {
    name: 'multipart 2×256 KB files',
    // 16 × 0.5 MB in flight: within the default body budget's per-route share (16 MiB).
    connections: 16,
    path: trigger,
    headers: { ...auth, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    request: (n) => ({ body: multipart(n), headers: { 'idempotency-key': `k-${n}` } }),
  },
  {
    name: 'multipart 5 MB file, inline vs by reference',
    path: trigger,
    headers: { ...auth, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    request: (n) => ({ body: multipartWith5MBFile(n), headers: { 'idempotency-key': `k-${n}` } }),
    files: true,
    payloadBytes: fileOf5MB.length,
  },
  {
    name: 'JSON 6 MB, inline vs by reference (claim check)',
    // 16 × 6 MB bodies in memory at once (each is read whole: its signature or hash needs it).
    connections: 16,
    path: trigger,
    headers: { ...auth, 'content-type': 'application/json' },
    request: (n) => ({ body: largeJson(n), headers: { 'idempotency-key': `k-${n}` } }),
    files: true,
    payloadBytes: Buffer.byteLength(largeJson(0)),
  },
  {
    name: 'half repeat an idempotency key',
    path: trigger,
    headers: { ...auth, 'content-type': 'application/json' },
    request: (n) => {
      const key = n - (n % 2);
      return { body: json(key), headers: { 'idempotency-key': `k-${key}` } };
    },
    wrk: { body: json('{k}'), headers: { 'idempotency-key': 'k-{k}' } },
  },
  {
    name: 'WhatsApp batch of 10, signed',
    path: `/api/channels/whatsapp/${BENCH_CHANNEL}`,
    headers: { 'content-type': 'application/json' },
    request: (n) => {
      const body = whatsappBatch(n);
      return { body, headers: { 'x-hub-signature-256': signWhatsAppBody(body, BENCH_APP_SECRET) } };
    },
  },
  {
    name: 'Twilio WhatsApp message, signed',
    path: twilioPath,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    request: twilioInbound,
  },
  {
    name: 'Telegram update, secret token',
    path: `/api/channels/telegram/${BENCH_TELEGRAM_CHANNEL}`,
    headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': BENCH_TELEGRAM_SECRET },
    request: (n) => ({ body: telegramUpdate(n) }),
    wrk: { body: telegramUpdate(7_777_777).replaceAll('7777777', '{n}') },
  },
];

export const BENCH_REGISTRY = {
  triggers: {
    [BENCH_TRIGGER]: {
      workflowId: 'wf-bench',
      workspaceId: 'ws-bench',
      deployed: true,
      auth: { token: BENCH_TOKEN },
      rateLimit: { limit: 1_000_000, windowSeconds: 60 },
    },
  },
  channels: {
    [BENCH_CHANNEL]: {
      provider: 'whatsapp',
      workspaceId: 'ws-bench',
      inboxId: 'inbox-bench',
      phoneNumberId: BENCH_PHONE_NUMBER_ID,
      verifyToken: 'bench-verify',
      appSecret: BENCH_APP_SECRET,
    },
    [BENCH_TWILIO_CHANNEL]: {
      provider: 'twilio',
      workspaceId: 'ws-bench',
      inboxId: 'inbox-bench',
      accountSid: BENCH_TWILIO_ACCOUNT_SID,
      authToken: BENCH_TWILIO_TOKEN,
    },
    [BENCH_TELEGRAM_CHANNEL]: {
      provider: 'telegram',
      workspaceId: 'ws-bench',
      inboxId: 'inbox-bench',
      secretToken: BENCH_TELEGRAM_SECRET,
    },
  },
};
