/**
 * Small HTTP helpers for tests that talk to built gateway processes (startGateway) over TCP:
 * timed webhook posts, admin calls, the file sink's records and one metric from /metrics
 * (admin calls and /metrics go to the admin listener, RunningGateway.adminUrl).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitUntil } from './wait';

export interface TimedResponse {
  status: number;
  headers: Headers;
  body: any;
  /** From just before the request was sent to the end of its body. */
  ms: number;
}

export async function timedFetch(url: string, init: RequestInit = {}): Promise<TimedResponse> {
  const started = performance.now();
  const res = await fetch(url, init);
  const text = await res.text();
  const ms = performance.now() - started;
  let body: unknown = text;
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body, ms };
}

/** POST a JSON body to a webhook trigger, with an Idempotency-Key when one is given. */
export function postWebhook(
  baseUrl: string,
  path: string,
  body: unknown,
  idempotencyKey?: string,
  extraHeaders: Record<string, string> = {},
): Promise<TimedResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...extraHeaders };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  return timedFetch(`${baseUrl}/api/webhooks/trigger/${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
}

/** An admin API call with the bearer token; `baseUrl` is the admin listener's (RunningGateway.adminUrl). */
export function admin(baseUrl: string, token: string, method: string, path: string, body?: unknown): Promise<TimedResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return timedFetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

export interface SinkRecord {
  topic: string;
  key: string;
  headers: Record<string, string>;
  value: { id: string; type: string; data: { triggerPath: string; idempotencyKey: string; [name: string]: unknown } };
}

/** Every record the file sink of `eventsDir` holds for the trigger topic (none when the file is absent). */
export function sinkRecords(eventsDir: string, topic = 'workflow.triggers'): SinkRecord[] {
  const file = join(eventsDir, `${topic}.ndjson`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as SinkRecord);
}

/** The sum of every sample of `name` whose labels include all of `labels` (0 when none); `baseUrl` is the admin listener's. */
export async function metricValue(baseUrl: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) sum += Number(match[3]);
  }
  return sum;
}

export interface ServerTiming {
  status: number;
  /** The gateway's access log: from the request's arrival to the end of its answer. */
  ms: number;
}

/**
 * The gateway's own timing of each request, by X-Request-Id (send one per request), once
 * every one of `requestIds` is in its output. Deadline checks use it: on a busy machine the
 * client's clock also counts the time an answer waited for the client itself to run, which
 * says nothing about the gateway.
 */
export async function serverTimings(output: () => string, requestIds: string[]): Promise<Map<string, ServerTiming>> {
  const timings = new Map<string, ServerTiming>();
  let parsed = 0;
  const read = () => {
    const text = output();
    const end = text.lastIndexOf('\n') + 1;
    for (const line of text.slice(parsed, end).split('\n')) {
      if (!line.includes('"msg":"request"')) continue;
      try {
        const entry = JSON.parse(line) as { reqId?: string; status: number; ms: number };
        if (entry.reqId !== undefined) timings.set(entry.reqId, { status: entry.status, ms: entry.ms });
      } catch {
        // not a log line of the gateway's
      }
    }
    parsed = end;
    return requestIds.every((id) => timings.has(id));
  };
  await waitUntil(read, `the gateway's access log lines of ${requestIds.length} request(s)`);
  return timings;
}
