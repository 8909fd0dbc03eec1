/**
 * Issue 36, family R3 (contract §10.1 C): a timestamp and signature(s) in one `k=v` header.
 * WorkOS deliveries are signed by @workos-inc/node and accepted by its constructEvent; Paddle's
 * are accepted first by @paddle/paddle-node-sdk; Calendly, Mux, Rootly and TikTok ship no Node
 * verifier, so they are signed as their docs say and checked by openssl, an independent HMAC.
 */
import { createHmac } from 'node:crypto';
import { Paddle } from '@paddle/paddle-node-sdk';
import { WorkOS } from '@workos-inc/node';
import { opensslHmac } from '../../fixtures/providers/openssl';
import { testApp } from '../../helpers/app';
import { deliver, describePreset, eventOf, examplePayload, nowSeconds, registerTrigger, type Delivery } from '../../helpers/presets';

const hmacHex = (secret: string, content: string) => createHmac('sha256', secret).update(content).digest('hex');
/** The signature of `kv` over `content`, checked the way a provider's docs tell a receiver to, by openssl. */
const opensslMatches = (secret: string, content: string, hex: string | undefined) =>
  hex !== undefined && opensslHmac('sha256', secret, content).toString('hex') === hex;
const pairs = (header: string) => Object.fromEntries(header.split(/[,;]/).map((pair) => pair.trim().split('=') as [string, string]));

const workos = new WorkOS('sk_test_presets_unused');
const WORKOS_SECRET = 'workos-webhook-secret-presets';
describePreset('workos', 'workos', {
  provider: { name: 'workos', secrets: [WORKOS_SECRET] },
  body: examplePayload('workos', 'dsync.user.updated.json'),
  async sign(body, at) {
    const t = at * 1000;
    const v1 = await workos.webhooks.computeSignature(t, body, WORKOS_SECRET);
    return { body, headers: { 'WorkOS-Signature': `t=${t}, v1=${v1}` } };
  },
  accepts: (d) =>
    workos.webhooks.constructEvent({ payload: d.body, sigHeader: d.headers['WorkOS-Signature'], secret: WORKOS_SECRET }).then(
      () => true,
      () => false,
    ),
  expected: { name: 'workos', kind: 'dsync.user.updated', deliveryId: 'event_07FKJ843CVE8F7BXQSPFH0M53V' },
  signatureHeaders: ['WorkOS-Signature'],
  toleranceSeconds: 180,
});

const paddle = new Paddle('pdl_sdbx_apikey_presets_unused');
const PADDLE_SECRET = 'pdl_ntfset_01hv8wr6pxk2ncwa1cpdmqczzz_presets';
describePreset('paddle', 'paddle', {
  provider: { name: 'paddle', secrets: [PADDLE_SECRET] },
  body: examplePayload('paddle', 'transaction.paid.json'),
  sign: (body, at) => ({ body, headers: { 'Paddle-Signature': `ts=${at};h1=${hmacHex(PADDLE_SECRET, `${at}:${body}`)}` } }),
  // The SDK allows 5 s; the gateway 300 s (contract §10.1 C), so only the fresh signing is checked here.
  accepts: (d) => paddle.webhooks.isSignatureValid(d.body, PADDLE_SECRET, d.headers['Paddle-Signature']),
  expected: { name: 'paddle', kind: 'transaction.paid', deliveryId: 'ntf_01hv8x2afxb9xvwn4tvb8rkcnt' },
  signatureHeaders: ['Paddle-Signature'],
  toleranceSeconds: 300,
});

it('paddle: its SDK accepts the new secret\'s h1 alone but not before a retired one (it keeps only the last h1)', async () => {
  const body = examplePayload('paddle', 'transaction.paid.json');
  const ts = nowSeconds();
  const fresh = hmacHex(PADDLE_SECRET, `${ts}:${body}`);
  const retired = hmacHex('pdl_ntfset_01hv8wr6pxk2ncwa1cpdmqczzz_retired', `${ts}:${body}`);
  expect(await paddle.webhooks.isSignatureValid(body, PADDLE_SECRET, `ts=${ts};h1=${fresh}`)).toBe(true);
  expect(await paddle.webhooks.isSignatureValid(body, PADDLE_SECRET, `ts=${ts};h1=${fresh};h1=${retired}`)).toBe(false);
});

describe('paddle: a rotated header with several h1 signatures (contract §10.1 A.1: any valid one passes)', () => {
  const t = testApp();
  const OLD_SECRET = 'pdl_ntfset_01hv8wr6pxk2ncwa1cpdmqczzz_retired';
  beforeAll(() => registerTrigger(t, 'paddle-rotated', { name: 'paddle', secrets: [PADDLE_SECRET] }));

  it('accepts the new secret\'s h1 placed before the retired one\'s (Paddle\'s SDK keeps only the last h1)', async () => {
    const body = examplePayload('paddle', 'transaction.paid.json').replace('ntf_01hv8x2afxb9xvwn4tvb8rkcnt', 'ntf_01hv8x2afxb9xvwn4tvb8rkcnu');
    const ts = nowSeconds();
    const header = `ts=${ts};h1=${hmacHex(PADDLE_SECRET, `${ts}:${body}`)};h1=${hmacHex(OLD_SECRET, `${ts}:${body}`)}`;
    const res = await deliver(t, 'paddle-rotated', { body, headers: { 'Paddle-Signature': header } });
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records[0]).data.provider).toMatchObject({ name: 'paddle', deliveryId: 'ntf_01hv8x2afxb9xvwn4tvb8rkcnu' });
  });
});

const CALENDLY_KEY = 'calendly-webhook-signing-key-presets';
describePreset('calendly', 'calendly', {
  provider: { name: 'calendly', secrets: [CALENDLY_KEY] },
  body: examplePayload('calendly', 'invitee.created.json'),
  sign: (body, at) => ({ body, headers: { 'Calendly-Webhook-Signature': `t=${at},v1=${hmacHex(CALENDLY_KEY, `${at}.${body}`)}` } }),
  accepts: (d: Delivery) => {
    const { t, v1 } = pairs(d.headers['Calendly-Webhook-Signature']);
    return opensslMatches(CALENDLY_KEY, `${t}.${d.body}`, v1);
  },
  expected: { name: 'calendly', kind: 'invitee.created' }, // id: the body claim (no id in the payload)
  signatureHeaders: ['Calendly-Webhook-Signature'],
  toleranceSeconds: 180,
});

const MUX_SECRET = 'mux-webhook-signing-secret-presets';
describePreset('mux', 'mux', {
  provider: { name: 'mux', secrets: [MUX_SECRET] },
  body: examplePayload('mux', 'video.asset.ready.json'),
  sign: (body, at) => ({ body, headers: { 'Mux-Signature': `t=${at},v1=${hmacHex(MUX_SECRET, `${at}.${body}`)}` } }),
  accepts: (d: Delivery) => {
    const { t, v1 } = pairs(d.headers['Mux-Signature']);
    return opensslMatches(MUX_SECRET, `${t}.${d.body}`, v1);
  },
  expected: { name: 'mux', kind: 'video.asset.ready', deliveryId: '3a56ac3d-33da-4366-855b-f592d898409d' },
  signatureHeaders: ['Mux-Signature'],
  toleranceSeconds: 300,
});

const ROOTLY_SECRET = 'rootly-webhook-secret-presets';
describePreset('rootly', 'rootly', {
  provider: { name: 'rootly', secrets: [ROOTLY_SECRET] },
  body: examplePayload('rootly', 'alert.created.json'),
  // Rootly signs the timestamp and the body with no separator (docs.rootly.com/configuration/webhooks).
  sign: (body, at) => ({ body, headers: { 'X-Rootly-Signature': `t=${at},v1=${hmacHex(ROOTLY_SECRET, `${at}${body}`)}` } }),
  accepts: (d: Delivery) => {
    const { t, v1 } = pairs(d.headers['X-Rootly-Signature']);
    return opensslMatches(ROOTLY_SECRET, `${t}${d.body}`, v1);
  },
  expected: { name: 'rootly', kind: 'alert.created', deliveryId: expect.any(String) },
  signatureHeaders: ['X-Rootly-Signature'],
  toleranceSeconds: 300,
});

const TIKTOK_SECRET = 'tiktok-client-secret-presets';
describePreset('tiktok', 'tiktok', {
  provider: { name: 'tiktok', secrets: [TIKTOK_SECRET] },
  body: examplePayload('tiktok', 'authorization.removed.json'),
  sign: (body, at) => ({ body, headers: { 'TikTok-Signature': `t=${at},s=${hmacHex(TIKTOK_SECRET, `${at}.${body}`)}` } }),
  accepts: (d: Delivery) => {
    const { t, s } = pairs(d.headers['TikTok-Signature']);
    return opensslMatches(TIKTOK_SECRET, `${t}.${d.body}`, s);
  },
  expected: { name: 'tiktok', kind: 'authorization.removed' }, // id: the body claim (no id in the payload)
  signatureHeaders: ['TikTok-Signature'],
  toleranceSeconds: 300,
});
