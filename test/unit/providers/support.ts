import type { IncomingHttpHeaders } from 'node:http';
import type { Provider, VerifyResult } from '../../../src/providers/provider';

export interface Delivery {
  raw: string | Buffer;
  headers: IncomingHttpHeaders;
  secrets: string[];
  /** Unix seconds the gateway believes it is. */
  now?: number;
  url?: string;
  options?: Record<string, unknown>;
  toleranceSeconds?: number;
  query?: Record<string, unknown>;
}

/** Runs a preset's precheck then verify, as the gate does, and returns what a request would get. */
export function check(provider: Provider, d: Delivery): VerifyResult {
  const head = {
    headers: d.headers,
    query: d.query ?? {},
    url: d.url ?? 'https://gw.example.com/api/webhooks/trigger/t',
    secrets: d.secrets,
    options: d.options ?? {},
    toleranceSeconds: d.toleranceSeconds ?? provider.defaultToleranceSeconds ?? 300,
    nowSeconds: d.now ?? Math.floor(Date.now() / 1000),
  };
  const early = provider.precheck(head);
  if (early) return { ok: false, reason: early };
  return provider.verify({ ...head, raw: Buffer.isBuffer(d.raw) ? d.raw : Buffer.from(d.raw) });
}

export const accepted = { ok: true };
export const refusedWith = (reason: string) => ({ ok: false, reason });

/** The same bytes with one byte changed (the last one before the end, so JSON stays JSON-ish). */
export function tampered(raw: string): string {
  const i = Math.max(0, raw.length - 3);
  const changed = raw[i] === 'a' ? 'b' : 'a';
  return raw.slice(0, i) + changed + raw.slice(i + 1);
}
