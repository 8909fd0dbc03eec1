import type { IncomingHttpHeaders } from 'node:http';
import type { Provider, VerifyResult } from '../../../src/providers/provider';
import { providerNamed } from '../../../src/providers/registry';
import { effectiveTolerance, providerInputSchema, toStoredProvider } from '../../../src/providers/trigger-field';

export interface RecipeDelivery {
  raw: string | Buffer;
  headers: IncomingHttpHeaders;
  secrets?: string[];
  publicKeys?: string[];
  now?: number;
  url?: string;
  toleranceSeconds?: number;
}

/** A trigger's provider field through the admin schema (as PUT stores it), then one delivery through precheck and verify as the gate runs them. */
export function verifyAs(field: Record<string, unknown>, d: RecipeDelivery): VerifyResult {
  const stored = toStoredProvider(providerInputSchema.parse(field));
  const provider = providerNamed(stored.name) as Provider;
  const head = {
    headers: d.headers,
    query: {},
    url: d.url ?? 'https://gw.example.com/api/webhooks/trigger/t',
    secrets: stored.secrets,
    publicKeys: stored.publicKeys ?? [],
    options: stored.options ?? {},
    toleranceSeconds: effectiveTolerance(stored),
    nowSeconds: d.now ?? Math.floor(Date.now() / 1000),
  };
  const early = provider.precheck(head);
  if (early) return { ok: false, reason: early };
  return provider.verify({ ...head, raw: Buffer.isBuffer(d.raw) ? d.raw : Buffer.from(d.raw) });
}

/** The 400 issues a provider field gets at PUT, as `path: message`. */
export function problems(field: Record<string, unknown>): string[] {
  const parsed = providerInputSchema.safeParse(field);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}
