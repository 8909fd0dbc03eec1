import request from 'supertest';
import { testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';
import { holdUpload, listen, type HeldUpload, type Listening } from '../helpers/sockets';
import { waitUntil } from '../helpers/wait';

describe('request bodies held in memory across the process', () => {
  it('past MAX_INFLIGHT_BODY_BYTES a request gets 503 with Retry-After, and the bytes come back when the holder is done', async () => {
    // The holder's deadline is far away: it ends when the test releases its hung write, never by itself.
    const t = testApp({ MAX_INFLIGHT_BODY_BYTES: '2048', PUBLISH_TIMEOUT_MS: '60000' });
    await t.addTrigger('up', triggerInput());
    const body = (n: number, size: number) => JSON.stringify({ id: n, pad: 'x'.repeat(size) });

    t.sink.mode = 'hang';
    const holder = request(t.app).post(hookUrl('up')).set('content-type', 'application/json').send(body(1, 1500)).then((r) => r);
    // Its whole body is read and its record is in the sink's hung write: it holds its bytes.
    await waitUntil(() => t.sink.hungWrites === 1, "the holder's record in a hung sink write");
    expect(t.deps.bodyBudget.inUse).toBeGreaterThan(1500);

    const refused = await request(t.app).post(hookUrl('up')).set('content-type', 'application/json').send(body(2, 1000));
    const error = expectError(refused, 'SERVICE_UNAVAILABLE');
    expect(error.details).toEqual({ reason: 'busy' });
    expect(refused.headers['retry-after']).toBeDefined();

    t.sink.mode = 'ack';
    expect(t.sink.giveUpHungWrites()).toBe(1);
    expect((await holder).status).toBe(503);
    await waitUntil(() => t.deps.bodyBudget.inUse === 0, 'the holder to give its bytes back');

    const accepted = await request(t.app).post(hookUrl('up')).set('content-type', 'application/json').send(body(3, 1000));
    expect(accepted.status).toBe(200);
    await waitUntil(() => t.deps.bodyBudget.inUse === 0, 'the accepted request to give its bytes back');
  });
});

describe('two senders filling their shares leave room for a third tenant (issue 20, item 8)', () => {
  let server: Listening | undefined;
  let uploads: HeldUpload[] = [];
  afterEach(async () => {
    for (const upload of uploads) upload.destroy();
    uploads = [];
    await server?.close();
  });

  it('slow bodies from two addresses on two open triggers in two workspaces; a third tenant\'s 100 KB request gets 200', async () => {
    // A budget of 2 MB: each sender's 50 % share holds five of these bodies, so the two together
    // would hold all but 10 KB of it.
    const t = testApp({ MAX_INFLIGHT_BODY_BYTES: '2000000', BODY_MIN_RATE: '1/60', TRUST_PROXY: 'loopback' });
    await t.addTrigger('open-a', triggerInput({ workspaceId: 'ws-a' }));
    await t.addTrigger('open-b', triggerInput({ workspaceId: 'ws-b' }));
    await t.addTrigger('third', triggerInput({ workspaceId: 'ws-c' }));
    server = await listen(t.app);
    const held = 199_000;
    const perSender = 8;
    for (let i = 0; i < perSender; i++) {
      for (const [name, address] of [['a', '203.0.113.1'], ['b', '203.0.113.2']]) {
        uploads.push(holdUpload(server.port, hookUrl(`open-${name}`), { 'x-forwarded-for': address }, 200_000, held));
      }
    }
    const answered = () => uploads.filter((u) => u.answered()).length;
    await waitUntil(() => answered() + t.deps.bodyBudget.inUse / held === uploads.length, 'each slow body answered or held whole');
    expect(t.deps.bodyBudget.heldBy('workspace:ws-a')).toBeGreaterThan(0);
    expect(t.deps.bodyBudget.heldBy('workspace:ws-b')).toBeGreaterThan(0);

    const third = await request(server.url)
      .post(hookUrl('third'))
      .set('x-forwarded-for', '198.51.100.9')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ pad: 'p'.repeat(100_000) }));
    expect(third.status).toBe(200);
    const refused = await Promise.all(uploads.filter((u) => u.answered()).map((u) => u.answer));
    expect(new Set(refused.map((a) => JSON.parse(a.body).error.details.reason))).toEqual(new Set(['body_share_exceeded']));
  });
});
