/**
 * Contract §13.1 (issue 34 item 1): a hostile body against an accepted schema is answered 4xx
 * "while every other request keeps being served". The schema workers are shared by every
 * tenant: before a workspace's checks were capped to a share of them, a dozen senders keeping
 * bodies that cost a whole check budget in flight on one tenant's trigger held both workers
 * and the queue, and another tenant's ordinary deliveries waited in line until they were
 * answered 503 busy (10 of 15 with 8 such senders, measured on the built gateway).
 */
import { join } from 'node:path';
import { EXPONENTIAL, nested } from '../helpers/hostile-schemas';
import { startGateway, type RunningGateway } from '../helpers/server';
import { tempDir } from '../helpers/tmp';

const ADMIN_TOKEN = 'admin-token-schema-share';
const SENDERS = 12;
const VICTIM_DELIVERIES = 5;

describe("one tenant's costly schema checks do not hold another tenant's deliveries", () => {
  const tmp = tempDir();
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway({ ADMIN_TOKEN, EVENTS_DIR: join(tmp.dir, 'events') });
    const triggers = {
      hostile: { workflowId: 'wf', workspaceId: 'ws-hostile', deployed: true, schema: EXPONENTIAL },
      victim: { workflowId: 'wf', workspaceId: 'ws-victim', deployed: true, schema: { type: 'object', required: ['n'] } },
    };
    for (const [path, trigger] of Object.entries(triggers)) {
      const res = await fetch(`${gateway.adminUrl}/admin/triggers/${path}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(trigger),
      });
      expect(res.status).toBe(200);
    }
  });

  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    tmp.cleanup();
  });

  async function post(path: string, body: string): Promise<{ status: number; body: any }> {
    const res = await fetch(`${gateway.url}/api/webhooks/trigger/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: res.status, body: await res.json() };
  }

  it(`${SENDERS} senders keep 2^200-path bodies in flight on one tenant: another tenant's deliveries are still accepted`, async () => {
    let attacking = true;
    const hostile = new Map<number, number>();
    let answered!: () => void;
    const firstAnswer = new Promise<void>((resolve) => (answered = resolve));
    const senders = Array.from({ length: SENDERS }, async () => {
      while (attacking) {
        const { status } = await post('hostile', nested(200));
        hostile.set(status, (hostile.get(status) ?? 0) + 1);
        answered();
      }
    });
    try {
      // Once one hostile check has been answered, the others are running or queued behind it.
      await firstAnswer;
      const victim: number[] = [];
      for (let n = 0; n < VICTIM_DELIVERIES; n++) victim.push((await post('victim', JSON.stringify({ n }))).status);
      expect(victim).toEqual(Array(VICTIM_DELIVERIES).fill(200));
      // And a refusal of the victim's own schema is still its schema's answer, not busy.
      const refused = await post('victim', '{}');
      expect([refused.status, refused.body.error?.details?.reason]).toEqual([400, 'schema_invalid']);
    } finally {
      attacking = false;
      await Promise.all(senders);
    }
    // The hostile tenant got what its schema costs: 400 over the budget, or 503 busy while its share was taken.
    expect([...hostile.keys()].every((status) => status === 400 || status === 503)).toBe(true);
    expect(hostile.get(400) ?? 0).toBeGreaterThan(0);
    expect(gateway.child.exitCode).toBeNull();
  }, 180_000);
});
