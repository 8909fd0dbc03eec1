import { gitlab } from '../../../src/providers/gitlab';
import { telegram } from '../../../src/providers/telegram';
import { accepted, check, refusedWith } from './support';

// Telegram Bot API (core.telegram.org/bots/api#setwebhook): "X-Telegram-Bot-Api-Secret-Token" carries
// the secret_token given to setWebhook. GitLab (docs.gitlab.com/user/project/integrations/webhooks/#validate-requests-with-a-secret-token):
// "X-Gitlab-Token" carries the webhook's secret token. Both are the shared secret itself: no signature to vector.
describe('telegram preset', () => {
  const body = '{"update_id":10000,"message":{"message_id":1365,"text":"/start"}}';

  it('accepts the secret token, refuses another, checks it before the body (precheck)', () => {
    expect(check(telegram, { raw: body, headers: { 'x-telegram-bot-api-secret-token': 'tg_Secret-1' }, secrets: ['tg_Secret-1'] })).toMatchObject(accepted);
    expect(check(telegram, { raw: body, headers: { 'x-telegram-bot-api-secret-token': 'tg_Secret-2' }, secrets: ['tg_Secret-1'] })).toEqual(refusedWith('signature_invalid'));
    expect(check(telegram, { raw: body, headers: {}, secrets: ['tg_Secret-1'] })).toEqual(refusedWith('signature_missing'));
    expect(telegram.precheck({ headers: { 'x-telegram-bot-api-secret-token': 'x' }, query: {}, url: '', secrets: ['tg_Secret-1'], options: {}, toleranceSeconds: 300, nowSeconds: 0 })).toBe('signature_invalid');
  });

  it('accepts either secret during a rotation, and refuses a prefix of the secret', () => {
    expect(check(telegram, { raw: body, headers: { 'x-telegram-bot-api-secret-token': 'new' }, secrets: ['old-one', 'new'] })).toMatchObject({ ok: true, secret: 'new' });
    expect(check(telegram, { raw: body, headers: { 'x-telegram-bot-api-secret-token': 'tg_Secret' }, secrets: ['tg_Secret-1'] })).toEqual(refusedWith('signature_invalid'));
  });

  it('reads the kind from the Update field and the update_id', () => {
    expect(telegram.kind({}, JSON.parse(body))).toBe('message');
    expect(telegram.kind({}, { update_id: 1, callback_query: {} })).toBe('callback_query');
    expect(telegram.deliveryId({}, JSON.parse(body))).toBe('10000');
  });

  it('refuses a secret Telegram would not accept', () => {
    expect(telegram.secretProblem?.('has space')).toBeDefined();
    expect(telegram.secretProblem?.('ok_token-1')).toBeUndefined();
  });
});

describe('gitlab preset', () => {
  const body = '{"object_kind":"merge_request","object_attributes":{"action":"merge","iid":1}}';

  it('accepts the token and refuses another', () => {
    expect(check(gitlab, { raw: body, headers: { 'x-gitlab-token': 'gl-token' }, secrets: ['gl-token'] })).toMatchObject(accepted);
    expect(check(gitlab, { raw: body, headers: { 'x-gitlab-token': 'gl-tokeN' }, secrets: ['gl-token'] })).toEqual(refusedWith('signature_invalid'));
  });

  it('reads object_kind plus the action; trap: Idempotency-Key (stable across resends) is the delivery id, not X-Gitlab-Webhook-UUID', () => {
    expect(gitlab.kind({}, JSON.parse(body))).toBe('merge_request.merge');
    expect(gitlab.kind({}, { object_kind: 'push' })).toBe('push');
    expect(gitlab.deliveryId({ 'idempotency-key': 'stable', 'x-gitlab-webhook-uuid': 'per-request', 'x-gitlab-event-uuid': 'ev' }, {})).toBe('stable');
    expect(gitlab.deliveryId({ 'x-gitlab-webhook-uuid': 'per-request', 'x-gitlab-event-uuid': 'ev' }, {})).toBe('ev');
  });
});
