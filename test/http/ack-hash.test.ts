/**
 * Contract §5: a completed key stores "a hash of the acknowledgement". A trigger's
 * `response.body` may be about 1 MB: it is hashed once per trigger version, not per request.
 */
import { createHash } from 'node:crypto';
import request from 'supertest';
import { testApp } from '../helpers/app';
import { hookUrl, triggerInput } from '../helpers/http';
import type { CompletedResponse } from '../../src/idempotency/store';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('the acknowledgement hash a completed key keeps', () => {
  const t = testApp();
  const stored: CompletedResponse[] = [];
  beforeAll(() => {
    const complete = t.deps.idempotency.complete.bind(t.deps.idempotency);
    jest.spyOn(t.deps.idempotency, 'complete').mockImplementation((key, owner, bodyHash, response, ttlMs) => {
      stored.push(response);
      return complete(key, owner, bodyHash, response, ttlMs);
    });
  });
  afterAll(() => jest.restoreAllMocks());
  const post = (path: string, n: number) => request(t.app).post(hookUrl(path)).set('Idempotency-Key', `${path}-${n}`).send({ n });

  it('of the default acknowledgement: one constant (the event id is stored beside it)', async () => {
    await t.addTrigger('ack-default', triggerInput());
    stored.length = 0;
    expect((await post('ack-default', 1)).status).toBe(200);
    expect((await post('ack-default', 2)).status).toBe(200);
    expect(stored).toHaveLength(2);
    expect(stored[0].eventId).not.toBe(stored[1].eventId);
    expect(stored[1].ackHash).toBe(stored[0].ackHash);
  });

  it("of a trigger's ~1 MB response: status and body hashed once per trigger version", async () => {
    const response = { status: 202, body: { accepted: true, filler: 'x'.repeat(1_000_000) } };
    await t.addTrigger('ack-big', triggerInput({ response }));
    const body = (await t.registry.triggers.get('ack-big'))!.response!.body;
    const stringify = jest.spyOn(JSON, 'stringify');
    stored.length = 0;
    for (let n = 1; n <= 3; n++) expect((await post('ack-big', n)).status).toBe(202);
    const hashedBody = stringify.mock.calls.filter(([value]) => value === body || (value as { body?: unknown } | null)?.body === body);
    stringify.mockRestore();
    // Each response is serialised to be sent (3); beyond that, once for the hash.
    expect(hashedBody.length).toBeLessThanOrEqual(3 + 1);
    expect(stored.map((s) => s.ackHash)).toEqual(Array(3).fill(sha256(JSON.stringify(response))));

    const changed = { status: 202, body: { accepted: false } };
    await t.addTrigger('ack-big', triggerInput({ response: changed }));
    stored.length = 0;
    expect((await post('ack-big', 4)).status).toBe(202);
    expect(stored[0].ackHash).toBe(sha256(JSON.stringify(changed)));
  });
});
