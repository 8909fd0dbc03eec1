import { sha256Hex } from '../security';
import type { ChannelInput, StoredChannel, StoredTrigger, TriggerInput } from './schemas';

export function toStoredTrigger(input: TriggerInput, now = new Date()): StoredTrigger {
  const { auth, ...rest } = input;
  return {
    ...rest,
    ...(auth && { auth: { tokenHash: sha256Hex(auth.token), ...(auth.header && { header: auth.header }) } }),
    updatedAt: now.toISOString(),
  };
}

export function toStoredChannel(input: ChannelInput, now = new Date()): StoredChannel {
  const { verifyToken, ...rest } = input;
  return { ...rest, verifyTokenHash: sha256Hex(verifyToken), updatedAt: now.toISOString() };
}

export function webhookUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/api/webhooks/trigger/${path}`;
}

/** A trigger as the admin API shows it: never the token or its hash. */
export function publicTrigger(path: string, trigger: StoredTrigger, baseUrl: string) {
  const { auth, ...rest } = trigger;
  return {
    path,
    url: webhookUrl(baseUrl, path),
    ...rest,
    ...(auth && { auth: { header: auth.header ?? 'authorization', tokenSet: true } }),
  };
}

/** A channel as the admin API shows it: never the verify token or the app secret. */
export function publicChannel(channelId: string, channel: StoredChannel, baseUrl: string) {
  const { verifyTokenHash: _verify, appSecret: _secret, ...rest } = channel;
  return {
    channelId,
    url: `${baseUrl.replace(/\/+$/, '')}/api/channels/whatsapp/${channelId}`,
    ...rest,
    verifyTokenSet: true,
    appSecretSet: true,
  };
}
