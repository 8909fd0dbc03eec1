/**
 * AWS SNS HTTP(S) messages as AWS's developer guide shows them ("Parsing message formats"), signed
 * here as AWS signs them: the canonical `Key\nValue\n` string with the key of a self-signed
 * certificate, RSA-SHA1 (SignatureVersion 1) or RSA-SHA256 (2).
 */
import { sign } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { ClientRequest } from 'node:http';
import MessageValidator from 'sns-validator';

// The module object itself (an `import * as` namespace is a copy under swc): sns-validator calls its `get`.
const https = require('https') as typeof import('node:https');

export const TOPIC = 'arn:aws:sns:us-west-2:123456789012:MyTopic';
export const CERT_URL = 'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem';

export const notification = () => ({
  Type: 'Notification',
  MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
  TopicArn: TOPIC,
  Subject: 'My First Message',
  Message: 'Hello world!',
  Timestamp: '2012-05-02T00:54:06.655Z',
  SignatureVersion: '1',
  Signature: '',
  SigningCertURL: CERT_URL,
  UnsubscribeURL: `https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${TOPIC}:c9135db0-26c4-47ec-8998-413945fb5a96`,
});

const TOKEN =
  '2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736';

export const subscriptionConfirmation = () => ({
  Type: 'SubscriptionConfirmation',
  MessageId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b',
  Token: TOKEN,
  TopicArn: TOPIC,
  Message: `You have chosen to subscribe to the topic ${TOPIC}.\nTo confirm the subscription, visit the SubscribeURL included in this message.`,
  SubscribeURL: `https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=${TOKEN}`,
  Timestamp: '2012-04-26T20:45:04.751Z',
  SignatureVersion: '1',
  Signature: '',
  SigningCertURL: CERT_URL,
});

export const unsubscribeConfirmation = () => ({
  ...subscriptionConfirmation(),
  Type: 'UnsubscribeConfirmation',
  MessageId: '47138184-6831-46b8-8f7c-afc488602d7d',
  Message: `You have chosen to deactivate subscription ${TOPIC}:2bcfbf39-05c3-41de-beaa-fcfcc21c8f55.\nTo cancel this operation and restore the subscription, visit the SubscribeURL included in this message.`,
  Timestamp: '2012-04-26T20:06:41.581Z',
});

const SIGNED: Record<string, string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

export type SnsBody = Record<string, string>;

export function signSns<T extends SnsBody>(message: T, key: string, version: '1' | '2' = '1'): T {
  const canonical = SIGNED[message.Type].filter((k) => k in message).map((k) => `${k}\n${message[k]}\n`).join('');
  const signature = sign(version === '1' ? 'sha1' : 'sha256', Buffer.from(canonical), key).toString('base64');
  return { ...message, SignatureVersion: version, Signature: signature };
}

/**
 * sns-validator (AWS's own Node validator) on the message, its certificate download answered
 * in-process with `pem` (it calls https.get): nothing leaves the machine.
 */
export function snsValidatorAccepts(message: SnsBody, pem: string): Promise<boolean> {
  const get = jestSpyGet(pem);
  return new Promise<boolean>((resolve) => new MessageValidator().validate({ ...message }, (error) => resolve(!error))).finally(() =>
    get.mockRestore(),
  );
}

function jestSpyGet(pem: string) {
  return jest.spyOn(https, 'get').mockImplementation(((_url: unknown, callback: (res: PassThrough & { statusCode: number }) => void) => {
    const res = Object.assign(new PassThrough(), { statusCode: 200 });
    process.nextTick(() => {
      callback(res);
      res.end(pem);
    });
    return new PassThrough() as unknown as ClientRequest;
  }) as unknown as typeof https.get);
}
