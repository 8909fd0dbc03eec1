import { hmac } from '../../../src/providers/hmac';
import { microsoftGraph } from '../../../src/providers/microsoft-graph';
import { accepted, check, refusedWith } from './support';

// Microsoft Graph signs nothing: learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks
// ("validate the clientState"); the example notification of that page, with our clientState.
const GRAPH = (clientState: string) =>
  JSON.stringify({
    value: [
      {
        id: 'lsgTZMr9KwAAA',
        subscriptionId: '7f105c7d-2dc5-4530-97cd-4e7ae6534c07',
        subscriptionExpirationDateTime: '2016-11-20T18:23:45.9356913Z',
        clientState,
        changeType: 'created',
        resource: 'users/{user_guid}@{tenant_guid}/messages/{long_id_string}',
        tenantId: '84bd8158-6d4d-4958-8b9f-9d6445542f95',
        resourceData: { '@odata.type': '#Microsoft.Graph.Message', '@odata.id': 'x', '@odata.etag': 'W/"CQAAABYAAADkrWGo7bouTKlsgTZMr9KwAAAUWRHf"', id: '{long_id_string}' },
      },
    ],
  });

describe('microsoft-graph preset', () => {
  it('accepts a notification whose clientState is the secret, refuses another or none', () => {
    expect(check(microsoftGraph, { raw: GRAPH('secretClientValue'), headers: {}, secrets: ['secretClientValue'] })).toMatchObject(accepted);
    expect(check(microsoftGraph, { raw: GRAPH('forged'), headers: {}, secrets: ['secretClientValue'] })).toEqual(refusedWith('signature_invalid'));
    expect(check(microsoftGraph, { raw: '{"value":[{"changeType":"created"}]}', headers: {}, secrets: ['s'] })).toEqual(refusedWith('signature_missing'));
    expect(check(microsoftGraph, { raw: 'not json', headers: {}, secrets: ['s'] })).toEqual(refusedWith('signature_missing'));
  });

  it('reads changeType or the lifecycle event, and synthesizes a delivery id', () => {
    expect(microsoftGraph.kind({}, JSON.parse(GRAPH('s')))).toBe('created');
    expect(microsoftGraph.kind({}, { value: [{ lifecycleEvent: 'reauthorizationRequired' }] })).toBe('lifecycle.reauthorizationRequired');
    expect(microsoftGraph.deliveryId({}, JSON.parse(GRAPH('s')))).toMatch(/^graph:[0-9a-f]{64}$/);
  });

  it('answers the validationToken as plain text', () => {
    expect(microsoftGraph.handshake?.answer({ query: { validationToken: 'Validation: Testing' }, body: undefined, secret: 's', options: {} })).toMatchObject({
      status: 200,
      body: 'Validation: Testing',
    });
  });
});

// The generic scheme reproduces published vectors of named providers from options alone.
describe('hmac preset', () => {
  it('with GitHub\'s options accepts octokit\'s published vector (octokit/webhooks-methods.js test/verify.test.ts)', () => {
    const options = { header: 'x-hub-signature-256', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' };
    const headers = { 'x-hub-signature-256': 'sha256=4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3' };
    expect(check(hmac, { raw: '{"foo":"bar"}', headers, secrets: ['mysecret'], options })).toMatchObject(accepted);
    expect(check(hmac, { raw: '{"foo":"baz"}', headers, secrets: ['mysecret'], options })).toEqual(refusedWith('signature_invalid'));
  });

  it('with Slack\'s options (timestamp header, v0:{timestamp}:{body}) accepts Slack\'s published vector', () => {
    // slackapi/python-slack-sdk tests/slack_sdk/signature/test_signature_verifier.py
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const options = { header: 'x-slack-signature', algorithm: 'sha256', encoding: 'hex', prefix: 'v0=', timestampHeader: 'x-slack-request-timestamp', signedContent: 'v0:{timestamp}:{body}' };
    const headers = { 'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503', 'x-slack-request-timestamp': '1531420618' };
    expect(check(hmac, { raw: body, headers, secrets: ['8f742231b10e8888abcd99yyyzzz85a5'], options, now: 1531420618 })).toMatchObject(accepted);
    expect(check(hmac, { raw: body, headers, secrets: ['8f742231b10e8888abcd99yyyzzz85a5'], options, now: 1531420618 + 301 })).toEqual(
      refusedWith('timestamp_out_of_tolerance'),
    );
  });

  it('with Shopify\'s options (base64, no prefix) accepts Shopify\'s published vector', () => {
    const options = { header: 'x-shopify-hmac-sha256', algorithm: 'sha256', encoding: 'base64' };
    const headers = { 'x-shopify-hmac-sha256': 'B23tXN681gZ0qIWNRrgtzBE9XSDo5yaUu6wfmhu3a7g=' };
    expect(check(hmac, { raw: '{"foo": "bar"}', headers, secrets: ['test_secret_key'], options })).toMatchObject(accepted);
  });

  it('validates its options: {body} exactly once, {timestamp} only with a timestamp header', () => {
    const base = { header: 'x-sig', algorithm: 'sha256', encoding: 'hex' };
    expect(hmac.optionsSchema?.safeParse(base).success).toBe(true);
    expect(hmac.optionsSchema?.safeParse({ ...base, signedContent: '{timestamp}.{body}' }).success).toBe(false);
    expect(hmac.optionsSchema?.safeParse({ ...base, signedContent: '{timestamp}', timestampHeader: 'x-ts' }).success).toBe(false);
    expect(hmac.optionsSchema?.safeParse({ ...base, algorithm: 'md5' }).success).toBe(false);
  });

  it('takes a timestampHeader only when signedContent signs {timestamp} (contract §10), and only then signs the timestamp', () => {
    const base = { header: 'x-sig', algorithm: 'sha256', encoding: 'hex', timestampHeader: 'x-ts' };
    expect(hmac.optionsSchema?.safeParse(base).success).toBe(false);
    expect(hmac.optionsSchema?.safeParse({ ...base, signedContent: 'v1:{body}' }).success).toBe(false);
    expect(hmac.optionsSchema?.safeParse({ ...base, signedContent: '{timestamp}.{body}' }).success).toBe(true);
    const signs = hmac.signsTimestamp as (options: Record<string, unknown>) => boolean;
    // A trigger stored before the rule (never re-validated on load) no longer claims a signed timestamp.
    expect(signs(base)).toBe(false);
    expect(signs({ ...base, signedContent: 'v1:{body}' })).toBe(false);
    expect(signs({ ...base, signedContent: '{timestamp}.{body}' })).toBe(true);
  });
});
