import { Refusal } from '../outcomes/refusal';
import { classifyContentType, type BodyKind } from '../body/content-type';
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
 * after its signature held and before anything is parsed; and in UTF-8 only. An empty body is
 * left to the parser (contract §2: `{}`).
 */
export function checkSenderBodyType(provider: Provider, raw: Buffer, contentType: string | undefined, url: string): void {
  if (!provider.bodyKind || raw.length === 0) return;
  const expected = provider.bodyKind(url);
  const media = classifyContentType(contentType);
  if (media?.kind !== expected) {
    throw new Refusal('unsupported_media_type', `${provider.name} deliveries are ${MEDIA_TYPE[expected]} here`, {
      contentType: contentType ?? null,
      accepted: [MEDIA_TYPE[expected]],
    });
  }
  // These senders write UTF-8 (and sign it); a trigger would otherwise decode another charset the channel never reads.
  if (media.charset !== undefined && !UTF8.has(media.charset)) {
    throw new Refusal('unsupported_charset', `${provider.name} deliveries are UTF-8`, { charset: media.charset.slice(0, 40) });
  }
}

const UTF8 = new Set(['utf-8', 'utf8']);
