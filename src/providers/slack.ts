import type { IncomingHttpHeaders } from 'node:http';
import { embeddedJson, field, joinKind, text } from './body';
import type { Provider } from './provider';
import { v0TimestampHmac } from './schemes/v0-timestamp';

const SIGNATURE = 'x-slack-signature';
const TIMESTAMP = 'x-slack-request-timestamp';

/** Interactivity arrives as a form with the JSON in `payload`. */
function interaction(body: unknown): unknown {
  return embeddedJson(field(body, 'payload'));
}

/**
 * The `payload` field of a form body, read from the bytes Slack signed: the body parser unwraps
 * a lone `payload=` into its JSON, which would make a click look like an Events API body.
 */
function formPayload(headers: IncomingHttpHeaders, raw: Buffer | undefined): unknown {
  const type = String(headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (!raw || type !== 'application/x-www-form-urlencoded') return undefined;
  return embeddedJson(new URLSearchParams(raw.toString('utf8')).get('payload') ?? undefined);
}

const scheme = v0TimestampHmac({ signatureHeader: SIGNATURE, timestampHeader: TIMESTAMP });

export const slack: Provider = {
  name: 'slack',
  title: 'Slack (Events API, interactivity, slash commands)',
  verifies: 'X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:{X-Slack-Request-Timestamp}:{raw body}">; the timestamp within toleranceSeconds both ways',
  deliveryIdSource: 'body event_id (the same on X-Slack-Retry-Num retries); interactivity and commands: trigger_id',
  deliveryIdFrom: 'signed',
  signsTimestamp: true,
  signatureHeaders: () => [SIGNATURE],
  precheck: scheme.precheck,
  verify: scheme.verify,
  handshake: {
    method: 'POST',
    signed: true,
    describe: 'url_verification (signed POST): answered 200 {"challenge"}',
    answer({ body }) {
      const challenge = text(body, 'challenge');
      if (text(body, 'type') !== 'url_verification' || !challenge) return undefined;
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ challenge }) };
    },
  },
  kind(headers, body, raw) {
    const clicked = text(formPayload(headers, raw), 'type');
    if (clicked) return `interactive.${clicked}`;
    const type = text(body, 'type');
    // event.type alone (contract §10): a message's subtype (bot_message, message_changed…) stays
    // in the body, so a filter on "message" takes every message.
    if (type === 'event_callback') return joinKind(text(body, 'event', 'type'));
    if (type) return type;
    const payloadType = text(interaction(body), 'type');
    if (payloadType) return `interactive.${payloadType}`;
    const command = text(body, 'command');
    return command ? `command.${command}` : joinKind();
  },
  deliveryId: (_headers, body) => text(body, 'event_id') ?? text(interaction(body), 'trigger_id') ?? text(body, 'trigger_id'),
  acknowledgement: 'empty',
};
