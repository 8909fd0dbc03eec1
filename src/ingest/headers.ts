import type { IncomingHttpHeaders } from 'node:http';
import { isCredentialName } from '../secrets/names';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/** Names never published: any that looks like a credential or a signature (see isCredentialName). */
export function isSecretName(name: string): boolean {
  return isCredentialName(name);
}

export interface HeaderRules {
  /** The trigger's custom auth header (whatever its name), lower-case. */
  authHeader?: string;
  /** The trigger's `publishHeaders`: when set, only these (lower-case) names are published. */
  allow?: readonly string[];
  /** Headers the trigger's provider names as its own signature or secret headers. */
  hidden?: readonly string[];
}

/**
 * The request's headers as published: lower-case names; never a credential, signature,
 * hop-by-hop or proxy header, nor the trigger's auth header or its provider's signature
 * headers; only the allowed ones when the trigger lists them.
 */
export function publishableHeaders(headers: IncomingHttpHeaders, rules: HeaderRules = {}): Record<string, string> {
  const allow = rules.allow && new Set(rules.allow);
  const out: Record<string, string> = {};
  for (const name in headers) {
    if (allow && !allow.has(name)) continue;
    if (name === rules.authHeader || rules.hidden?.includes(name) || HOP_BY_HOP.has(name) || name.startsWith('proxy-') || isSecretName(name)) continue;
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
