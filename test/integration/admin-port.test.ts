/**
 * Issue 9, item 11, on the built gateway: two listeners, PORT for senders and ADMIN_PORT for
 * the operator. The `listening` line names both.
 */
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../helpers/server';
import { tempDir, writeJson } from '../helpers/tmp';

const ADMIN = 'admin-port-token-123456';

describe('the admin listener of the built gateway', () => {
  const tmp = tempDir();
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway({
      ADMIN_TOKEN: ADMIN,
      TRIGGERS_FILE: writeJson(tmp.dir, 'triggers.json', { triggers: { t: { workflowId: 'wf', workspaceId: 'ws', deployed: true } } }),
      EVENTS_DIR: join(tmp.dir, 'events'),
    });
  });

  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    tmp.cleanup();
  });

  it('listens on two ports and logs both', () => {
    expect(gateway.adminPort).not.toBe(gateway.port);
    expect(gateway.output()).toMatch(new RegExp(`"port":${gateway.port},"adminPort":${gateway.adminPort}`));
  });

  it('serves /admin, /metrics and /readyz on ADMIN_PORT only', async () => {
    const auth = { authorization: `Bearer ${ADMIN}` };
    for (const path of ['/admin/triggers', '/metrics', '/readyz']) {
      expect({ path, status: (await fetch(`${gateway.url}${path}`, { headers: auth })).status }).toEqual({ path, status: 404 });
      expect({ path, status: (await fetch(`${gateway.adminUrl}${path}`, { headers: auth })).status }).toEqual({ path, status: 200 });
    }
  });

  it('serves the ingress routes and /healthz on PORT, and no ingress route on ADMIN_PORT', async () => {
    const post = (base: string) => fetch(`${base}/api/webhooks/trigger/t`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect((await post(gateway.url)).status).toBe(200);
    expect((await post(gateway.adminUrl)).status).toBe(404);
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
  });
});
