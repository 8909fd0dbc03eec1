import { createHash, timingSafeEqual } from 'node:crypto';

/** The header Telegram sends with every update when setWebhook was given a secret_token. */
export const TELEGRAM_SECRET_HEADER = 'x-telegram-bot-api-secret-token';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * Compares `X-Telegram-Bot-Api-Secret-Token` with the channel's secret in constant time: both
 * are hashed first, so neither the content nor the length of the secret leaks through timing.
 * Returns false, never throws, for a missing or empty header or an empty secret.
 */
export function telegramSecretMatches(presented: string | undefined, secretToken: string): boolean {
  if (typeof presented !== 'string' || presented.length === 0) return false;
  if (typeof secretToken !== 'string' || secretToken.length === 0) return false;
  return timingSafeEqual(digest(presented), digest(secretToken));
}
