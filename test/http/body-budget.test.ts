import request from 'supertest';
import { testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';
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
