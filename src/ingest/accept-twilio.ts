import { TextDecoder } from 'node:util';
import { mapTwilioCallback, type TwilioFields } from '../channels/twilio/map';
import { bodyHashParameter, verifyTwilioBodyHash, verifyTwilioSignature } from '../channels/twilio/signature';
import { HttpError } from '../http/errors';
import type { TwilioChannel } from '../registry/schemas';
import { acceptChatEvents, type ChatAck } from './accept-chat';
import { classifyContentType } from './content-type';
import { parseJsonBytes } from './parse-body';
import type { IngestDeps } from './ports';
import type { EventTrace } from '../tracing/w3c';

/** What Twilio answers a webhook with when there is nothing to say (an empty TwiML document). */
export const EMPTY_TWIML = '<Response></Response>';

export interface TwilioRequest {
  /** The body exactly as received. */
  raw: Buffer;
  contentType: string | undefined;
  /** The URL Twilio requested: PUBLIC_BASE_URL (or the request's own origin) + path + query. */
  url: string;
  /** `X-Twilio-Signature`. */
  signature: string | undefined;
}

/**
 * Verifies a Twilio callback and returns its parameters. A form body is verified with its
 * parameters; a body whose URL carries `bodySHA256` (the JSON variant) with the URL alone and
 * the body's hash. Throws 401 before anything is charged or published, then 400/413/415 for a
 * signed body that cannot be read.
 */
export function readTwilioCallback(request: TwilioRequest, authToken: string, maxFields: number): TwilioFields {
  const { raw, url, signature } = request;
  if (!signature) throw new HttpError('signature_missing', 'missing X-Twilio-Signature');
  if (bodyHashParameter(url) !== undefined) {
    if (!verifyTwilioSignature(authToken, signature, url, new Map()) || !verifyTwilioBodyHash(raw, url)) {
      throw new HttpError('signature_invalid', 'invalid X-Twilio-Signature');
    }
    return fieldsOfJson(parseJsonBytes(raw));
  }
  const media = classifyContentType(request.contentType);
  const isForm = raw.length === 0 || media?.kind === 'form';
  const params = isForm ? formParams(raw, maxFields) : new Map<string, string[]>();
  if (!verifyTwilioSignature(authToken, signature, url, params)) {
    throw new HttpError('signature_invalid', 'invalid X-Twilio-Signature');
  }
  if (!isForm) {
    throw new HttpError('unsupported_media_type', 'Twilio sends application/x-www-form-urlencoded, or JSON signed through bodySHA256', {
      accepted: ['application/x-www-form-urlencoded'],
    });
  }
  return Object.fromEntries([...params].map(([name, values]) => [name, values[0]]));
}

function formParams(raw: Buffer, maxFields: number): Map<string, string[]> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new HttpError('invalid_encoding', 'the body is not valid UTF-8');
  }
  const params = new Map<string, string[]>();
  let count = 0;
  for (const [name, value] of new URLSearchParams(text)) {
    if (++count > maxFields) throw new HttpError('too_many_fields', 'more parameters than MAX_FIELDS', { max: maxFields });
    const values = params.get(name);
    if (values) values.push(value);
    else params.set(name, [value]);
  }
  return params;
}

/** The JSON variant's object as flat parameters (scalars as Twilio would have form-encoded them). */
function fieldsOfJson(value: unknown): TwilioFields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError('invalid_schema', 'a Twilio JSON callback is an object of parameters');
  }
  const fields: Record<string, string> = {};
  for (const [name, field] of Object.entries(value)) {
    if (field === null || field === undefined) continue;
    fields[name] = typeof field === 'object' ? JSON.stringify(field) : String(field);
  }
  return fields;
}

export interface TwilioDelivery {
  channelId: string;
  channel: TwilioChannel;
  /** Verified by readTwilioCallback. */
  fields: TwilioFields;
  requestId?: string;
  trace?: EventTrace;
}

/** Contract §11 Twilio POST, verified: map → the shared chat accept path. */
export async function acceptTwilio(deps: IngestDeps, delivery: TwilioDelivery): Promise<ChatAck> {
  const { channelId, channel } = delivery;
  const mapping = mapTwilioCallback(delivery.fields, {
    channelId,
    workspaceId: channel.workspaceId,
    inboxId: channel.inboxId,
    accountSid: channel.accountSid,
  });
  return acceptChatEvents(deps, { provider: 'twilio', channelId, mapping, requestId: delivery.requestId, trace: delivery.trace });
}
