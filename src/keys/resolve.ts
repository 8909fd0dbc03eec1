import { lookup } from 'node:dns/promises';
import { isPublicAddress } from './public-address';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** A host name → its addresses (the system resolver, or a test's). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

export type Resolution = { ok: true; target: ResolvedAddress } | { ok: false; outcome: 'dns_failed' | 'address_not_public' };

/**
 * Resolves once and checks what was resolved: every address must be public (a name that also
 * points inside the network is refused whole), and the first is the one the connection goes to,
 * so a second answer of the resolver (DNS rebinding) is never asked for.
 */
export async function resolvePublic(hostname: string, resolver: Resolver): Promise<Resolution> {
  let answers: ReadonlyArray<{ address: string; family: number }>;
  try {
    answers = await resolver(hostname);
  } catch {
    return { ok: false, outcome: 'dns_failed' };
  }
  if (answers.length === 0) return { ok: false, outcome: 'dns_failed' };
  if (!answers.every((answer) => isPublicAddress(answer.address))) return { ok: false, outcome: 'address_not_public' };
  const first = answers[0];
  return { ok: true, target: { address: first.address, family: first.family === 6 ? 6 : 4 } };
}
