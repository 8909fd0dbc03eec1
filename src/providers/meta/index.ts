import { createHash } from 'node:crypto';
import { z } from 'zod';
import { field, isObject, joinKind, text } from '../body';
import { plainTextEcho } from '../echo';
import { secretMatches } from '../../security';
import type { Provider } from '../provider';
import { rawBodyHmac } from '../schemes/raw-body-hmac';
import { whatsappChat } from './chat';
import { singleWhatsAppKey } from './delivery-id';
import { META_SIGNATURE_HEADER, SAFE_CHALLENGE } from './wire';

const SIGNATURE = META_SIGNATURE_HEADER;

/** X-Hub-Signature-256: `sha256=` and the hex HMAC-SHA256 of the raw body. */
const scheme = rawBodyHmac({ header: SIGNATURE, algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' });

/** Messenger/Instagram `messaging[]` items are named by their subscription field. */
const MESSAGING_FIELDS: Record<string, string> = {
  message: 'messages',
  postback: 'messaging_postbacks',
  delivery: 'message_deliveries',
  read: 'message_reads',
  reaction: 'message_reactions',
  optin: 'messaging_optins',
  referral: 'messaging_referrals',
  account_linking: 'messaging_account_linking',
  message_edit: 'message_edits',
};

function firstEntry(body: unknown): unknown {
  const entries = field(body, 'entry');
  return Array.isArray(entries) ? entries[0] : undefined;
}

function firstOf(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : undefined;
}

/** Everything that identifies the notifications of one POST (Meta sends no delivery id). */
function identities(body: unknown): string[] {
  const ids: string[] = [];
  const entries = field(body, 'entry');
  for (const entry of Array.isArray(entries) ? entries : []) {
    ids.push(`${text(entry, 'id') ?? ''}@${String(field(entry, 'time') ?? '')}`);
    const changes = field(entry, 'changes');
    for (const change of Array.isArray(changes) ? changes : []) {
      const messages = field(change, 'value', 'messages');
      const statuses = field(change, 'value', 'statuses');
      for (const m of Array.isArray(messages) ? messages : []) ids.push(`m:${text(m, 'id') ?? ''}`);
      for (const s of Array.isArray(statuses) ? statuses : []) ids.push(`s:${text(s, 'id') ?? ''}:${text(s, 'status') ?? ''}`);
      if (!Array.isArray(messages) && !Array.isArray(statuses)) ids.push(`c:${text(change, 'field') ?? ''}:${JSON.stringify(field(change, 'value') ?? null)}`);
    }
    const messaging = field(entry, 'messaging');
    for (const item of Array.isArray(messaging) ? messaging : []) {
      ids.push(`e:${text(item, 'message', 'mid') ?? ''}:${String(field(item, 'timestamp') ?? '')}:${JSON.stringify(item)}`);
    }
  }
  return ids;
}

export const meta: Provider = {
  name: 'meta',
  title: 'Meta (Messenger, Instagram, WhatsApp Business and other Graph API webhooks on a plain trigger)',
  verifies: 'X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body (with Meta\'s \\uXXXX escapes)>, key = the App Secret',
  deliveryIdSource: 'none from Meta: the signed body\'s WhatsApp message id (status id:status) when a POST carries exactly one, as the WhatsApp channel dedupes it; else synthesized from the entries (entry id and time, WhatsApp message ids and status ids, Messenger mids)',
  deliveryIdFrom: 'signed',
  signatureHeaders: () => [SIGNATURE, 'x-hub-signature'],
  optionsSchema: z.strictObject({ verifyToken: z.string().min(1).max(512).optional() }),
  precheck: scheme.precheck,
  verify: scheme.verify,
  /** Meta posts JSON only. */
  bodyKind: () => 'json',
  handshake: {
    method: 'GET',
    signed: false,
    describe: 'GET ?hub.mode=subscribe&hub.verify_token=…&hub.challenge=… : 200 text/plain challenge when the token equals options.verifyToken, else 403',
    answer({ query, options }) {
      // A GET with any hub.* parameter is the handshake, answered 200, 403 or 400 alike on every
      // route (contract §3, §10); a GET with none is no handshake (405 on a trigger, 400 on a channel).
      if (!Object.keys(query).some((name) => name.startsWith('hub.'))) return undefined;
      const challenge = query['hub.challenge'];
      if (query['hub.mode'] !== 'subscribe' || typeof challenge !== 'string' || challenge === '') return 'invalid';
      const token = query['hub.verify_token'];
      // No token at all is a malformed handshake (400, contract §3); a wrong one is refused (403).
      if (typeof token !== 'string') return 'invalid';
      const hash = options.verifyTokenHash;
      if (typeof hash !== 'string') return 'forbidden';
      if (!secretMatches(token, hash)) return 'forbidden';
      if (!SAFE_CHALLENGE.test(challenge)) return 'invalid';
      return plainTextEcho(challenge);
    },
  },
  kind(_headers, body) {
    const object = text(body, 'object');
    const entry = firstEntry(body);
    const change = firstOf(field(entry, 'changes'));
    if (change !== undefined) {
      const name = text(change, 'field');
      const value = field(change, 'value');
      if (object === 'whatsapp_business_account' && name === 'messages' && field(value, 'messages') === undefined && field(value, 'statuses') !== undefined) {
        return joinKind(object, 'statuses');
      }
      return joinKind(object, name);
    }
    const item = firstOf(field(entry, 'messaging'));
    if (isObject(item)) {
      const key = Object.keys(MESSAGING_FIELDS).find((name) => Object.hasOwn(item, name));
      return joinKind(object, key ? MESSAGING_FIELDS[key] : undefined);
    }
    return joinKind(object);
  },
  deliveryId(_headers, body) {
    const single = singleWhatsAppKey(body);
    if (single !== undefined) return single;
    const ids = identities(body);
    return ids.length > 0 ? `meta:${createHash('sha256').update(ids.join('\n')).digest('hex')}` : undefined;
  },
  chat: whatsappChat,
};
