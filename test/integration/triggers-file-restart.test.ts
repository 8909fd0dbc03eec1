/**
 * Issue 10 item 10: TRIGGERS_FILE was upserted on every start, so a token rotated through the
 * admin API reverted whenever a pod started. Built gateways, one after the other, on the real
 * Redis (one prefix: the same registry, as pods of one deployment share it).
 */
import type Redis from 'ioredis';
import { admin, postWebhook } from '../helpers/gateway-client';
import { REDIS_TEST_URL, deleteKeys, requireRedis, uniquePrefix } from '../helpers/redis';
import { startGateway, type RunningGateway } from '../helpers/server';
import { tempDir, writeJson } from '../helpers/tmp';

const ADMIN = 'triggers-file-admin-token-7c1d';
const FILE_TOKEN = 'token-from-the-file-1';
const ROTATED_TOKEN = 'token-rotated-by-admin-2';
const EDITED_TOKEN = 'token-from-the-edited-file-3';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const orders = (token: string) => ({ workflowId: 'wf-1', workspaceId: 'ws-1', deployed: true, auth: { token } });

describe('TRIGGERS_FILE across restarts', () => {
  const tmp = tempDir('igw-triggers-file-');
  const prefix = uniquePrefix('triggers-file');
  let redis: Redis;
  let gateway: RunningGateway | undefined;

  const start = async (file: string) => {
    gateway = await startGateway({ REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: prefix, TRIGGERS_FILE: file, ADMIN_TOKEN: ADMIN });
    await gateway.waitForOutput('registry seeded from TRIGGERS_FILE');
    return gateway;
  };
  const restart = async (file: string) => {
    await gateway?.stop();
    gateway = undefined;
    return start(file);
  };
  let sent = 0;
  const status = async (g: RunningGateway, path: string, token: string) =>
    (await postWebhook(g.url, path, { n: ++sent }, undefined, bearer(token))).status;

  beforeAll(async () => {
    redis = await requireRedis();
  });

  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    await deleteKeys(redis, prefix);
    redis.disconnect();
    tmp.cleanup();
  });

  it('keeps a token rotated through the admin API when a pod starts with the same file, and re-creates what is missing', async () => {
    const file = writeJson(tmp.dir, 'triggers.json', { triggers: { orders: orders(FILE_TOKEN), refunds: orders(FILE_TOKEN) } });
    let g = await start(file);
    expect(await status(g, 'orders', FILE_TOKEN)).toBe(200);
    const firstStart = g.output();

    expect((await admin(g.adminUrl, ADMIN, 'PUT', '/admin/triggers/orders', orders(ROTATED_TOKEN))).status).toBe(200);
    expect((await admin(g.adminUrl, ADMIN, 'DELETE', '/admin/triggers/refunds')).status).toBe(200);
    expect(await status(g, 'orders', ROTATED_TOKEN)).toBe(200);

    g = await restart(file);
    expect(await status(g, 'orders', ROTATED_TOKEN)).toBe(200);
    expect(await status(g, 'orders', FILE_TOKEN)).toBe(401);
    // Missing from the registry, still in the file: created again.
    expect(await status(g, 'refunds', FILE_TOKEN)).toBe(200);
    expect(firstStart).toContain('the file changed since it was last applied');
    expect(g.output()).toContain('the file is unchanged, only missing entries created');
  });

  it('writes every entry again when the file itself changed since it was last applied', async () => {
    const file = writeJson(tmp.dir, 'triggers.json', { triggers: { orders: orders(EDITED_TOKEN), refunds: orders(FILE_TOKEN) } });
    const g = await restart(file);
    expect(await status(g, 'orders', EDITED_TOKEN)).toBe(200);
    expect(await status(g, 'orders', ROTATED_TOKEN)).toBe(401);
    expect(g.output()).toContain('the file changed since it was last applied');
  });
});
