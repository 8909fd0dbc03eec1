import type { Request, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { AppDeps } from '../app-deps';
import { noteDelivery, type DeliveryNotes } from '../http/delivery-notes';
import { answerCharge } from '../http/rate-limit-headers';
import { whenClosed } from '../http/response-done';
import { readRawBody, type BodyRules } from '../ingest/read-body';
import { IngressGate, type GateTarget } from '../ingress/gate';
import type { Charge } from '../ratelimit/limit-info';

/** The ingress gate (src/ingress/gate.ts) on an express request and response: the exchange it runs on. */
class HttpIngressGate extends IngressGate {
  readonly client: string;

  constructor(
    deps: AppDeps,
    private readonly req: Request,
    private readonly res: Response,
    on: GateTarget,
  ) {
    super(deps, on);
    this.client = clientAddress(req);
  }

  note(notes: DeliveryNotes): void {
    noteDelivery(this.res, notes);
  }

  protected answerCharge(charge: Charge): void {
    answerCharge(this.res, charge);
  }

  protected readRaw(rules: BodyRules): Promise<Buffer> {
    return readRawBody(this.req, rules);
  }

  protected whenDone(hook: () => void): void {
    whenClosed(this.res, hook);
  }
}

export function ingressGate(deps: AppDeps, req: Request, res: Response, on: GateTarget): IngressGate {
  return new HttpIngressGate(deps, req, res, on);
}

/** The client's address as TRUST_PROXY says to read it; IPv6 clients are grouped by /56 (one customer's prefix). */
export function clientAddress(req: Request): string {
  return ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown', 56);
}
