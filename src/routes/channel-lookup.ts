import type { AppDeps } from '../app-deps';
import type { Config } from '../config/schema';
import { Refusal } from '../outcomes/refusal';
import type { Bucket } from '../ratelimit/limiter';
import { CHANNEL_ID_PATTERN, type StoredChannel } from '../registry/schemas';
import { lookup } from './lookup';

/**
 * The registered channel of this provider, or 404: a channel of another provider is as
 * unknown on this route as an id never registered (no probing of what exists).
 */
export async function findChannel<P extends StoredChannel['provider']>(
  deps: AppDeps,
  provider: P,
  channelId: string,
): Promise<Extract<StoredChannel, { provider: P }>> {
  const channel = CHANNEL_ID_PATTERN.test(channelId) ? await lookup(deps.registry.channels, channelId) : undefined;
  if (channel?.provider !== provider) throw new Refusal('not_found', 'no such channel');
  return channel as Extract<StoredChannel, { provider: P }>;
}

/** The buckets a channel's verified callback is charged to. */
export function channelBuckets(config: Config, channelId: string, channel: StoredChannel): Bucket[] {
  return [
    { kind: 'channel', id: channelId, ...config.RATE_LIMIT_DEFAULT },
    { kind: 'workspace', id: channel.workspaceId, ...config.RATE_LIMIT_WORKSPACE },
  ];
}
