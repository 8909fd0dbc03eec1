import { storedSecretField, type ChannelRecord } from '../providers/channel-record';
import { chatSenderOf } from '../providers/channels';
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

/** A channel as the registry keeps it: each secret as its module keeps it (sealed at rest, or only its hash). */
export function toStoredChannel(input: ChannelInput, now = new Date()): StoredChannel {
  const updatedAt = now.toISOString();
  const registrationId = newRegistrationId();
  const { secrets } = recordOf(input.provider);
  const kept: Record<string, unknown> = {};
  const hashes: Record<string, string> = {};
  for (const [name, value] of Object.entries(input)) {
    if (secrets[name] === 'hashed') hashes[storedSecretField(name, 'hashed')] = sha256Hex(String(value));
    else kept[name] = value;
  }
  return { registrationId, ...kept, ...hashes, updatedAt } as StoredChannel;
}

function recordOf(provider: string): ChannelRecord {
  const sender = chatSenderOf(provider);
  if (!sender) throw new Error(`no sender handles ${provider} channels`);
  return sender.chat.record;
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

/** A channel as the admin API shows it: never a secret (verify token, app secret, auth token, secret token), `<name>Set: true` instead. */
export function publicChannel(channelId: string, stored: StoredChannel, baseUrl: string) {
  const url = channelUrl(baseUrl, stored.provider, channelId);
  const { registrationId: _registration, ...channel } = stored;
  const secrets = Object.entries(recordOf(stored.provider).secrets);
  const withheld = new Set(secrets.map(([name, keeping]) => storedSecretField(name, keeping)));
  const shown = Object.fromEntries(Object.entries(channel).filter(([field]) => !withheld.has(field)));
  return { channelId, url, ...shown, ...Object.fromEntries(secrets.map(([name]) => [`${name}Set`, true])) };
}
