import request from 'supertest';
import { testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

describe('request bodies held in memory across the process', () => {
  it('past MAX_INFLIGHT_BODY_BYTES a request gets 503 with Retry-After, and the bytes come back when the holder is done', async () => {
    const t = testApp({ MAX_INFLIGHT_BODY_BYTES: '2048', PUBLISH_TIMEOUT_MS: '3000' });
    await t.addTrigger('up', triggerInput());
    const body = (n: number, size: number) => JSON.stringify({ id: n, pad: 'x'.repeat(size) });

    t.sink.mode = 'hang';
    const holder = request(t.app).post(hookUrl('up')).set('content-type', 'application/json').send(body(1, 1500)).then((r) => r);
    while (t.deps.bodyBudget.inUse === 0) await new Promise((resolve) => setTimeout(resolve, 5));

    const refused = await request(t.app).post(hookUrl('up')).set('content-type', 'application/json').send(body(2, 1000));
    const error = expectError(refused, 'SERVICE_UNAVAILABLE');
    expect(error.details).toEqual({ reason: 'busy' });
    expect(refused.headers['retry-after']).toBeDefined();

    t.sink.mode = 'ack';
    t.sink.giveUpHungWrites();
    expect((await holder).status).toBe(503);
    expect(t.deps.bodyBudget.inUse).toBe(0);

    const accepted = await request(t.app).post(hookUrl('up')).set('content-type', 'application/json').send(body(3, 1000));
    expect(accepted.status).toBe(200);
    expect(t.deps.bodyBudget.inUse).toBe(0);
  });
});
