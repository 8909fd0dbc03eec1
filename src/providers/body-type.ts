import { Refusal } from '../outcomes/refusal';
import { classifyContentType, type BodyKind } from '../ingest/content-type';
import type { Provider } from './provider';

const MEDIA_TYPE: Record<BodyKind, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data',
  text: 'text/plain',
};

/**
 * Contract §10 "one sender, one behaviour": a sender that always posts one body type (its
 * `bodyKind`) gets the same 415 for any other on the trigger and the channel route, checked
 * after its signature held and before anything is parsed. An empty body is left to the parser
 * (contract §2: `{}`).
 */
export function checkSenderBodyType(provider: Provider, raw: Buffer, contentType: string | undefined, url: string): void {
  if (!provider.bodyKind || raw.length === 0) return;
  const expected = provider.bodyKind(url);
  if (classifyContentType(contentType)?.kind === expected) return;
  throw new Refusal('unsupported_media_type', `${provider.name} deliveries are ${MEDIA_TYPE[expected]} here`, {
    contentType: contentType ?? null,
    accepted: [MEDIA_TYPE[expected]],
  });
}
