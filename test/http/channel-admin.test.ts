import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError } from '../helpers/http';

const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };

const AUTH_TOKEN = 'twilio-auth-token-5e1b7c0a9d';
const SECRET_TOKEN = 'tg-secret_Token-0123456789';

const twilio = {
  provider: 'twilio',
  workspaceId: 'ws-1',
  inboxId: 'inbox-1',
  accountSid: 'AC0123456789abcdef0123456789abcdef',
  authToken: AUTH_TOKEN,
};
const telegram = { provider: 'telegram', workspaceId: 'ws-1', inboxId: 'inbox-2', botId: '7000000001', secretToken: SECRET_TOKEN };

describe('admin channels: Twilio and Telegram (contract §8, §11)', () => {
  const t = testApp({ PUBLIC_BASE_URL: 'https://hooks.example.com/' });

  it.each([
    ['twilio', twilio, AUTH_TOKEN, { accountSid: twilio.accountSid, authTokenSet: true }],
    ['telegram', telegram, SECRET_TOKEN, { botId: '7000000001', secretTokenSet: true }],
  ])('a %s channel: PUT, GET and list show its URL and never its secret', async (provider, input, secret, shown) => {
    const id = `${provider}-main`;
    const put = await request(t.admin).put(`/admin/channels/${id}`).set(auth).send(input);
    expect(put.status).toBe(200);
    const get = await request(t.admin).get(`/admin/channels/${id}`).set(auth);
    const list = await request(t.admin).get('/admin/channels').set(auth);
    for (const res of [put, get, list]) {
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(secret);
      expect(res.text).not.toMatch(/"authToken"|"secretToken"/);
    }
    expect(get.body.data).toEqual({
      channelId: id,
      url: `https://hooks.example.com/api/channels/${provider}/${id}`,
      provider,
      workspaceId: 'ws-1',
      inboxId: input.inboxId,
      updatedAt: expect.any(String),
      ...shown,
    });
    // Kept as given (the route needs it; encryption at rest wraps the stored record).
    expect(await t.registry.channels.get(id)).toMatchObject({ provider, [provider === 'twilio' ? 'authToken' : 'secretToken']: secret });
  });

  it("takes an Account SID written as Twilio's documentation samples write it (AC + 32 letters)", async () => {
    const res = await request(t.admin).put('/admin/channels/twilio-doc').set(auth).send({ ...twilio, accountSid: `AC${'X'.repeat(32)}` });
    expect(res.status).toBe(200);
  });

  it.each([
    ['an Account SID of another shape', { ...twilio, accountSid: 'SK0123456789abcdef0123456789abcdef' }],
    ['an Account SID of another length', { ...twilio, accountSid: `AC${'X'.repeat(31)}` }],
    ['no auth token', { ...twilio, authToken: undefined }],
    ['a key of another provider', { ...twilio, secretToken: SECRET_TOKEN }],
    ['a Telegram secret with characters Telegram refuses', { ...telegram, secretToken: 'has spaces in it, 12345' }],
    ['a Telegram secret longer than Telegram allows (256)', { ...telegram, secretToken: 'a'.repeat(257) }],
    ['a botId with non-digits', { ...telegram, botId: '@example_bot' }],
    ['an unknown provider', { ...telegram, provider: 'signal' }],
  ])('refuses %s with 400, never echoing a secret', async (_label, body) => {
    const res = await request(t.admin).put('/admin/channels/bad').set(auth).send(body);
    expectError(res, 'BAD_REQUEST');
    expect(res.text).not.toContain(AUTH_TOKEN);
    expect(res.text).not.toContain(SECRET_TOKEN);
  });
});
