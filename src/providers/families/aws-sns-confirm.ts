import { allowedKeyUrl } from '../../keys/allow-list';
import type { KeyFailure } from '../../keys/key-fetcher';
import { snsMessage } from './aws-sns';

/** What the confirmation needs of the key fetcher (src/keys/key-fetcher.ts satisfies it). */
export interface SubscriptionConfirmer {
  confirmSubscription(request: { preset: string; url: string }): Promise<{ ok: true } | KeyFailure>;
}

export type SnsConfirmResult = { ok: true } | { ok: false; reason: 'invalid_handshake' | 'key_unavailable' };

/**
 * `autoConfirm: true` (contract §10.1 D handshakes): for a SubscriptionConfirmation that
 * verifyAwsSns accepted, GET its SubscribeURL only when it is AWS's ConfirmSubscription URL, in
 * the topic's own region, for the message's (listed) topic; otherwise `invalid_handshake`, nothing
 * fetched. Call it only after verifyAwsSns answered ok.
 */
export async function confirmSnsSubscription(raw: Buffer, topicArns: readonly string[], keys: SubscriptionConfirmer): Promise<SnsConfirmResult> {
  const message = snsMessage(raw);
  if (!message || message.Type !== 'SubscriptionConfirmation' || !topicArns.includes(message.TopicArn)) return { ok: false, reason: 'invalid_handshake' };
  const url = allowedKeyUrl('aws-sns-subscribe', message.SubscribeURL);
  const region = message.TopicArn.split(':')[3];
  if (!url || url.searchParams.get('TopicArn') !== message.TopicArn || !url.hostname.startsWith(`sns.${region}.`)) {
    return { ok: false, reason: 'invalid_handshake' };
  }
  const confirmed = await keys.confirmSubscription({ preset: 'aws-sns', url: message.SubscribeURL });
  return confirmed.ok ? confirmed : { ok: false, reason: 'key_unavailable' };
}
