/**
 * Helpers for the tests that run the built gateway (dist/main.js) against librdkafka's mock
 * cluster: its environment, timed webhook POSTs, /metrics and /readyz readers, and a raw
 * HTTP/1.1 connection for the shutdown test (a request can be sent in parts).
 */
import { connect, type Socket } from 'node:net';
import type { ConsumedRecord } from './kafka-mock';
import { startGateway, type RunningGateway } from './server';
import { tempDir, writeJson } from './tmp';

export const TOKEN = 'kafka-gateway-token-7d3e91';
export const CHANNEL_ID = 'ch_wa_kafka';
export const APP_SECRET = 'kafka-gateway-app-secret';
export const PHONE_NUMBER_ID = '106540352242922';

/** One trigger `orders` (bearer auth) and one WhatsApp channel. */
export const REGISTRY = {
  triggers: {
    orders: { workflowId: 'wf-orders', workspaceId: 'ws-kafka', deployed: true, auth: { token: TOKEN } },
  },
  channels: {
    [CHANNEL_ID]: {
      provider: 'whatsapp',
      workspaceId: 'ws-kafka',
      inboxId: 'inbox-kafka',
      phoneNumberId: PHONE_NUMBER_ID,
      verifyToken: 'kafka-verify-token',
      appSecret: APP_SECRET,
    },
  },
};

export interface KafkaGateway extends RunningGateway {
  /** Stops the gateway (SIGKILL unless told otherwise) and removes its temp folder. */
  dispose(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * The gateway with KAFKA_BROKERS set, embedded memory stores, the registry above, rate limits
 * out of the way and the non-idempotent producer (the mock cannot serve InitProducerId).
 */
export async function startKafkaGateway(brokers: string, env: Record<string, string> = {}): Promise<KafkaGateway> {
  const tmp = tempDir('igw-kafka-gw-');
  const triggersFile = writeJson(tmp.dir, 'registry.json', REGISTRY);
  let gateway: RunningGateway;
  try {
    gateway = await startGateway({
      KAFKA_BROKERS: brokers,
      KAFKA_IDEMPOTENT: 'false',
      KAFKA_CLIENT_ID: 'gateway-kafka-test',
      TRIGGERS_FILE: triggersFile,
      EVENTS_DIR: `${tmp.dir}/events`,
      RATE_LIMIT_DEFAULT: '1000000/60',
      RATE_LIMIT_WORKSPACE: '1000000/60',
      ...env,
    });
  } catch (error) {
    tmp.cleanup();
    throw error;
  }
  return Object.assign(gateway, {
    async dispose(signal: NodeJS.Signals = 'SIGKILL') {
      await gateway.stop(signal);
      tmp.cleanup();
    },
  });
}

export interface Answer {
  /** The Idempotency-Key sent. */
  key: string;
  /** The body sent. */
  body: string;
  status: number;
  eventId: string | null;
  retryAfter: string | null;
  json: any;
  /** ms from sending until the whole answer was read */
  ms: number;
  /** performance.now() when it was sent */
  sentAt: number;
}

/** POST /api/webhooks/trigger/orders with the bearer token and an Idempotency-Key; never throws on a status. */
export async function postOrder(
  url: string,
  key: string,
  payload: unknown,
  extra: { headers?: Record<string, string>; query?: string } = {},
): Promise<Answer> {
  const body = JSON.stringify(payload);
  const sentAt = performance.now();
  const res = await fetch(`${url}/api/webhooks/trigger/orders${extra.query ?? ''}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'idempotency-key': key,
      ...extra.headers,
    },
    body,
  });
  const text = await res.text();
  const ms = performance.now() - sentAt;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return {
    key,
    body,
    status: res.status,
    eventId: res.headers.get('x-event-id'),
    retryAfter: res.headers.get('retry-after'),
    json,
    ms,
    sentAt,
  };
}

/** The value of an unlabelled counter (or the sum over its labels) in Prometheus text. */
export async function metric(adminUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  let sum = 0;
  let found = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (match && match[1] === name) {
      sum += Number(match[3]);
      found = true;
    }
  }
  if (!found) throw new Error(`metric ${name} not found`);
  return sum;
}

/** The value of one labelled series (`labels` as written in the text, e.g. `dependency="sink"`). */
export async function metricWithLabels(adminUrl: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} (\S+)$/.exec(line);
    if (match && match[1] === name && match[2].split(',').includes(labels)) return Number(match[3]);
  }
  throw new Error(`metric ${name}{${labels}} not found`);
}

export async function readyz(adminUrl: string): Promise<{ status: number; json: any; retryAfter: string | null }> {
  const res = await fetch(`${adminUrl}/readyz`);
  return { status: res.status, json: await res.json(), retryAfter: res.headers.get('retry-after') };
}

/**
 * Waits until /readyz reports the sink `up` (Kafka connected and both topics there); returns
 * the ms it took. Readiness itself is 200 whatever Kafka does: it is reported in the body.
 */
export async function sinkUp(adminUrl: string, timeoutMs = 10_000): Promise<number> {
  return until(
    async () => {
      const { status, json } = await readyz(adminUrl);
      return status === 200 && json.checks?.sink === 'up';
    },
    timeoutMs,
    '/readyz to report the sink up',
  );
}

/** Polls fn until it returns true; returns the ms it took, or throws after timeoutMs. */
export async function until(fn: () => Promise<boolean> | boolean, timeoutMs: number, what: string, everyMs = 100): Promise<number> {
  const started = performance.now();
  for (;;) {
    let last: unknown;
    try {
      if (await fn()) return performance.now() - started;
    } catch (error) {
      last = error;
    }
    if (performance.now() - started > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await sleep(everyMs);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A record's value parsed as the CloudEvent it carries. */
export function eventOf(record: ConsumedRecord): any {
  return JSON.parse(record.value ?? 'null');
}

/** Records by their ce_id header. */
export function byEventId(records: ConsumedRecord[]): Map<string, ConsumedRecord> {
  return new Map(records.map((r) => [r.headers.ce_id, r]));
}

/**
 * Waits until every id is among the topic's ce_id headers; returns the records then. On a
 * timeout the error says how many are missing.
 */
export async function waitForIds(
  mock: { waitFor(until: (records: ConsumedRecord[]) => boolean, timeoutMs?: number, topic?: string): Promise<ConsumedRecord[]> },
  ids: string[],
  topic: string,
  timeoutMs = 15_000,
): Promise<ConsumedRecord[]> {
  return mock.waitFor(
    (records) => {
      const seen = new Set(records.map((r) => r.headers.ce_id));
      return ids.every((id) => seen.has(id));
    },
    timeoutMs,
    topic,
  );
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One HTTP/1.1 keep-alive connection driven by hand: bytes are written when the test says
 * so, and responses are read in order (Content-Length bodies only, which is all the gateway
 * sends).
 */
export class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiting?: () => void;
  private ended = false;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.waiting?.();
    });
    const end = () => {
      this.ended = true;
      this.waiting?.();
    };
    socket.on('end', end).on('close', end).on('error', end);
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.off('error', reject);
        resolve(new RawConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  write(data: string): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (error) => (error ? reject(error) : resolve())));
  }

  /** The next complete response on this connection. */
  async response(timeoutMs = 10_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.tryParse();
      if (parsed) return parsed;
      if (this.ended) throw new Error(`connection ended before a complete response (${this.buffer.length} bytes read)`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no complete response in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        const self = this;
        function done() {
          clearTimeout(timer);
          self.waiting = undefined;
          resolve();
        }
        this.waiting = done;
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private tryParse(): RawResponse | undefined {
    const head = this.buffer.indexOf('\r\n\r\n');
    if (head < 0) return undefined;
    const lines = this.buffer.subarray(0, head).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0])?.[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? '0');
    if (this.buffer.length < head + 4 + length) return undefined;
    const body = this.buffer.subarray(head + 4, head + 4 + length).toString('utf8');
    this.buffer = this.buffer.subarray(head + 4 + length);
    return { status, headers, body };
  }
}

/** The raw bytes of a POST to the orders trigger, split after the first half of the body. */
export function orderRequestParts(key: string, payload: unknown): [string, string] {
  const body = JSON.stringify(payload);
  const head =
    'POST /api/webhooks/trigger/orders HTTP/1.1\r\n' +
    'Host: 127.0.0.1\r\n' +
    `Authorization: Bearer ${TOKEN}\r\n` +
    'Content-Type: application/json\r\n' +
    `Idempotency-Key: ${key}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const half = Math.floor(body.length / 2);
  return [head + body.slice(0, half), body.slice(half)];
}

/** The slowest webhook request by status, as the gateway's access log measured it (ms). */
export function serverSlowest(output: string): Record<number, number> {
  const slowest: Record<number, number> = {};
  for (const line of output.split('\n')) {
    if (!line.includes('"msg":"request"') || !line.includes('"route":"webhook"')) continue;
    try {
      const entry = JSON.parse(line) as { status: number; ms: number };
      slowest[entry.status] = Math.max(slowest[entry.status] ?? 0, Math.round(entry.ms));
    } catch {
      // a partial line
    }
  }
  return slowest;
}
