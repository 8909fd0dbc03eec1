import { publicProvider, toStoredProvider } from '../providers/trigger-field';
import { sha256Hex } from '../security';
import { newRegistrationId } from './registration';
import type { ChannelInput, StoredChannel, StoredTrigger, TriggerInput } from './schemas';

export function toStoredTrigger(input: TriggerInput, now = new Date()): StoredTrigger {
  const { auth, provider, ...rest } = input;
  // The registration id first: the Redis write script finds it there (registration.ts).
  return {
    registrationId: newRegistrationId(),
    ...rest,
    ...(auth && { auth: { tokenHash: sha256Hex(auth.token), ...(auth.header && { header: auth.header }) } }),
    ...(provider && { provider: toStoredProvider(provider) }),
    updatedAt: now.toISOString(),
  };
}

export function toStoredChannel(input: ChannelInput, now = new Date()): StoredChannel {
  const updatedAt = now.toISOString();
  const registrationId = newRegistrationId();
  if (input.provider !== 'whatsapp') return { registrationId, ...input, updatedAt };
  const { verifyToken, ...rest } = input;
  return { registrationId, ...rest, verifyTokenHash: sha256Hex(verifyToken), updatedAt };
}

export function webhookUrl(baseUrl: string, path: string): string {
  return `${withoutTrailingSlashes(baseUrl)}/api/webhooks/trigger/${path}`;
}

/**
 * `base` without the slashes it ends with. Not `/\/+$/`: the base comes from the Host header,
 * and that regex retries from every slash of a run (16k slashes took 191 ms); this is linear.
 */
export function withoutTrailingSlashes(base: string): string {
  let end = base.length;
  while (end > 0 && base.charCodeAt(end - 1) === 0x2f) end--;
  return base.slice(0, end);
}

/** A trigger as the admin API shows it: never the token or its hash. */
export function publicTrigger(path: string, trigger: StoredTrigger, baseUrl: string) {
  const { auth, provider, registrationId: _registration, ...rest } = trigger;
  return {
    path,
    url: webhookUrl(baseUrl, path),
    ...rest,
    ...(auth && { auth: { header: auth.header ?? 'authorization', tokenSet: true } }),
    ...(provider && { provider: publicProvider(provider) }),
  };
}

export function channelUrl(baseUrl: string, provider: StoredChannel['provider'], channelId: string): string {
  return `${withoutTrailingSlashes(baseUrl)}/api/channels/${provider}/${channelId}`;
}

/** A channel as the admin API shows it: never a secret (verify token, app secret, auth token, secret token). */
export function publicChannel(channelId: string, stored: StoredChannel, baseUrl: string) {
  const url = channelUrl(baseUrl, stored.provider, channelId);
  const { registrationId: _registration, ...channel } = stored;
  switch (channel.provider) {
    case 'whatsapp': {
      const { verifyTokenHash: _verify, appSecret: _secret, ...rest } = channel;
      return { channelId, url, ...rest, verifyTokenSet: true, appSecretSet: true };
    }
    case 'twilio': {
      const { authToken: _token, ...rest } = channel;
      return { channelId, url, ...rest, authTokenSet: true };
    }
    case 'telegram': {
      const { secretToken: _secret, ...rest } = channel;
      return { channelId, url, ...rest, secretTokenSet: true };
    }
  }
}
