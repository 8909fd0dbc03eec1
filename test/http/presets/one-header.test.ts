/**
 * Issue 36, family R1 (contract §10.1 C): one header, an HMAC of the raw body, no timestamp, so a
 * replay is caught by the delivery id or the body claim whatever unsigned id header it carries.
 * Razorpay is accepted first by razorpay's validateWebhookSignature; the others ship no Node
 * verifier, so they are signed as their docs say and checked by openssl. Teams outgoing webhooks
 * use the base64-decoded security token as the key.
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { validateWebhookSignature } from 'razorpay/dist/utils/razorpay-utils';
import request from 'supertest';
import { opensslHmac } from '../../fixtures/providers/openssl';
import { testApp } from '../../helpers/app';
import { expectError } from '../../helpers/http';
import { adminAuth, deliver, describePreset, examplePayload, registerTrigger } from '../../helpers/presets';

const hmac = (algorithm: 'sha1' | 'sha256', key: string | Buffer, body: string) => createHmac(algorithm, key).update(body);

const RAZORPAY_SECRET = 'razorpay-webhook-secret-presets';
describePreset('razorpay', 'razorpay', {
  provider: { name: 'razorpay', secrets: [RAZORPAY_SECRET] },
  body: examplePayload('razorpay', 'payment.captured.json'),
  sign: (body) => ({
    body,
    headers: { 'X-Razorpay-Signature': hmac('sha256', RAZORPAY_SECRET, body).digest('hex'), 'x-razorpay-event-id': 'JMRNbQ5RjaS3e9' },
  }),
  accepts: (d) => validateWebhookSignature(d.body, d.headers['X-Razorpay-Signature'], RAZORPAY_SECRET),
  expected: { name: 'razorpay', kind: 'payment.captured', deliveryId: 'JMRNbQ5RjaS3e9' },
  signatureHeaders: ['X-Razorpay-Signature'],
  otherIdHeader: { 'x-razorpay-event-id': 'JMRNbQ5RjaS3eA' },
});

const TYPEFORM_SECRET = 'typeform-webhook-secret-presets';
describePreset('typeform', 'typeform', {
  provider: { name: 'typeform', secrets: [TYPEFORM_SECRET] },
  body: examplePayload('typeform', 'form_response.json'),
  sign: (body) => ({ body, headers: { 'Typeform-Signature': `sha256=${hmac('sha256', TYPEFORM_SECRET, body).digest('base64')}` } }),
  // Typeform's documented check (typeform.com/developers/webhooks/secure-your-webhooks), by openssl.
  accepts: (d) => d.headers['Typeform-Signature'] === `sha256=${opensslHmac('sha256', TYPEFORM_SECRET, d.body).toString('base64')}`,
  expected: { name: 'typeform', kind: 'form_response', deliveryId: expect.any(String) },
  signatureHeaders: ['Typeform-Signature'],
});

const VERCEL_SECRET = 'vercel-integration-secret-presets';
describePreset('vercel', 'vercel', {
  provider: { name: 'vercel', secrets: [VERCEL_SECRET] },
  body: examplePayload('vercel', 'deployment.created.json'),
  sign: (body) => ({ body, headers: { 'x-vercel-signature': hmac('sha1', VERCEL_SECRET, body).digest('hex') } }),
  // Vercel's documented check (vercel.com/docs/webhooks/webhooks-api#securing-webhooks): hex HMAC-SHA1, by openssl.
  accepts: (d) => d.headers['x-vercel-signature'] === opensslHmac('sha1', VERCEL_SECRET, d.body).toString('hex'),
  expected: { name: 'vercel', kind: 'deployment.created', deliveryId: expect.any(String) },
  signatureHeaders: ['x-vercel-signature'],
});

const BITBUCKET_SECRET = 'bitbucket-webhook-secret-presets';
describePreset('bitbucket', 'bitbucket', {
  provider: { name: 'bitbucket', secrets: [BITBUCKET_SECRET] },
  body: examplePayload('bitbucket', 'repo.push.json'),
  sign: (body) => ({
    body,
    headers: {
      'X-Hub-Signature': `sha256=${hmac('sha256', BITBUCKET_SECRET, body).digest('hex')}`,
      'X-Event-Key': 'repo:push',
      'X-Request-UUID': 'afbc8a7c-1e3f-4ad6-8d58-2cb9e4e1e51b',
      'X-Hook-UUID': 'cb6b8b0f-64b1-4fcb-a0c1-4c3b9e46c2f5',
    },
  }),
  // Bitbucket Cloud's documented check (support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/#Secure-webhooks), by openssl.
  accepts: (d) => d.headers['X-Hub-Signature'] === `sha256=${opensslHmac('sha256', BITBUCKET_SECRET, d.body).toString('hex')}`,
  expected: { name: 'bitbucket', kind: 'repo:push', deliveryId: expect.any(String) },
  signatureHeaders: ['X-Hub-Signature'],
  otherIdHeader: { 'X-Request-UUID': '0b5b4c1e-5b1a-4f6e-9f57-0c9e0d8c2a11' },
});

const COINBASE_SECRET = 'coinbase-commerce-shared-secret-presets';
describePreset('coinbase-commerce', 'coinbase', {
  provider: { name: 'coinbase-commerce', secrets: [COINBASE_SECRET] },
  body: examplePayload('coinbase-commerce', 'charge.confirmed.json'),
  sign: (body) => ({ body, headers: { 'X-CC-Webhook-Signature': hmac('sha256', COINBASE_SECRET, body).digest('hex') } }),
  // Coinbase Commerce's documented check (hex HMAC-SHA256 of the raw body), by openssl.
  accepts: (d) => d.headers['X-CC-Webhook-Signature'] === opensslHmac('sha256', COINBASE_SECRET, d.body).toString('hex'),
  expected: { name: 'coinbase-commerce', kind: 'charge:confirmed', deliveryId: expect.any(String) },
  signatureHeaders: ['X-CC-Webhook-Signature'],
});

/** The security token Teams shows when an outgoing webhook is created: base64 of the HMAC key. */
const TEAMS_TOKEN = Buffer.from('teams-outgoing-webhook-key-32-by').toString('base64');
const TEAMS_KEY = Buffer.from(TEAMS_TOKEN, 'base64');
/** Teams' documented check (learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/add-outgoing-webhook), by openssl with the decoded key. */
const opensslTeams = (body: string) =>
  execFileSync('openssl', ['dgst', '-sha256', '-mac', 'HMAC', '-macopt', `hexkey:${TEAMS_KEY.toString('hex')}`, '-binary'], { input: body }).toString('base64');
const TEAMS_BODY = examplePayload('teams-outgoing', 'message.json');

describePreset('teams-outgoing', 'teams', {
  provider: { name: 'teams-outgoing', secrets: [TEAMS_TOKEN] },
  body: TEAMS_BODY,
  sign: (body) => ({ body, headers: { Authorization: `HMAC ${hmac('sha256', TEAMS_KEY, body).digest('base64')}` } }),
  accepts: (d) => d.headers.Authorization === `HMAC ${opensslTeams(d.body)}`,
  expected: { name: 'teams-outgoing', kind: 'message', deliveryId: '1485983408511' },
  signatureHeaders: ['Authorization'],
});

describe('teams-outgoing: the key is the base64-decoded token, not its text', () => {
  const t = testApp();
  beforeAll(() => registerTrigger(t, 'teams-key', { name: 'teams-outgoing', secrets: [TEAMS_TOKEN] }));

  it('refuses 401 signature_invalid a signature keyed with the token as text', async () => {
    const res = await deliver(t, 'teams-key', { body: TEAMS_BODY, headers: { Authorization: `HMAC ${hmac('sha256', TEAMS_TOKEN, TEAMS_BODY).digest('base64')}` } });
    expect(expectError(res, 'UNAUTHORIZED').details).toMatchObject({ reason: 'signature_invalid' });
    expect(t.sink.records).toHaveLength(0);
  });
});

/**
 * Ashby and Greenhouse send a `ping` (body `action: "ping"`, a kind their catalogue lists) when a
 * webhook is created or tested: like GitHub's and Intercom's, it is answered 2xx and published
 * only when an `events` glob lists it (contract §10). Only the signed `action` matters here.
 */
describe.each<[string, string, (body: string) => Record<string, string>]>([
  ['ashby', 'ashby-webhook-secret-presets', (body) => ({ 'Ashby-Signature': `sha256=${hmac('sha256', 'ashby-webhook-secret-presets', body).digest('hex')}` })],
  ['greenhouse', 'greenhouse-webhook-secret-presets', (body) => ({ Signature: `sha256 ${hmac('sha256', 'greenhouse-webhook-secret-presets', body).digest('hex')}` })],
])('%s: its ping is a provider ping', (name, secret, signed) => {
  const t = testApp();
  const PING = JSON.stringify({ action: 'ping' });
  beforeAll(async () => {
    await registerTrigger(t, `${name}-ping`, { name, secrets: [secret] });
    await registerTrigger(t, `${name}-ping-listed`, { name, secrets: [secret], events: ['ping'] });
  });

  it('answers a signed ping 200 "Webhook event ignored" and publishes nothing when events does not list it', async () => {
    const res = await deliver(t, `${name}-ping`, { body: PING, headers: signed(PING) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Webhook event ignored', kind: 'ping' });
    expect(t.sink.records).toHaveLength(0);
  });

  it('publishes the ping where events lists it', async () => {
    const before = t.sink.records.length;
    const res = await deliver(t, `${name}-ping-listed`, { body: PING, headers: signed(PING) });
    expect(res.status).toBe(200);
    expect(t.sink.records).toHaveLength(before + 1);
    expect(JSON.parse(t.sink.records.at(-1)!.value).data.provider).toMatchObject({ name, kind: 'ping', verified: true });
  });
});

/**
 * The rest of the one-header group (contract §10.1 C, PROVIDER-FAMILIES.md table 1a). None ships a
 * Node verifier, so each is signed as its docs say (node:crypto) and the documented check is run
 * by openssl first; the bodies are the providers' published examples (fixtures/providers/SOURCES.md).
 */
const WOO_SECRET = 'woocommerce-webhook-secret-presets';
const WOO_HEADERS = { 'X-WC-Webhook-Source': 'http://example.com/', 'X-WC-Webhook-Topic': 'order.created', 'X-WC-Webhook-Resource': 'order', 'X-WC-Webhook-Event': 'created', 'X-WC-Webhook-ID': '31' };
describePreset('woocommerce', 'woocommerce', {
  provider: { name: 'woocommerce', secrets: [WOO_SECRET] },
  body: examplePayload('woocommerce', 'order.created.json'),
  sign: (body) => ({
    body,
    headers: { ...WOO_HEADERS, 'X-WC-Webhook-Signature': hmac('sha256', WOO_SECRET, body).digest('base64'), 'X-WC-Webhook-Delivery-ID': '36e520ebabc2fa725092ff4a47acedf2' },
  }),
  // WooCommerce's documented check (woocommerce.github.io/woocommerce-rest-api-docs/#webhooks): base64 HMAC-SHA256 of the body, by openssl.
  accepts: (d) => d.headers['X-WC-Webhook-Signature'] === opensslHmac('sha256', WOO_SECRET, d.body).toString('base64'),
  expected: { name: 'woocommerce', kind: 'order.created', deliveryId: '36e520ebabc2fa725092ff4a47acedf2' },
  signatureHeaders: ['X-WC-Webhook-Signature'],
  // WooCommerce makes a new delivery id for every delivery: the body claim answers the redelivery.
  otherIdHeader: { 'X-WC-Webhook-Delivery-ID': '9f1c2d7e8a3b4c5d6e7f8091a2b3c4d5' },
});

const NOTION_SECRET = 'secret_notion-verification-token-presets';
const NOTION_BODY = examplePayload('notion', 'page.created.json');
describePreset('notion', 'notion', {
  provider: { name: 'notion', secrets: [NOTION_SECRET] },
  body: NOTION_BODY,
  sign: (body) => ({ body, headers: { 'X-Notion-Signature': `sha256=${hmac('sha256', NOTION_SECRET, body).digest('hex')}` } }),
  // Notion's documented check (developers.notion.com/reference/webhooks): hex HMAC-SHA256 of the body keyed by the verification_token, by openssl.
  accepts: (d) => d.headers['X-Notion-Signature'] === `sha256=${opensslHmac('sha256', NOTION_SECRET, d.body).toString('hex')}`,
  expected: { name: 'notion', kind: 'page.created', deliveryId: '367cba44-b6f3-4c92-81e7-6a2e9659efd4' },
  signatureHeaders: ['X-Notion-Signature'],
  // Notion retries the same event (same id) with attempt_number counting up (1-8).
  redeliveryBody: JSON.stringify({ ...JSON.parse(NOTION_BODY), attempt_number: 2 }),
});

const CALCOM_SECRET = 'calcom-webhook-secret-presets';
describePreset('calcom', 'calcom', {
  provider: { name: 'calcom', secrets: [CALCOM_SECRET] },
  body: examplePayload('calcom', 'BOOKING_CREATED.json'),
  sign: (body) => ({ body, headers: { 'X-Cal-Signature-256': hmac('sha256', CALCOM_SECRET, body).digest('hex') } }),
  // Cal.com's documented check (cal.com/docs/developing/guides/automation/webhooks): hex HMAC-SHA256 of the body, by openssl.
  accepts: (d) => d.headers['X-Cal-Signature-256'] === opensslHmac('sha256', CALCOM_SECRET, d.body).toString('hex'),
  // Cal.com sends no delivery id: the body claim of §5 dedupes.
  expected: { name: 'calcom', kind: 'BOOKING_CREATED' },
  signatureHeaders: ['X-Cal-Signature-256'],
});

const CLICKUP_SECRET = 'clickup-webhook-secret-presets';
describePreset('clickup', 'clickup', {
  provider: { name: 'clickup', secrets: [CLICKUP_SECRET] },
  body: examplePayload('clickup', 'taskCreated.json'),
  sign: (body) => ({ body, headers: { 'X-Signature': hmac('sha256', CLICKUP_SECRET, body).digest('hex') } }),
  // ClickUp's documented check (developer.clickup.com/docs/webhooksignature): hex HMAC-SHA256 of the body, by openssl.
  accepts: (d) => d.headers['X-Signature'] === opensslHmac('sha256', CLICKUP_SECRET, d.body).toString('hex'),
  expected: { name: 'clickup', kind: 'taskCreated' },
  signatureHeaders: ['X-Signature'],
});

const ATTIO_SECRET = 'attio-webhook-secret-presets';
describePreset('attio', 'attio', {
  provider: { name: 'attio', secrets: [ATTIO_SECRET] },
  body: examplePayload('attio', 'record.updated.json'),
  sign: (body) => {
    const signature = hmac('sha256', ATTIO_SECRET, body).digest('hex');
    // Attio duplicates Attio-Signature as X-Attio-Signature "to support legacy middleware".
    return { body, headers: { 'Attio-Signature': signature, 'X-Attio-Signature': signature } };
  },
  // Attio's documented check (docs.attio.com/rest-api/guides/webhooks): hex HMAC-SHA256 of the body, by openssl.
  accepts: (d) => d.headers['Attio-Signature'] === opensslHmac('sha256', ATTIO_SECRET, d.body).toString('hex'),
  expected: { name: 'attio', kind: 'record.updated' },
  signatureHeaders: ['Attio-Signature', 'X-Attio-Signature'],
});

const JIRA_SECRET = 'jira-admin-webhook-secret-presets';
describePreset('jira', 'jira', {
  provider: { name: 'jira', secrets: [JIRA_SECRET] },
  body: examplePayload('jira', 'jira.issue_updated.json'),
  sign: (body) => ({ body, headers: { 'X-Hub-Signature': `sha256=${hmac('sha256', JIRA_SECRET, body).digest('hex')}` } }),
  // Jira's documented check for admin webhooks with a secret (developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks), by openssl.
  accepts: (d) => d.headers['X-Hub-Signature'] === `sha256=${opensslHmac('sha256', JIRA_SECRET, d.body).toString('hex')}`,
  expected: { name: 'jira', kind: 'jira:issue_updated' },
  signatureHeaders: ['X-Hub-Signature'],
});

const ASHBY_SECRET = 'ashby-webhook-secret-presets';
describePreset('ashby', 'ashby', {
  provider: { name: 'ashby', secrets: [ASHBY_SECRET] },
  body: examplePayload('ashby', 'candidateStageChange.json'),
  sign: (body) => ({ body, headers: { 'Ashby-Signature': `sha256=${hmac('sha256', ASHBY_SECRET, body).digest('hex')}` } }),
  // Ashby's documented check (developers.ashbyhq.com/docs/authenticating-webhooks), by openssl.
  accepts: (d) => d.headers['Ashby-Signature'] === `sha256=${opensslHmac('sha256', ASHBY_SECRET, d.body).toString('hex')}`,
  // webhookActionId: "the same across retries for a single event" (developers.ashbyhq.com/docs/common-payload-data).
  expected: { name: 'ashby', kind: 'candidateStageChange', deliveryId: '75395d87-4044-4dc4-bc29-0cec185e5f06' },
  signatureHeaders: ['Ashby-Signature'],
});

const GREENHOUSE_SECRET = 'greenhouse-webhook-secret-presets';
describePreset('greenhouse', 'greenhouse', {
  provider: { name: 'greenhouse', secrets: [GREENHOUSE_SECRET] },
  body: examplePayload('greenhouse', 'hire_candidate.json'),
  sign: (body) => ({
    body,
    headers: { Signature: `sha256 ${hmac('sha256', GREENHOUSE_SECRET, body).digest('hex')}`, 'Greenhouse-Event-ID': '3ce5180d-9119-4ddc-9ef6-21edb6e76f8a' },
  }),
  // Greenhouse's documented check (developers.greenhouse.io/webhooks.html#authentication): "sha256 " + hex HMAC-SHA256 of the body, by openssl.
  accepts: (d) => d.headers.Signature === `sha256 ${opensslHmac('sha256', GREENHOUSE_SECRET, d.body).toString('hex')}`,
  expected: { name: 'greenhouse', kind: 'hire_candidate', deliveryId: '3ce5180d-9119-4ddc-9ef6-21edb6e76f8a' },
  signatureHeaders: ['Signature'],
  // Greenhouse documents the id as "associated with this delivery", not as stable across its retries: the body claim answers either way.
  otherIdHeader: { 'Greenhouse-Event-ID': '5d0a9e2c-7b41-4f3e-a1c6-8e2f4b9d0c17' },
});

describe('greenhouse: the catalogue lists the action Greenhouse sends when a candidate is hired', () => {
  const t = testApp();

  it('shows hire_candidate (developers.greenhouse.io/webhooks.html#candidate-hired) among its kinds, not candidate_hired', async () => {
    const res = await request(t.admin).get('/admin/providers').set(adminAuth);
    expect(res.status).toBe(200);
    const greenhouse = res.body.data.find((entry: { name: string }) => entry.name === 'greenhouse');
    expect(greenhouse.eventKinds).toContain('hire_candidate');
    expect(greenhouse.eventKinds).not.toContain('candidate_hired');
  });
});
