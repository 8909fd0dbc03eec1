import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput, TRIGGER_TOKEN } from '../helpers/http';

const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };

const channel = {
  provider: 'whatsapp',
  workspaceId: 'ws-1',
  inboxId: 'inbox-1',
  phoneNumberId: '1234567890',
  verifyToken: 'verify-SECRET-8c1d',
  appSecret: 'app-SECRET-4e9b',
};

describe('admin API authentication (contract §8)', () => {
  // 25 wrong tokens on purpose: past the default throttle of failed authentications (tested on its own).
  const t = testApp({ AUTH_FAILURE_LIMIT: '100/60' });

  it.each([
    ['no Authorization header', undefined],
    ['a wrong token', `Bearer ${ADMIN_TOKEN}x`],
    ['the token without Bearer', ADMIN_TOKEN],
    ['a trigger token', `Bearer ${TRIGGER_TOKEN}`],
  ])('answers 401 with %s, on every admin route', async (_name, header) => {
    const calls = [
      request(t.admin).get('/admin/triggers'),
      request(t.admin).get('/admin/triggers/x'),
      request(t.admin).put('/admin/triggers/x').send(triggerInput()),
      request(t.admin).delete('/admin/triggers/x'),
      request(t.admin).get('/admin/channels/x'),
      request(t.admin).put('/admin/channels/x').send(channel),
    ];
    for (const call of calls) {
      const res = await (header === undefined ? call : call.set('Authorization', header));
      expectError(res, 'UNAUTHORIZED');
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
    expect(await t.registry.triggers.get('x')).toBeUndefined();
    expect(await t.registry.channels.get('x')).toBeUndefined();
  });

  it('checks the token before parsing the body', async () => {
    const res = await request(t.admin).put('/admin/triggers/x').set('Content-Type', 'application/json').send('{broken');
    expectError(res, 'UNAUTHORIZED');
  });
});

describe('admin API without ADMIN_TOKEN (contract §1, §8)', () => {
  const t = testApp({}, { withoutAdminToken: true });

  it('does not exist: every admin route answers 404, whatever the Authorization', async () => {
    expect(t.deps.config.ADMIN_TOKEN).toBeUndefined();
    for (const header of [undefined, `Bearer ${ADMIN_TOKEN}`, 'Bearer ']) {
      const calls = [
        request(t.admin).get('/admin/triggers'),
        request(t.admin).get('/admin/triggers/x'),
        request(t.admin).put('/admin/triggers/x').send(triggerInput()),
        request(t.admin).delete('/admin/triggers/x'),
        request(t.admin).put('/admin/channels/c').send(channel),
        request(t.admin).get('/admin'),
      ];
      for (const call of calls) {
        const res = await (header === undefined ? call : call.set('Authorization', header));
        expectError(res, 'NOT_FOUND');
      }
    }
    expect(await t.registry.triggers.get('x')).toBeUndefined();
  });

  it('webhooks still work', async () => {
    await t.addTrigger('still', triggerInput());
    expect((await request(t.app).post(hookUrl('still')).send({ a: 1 })).status).toBe(200);
  });
});

describe('admin triggers (contract §8)', () => {
  const t = testApp();

  it('PUT upserts and returns { data } with url and auth { header, tokenSet }, never the token or a hash', async () => {
    const body = triggerInput({
      workflowId: 'wf-9',
      workspaceId: 'ws-9',
      auth: { token: TRIGGER_TOKEN },
      inputFormat: [{ name: 'n', type: 'number' }],
      response: { status: 202, body: { ok: true } },
      rateLimit: { limit: 10, windowSeconds: 60 },
      idempotency: { keyField: 'id', ttlSeconds: 3600 },
    });
    const res = await request(t.admin).put('/admin/triggers/orders-v2').set(auth).send(body);
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(Object.keys(res.body)).toEqual(['data']);
    const data = res.body.data;
    expect(data).toMatchObject({
      path: 'orders-v2',
      workflowId: 'wf-9',
      workspaceId: 'ws-9',
      deployed: true,
      auth: { header: 'authorization', tokenSet: true },
      inputFormat: [{ name: 'n', type: 'number' }],
      response: { status: 202, body: { ok: true } },
      rateLimit: { limit: 10, windowSeconds: 60 },
      idempotency: { keyField: 'id', ttlSeconds: 3600 },
    });
    expect(Object.keys(data.auth).sort()).toEqual(['header', 'tokenSet']);
    expect(new URL(data.url).pathname).toBe('/api/webhooks/trigger/orders-v2');
    expect(res.text).not.toContain(TRIGGER_TOKEN);
    expect(res.text).not.toMatch(/tokenHash|[0-9a-f]{64}/);

    const read = await request(t.admin).get('/admin/triggers/orders-v2').set(auth);
    expect(read.status).toBe(200);
    // supertest listens on a new port per request, so url differs only in its port
    expect(read.body.data).toEqual({ ...data, url: expect.stringMatching(/\/api\/webhooks\/trigger\/orders-v2$/) });
    expect(read.text).not.toContain(TRIGGER_TOKEN);
    expect(read.text).not.toMatch(/tokenHash|[0-9a-f]{64}/);

    // the registry keeps only a hash
    expect(JSON.stringify(await t.registry.triggers.get('orders-v2'))).not.toContain(TRIGGER_TOKEN);

    // and the trigger works with the token
    const hook = await request(t.app).post(data.url.replace(/^https?:\/\/[^/]+/, '')).set('Authorization', `Bearer ${TRIGGER_TOKEN}`).send({ n: '5', id: 'a' });
    expect(hook.status).toBe(202);
    expect(hook.body).toEqual({ ok: true });
  });

  it('uses PUBLIC_BASE_URL for url when it is set', async () => {
    const t2 = testApp({ PUBLIC_BASE_URL: 'https://hooks.example.com/' });
    const res = await request(t2.admin).put('/admin/triggers/p1').set(auth).send(triggerInput());
    expect(res.body.data.url).toBe('https://hooks.example.com/api/webhooks/trigger/p1');
  });

  it('a custom auth header is read back as written, used in any case, and removed from the published headers', async () => {
    const res = await request(t.admin).put('/admin/triggers/hdr').set(auth).send(triggerInput({ auth: { token: TRIGGER_TOKEN, header: 'X-Hook-Auth' } }));
    expect(res.status).toBe(200);
    expect(res.body.data.auth).toEqual({ header: 'X-Hook-Auth', tokenSet: true });
    expect((await request(t.admin).get('/admin/triggers/hdr').set(auth)).body.data.auth).toEqual({ header: 'X-Hook-Auth', tokenSet: true });
    const hook = await request(t.app).post(hookUrl('hdr')).set('x-hook-auth', TRIGGER_TOKEN).send({ a: 1 });
    expect(hook.status).toBe(200);
    const event = t.sink.events().at(-1)!;
    expect(event.data.headers['x-hook-auth']).toBeUndefined();
    expect(t.sink.records.at(-1)!.value).not.toContain(TRIGGER_TOKEN);
  });

  it('a token change is in force at once: the old token is refused', async () => {
    await request(t.admin).put('/admin/triggers/rotate').set(auth).send(triggerInput({ auth: { token: 'first-token-123' } }));
    expect((await request(t.app).post(hookUrl('rotate')).set('Authorization', 'Bearer first-token-123').send({ a: 1 })).status).toBe(200);
    await request(t.admin).put('/admin/triggers/rotate').set(auth).send(triggerInput({ auth: { token: 'second-token-456' } }));
    expectError(await request(t.app).post(hookUrl('rotate')).set('Authorization', 'Bearer first-token-123').send({ a: 2 }), 'UNAUTHORIZED');
    expect((await request(t.app).post(hookUrl('rotate')).set('Authorization', 'Bearer second-token-456').send({ a: 3 })).status).toBe(200);
  });

  it('undeploy → webhook 404; deploy again → 200; DELETE → 404', async () => {
    await request(t.admin).put('/admin/triggers/toggle').set(auth).send(triggerInput());
    expect((await request(t.app).post(hookUrl('toggle')).send({ v: 1 })).status).toBe(200);

    const off = await request(t.admin).put('/admin/triggers/toggle').set(auth).send(triggerInput({ deployed: false }));
    expect(off.body.data.deployed).toBe(false);
    expectError(await request(t.app).post(hookUrl('toggle')).send({ v: 2 }), 'NOT_FOUND');

    await request(t.admin).put('/admin/triggers/toggle').set(auth).send(triggerInput());
    expect((await request(t.app).post(hookUrl('toggle')).send({ v: 3 })).status).toBe(200);

    const del = await request(t.admin).delete('/admin/triggers/toggle').set(auth);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ data: { path: 'toggle', deleted: true } });
    expectError(await request(t.app).post(hookUrl('toggle')).send({ v: 4 }), 'NOT_FOUND');
    expectError(await request(t.admin).get('/admin/triggers/toggle').set(auth), 'NOT_FOUND');
    expectError(await request(t.admin).delete('/admin/triggers/toggle').set(auth), 'NOT_FOUND');
  });

  it('an unrecognized key is a 400 with a detail { code: "unrecognized_keys", keys }', async () => {
    const res = await request(t.admin).put('/admin/triggers/bad').set(auth).send({ ...triggerInput(), bogus: 1, another: true });
    const error = expectError(res, 'BAD_REQUEST');
    expect(error.details).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'unrecognized_keys', keys: expect.arrayContaining(['bogus', 'another']) })]));
    expect(await t.registry.triggers.get('bad')).toBeUndefined();
  });

  it('an unrecognized nested key is refused too, with its path', async () => {
    const res = await request(t.admin).put('/admin/triggers/bad').set(auth).send(triggerInput({ auth: { token: TRIGGER_TOKEN, extra: 1 } as never }));
    const error = expectError(res, 'BAD_REQUEST');
    expect(error.details).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: ['extra'], path: 'auth' })]);
    expect(res.text).not.toContain(TRIGGER_TOKEN);
  });

  it.each([
    ['a missing workflowId', { workspaceId: 'w', deployed: true }],
    ['a response status outside 200–299', { ...triggerInput(), response: { status: 302, body: {} } }],
    ['an unknown inputFormat type', { ...triggerInput(), inputFormat: [{ name: 'a', type: 'date' }] }],
    ['an empty token', { ...triggerInput(), auth: { token: '' } }],
    ['a header name with a space', { ...triggerInput(), auth: { token: TRIGGER_TOKEN, header: 'x hook' } }],
    ['deployed as a string', { ...triggerInput(), deployed: 'yes' }],
  ])('refuses %s with 400 and details', async (_name, body) => {
    const res = await request(t.admin).put('/admin/triggers/bad').set(auth).send(body);
    const error = expectError(res, 'BAD_REQUEST');
    expect(Array.isArray(error.details)).toBe(true);
    expect(error.details.length).toBeGreaterThan(0);
  });

  it('takes a trigger token of any length (contract §8 sets none)', async () => {
    expect((await request(t.admin).put('/admin/triggers/short-token').set(auth).send(triggerInput({ auth: { token: 'tok' } }))).status).toBe(200);
    const res = await request(t.app).post(hookUrl('short-token')).set('Authorization', 'Bearer tok').send({});
    expect(res.status).toBe(200);
  });

  it('refuses a path outside [A-Za-z0-9_-]{1,128}, malformed JSON and a body over 1 MB', async () => {
    expectError(await request(t.admin).put('/admin/triggers/a.b').set(auth).send(triggerInput()), 'BAD_REQUEST');
    expectError(await request(t.admin).put(`/admin/triggers/${'p'.repeat(129)}`).set(auth).send(triggerInput()), 'BAD_REQUEST');
    expectError(await request(t.admin).put('/admin/triggers/ok').set(auth).set('Content-Type', 'application/json').send('{"a":'), 'BAD_REQUEST');
    const big = { ...triggerInput(), response: { status: 200, body: { pad: 'x'.repeat(1_100_000) } } };
    expectError(await request(t.admin).put('/admin/triggers/ok').set(auth).send(big), 'PAYLOAD_TOO_LARGE');
  });

  it('lists with cursor paging: 7 triggers, limit 3 → 3 + 3 + 1, in path order, then nextCursor null', async () => {
    const t2 = testApp();
    const paths = ['g-7', 'a-1', 'e-5', 'c-3', 'b-2', 'f-6', 'd-4'];
    for (const path of paths) {
      const res = await request(t2.admin).put(`/admin/triggers/${path}`).set(auth).send(triggerInput({ auth: { token: `${TRIGGER_TOKEN}-${path}` } }));
      expect(res.status).toBe(200);
    }
    const pages: string[][] = [];
    let cursor: string | null | undefined;
    do {
      const query = cursor ? `?limit=3&cursor=${encodeURIComponent(cursor)}` : '?limit=3';
      const res = await request(t2.admin).get(`/admin/triggers${query}`).set(auth);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'nextCursor']);
      expect(res.text).not.toContain(TRIGGER_TOKEN);
      for (const item of res.body.data) {
        expect(item.auth).toEqual({ header: 'authorization', tokenSet: true });
        expect(new URL(item.url).pathname).toBe(`/api/webhooks/trigger/${item.path}`);
      }
      pages.push(res.body.data.map((item: { path: string }) => item.path));
      cursor = res.body.nextCursor;
      expect(pages.length).toBeLessThan(5);
    } while (cursor);
    expect(pages).toEqual([['a-1', 'b-2', 'c-3'], ['d-4', 'e-5', 'f-6'], ['g-7']]);
    expect(cursor).toBeNull();

    const all = await request(t2.admin).get('/admin/triggers').set(auth);
    expect(all.body.data).toHaveLength(7);
    expect(all.body.nextCursor).toBeNull();
  });

  it.each(['0', '501', 'abc', '2.5'])('refuses limit=%s with 400', async (limit) => {
    expectError(await request(t.admin).get(`/admin/triggers?limit=${limit}`).set(auth), 'BAD_REQUEST');
  });

  it('refuses a malformed cursor with 400', async () => {
    expectError(await request(t.admin).get('/admin/triggers?cursor=%24%24%24').set(auth), 'BAD_REQUEST');
  });
});

describe('admin channels (contract §8)', () => {
  const t = testApp();

  it('PUT, GET, list and DELETE never return verifyToken or appSecret', async () => {
    const put = await request(t.admin).put('/admin/channels/wa-main').set(auth).send(channel);
    expect(put.status).toBe(200);
    const get = await request(t.admin).get('/admin/channels/wa-main').set(auth);
    expect(get.status).toBe(200);
    const list = await request(t.admin).get('/admin/channels').set(auth);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    for (const res of [put, get, list]) {
      expect(res.text).not.toContain(channel.verifyToken);
      expect(res.text).not.toContain(channel.appSecret);
      expect(res.text).not.toMatch(/"verifyToken"|"appSecret"|verifyTokenHash|[0-9a-f]{64}/);
    }
    expect(get.body.data).toMatchObject({
      channelId: 'wa-main',
      provider: 'whatsapp',
      workspaceId: 'ws-1',
      inboxId: 'inbox-1',
      phoneNumberId: '1234567890',
      verifyTokenSet: true,
      appSecretSet: true,
    });
    expect(new URL(get.body.data.url).pathname).toBe('/api/channels/whatsapp/wa-main');

    const del = await request(t.admin).delete('/admin/channels/wa-main').set(auth);
    expect(del.body).toEqual({ data: { channelId: 'wa-main', deleted: true } });
    expectError(await request(t.admin).get('/admin/channels/wa-main').set(auth), 'NOT_FOUND');
  });

  it('an unrecognized key is a 400 with { code: "unrecognized_keys", keys }, and the secrets are not echoed', async () => {
    const res = await request(t.admin).put('/admin/channels/wa-2').set(auth).send({ ...channel, accessToken: 'x' });
    const error = expectError(res, 'BAD_REQUEST');
    expect(error.details).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: ['accessToken'] })]);
    expect(res.text).not.toContain(channel.appSecret);
    expect(res.text).not.toContain(channel.verifyToken);
  });

  it('refuses WhatsApp fields under another provider, and a phoneNumberId with non-digits', async () => {
    expectError(await request(t.admin).put('/admin/channels/wa-3').set(auth).send({ ...channel, provider: 'telegram' }), 'BAD_REQUEST');
    expectError(await request(t.admin).put('/admin/channels/wa-3').set(auth).send({ ...channel, phoneNumberId: '+1 555' }), 'BAD_REQUEST');
  });
});
