import { isValidSlackRequest } from '@slack/bolt';
import request from 'supertest';
import { nowSeconds, opensslHmac } from '../fixtures/providers/openssl';
import { testApp } from '../helpers/app';
import { hookUrl, triggerInput } from '../helpers/http';

/** Contract §10: the kind a preset derives is the catalogue's, so a filter written from the catalogue never drops a delivery. */

const SLACK_SECRET = 'slack-signing-secret-kinds';
// The shape of Slack's block_actions payload (api.slack.com/reference/interaction-payloads/block-actions).
const BLOCK_ACTIONS = {
  type: 'block_actions',
  user: { id: 'U0CA5', username: 'amy', team_id: 'T3MDE' },
  api_app_id: 'A0CA5',
  token: 'Shh_its_a_seekrit',
  container: { type: 'message', message_ts: '1548261231.000200', channel_id: 'C0CA5', is_ephemeral: false },
  trigger_id: '12321423423.333649436676.d8c1bb837935619ccad0f624c448ffb3',
  team: { id: 'T3MDE', domain: 'example' },
  channel: { id: 'C0CA5', name: 'general' },
  response_url: 'https://hooks.slack.com/actions/T3MDE/12321423423/abcdef',
  actions: [{ action_id: 'approve', block_id: 'b1', text: { type: 'plain_text', text: 'Approve' }, value: 'click_me_123', type: 'button', action_ts: '1548426417.840180' }],
};

const eventOf = (record: { value: string }) => JSON.parse(record.value);

/** Signed as Slack documents it (v0= + hex HMAC-SHA256 of `v0:<timestamp>:<body>`), accepted by Bolt's verifier first. */
function slackPost(t: ReturnType<typeof testApp>, path: string, body: string, contentType: string) {
  const timestamp = nowSeconds();
  const signature = `v0=${opensslHmac('sha256', SLACK_SECRET, `v0:${timestamp}:${body}`).toString('hex')}`;
  expect(isValidSlackRequest({ signingSecret: SLACK_SECRET, body, headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp } })).toBe(true);
  return request(t.app)
    .post(hookUrl(path))
    .set('Content-Type', contentType)
    .set('X-Slack-Request-Timestamp', String(timestamp))
    .set('X-Slack-Signature', signature)
    .send(body);
}

describe('Slack interactivity on a trigger', () => {
  const t = testApp();
  beforeAll(() => t.addTrigger('slack-clicks', triggerInput({ provider: { name: 'slack', secrets: [SLACK_SECRET], events: ['interactive.block_actions'] } })));

  it('publishes a signed block_actions click as interactive.block_actions, which the catalogue filter lets through', async () => {
    const body = `payload=${encodeURIComponent(JSON.stringify(BLOCK_ACTIONS))}`;
    const res = await slackPost(t, 'slack-clicks', body, 'application/x-www-form-urlencoded');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(t.sink.records).toHaveLength(1);
    expect(eventOf(t.sink.records[0]).data.provider).toMatchObject({ name: 'slack', kind: 'interactive.block_actions', deliveryId: BLOCK_ACTIONS.trigger_id });
  });
});

describe('Slack Events API messages on a trigger filtered by "message"', () => {
  const t = testApp();
  beforeAll(() => t.addTrigger('slack-messages', triggerInput({ provider: { name: 'slack', secrets: [SLACK_SECRET], events: ['message'] } })));
  // The event_callback envelope (api.slack.com/apis/events-api#callback-field) around the
  // bot_message example of api.slack.com/events/message/bot_message.
  const BOT_MESSAGE = {
    token: 'XXYYZZ',
    team_id: 'T123ABC456',
    api_app_id: 'A123ABC456',
    event: { type: 'message', subtype: 'bot_message', ts: '1358877455.000010', text: 'Pushing is the answer', bot_id: 'BB12033', username: 'github', icons: {} },
    type: 'event_callback',
    event_id: 'Ev123ABC456',
    event_time: 1358877455,
  };

  it('publishes a message with a subtype as kind "message" (contract §10: the kind is event.type)', async () => {
    const res = await slackPost(t, 'slack-messages', JSON.stringify(BOT_MESSAGE), 'application/json');
    expect(res.status).toBe(200);
    expect(t.sink.records).toHaveLength(1);
    const event = eventOf(t.sink.records[0]);
    expect(event.data.provider).toMatchObject({ name: 'slack', kind: 'message', deliveryId: 'Ev123ABC456' });
    expect(event.data.input.event.subtype).toBe('bot_message');
  });
});

describe('a kind the catalogue does not list', () => {
  // octokit/webhooks-methods.js test/verify.test.ts: the signature covers the body only.
  const GITHUB_SECRET = 'mysecret';
  const GITHUB_BODY = '{"foo":"bar"}';
  const GITHUB_SIGNATURE = 'sha256=4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3';
  const t = testApp();
  beforeAll(async () => {
    await t.addTrigger('gh-all', triggerInput({ provider: { name: 'github', secrets: [GITHUB_SECRET] } }));
    await t.addTrigger('gh-not-it', triggerInput({ provider: { name: 'github', secrets: [GITHUB_SECRET], events: ['**', '!brand_new_event'] } }));
  });
  const deliver = (path: string, delivery: string) =>
    request(t.app)
      .post(hookUrl(path))
      .set('Content-Type', 'application/json')
      .set('X-GitHub-Event', 'brand_new_event')
      .set('X-GitHub-Delivery', delivery)
      .set('X-Hub-Signature-256', GITHUB_SIGNATURE)
      .send(GITHUB_BODY);
  const unknownKinds = async () => (await t.deps.metrics.providerUnknownKinds.get()).values.find((v) => v.labels.provider === 'github')?.value ?? 0;

  it('is published, logged and counted as unknown_kind', async () => {
    const res = await deliver('gh-all', 'guid-unknown-1');
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records.at(-1)!).data.provider).toMatchObject({ kind: 'brand_new_event' });
    expect(await unknownKinds()).toBe(1);
    expect(t.logLines.some((line) => line.includes('"reason":"unknown_kind"') && line.includes('brand_new_event'))).toBe(true);
  });

  it('is not published when a glob excludes it (still counted)', async () => {
    const before = t.sink.records.length;
    const res = await deliver('gh-not-it', 'guid-unknown-2');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Webhook event ignored', kind: 'brand_new_event' });
    expect(t.sink.records).toHaveLength(before);
    expect(await unknownKinds()).toBe(2);
  });
});
