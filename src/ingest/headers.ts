import type { IncomingHttpHeaders } from 'node:http';

/** Credentials, signatures and hop-by-hop headers; none of them is ever published. */
const SECRET_NAME = /authorization|cookie|token|secret|signature|api[-_]?key|password|session|credential/i;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** The request's headers as published: lower-case names, secrets and the trigger's auth header removed. */
export function publishableHeaders(headers: IncomingHttpHeaders, authHeader?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    if (name === authHeader || HOP_BY_HOP.has(name) || name.startsWith('proxy-') || isSecretName(name)) continue;
    const value = headers[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Query parameters as published; parameters whose name looks like a credential are removed. */
export function publishableQuery(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name in query) if (!isSecretName(name) && name !== '__proto__') out[name] = query[name];
  return out;
}
