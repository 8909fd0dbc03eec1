/**
 * Contract §5: a delivery's id and body claims, issued together, and what each path gives
 * back. The store is the real memory store; a store error is made by failing its claim().
 */
import { configSchema } from '../../src/config/schema';
import { MemoryIdempotencyStore } from '../../src/idempotency/memory';
import { claimDelivery } from '../../src/ingest/delivery-claims';
import type { IngestDeps } from '../../src/ingest/ports';
import { createMetrics } from '../../src/observability/metrics';
import { silentLogger } from '../helpers/redis';

const ACK = { status: 200, eventId: 'evt-earlier', ackHash: 'h'.repeat(64) };

function makeDeps(onStoreError: 'accept' | 'refuse' = 'refuse') {
  const idempotency = new MemoryIdempotencyStore({ maxKeys: 1000 });
  const deps: IngestDeps = {
    config: configSchema.parse({ IDEMPOTENCY_ON_STORE_ERROR: onStoreError }),
    idempotency,
    publisher: { publish: async () => undefined },
    logger: silentLogger(),
    metrics: createMetrics(),
  };
  /** Whether `key` is free: a fresh claim gets it (and gives it back). */
  const free = async (key: string) => {
    const probe = await idempotency.claim(key, 'probe', 'h', 1000);
    if (probe.state === 'claimed') await idempotency.release(key, 'probe');
    return probe.state === 'claimed';
  };
  const failClaimsOf = (key: string) => {
    const claim = idempotency.claim.bind(idempotency);
    jest.spyOn(idempotency, 'claim').mockImplementation((k, ...rest) => (k === key ? Promise.reject(new Error('store down')) : claim(k, ...rest)));
  };
  const completed = async (key: string) => {
    await idempotency.claim(key, 'earlier', 'h', 1000);
    await idempotency.complete(key, 'earlier', 'h', ACK, 60_000);
  };
  return { deps, idempotency, free, failClaimsOf, completed };
}

it('issues both claims before either is answered (one round trip with auto-pipelining)', async () => {
  const { deps, idempotency } = makeDeps();
  const claim = jest.spyOn(idempotency, 'claim');
  const pending = claimDelivery(deps, 'id', 'body', 'h');
  expect(claim.mock.calls.map((call) => call[0])).toEqual(['id', 'body']);
  await pending;
});

it('both free: holds both', async () => {
  const { deps, free } = makeDeps();
  const claims = await claimDelivery(deps, 'id', 'body', 'h');
  expect(claims).toMatchObject({ claim: { state: 'claimed' }, body: { storeKey: 'body', claim: { state: 'claimed' } } });
  expect(await free('id')).toBe(false);
  expect(await free('body')).toBe(false);
});

it('without a body key: the id alone', async () => {
  const { deps, free } = makeDeps();
  expect(await claimDelivery(deps, 'id', undefined, 'h')).toEqual({ claim: { state: 'claimed', token: expect.any(String) } });
  expect(await free('id')).toBe(false);
});

it('the body accepted before under another id: the id claim is given back, the body answers', async () => {
  const { deps, free, completed } = makeDeps();
  await completed('body');
  expect(await claimDelivery(deps, 'id', 'body', 'h')).toEqual({ earlier: { state: 'completed', sameBody: true, response: ACK }, of: 'body' });
  expect(await free('id')).toBe(true);
});

it('the id accepted before: the body claim is given back, the id answers', async () => {
  const { deps, free, completed } = makeDeps();
  await completed('id');
  expect(await claimDelivery(deps, 'id', 'body', 'h')).toEqual({ earlier: { state: 'completed', sameBody: true, response: ACK }, of: 'id' });
  expect(await free('body')).toBe(true);
});

it('the id in flight and the body too (the same delivery twice at once): nothing of theirs is released', async () => {
  const { deps, free } = makeDeps();
  await claimDelivery(deps, 'id', 'body', 'h');
  expect(await claimDelivery(deps, 'id', 'body', 'h')).toMatchObject({ earlier: { state: 'in_flight' }, of: 'id' });
  expect(await free('id')).toBe(false);
  expect(await free('body')).toBe(false);
});

it('a store error on the body claim: the id claim is given back and the error thrown', async () => {
  const { deps, free, failClaimsOf } = makeDeps();
  failClaimsOf('body');
  await expect(claimDelivery(deps, 'id', 'body', 'h')).rejects.toMatchObject({ reason: 'store_unavailable' });
  jest.restoreAllMocks();
  expect(await free('id')).toBe(true);
});

it('a store error on the id claim: the body claim is given back and the error thrown', async () => {
  const { deps, free, failClaimsOf } = makeDeps();
  failClaimsOf('id');
  await expect(claimDelivery(deps, 'id', 'body', 'h')).rejects.toMatchObject({ reason: 'store_unavailable' });
  jest.restoreAllMocks();
  expect(await free('body')).toBe(true);
});

it('IDEMPOTENCY_ON_STORE_ERROR=accept: an id unguarded publishes without the body claim; a body unguarded keeps the id claim', async () => {
  const idDown = makeDeps('accept');
  idDown.failClaimsOf('id');
  expect(await claimDelivery(idDown.deps, 'id', 'body', 'h')).toEqual({ claim: 'unguarded' });
  jest.restoreAllMocks();
  expect(await idDown.free('body')).toBe(true);

  const bodyDown = makeDeps('accept');
  bodyDown.failClaimsOf('body');
  expect(await claimDelivery(bodyDown.deps, 'id', 'body', 'h')).toMatchObject({ claim: { state: 'claimed' }, body: { storeKey: 'body', claim: 'unguarded' } });
  jest.restoreAllMocks();
  expect(await bodyDown.free('id')).toBe(false);
});
