import { slack } from '../../../src/providers/slack';
import { accepted, check, refusedWith, tampered } from './support';

// Published vector: Slack's "Verifying requests from Slack" page, as pinned in
// slackapi/python-slack-sdk tests/slack_sdk/signature/test_signature_verifier.py.
const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const TIMESTAMP = 1531420618;
const SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';
const headers = { 'x-slack-request-timestamp': String(TIMESTAMP), 'x-slack-signature': SIGNATURE };

describe('slack preset', () => {
  it('accepts the published vector (a slash command form body)', () => {
    expect(check(slack, { raw: BODY, headers, secrets: [SECRET], now: TIMESTAMP })).toMatchObject(accepted);
  });

  it('refuses it with one byte changed, or with another secret', () => {
    expect(check(slack, { raw: tampered(BODY), headers, secrets: [SECRET], now: TIMESTAMP })).toEqual(refusedWith('signature_invalid'));
    expect(check(slack, { raw: BODY, headers, secrets: ['another'], now: TIMESTAMP })).toEqual(refusedWith('signature_invalid'));
  });

  it('refuses a stale or a future timestamp (both directions)', () => {
    expect(check(slack, { raw: BODY, headers, secrets: [SECRET], now: TIMESTAMP + 301 })).toEqual(refusedWith('timestamp_out_of_tolerance'));
    expect(check(slack, { raw: BODY, headers, secrets: [SECRET], now: TIMESTAMP - 301 })).toEqual(refusedWith('timestamp_out_of_tolerance'));
  });

  it.each([
    ['no signature', { 'x-slack-request-timestamp': String(TIMESTAMP) }, 'signature_missing'],
    ['no timestamp', { 'x-slack-signature': SIGNATURE }, 'signature_missing'],
    ['another version', { ...headers, 'x-slack-signature': SIGNATURE.replace('v0=', 'v1=') }, 'signature_missing'],
  ])('refuses %s', (_label, h, reason) => {
    expect(check(slack, { raw: BODY, headers: h, secrets: [SECRET], now: TIMESTAMP })).toEqual(refusedWith(reason));
  });

  it('answers url_verification with the challenge, and nothing else', () => {
    const answer = slack.handshake?.answer({ query: {}, body: { type: 'url_verification', challenge: 'abc', token: 't' }, secret: SECRET, options: {} });
    expect(answer).toEqual({ status: 200, headers: { 'Content-Type': 'application/json' }, body: '{"challenge":"abc"}' });
    expect(slack.handshake?.answer({ query: {}, body: { type: 'event_callback' }, secret: SECRET, options: {} })).toBeUndefined();
    expect(slack.handshake?.signed).toBe(true);
  });

  it('reads the kinds of events, interactivity and slash commands', () => {
    expect(slack.kind({}, { type: 'event_callback', event: { type: 'message', subtype: 'channel_join' } })).toBe('message');
    expect(slack.kind({}, { type: 'event_callback', event: { type: 'app_mention' } })).toBe('app_mention');
    expect(slack.kind({}, { payload: '{"type":"block_actions","trigger_id":"13345224609.738474920.8088930838d88f008e0"}' })).toBe('interactive.block_actions');
    expect(slack.kind({}, { command: '/webhook-collect', trigger_id: 'x' })).toBe('command./webhook-collect');
  });

  it('uses event_id as the delivery id (the same on X-Slack-Retry-Num retries), else trigger_id', () => {
    expect(slack.deliveryId({ 'x-slack-retry-num': '1' }, { type: 'event_callback', event_id: 'Ev0PV52K21', event: {} })).toBe('Ev0PV52K21');
    expect(slack.deliveryId({}, { payload: '{"type":"block_actions","trigger_id":"tr-1"}' })).toBe('tr-1');
    expect(slack.deliveryId({}, { command: '/x', trigger_id: 'tr-2' })).toBe('tr-2');
    expect(slack.acknowledgement).toBe('empty');
  });
});
