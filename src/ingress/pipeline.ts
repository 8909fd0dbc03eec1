import type { SignatureDiagnostics } from '../providers/diagnostics';
import type { Reply } from '../providers/provider';
import type { Bucket } from '../ratelimit/limiter';
import type { IngressGate } from './gate';

/**
 * What one ingress route admits: a handshake, or a delivery. Every step of a delivery but
 * `accept` is optional; the pipeline runs them in the one order the contract allows
 * (ARCHITECTURE "one admission pipeline"):
 *
 *   credentials in headers → charge → read body (budget) → verify body → reserve parse memory
 *   → parse and accept
 *
 * with one shift: when the body carries a signature (`checkBody`), the tenant is charged only
 * once it holds (contract §10: a forged delivery spends no quota), i.e. after "verify body".
 * A handshake answered on the way (before the body, or once it is verified) is charged too.
 */
export type Admission<T> = Handshake | Delivery<T>;

/**
 * A handshake on its own request (a GET: Meta's, Dropbox's, X's subscription check): answered
 * once its check holds, then charged like any request that passed its checks. A refused one
 * (403, 400 `invalid_handshake`) counts as a failed authentication; no body is read.
 */
export interface Handshake {
  /** The tenant's buckets: the route's and its workspace's. */
  buckets: Bucket[];
  /** The credentials it carries, and its answer. */
  handshake: () => Reply;
  /** Whether `handshake` proves a credential (a trigger token): as a delivery's `provesCredential`. */
  provesCredential?: boolean;
}

export interface Delivery<T> {
  /** The tenant's buckets: the route's and its workspace's. */
  buckets: Bucket[];
  /** Most bytes the body may have. */
  bodyLimit: number;
  contentType: string | undefined;
  /**
   * Every credential the headers carry (a token, a signature header's shape): 401/403, or (only
   * with `checkBody`: signed senders) a handshake answered before the body.
   */
  checkHeaders?: () => Reply | undefined;
  /**
   * Whether `checkHeaders` proves a credential on its own (a trigger token). When it does not, a
   * handshake it answers proved nothing: its entry goes to the delivery log's strangers' share
   * (contract §13.1), so anyone asking for it at will cannot push out the record.
   */
  provesCredential?: boolean;
  /** The signature over the raw bytes; 401, or a signed handshake's answer. */
  checkBody?: (raw: Buffer) => Reply | undefined | Promise<Reply | undefined>;
  /** Why a signature was refused, for the delivery log: the body when it was read. */
  diagnose?: (raw?: Buffer) => SignatureDiagnostics;
  /** A body parsed while it arrives (multipart with a file store): accepted instead of read whole. */
  acceptStream?: () => Promise<T>;
  /** Parse and accept a body read whole, within its budget and verified. */
  accept: (raw: Buffer) => Promise<T>;
}

export type Admitted<T> = { reply: Reply } | { result: T };

export function admit(gate: IngressGate, admission: Handshake): Promise<{ reply: Reply }>;
export function admit<T>(gate: IngressGate, admission: Delivery<T>): Promise<Admitted<T>>;
export async function admit<T>(gate: IngressGate, admission: Admission<T>): Promise<Admitted<T>> {
  if ('handshake' in admission) return answered(gate, admission.buckets, await gate.verify(admission.handshake), admission.provesCredential ?? true);
  const { buckets, checkHeaders, checkBody, diagnose } = admission;
  if (checkBody) {
    const early = checkHeaders ? await gate.verify(checkHeaders, diagnose && (() => diagnose())) : undefined;
    if (early) return answered(gate, buckets, early, admission.provesCredential ?? true);
  } else if (checkHeaders) {
    // A credential the headers prove on their own: checked and charged in one round trip.
    await gate.verifyThenCharge(checkHeaders, buckets);
  } else {
    await gate.charge(buckets);
  }
  if (admission.acceptStream) return { result: await admission.acceptStream() };

  const raw = await gate.readBody(admission.bodyLimit);
  if (checkBody) {
    const reply = await gate.verify(() => checkBody(raw), diagnose && (() => diagnose(raw)));
    if (reply) return answered(gate, buckets, reply);
    await gate.charge(buckets);
  }
  gate.reserveParseMemory(raw, admission.contentType);
  return { result: await admission.accept(raw) };
}

/** A handshake answered: charged like any request that passed its checks, so it carries the rate-limit headers (contract §6). */
async function answered(gate: IngressGate, buckets: Bucket[], reply: Reply, proven = true): Promise<{ reply: Reply }> {
  await gate.charge(buckets);
  if (!proven) gate.note({ authenticated: false });
  return { reply };
}
