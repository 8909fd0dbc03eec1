import { dropbox } from '../../../src/providers/dropbox';
import { intercom } from '../../../src/providers/intercom';
import { pagerduty } from '../../../src/providers/pagerduty';
import { sentry } from '../../../src/providers/sentry';
import { x } from '../../../src/providers/x';
import { accepted, check, refusedWith, tampered } from './support';

// These providers document their scheme but publish no fixed vector, and have no official Node
// signing SDK. Each vector below was computed outside Node with openssl, e.g.
//   printf '%s' "$BODY" | openssl dgst -sha1 -hmac intercom-client-secret
// Schemes: Intercom developers.intercom.com/docs/references/webhooks/webhook-models#signed-notifications;
// PagerDuty developer.pagerduty.com/docs/verifying-signatures; Sentry docs.sentry.io/organization/integrations/integration-platform/webhooks/#sentry-hook-signature;
// Dropbox www.dropbox.com/developers/reference/webhooks#signature; X docs.x.com (Account Activity API, securing webhooks).

const INTERCOM = '{"type":"notification_event","app_id":"abc123","id":"notif_ccd8a4d2-3b4d-4c5b-9a0f-1e2d3c4b5a69","topic":"conversation.user.created","delivery_attempts":1,"created_at":1700000000,"data":{"item":{"type":"conversation","id":"1"}}}';
const PAGERDUTY = '{"event":{"id":"01DEN2BQJ8IYXAVZ4YKFAA7GK6","event_type":"incident.triggered","resource_type":"incident","occurred_at":"2023-11-14T22:13:20.000Z","data":{"id":"PGR0VU2","type":"incident"}}}';
const PD_SECRET = 'c2VjcmV0LWxvb2tzLWxpa2UtYmFzZTY0';
const PD_SIG = 'v1=3bdf9b690dab2fb3b01fd61164bacf79a18048ca4912108213b3a8f942d9c560';
const PD_OLD_SIG = 'v1=deb9a15fb88f1975d8e769fb883551bea023720d4c8fbbd83f4d3b10129796e2';
const SENTRY = '{"action":"created","installation":{"uuid":"7a485448-a9e2-4c85-8a3c-4f44175783c9"},"data":{"issue":{"id":"1170820242","title":"Error: boom"}},"actor":{"type":"application","id":"sentry","name":"Sentry"}}';
const DROPBOX = '{"list_folder":{"accounts":["dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc"]},"delta":{"users":[12345678]}}';
const X_BODY = '{"for_user_id":"2244994945","direct_message_events":[{"type":"message_create","id":"954491830116155396","created_timestamp":"1516403560557"}]}';

describe('intercom preset', () => {
  const headers = { 'x-hub-signature': 'sha1=928d0234d5a4037b511c5cd224f153a86c76445b' };
  it('accepts the vector (HMAC-SHA1), refuses one changed byte, reads topic and id', () => {
    expect(check(intercom, { raw: INTERCOM, headers, secrets: ['intercom-client-secret'] })).toMatchObject(accepted);
    expect(check(intercom, { raw: tampered(INTERCOM), headers, secrets: ['intercom-client-secret'] })).toEqual(refusedWith('signature_invalid'));
    expect(intercom.kind({}, JSON.parse(INTERCOM))).toBe('conversation.user.created');
    expect(intercom.deliveryId({}, JSON.parse(INTERCOM))).toBe('notif_ccd8a4d2-3b4d-4c5b-9a0f-1e2d3c4b5a69');
  });
});

describe('pagerduty preset', () => {
  it('trap: the secret looks like base64 but is used as UTF-8', () => {
    expect(check(pagerduty, { raw: PAGERDUTY, headers: { 'x-pagerduty-signature': PD_SIG }, secrets: [PD_SECRET] })).toMatchObject(accepted);
    const decoded = Buffer.from(PD_SECRET, 'base64').toString('utf8');
    expect(check(pagerduty, { raw: PAGERDUTY, headers: { 'x-pagerduty-signature': PD_SIG }, secrets: [decoded] })).toEqual(refusedWith('signature_invalid'));
  });

  it('trap: a comma list with one v1 per active secret passes on any of them; unknown versions are skipped', () => {
    const list = `v2=abcd,${PD_OLD_SIG},${PD_SIG}`;
    expect(check(pagerduty, { raw: PAGERDUTY, headers: { 'x-pagerduty-signature': list }, secrets: [PD_SECRET] })).toMatchObject(accepted);
    expect(check(pagerduty, { raw: PAGERDUTY, headers: { 'x-pagerduty-signature': list }, secrets: ['old-pagerduty-secret'] })).toMatchObject(accepted);
    expect(check(pagerduty, { raw: tampered(PAGERDUTY), headers: { 'x-pagerduty-signature': list }, secrets: [PD_SECRET] })).toEqual(refusedWith('signature_invalid'));
  });

  it('reads event.event_type and event.id', () => {
    expect(pagerduty.kind({}, JSON.parse(PAGERDUTY))).toBe('incident.triggered');
    expect(pagerduty.deliveryId({}, JSON.parse(PAGERDUTY))).toBe('01DEN2BQJ8IYXAVZ4YKFAA7GK6');
  });
});

describe('sentry preset', () => {
  const headers = { 'sentry-hook-signature': 'b5304eb9dd1417dd6511e75f691bdaeb8cee864cf088c2edb8f623f8302d6e73', 'sentry-hook-resource': 'issue', 'request-id': 'req-1' };
  it('accepts the vector, refuses one changed byte, reads resource.action and Request-ID', () => {
    expect(check(sentry, { raw: SENTRY, headers, secrets: ['sentry-client-secret'] })).toMatchObject(accepted);
    expect(check(sentry, { raw: tampered(SENTRY), headers, secrets: ['sentry-client-secret'] })).toEqual(refusedWith('signature_invalid'));
    expect(sentry.kind(headers, JSON.parse(SENTRY))).toBe('issue.created');
    expect(sentry.deliveryId(headers, {})).toBe('req-1');
  });
});

describe('dropbox preset', () => {
  const headers = { 'x-dropbox-signature': '450ef9f57aef4016f16da031b9d4597c8f4672296e2d3b8d98fd21af6db3fd6a' };
  it('accepts the vector, refuses one changed byte; one kind, no delivery id', () => {
    expect(check(dropbox, { raw: DROPBOX, headers, secrets: ['dropbox-app-secret'] })).toMatchObject(accepted);
    expect(check(dropbox, { raw: tampered(DROPBOX), headers, secrets: ['dropbox-app-secret'] })).toEqual(refusedWith('signature_invalid'));
    expect(dropbox.kind({}, JSON.parse(DROPBOX))).toBe('list_folder');
    expect(dropbox.deliveryId({}, JSON.parse(DROPBOX))).toBeUndefined();
  });

  it('echoes the challenge as nosniff text, and refuses one too long to reflect', () => {
    expect(dropbox.handshake?.answer({ query: { challenge: 'abc' }, body: undefined, secret: 's', options: {} })).toMatchObject({
      body: 'abc',
      headers: { 'X-Content-Type-Options': 'nosniff' },
    });
    expect(dropbox.handshake?.answer({ query: { challenge: 'a'.repeat(1025) }, body: undefined, secret: 's', options: {} })).toBe('invalid');
  });
});

describe('x preset', () => {
  const headers = { 'x-twitter-webhooks-signature': 'sha256=EHciVYvYyPhhttTfLKcOlzPZbk4lGXYh4j3W1J+Ra8Q=' };
  it('accepts the vector (base64), refuses one changed byte, reads the *_events key', () => {
    expect(check(x, { raw: X_BODY, headers, secrets: ['x-consumer-secret'] })).toMatchObject(accepted);
    expect(check(x, { raw: tampered(X_BODY), headers, secrets: ['x-consumer-secret'] })).toEqual(refusedWith('signature_invalid'));
    expect(x.kind({}, JSON.parse(X_BODY))).toBe('direct_message_events');
    expect(x.deliveryId({}, JSON.parse(X_BODY))).toMatch(/^x:2244994945:direct_message_events:[0-9a-f]{64}$/);
  });

  it('answers the CRC with sha256=<base64 HMAC(consumer secret, crc_token)>', () => {
    // printf %s crc-token-123 | openssl dgst -sha256 -hmac x-consumer-secret -binary | base64
    expect(x.handshake?.answer({ query: { crc_token: 'crc-token-123' }, body: undefined, secret: 'x-consumer-secret', options: {} })).toMatchObject({
      body: '{"response_token":"sha256=YUsT0aLbF0VtFGcLCND1EU/aQP0sjPL19cPulVY7Wes="}',
    });
  });
});
