import type { Response } from 'express';
import { keepHeader } from './answer-headers';

/**
 * What `res.status(status).json(body)` sends, without express's send machinery (charset
 * negotiation, ETag and freshness checks, a second look at the content type): the ingress
 * routes answer every request with it, and that machinery was a tenth of a request's CPU.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  res.statusCode = status;
  if (status === 204 || status === 205) {
    // No content by definition (RFC 9110 §15.3.5, §15.3.6): a trigger's configured body is not sent.
    res.end();
    return;
  }
  const text = JSON.stringify(body) ?? '';
  keepHeader(res, 'Content-Type', 'application/json; charset=utf-8');
  keepHeader(res, 'Content-Length', String(Buffer.byteLength(text)));
  res.end(text);
}
