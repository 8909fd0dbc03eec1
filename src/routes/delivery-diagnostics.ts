import type { Response } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import { noteDelivery } from '../http/delivery-notes';
import { HttpError } from '../http/errors';
import { signatureDiagnostics, type SignatureDiagnostics } from '../providers/diagnostics';

/** A signature refusal (401) leaves its diagnostics on the delivery log entry, then goes on to be rendered. */
export async function diagnosed<T>(res: Response, diagnose: () => SignatureDiagnostics, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof HttpError && error.status === 401) noteDelivery(res, { diagnostics: { ...diagnose() } });
    throw error;
  }
}

/** A channel's one secret in one header (WhatsApp's app secret, Twilio's auth token, Telegram's secret token). */
export function channelDiagnostics(scheme: string, header: string, headers: IncomingHttpHeaders, raw?: Buffer): SignatureDiagnostics {
  const shape = { scheme, signatureHeaders: [header], secrets: 1, toleranceSeconds: 0 };
  return signatureDiagnostics(shape, headers, { raw, nowSeconds: Math.floor(Date.now() / 1000) });
}
