import { idText, isObject, UNKNOWN_KIND } from '../body';
import type { Provider } from '../provider';
import { tokenScheme } from '../schemes/token-check';
import { telegramChat } from './chat';
import { SECRET_TOKEN_PATTERN, TELEGRAM_TOKEN_HEADER } from './secret-token';

const TOKEN = TELEGRAM_TOKEN_HEADER;

export const telegram: Provider = {
  name: 'telegram',
  title: 'Telegram Bot API (setWebhook with secret_token)',
  verifies: 'X-Telegram-Bot-Api-Secret-Token equals the secret (the secret_token given to setWebhook), constant time',
  deliveryIdSource: 'body update_id',
  /** The secret itself is the credential: it authenticates the sender, not the body (contract §10.A 8). */
  family: 'token',
  authenticates: 'sender',
  signatureHeaders: () => [TOKEN],
  secretProblem: (secret) => (SECRET_TOKEN_PATTERN.test(secret) ? undefined : 'a Telegram secret_token is 1-256 of A-Z a-z 0-9 _ -'),
  ...tokenScheme(TOKEN),
  /** The Bot API posts JSON only. */
  bodyKind: () => 'json',
  /** An Update has update_id and exactly one optional field: that field is the kind. */
  kind(_headers, body) {
    if (!isObject(body)) return UNKNOWN_KIND;
    return Object.keys(body).find((key) => key !== 'update_id') ?? UNKNOWN_KIND;
  },
  deliveryId: (_headers, body) => idText(body, 'update_id'),
  chat: telegramChat,
};
