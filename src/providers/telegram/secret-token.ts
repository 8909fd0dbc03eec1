/** The header Telegram sends the webhook's secret_token in. */
export const TELEGRAM_TOKEN_HEADER = 'x-telegram-bot-api-secret-token';

/** What setWebhook accepts as a secret_token: 1-256 of A-Z a-z 0-9 _ -. */
export const SECRET_TOKEN_PATTERN = /^[A-Za-z0-9_-]{1,256}$/;
