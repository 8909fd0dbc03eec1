/**
 * Contract §13.1: whatever the schema a tenant stores and whatever body a sender posts, the
 * gateway answers 2xx or 4xx (never a 5xx), keeps answering GET /healthz within 1 s, and never
 * exits. Seeded random and hostile schemas (test/helpers/fuzz-schemas.ts) are PUT on the built
 * gateway, then bodies are posted to them and to POST .../validate, while another loop asks
 * /healthz. The run stops after SCHEMA_FUZZ_CASES cases or SCHEMA_FUZZ_MS, whichever is first.
 *
 * A failure names its case's seed: SCHEMA_FUZZ_SEED=<seed> SCHEMA_FUZZ_CASES=1 replays it.
 */
import { join } from 'node:path';
import { Rng } from '../helpers/fuzz-bodies';
import { randomBody, randomSchema } from '../helpers/fuzz-schemas';
import { startGateway, type RunningGateway } from '../helpers/server';
import { tempDir } from '../helpers/tmp';

const FIRST_SEED = Number(process.env.SCHEMA_FUZZ_SEED ?? 20_261_128);
const CASES = Number(process.env.SCHEMA_FUZZ_CASES ?? 300);
const RUN_MS = Number(process.env.SCHEMA_FUZZ_MS ?? 60_000);
const ADMIN_TOKEN = 'admin-token-schema-fuzz';
const HEALTHZ_BOUND_MS = 1000;
const ANSWER_MS = 20_000;

describe('schema fuzz: no schema and no body gets a 5xx, holds /healthz or ends the process', () => {
  const tmp = tempDir();
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway({
      ADMIN_TOKEN,
      EVENTS_DIR: join(tmp.dir, 'events'),
      MAX_BODY_BYTES: String(256 * 1024),
      RATE_LIMIT_DEFAULT: '1000000/60',
      RATE_LIMIT_WORKSPACE: '1000000/60',
    });
  });
  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    tmp.cleanup();
  });

  async function call(url: string, method: string, body: string, admin: boolean): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
    try {
      // Past the request's own budget (REQUEST_TIMEOUT_MS, 15 s): an answer that never comes is a failure, not a hang.
      const res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(ANSWER_MS) });
      return { status: res.status, text: await res.text() };
    } catch (error) {
      return { status: 0, text: `no answer: ${(error as Error).message}` };
    }
  }

  it(`${CASES} schemas from seed ${FIRST_SEED}, a few bodies each`, async () => {
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let slowestHealthz = 0;
    let running = true;
    const healthz = (async () => {
      while (running) {
        const sent = performance.now();
        const res = await fetch(`${gateway.url}/healthz`);
        await res.arrayBuffer();
        if (res.status !== 200) failures.push(`/healthz answered ${res.status}`);
        slowestHealthz = Math.max(slowestHealthz, performance.now() - sent);
        await new Promise((resolve) => setTimeout(resolve, 50)); // a probe every 50 ms, not a wait for a condition
      }
    })();
    const note = (what: string, answer: { status: number; text: string }) => {
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status >= 500 || answer.status < 200 || (answer.status >= 300 && answer.status < 400)) failures.push(`${what}: ${answer.status} ${answer.text.slice(0, 200)}`);
    };
    const startedAt = performance.now();
    try {
      for (let i = 0; i < CASES && failures.length < 5 && performance.now() - startedAt < RUN_MS; i++) {
        const seed = FIRST_SEED + i;
        const rng = new Rng(seed);
        const path = `fz-${i % 4}`;
        const schema = randomSchema(rng);
        const trigger = JSON.stringify({ workflowId: 'wf', workspaceId: 'ws', deployed: true, schema });
        const put = await call(`${gateway.adminUrl}/admin/triggers/${path}`, 'PUT', trigger, true);
        note(`seed ${seed} PUT`, put);
        if (put.status !== 200) continue;
        for (let n = 1 + rng.int(3); n > 0; n--) {
          const body = randomBody(rng);
          const validate = rng.chance(0.2);
          const url = validate ? `${gateway.adminUrl}/admin/triggers/${path}/validate` : `${gateway.url}/api/webhooks/trigger/${path}`;
          note(`seed ${seed} ${validate ? 'validate' : 'POST'} (${body.length} bytes)`, await call(url, 'POST', body, validate));
        }
        if (gateway.child.exitCode !== null) failures.push(`seed ${seed}: the gateway exited with ${gateway.child.exitCode}`);
      }
    } finally {
      running = false;
      await healthz;
    }
    expect(failures).toEqual([]);
    expect(gateway.child.exitCode).toBeNull();
    expect(slowestHealthz).toBeLessThan(HEALTHZ_BOUND_MS);
    // The fuzz reached the schema checks: schemas were stored and bodies both accepted and refused.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(CASES / 4);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(CASES / 10);
  }, RUN_MS + 60_000);
});
