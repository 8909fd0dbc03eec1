/**
 * A throw-away Redis Cluster of three masters (no replicas), started by the tests themselves:
 * three `redis-server --cluster-enabled yes` processes, joined by `redis-cli --cluster create`,
 * ready once every node reports `cluster_state:ok`. With a password (`requirepass` and
 * `masterauth`) and optionally TLS on client and bus connections (`tls-cluster yes`).
 * Fails with how to install what is missing; never skips.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { RedisClusterTarget } from '../../src/redis/target';
import { freePort, requireRedisServerBinary, sleep } from './redis';
import type { TestPki } from './secured-redis';

const MASTERS = 3;
/** Only when to give up on a cluster that never forms; the wait itself is for a condition. */
const FORM_TIMEOUT_MS = 60_000;
const START_ATTEMPTS = 5;

export interface ClusterOptions {
  password: string;
  /** TLS for clients and the cluster bus, certificates from this test CA. */
  pki?: TestPki;
}

class PortTakenError extends Error {}

interface Node {
  port: number;
  child: ChildProcess;
  output: () => string;
  exited: Promise<void>;
}

export class RedisClusterProcess {
  private closed = false;

  private constructor(
    private readonly nodes: Node[],
    private readonly dir: string,
    private readonly options: ClusterOptions,
  ) {}

  /** Three masters holding every slot, `cluster_state:ok` on each. Always stop() in afterAll. */
  static async start(options: ClusterOptions): Promise<RedisClusterProcess> {
    requireRedisServerBinary();
    const dir = mkdtempSync(join(tmpdir(), 'igw-redis-cluster-'));
    const nodes = await Promise.all(Array.from({ length: MASTERS }, (_, i) => startNode(dir, i, options)));
    const cluster = new RedisClusterProcess(nodes, dir, options);
    try {
      await cluster.create();
      await cluster.waitUntilFormed();
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  get ports(): number[] {
    return this.nodes.map((n) => n.port);
  }

  /** REDIS_CLUSTER_NODES as the gateway takes it. */
  get nodesSetting(): string {
    const scheme = this.options.pki ? 'rediss://' : '';
    return this.ports.map((port) => `${scheme}127.0.0.1:${port}`).join(',');
  }

  /** What redisTarget() makes of the gateway's settings for this cluster. */
  get target(): RedisClusterTarget {
    return { nodes: this.ports.map((port) => ({ host: '127.0.0.1', port })), password: this.options.password, tls: Boolean(this.options.pki) };
  }

  /** A cluster client for the test's own checks (a client certificate too with TLS). */
  client(): Cluster {
    const client = new Cluster(this.target.nodes, {
      redisOptions: { ...nodeOptions(this.options), connectTimeout: 2000, commandTimeout: 5000 },
      ...(this.options.pki && { dnsLookup: (address: string, callback: (error: null, address: string) => void) => callback(null, address) }),
    });
    client.on('error', () => undefined);
    return client;
  }

  /** The keys under the prefix held by each master, in the order of `ports`. */
  async keysByNode(prefix: string): Promise<string[][]> {
    return Promise.all(
      this.ports.map(async (port) => {
        const node = new Redis({ host: '127.0.0.1', port, ...nodeOptions(this.options), maxRetriesPerRequest: 0 });
        node.on('error', () => undefined);
        try {
          const keys: string[] = [];
          let cursor = '0';
          do {
            const [next, batch] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
            cursor = next;
            keys.push(...batch);
          } while (cursor !== '0');
          return keys;
        } finally {
          node.disconnect();
        }
      }),
    );
  }

  /** Kills one master at once (a crash): its slots are unserved until the test ends. */
  async killNode(index: number): Promise<void> {
    await kill(this.nodes[index]);
  }

  output(): string {
    return this.nodes.map((n) => `--- node ${n.port}\n${n.output()}`).join('\n');
  }

  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.nodes.map(kill));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async create(): Promise<void> {
    const args = ['--cluster', 'create', ...this.ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes'];
    const { pki } = this.options;
    if (pki) args.push('--tls', '--cacert', pki.caFile, '--cert', pki.clientCertFile, '--key', pki.clientKeyFile);
    const cli = spawn('redis-cli', args, {
      env: { PATH: process.env.PATH ?? '', REDISCLI_AUTH: this.options.password },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    cli.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    cli.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      cli.once('error', (error) => reject(new Error(`redis-cli could not run (${error.message}); install it with: apt-get install -y redis-tools`)));
      cli.once('exit', (exitCode) => resolve(exitCode));
    });
    if (code !== 0 || !output.includes('[OK] All 16384 slots covered')) {
      throw new Error(`redis-cli --cluster create failed (exit ${code}):\n${output}\n${this.output()}`);
    }
  }

  private async waitUntilFormed(): Promise<void> {
    const clients = this.ports.map((port) => {
      const client = new Redis({ host: '127.0.0.1', port, ...nodeOptions(this.options), lazyConnect: true, maxRetriesPerRequest: 0 });
      client.on('error', () => undefined);
      return client;
    });
    try {
      const deadline = performance.now() + FORM_TIMEOUT_MS;
      for (;;) {
        const infos = await Promise.all(clients.map((c) => c.cluster('INFO').catch((error: Error) => error.message)));
        if (infos.every((info) => String(info).includes('cluster_state:ok'))) return;
        if (performance.now() > deadline) throw new Error(`cluster not formed within ${FORM_TIMEOUT_MS} ms:\n${infos.join('\n')}\n${this.output()}`);
        await sleep(20);
      }
    } finally {
      for (const client of clients) client.disconnect();
    }
  }
}

/** Connection options for one node: the password, and TLS with the test CA and client certificate. */
function nodeOptions(options: ClusterOptions): RedisOptions {
  const { pki } = options;
  return {
    password: options.password,
    ...(pki && { tls: { ca: readFileSync(pki.caFile), cert: readFileSync(pki.clientCertFile), key: readFileSync(pki.clientKeyFile) } }),
  };
}

/** One node on ports of its own (client and cluster bus); other ports if those got taken meanwhile. */
async function startNode(dir: string, index: number, options: ClusterOptions): Promise<Node> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startNodeOn(dir, index, await freePort(), await freePort(), options);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt === START_ATTEMPTS) throw error;
    }
  }
}

async function startNodeOn(dir: string, index: number, port: number, busPort: number, options: ClusterOptions): Promise<Node> {
  const { pki, password } = options;
  const args = [
    '--bind', '127.0.0.1',
    '--cluster-enabled', 'yes',
    '--cluster-config-file', join(dir, `nodes-${index}-${port}.conf`),
    '--cluster-port', String(busPort),
    '--dir', dir,
    '--save', '',
    '--appendonly', 'no',
    '--loglevel', 'warning',
    '--requirepass', password,
    '--masterauth', password,
  ];
  if (pki) {
    args.push('--port', '0', '--tls-port', String(port), '--tls-cluster', 'yes', '--tls-replication', 'yes');
    args.push('--tls-cert-file', pki.serverCertFile, '--tls-key-file', pki.serverKeyFile, '--tls-ca-cert-file', pki.caFile);
    args.push('--tls-auth-clients', 'no');
  } else {
    args.push('--port', String(port));
  }
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  running.add(child);
  void exited.then(() => running.delete(child));
  const node: Node = { port, child, output: () => output, exited };

  const probe = new Redis({ host: '127.0.0.1', port, ...nodeOptions(options), lazyConnect: true, connectTimeout: 500, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => undefined);
  const deadline = performance.now() + 30_000;
  try {
    while (child.exitCode === null && child.signalCode === null && performance.now() < deadline) {
      try {
        if (probe.status === 'wait' || probe.status === 'end') await probe.connect();
        await probe.ping();
        return node;
      } catch {
        await Promise.race([exited, sleep(20)]);
      }
    }
  } finally {
    probe.disconnect();
  }
  await kill(node);
  const message = `cluster node redis-server on port ${port} (bus ${busPort}) did not start: ${output.trim() || 'no answer to PING'}`;
  throw /Address already in use/i.test(output) ? new PortTakenError(message) : new Error(message);
}

async function kill(node: Node): Promise<void> {
  if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGKILL');
  await node.exited;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});
