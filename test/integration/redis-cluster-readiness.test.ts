/**
 * Redis Cluster readiness: with one master dead, /readyz's body and igw_dependency_up report
 * Redis down and name the slots no master answers for. A plain PING goes to one random node
 * and kept answering "up" while writes to the dead master's slots failed.
 */
import Redis from 'ioredis';
import { Registry } from 'prom-client';
import { checkDependencies, registerDependencyMetrics } from '../../src/observability/dependencies';
import { RedisConnection } from '../../src/redis/connection';
import { capturingLogger } from '../helpers/redis';
import { RedisClusterProcess } from '../helpers/redis-cluster';
import { readyConnection } from '../helpers/redis-setups';

const PASSWORD = 'cluster-readiness-pw-93c1';
const TIMEOUT_MS = 300;

/** The slot ranges CLUSTER SLOTS gives the master on `port`, as `start-end` joined by commas. */
async function slotsOf(port: number, askPort: number): Promise<string> {
  const node = new Redis({ host: '127.0.0.1', port: askPort, password: PASSWORD, maxRetriesPerRequest: 0 });
  node.on('error', () => undefined);
  try {
    const slots = await node.cluster('SLOTS');
    return slots
      .filter(([, , master]) => master?.[1] === port)
      .sort(([a], [b]) => a - b)
      .map(([start, end]) => (start === end ? String(start) : `${start}-${end}`))
      .join(',');
  } finally {
    node.disconnect();
  }
}

describe('Redis Cluster readiness with a master dead', () => {
  let cluster: RedisClusterProcess;
  let connection: RedisConnection;
  const logs = capturingLogger();

  beforeAll(async () => {
    cluster = await RedisClusterProcess.start({ password: PASSWORD });
    connection = new RedisConnection({ target: cluster.target, timeoutMs: TIMEOUT_MS }, logs.logger);
    await readyConnection(connection); // start() waits a moment only; a busy machine can take longer to reach every node
  });

  afterAll(async () => {
    await connection?.close();
    await cluster?.stop();
  });

  it('reports redis down in the body and in igw_dependency_up, naming the dead master\'s slots', async () => {
    const checks = [{ name: 'redis', ping: () => connection.ping() }];
    const registry = new Registry();
    registerDependencyMetrics(registry, checks);
    const redisUp = async () => (await registry.getSingleMetric('igw_dependency_up')!.get()).values.find((v) => v.labels.dependency === 'redis')?.value;

    expect(await checkDependencies(checks)).toEqual({ checks: { redis: 'up' }, details: {} });
    expect(await redisUp()).toBe(1);

    const [victimPort, survivorPort] = cluster.ports;
    const victimSlots = await slotsOf(victimPort, survivorPort);
    expect(victimSlots).toMatch(/^\d+-\d+/);
    await cluster.killNode(0);

    // Every check after the kill reports it; several, since a single PING to a random node could hit a live one.
    for (let i = 0; i < 5; i++) {
      const report = await checkDependencies(checks);
      expect(report.checks.redis).toBe('down');
      expect(report.details.redis).toEqual({
        unreachableSlots: victimSlots,
        error: expect.stringContaining(`cluster slots ${victimSlots} unreachable (127.0.0.1:${victimPort}: `),
      });
      expect(await redisUp()).toBe(0);
    }
    expect(JSON.stringify(await checkDependencies(checks))).not.toContain(PASSWORD);
  });
});
