import { createHmac } from 'node:crypto';
import { verifyMailgun } from '../../../src/providers/families/mailgun';

const KEY = 'key-5f3a9c0e1b7d4a2f8e6c0b9d7a5f3e1c';
const now = Math.floor(Date.now() / 1000);

// Mailgun signs as its webhook documentation says: hex HMAC-SHA256(signing key, timestamp + token).
// Mailgun ships no Node verifier; the payload is the "opened" event of its documentation.
function delivery(timestamp = String(now), token = 'a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0', key = KEY) {
  return {
    signature: { timestamp, token, signature: createHmac('sha256', key).update(timestamp + token).digest('hex') },
    'event-data': {
      event: 'opened',
      timestamp: 1529006854.329574,
      id: 'DACSsAdVSeGpLid7TN03WA',
      recipient: 'alice@example.com',
      message: { headers: { 'message-id': '20130503182626.18666.16540@sandboxmailgun.example' } },
    },
  };
}

const raw = (value: unknown) => Buffer.from(JSON.stringify(value));
const verify = (value: unknown, secrets = [KEY], nowSeconds = now) => verifyMailgun({ raw: raw(value), secrets, toleranceSeconds: 300, nowSeconds });

describe('mailgun (HMAC over timestamp and token in the body)', () => {
  test('a signed event is accepted: kind, id, and the token to claim once', () => {
    expect(verify(delivery())).toEqual({
      ok: true,
      keySource: 'pinned',
      kind: 'opened',
      deliveryId: 'DACSsAdVSeGpLid7TN03WA',
      claimKey: 'a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0',
    });
  });

  test('the event data is not authenticated: other event data under a captured triple still verifies, and carries the same claim key', () => {
    const captured = delivery();
    const replayed = { ...captured, 'event-data': { ...captured['event-data'], event: 'clicked', id: 'other' } };
    expect(verify(replayed)).toMatchObject({ ok: true, claimKey: captured.signature.token });
  });

  test('the second key verifies while rotating', () => {
    expect(verify(delivery(undefined, undefined, 'key-other'), [KEY, 'key-other'])).toMatchObject({ ok: true });
    expect(verify(delivery(undefined, undefined, 'key-other'))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test.each([
    ['a changed token', (d: ReturnType<typeof delivery>) => ({ ...d, signature: { ...d.signature, token: `${d.signature.token}x` } })],
    ['a changed timestamp', (d: ReturnType<typeof delivery>) => ({ ...d, signature: { ...d.signature, timestamp: String(now + 1) } })],
  ])('%s is signature_invalid', (_name, change) => {
    expect(verify(change(delivery()))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test.each([
    ['stale', now - 301],
    ['from the future', now + 301],
  ])('a %s timestamp is timestamp_out_of_tolerance; within the tolerance it passes', (_name, timestamp) => {
    expect(verify(delivery(String(timestamp)))).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(verify(delivery(String(timestamp)), [KEY], timestamp + Math.sign(now - timestamp) * 299)).toMatchObject({ ok: true });
  });

  test.each([
    ['no signature object', { 'event-data': {} }],
    ['a numeric timestamp', { signature: { ...delivery().signature, timestamp: now } }],
    ['no token', { signature: { ...delivery().signature, token: '' } }],
    ['a signature that is not 64 hex', { signature: { ...delivery().signature, signature: 'abc' } }],
    ['not JSON', 'timestamp=1&token=2'],
  ])('%s is signature_missing', (_name, value) => {
    const body = typeof value === 'string' ? Buffer.from(value) : raw(value);
    expect(verifyMailgun({ raw: body, secrets: [KEY], toleranceSeconds: 300, nowSeconds: now })).toEqual({ ok: false, reason: 'signature_missing' });
  });

  test('an empty key verifies nothing', () => {
    expect(verify(delivery(undefined, undefined, ''), [''])).toEqual({ ok: false, reason: 'signature_invalid' });
  });
});
