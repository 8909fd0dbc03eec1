import { signWhatsAppBody } from '../src/channels/whatsapp/signature';

export const BENCH_TOKEN = 'bench-token-0123456789';
export const BENCH_APP_SECRET = 'bench-app-secret';
export const BENCH_TRIGGER = 'bench';
export const BENCH_CHANNEL = 'bench-wa';
export const BENCH_PHONE_NUMBER_ID = '1000000001';

export interface Scenario {
  name: string;
  /** The path on the gateway; the floor and the naive receiver accept any path. */
  path: string;
  headers: Record<string, string>;
  /** A new body (and extra headers) for the n-th request. */
  request(n: number): { body: string | Buffer; headers?: Record<string, string> };
}

const auth = { authorization: `Bearer ${BENCH_TOKEN}` };
const trigger = `/api/webhooks/trigger/${BENCH_TRIGGER}`;

const json = (n: number, pad = '') => JSON.stringify({ event: 'order.created', id: `o-${n}`, data: { amount: 12.5, pad } });
const kilobytes64 = 'x'.repeat(64 * 1024 - 80);

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

export const SCENARIOS: Scenario[] = [
  {
    name: 'small JSON + bearer',
    path: trigger,
    headers: { ...auth, 'content-type': 'application/json' },
    request: (n) => ({ body: json(n), headers: { 'idempotency-key': `k-${n}` } }),
  },
  {
    name: '64 KB JSON',
    path: trigger,
    headers: { ...auth, 'content-type': 'application/json' },
    request: (n) => ({ body: json(n, kilobytes64), headers: { 'idempotency-key': `k-${n}` } }),
  },
  {
    name: 'urlencoded',
    path: trigger,
    headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
    request: (n) => ({ body: `event=order.created&id=o-${n}&amount=12.5&note=hello+world`, headers: { 'idempotency-key': `k-${n}` } }),
  },
  {
    name: 'multipart 2×256 KB files',
    path: trigger,
    headers: { ...auth, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    request: (n) => ({ body: multipart(n), headers: { 'idempotency-key': `k-${n}` } }),
  },
  {
    name: 'half repeat an idempotency key',
    path: trigger,
    headers: { ...auth, 'content-type': 'application/json' },
    request: (n) => {
      const key = n % 2 === 1 ? n - 1 : n;
      return { body: json(key), headers: { 'idempotency-key': `k-${key}` } };
    },
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
  },
};
