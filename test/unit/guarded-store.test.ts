/**
 * The ingest side of claims (issue 10 item 5): every claim gets its own owner token, and the
 * acknowledgement of a published event is retried until it is recorded, within the request's
 * retry budget (REDIS_TIMEOUT_MS), and never turned into a release. The store is the real memory store, with its
 * complete() made to fail on purpose; the Redis version is test/integration/
 * idempotency-completion-fault.test.ts.
 */
import { configSchema } from '../../src/config/schema';
import { MemoryIdempotencyStore } from '../../src/idempotency/memory';
import { claimOrDegrade, completeOrRetry, releaseQuietly, type OwnedClaim } from '../../src/ingest/guarded-store';
import type { IngestDeps } from '../../src/ingest/ports';
import { createMetrics } from '../../src/observability/metrics';
import { loggerToLines } from '../helpers/log-lines';

const ACK = { status: 200, eventId: 'evt-1', ackHash: 'h'.repeat(64) };
const TTL = 60_000;

function makeDeps(env: Record<string, string> = {}) {
  const { logger, logLines } = loggerToLines();
  const idempotency = new MemoryIdempotencyStore({ maxKeys: 1000 });
  const metrics = createMetrics();
  const deps: IngestDeps = {
    config: configSchema.parse({ PUBLISH_TIMEOUT_MS: '300', ...env }),
    idempotency,
    publisher: { publish: async () => undefined },
    logger,
    metrics,
  };
  const storeErrors = async (action: string) =>
    (await metrics.storeErrors.get()).values.find((v) => v.labels.action === action)?.value ?? 0;
  return { deps, idempotency, logLines, storeErrors };
}

async function claimed(deps: IngestDeps, key: string): Promise<OwnedClaim> {
  const claim = await claimOrDegrade(deps, key, 'h');
  if (claim === 'unguarded' || claim.state !== 'claimed') throw new Error(`expected a claim, got ${JSON.stringify(claim)}`);
  return claim;
}

describe('claimOrDegrade', () => {
  it('gives every claim its own owner token, which the store receives', async () => {
    const { deps, idempotency } = makeDeps();
    const claim = jest.spyOn(idempotency, 'claim');
    const a = await claimed(deps, 'a');
    const b = await claimed(deps, 'b');
    expect(a.token).not.toBe(b.token);
    expect(claim.mock.calls.map((call) => call[1])).toEqual([a.token, b.token]);
  });

  it("releases only with the claim's own token", async () => {
    const { deps, idempotency } = makeDeps();
    const a = await claimed(deps, 'a');
    await releaseQuietly(deps, 'a', { ...a, token: 'someone-else' });
    await expect(claimOrDegrade(deps, 'a', 'h')).resolves.toEqual({ state: 'in_flight', sameBody: true });
    await releaseQuietly(deps, 'a', a);
    await expect(idempotency.claim('a', 'probe', 'h', 1000)).resolves.toEqual({ state: 'claimed' });
  });
});

describe('completeOrRetry', () => {
  it('retries a completion that failed once, and records it', async () => {
    const { deps, idempotency, logLines, storeErrors } = makeDeps();
    const claim = await claimed(deps, 'k');
    const real = idempotency.complete.bind(idempotency);
    const complete = jest
      .spyOn(idempotency, 'complete')
      .mockRejectedValueOnce(new Error('redis: Command timed out'))
      .mockImplementation(real);

    await completeOrRetry(deps, 'k', claim, 'h', ACK, TTL);
    expect(complete).toHaveBeenCalledTimes(2);
    expect(complete.mock.calls.every((call) => call[1] === claim.token)).toBe(true);
    await expect(idempotency.claim('k', 'probe', 'h', 1000)).resolves.toEqual({ state: 'completed', sameBody: true, response: ACK });
    expect(await storeErrors('complete')).toBe(1);
    expect(await storeErrors('complete_abandoned')).toBe(0);
    expect(logLines.join('')).toContain('idempotency complete failed; retrying');
  });

  it('gives up after REDIS_TIMEOUT_MS without releasing: the key stays closed by the claim', async () => {
    const { deps, idempotency, logLines, storeErrors } = makeDeps();
    const claim = await claimed(deps, 'k');
    const complete = jest.spyOn(idempotency, 'complete').mockRejectedValue(new Error('redis: Connection is closed.'));
    const release = jest.spyOn(idempotency, 'release');

    await completeOrRetry(deps, 'k', claim, 'h', ACK, TTL);
    expect(complete.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(release).not.toHaveBeenCalled();
    await expect(idempotency.claim('k', 'probe', 'h', 1000)).resolves.toEqual({ state: 'in_flight', sameBody: true });
    expect(await storeErrors('complete_abandoned')).toBe(1);
    const line = logLines.find((l) => l.includes('idempotency completion not recorded'));
    expect(JSON.parse(line ?? '{}')).toMatchObject({ level: 'error', eventId: 'evt-1' });
  });

  it('retries at least once even when the first failure took all of REDIS_TIMEOUT_MS', async () => {
    const { deps, idempotency } = makeDeps({ REDIS_TIMEOUT_MS: '50' });
    const claim = await claimed(deps, 'k');
    const real = idempotency.complete.bind(idempotency);
    jest.spyOn(idempotency, 'complete').mockRejectedValueOnce(new Error('redis: blip')).mockImplementation(real);
    await completeOrRetry(deps, 'k', claim, 'h', ACK, TTL);
    await expect(idempotency.claim('k', 'probe', 'h', 1000)).resolves.toMatchObject({ state: 'completed' });
  });

  it('does not retry, and says so, when another request holds the key', async () => {
    const { deps, idempotency, logLines, storeErrors } = makeDeps();
    const claim = await claimed(deps, 'k');
    await idempotency.release('k', claim.token);
    await idempotency.claim('k', 'other-request', 'h', 1000);
    const complete = jest.spyOn(idempotency, 'complete');

    await completeOrRetry(deps, 'k', claim, 'h', ACK, TTL);
    expect(complete).toHaveBeenCalledTimes(1);
    expect(await storeErrors('complete_lost')).toBe(1);
    expect(logLines.join('')).toContain('idempotency claim lost before completion');
    await expect(idempotency.claim('k', 'probe', 'h', 1000)).resolves.toEqual({ state: 'in_flight', sameBody: true });
  });
});
