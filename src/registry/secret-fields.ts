import { sealedFields } from '../providers/channel-record';
import { CHAT_SENDERS } from '../providers/channels';

/**
 * Every stored field that holds a secret the gateway must read back in clear (to check an
 * HMAC or compare a token), per registry collection. The Redis registry seals exactly these
 * with SECRETS_KEY. A secret the gateway only compares may instead be kept as a hash (like
 * `verifyTokenHash`) and needs no entry. A path names nested fields with dots; `[]` after
 * a name means "each element of this array". A path a record does not have is skipped.
 *
 * A channel's come from its module (`chat.record.secrets`, src/providers/channel-record.ts).
 */
export const SECRET_FIELDS = {
  triggers: ['provider.secrets[]', 'provider.options.verifyToken'],
  channels: CHAT_SENDERS.flatMap((sender) => sealedFields(sender.chat.record)),
} as const satisfies Record<'triggers' | 'channels', readonly string[]>;
