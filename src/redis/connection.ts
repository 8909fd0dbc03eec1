import type { ConnectionOptions } from 'node:tls';
import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Lifecycle } from '../lifecycle';
import { DependencyDown } from '../observability/dependencies';
import type { Logger } from '../observability/logger';
import { urlCredentials } from '../secrets/url';
import { waitAtMost } from '../wait-at-most';
import { checkEveryMaster } from './cluster-health';
import { isCluster, type RedisClusterTarget, type RedisTarget } from './target';

/** A client of one Redis or of a Redis Cluster: the stores use only what both offer. */
export type RedisClient = Redis | Cluster;

/** Longest pause between two reconnect attempts (plus up to 100 ms of jitter). */
const MAX_RECONNECT_DELAY_MS = 1000;
/** While Redis stays unreachable, one warning per connection per this many ms. */
const ERROR_LOG_EVERY_MS = 10_000;

type Role = 'client' | 'subscriber';

/** The Redis connection's section of the settings (the container builds it from REDIS_*). */
export interface RedisSettings {
  /** A redis:// or rediss:// URL, or a cluster's seed nodes (see redisTarget). */
  target: RedisTarget;
  /** Every command's deadline (REDIS_TIMEOUT_MS). */
  timeoutMs: number;
  /** For TLS (see redisTlsOptions); ioredis alone would use the system CAs only. */
  tls?: ConnectionOptions;
}

/**
 * One Redis server (or one Redis Cluster) for the whole process: `client` for commands,
 * `subscriber()` for pub/sub.
 *
 * Built so that a dead or unreachable Redis never holds a request:
 * - no offline queue: a command sent while disconnected is refused at once;
 * - `commandTimeout` = `timeoutMs`: a command on a live socket that gets no answer fails then;
 * - `socketTimeout`: a socket that stops answering (black-holed host, frozen server) is torn
 *   down, so the commands after it fail fast instead of each waiting `timeoutMs`;
 * - `maxRetriesPerRequest: 0` and no resend of unanswered commands: a command cut by a
 *   disconnect fails instead of running again later (an INCR must not count twice).
 * Meanwhile it reconnects forever in the background with a bounded backoff.
 *
 * On a cluster the same holds for every node connection, and a command is never sent again
 * after its connection was lost (`retryDelayOnFailover: 0`) nor held while the cluster is down
 * (`retryDelayOnClusterDown: 0`). MOVED and ASK redirections are followed: the node that
 * answers them did not run the command.
 */
export class RedisConnection implements Lifecycle {
  readonly client: RedisClient;
  /** True for a Redis Cluster: keys used together carry one hash tag (see registryKeys). */
  readonly isCluster: boolean;
  private sub?: RedisClient;
  private closed = false;
  private started = false;
  private readonly target: string;
  private readonly secrets: string[];
  private readonly logState: Record<Role, { lastLogAt: number; suppressed: number; down: boolean }> = {
    client: { lastLogAt: 0, suppressed: 0, down: false },
    subscriber: { lastLogAt: 0, suppressed: 0, down: false },
  };
  private restartTimers = new Set<NodeJS.Timeout>();

  private readonly timeoutMs: number;
  private readonly tls?: ConnectionOptions;

  constructor(
    settings: RedisSettings,
    private readonly logger: Logger,
  ) {
    const { target } = settings;
    this.timeoutMs = settings.timeoutMs;
    this.tls = settings.tls;
    if (isCluster(target)) {
      this.isCluster = true;
      this.secrets = target.password ? [target.password] : [];
      const scheme = target.tls ? 'rediss' : 'redis';
      this.target = `${scheme}-cluster://${target.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
      this.client = new Cluster(target.nodes, this.clusterOptions('client', target));
    } else {
      this.isCluster = false;
      const parsed = new URL(target);
      this.secrets = urlCredentials(target);
      this.target = `${parsed.protocol}//${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}`;
      this.client = new Redis(target, this.options('client'));
    }
    this.watch(this.client, 'client');
  }

  /** Connects in the background. Never fails: a Redis that is down shows in ping() (/readyz). */
  async start(): Promise<void> {
    if (this.closed || this.started) return;
    this.started = true;
    const ready = this.client.status === 'wait' ? this.client.connect() : Promise.resolve();
    // Wait a moment for the first connection so a healthy start is ready at once, but never fail.
    await waitAtMost(ready, Math.max(this.timeoutMs, 500));
  }

  /**
   * Resolves when Redis answers PING within the timeout; rejects with `redis: <reason>`. On a
   * cluster every master must answer: one that does not makes its slots unreachable (writes to
   * them fail), reported as a DependencyDown with `unreachableSlots`.
   */
  async ping(): Promise<void> {
    if (this.closed) throw new Error('redis: closed');
    if (!this.isReady) throw new Error(`redis: not connected (${this.connectionState()})`);
    if (this.client instanceof Cluster) return this.pingEveryMaster(this.client);
    try {
      await this.client.ping();
    } catch (error) {
      throw new Error(`redis: ${this.reason(error)}`);
    }
  }

  private async pingEveryMaster(cluster: Cluster): Promise<void> {
    const { unreachable, unreachableSlots } = await checkEveryMaster(cluster);
    if (unreachableSlots === '') return;
    const masters = unreachable.map(({ master, error }) => `${master}: ${this.reason(new Error(error))}`);
    const why = masters.length > 0 ? ` (${masters.join('; ')})` : ' (no master serves them)';
    throw new DependencyDown(`redis: cluster slots ${unreachableSlots} unreachable${why}`, { unreachableSlots });
  }

  /** True while the command connection is up (and its socket not already ended by the server). */
  get isReady(): boolean {
    if (this.closed || this.client.status !== 'ready') return false;
    return this.client instanceof Cluster || this.client.stream?.writable === true;
  }

  /**
   * The pub/sub connection, created on first use. Unlike `client` it queues commands while
   * disconnected (a SUBSCRIBE must not be lost). After a reconnect its user subscribes again
   * on 'ready': ioredis' own resubscribe sends a SUBSCRIBE whose rejection nobody handles, so
   * a connection closed before the reply (a shutdown) was an unhandled rejection, fatal here.
   */
  subscriber(): RedisClient {
    if (this.closed) throw new Error('redis: closed');
    if (!this.sub) {
      // A cluster subscribes through one node of its choice (PUBLISH reaches every node) and
      // moves to another node, subscriptions and all, when that one goes away.
      this.sub =
        this.client instanceof Cluster
          ? this.client.duplicate([], this.clusterOptions('subscriber'))
          : this.client.duplicate(this.options('subscriber'));
      this.watch(this.sub, 'subscriber');
      if (this.sub.status === 'wait') this.sub.connect().catch(() => undefined);
    }
    return this.sub;
  }

  /** Safe twice and without start(). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.restartTimers) clearTimeout(timer);
    this.restartTimers.clear();
    await Promise.all([this.client, this.sub].filter((c): c is RedisClient => c !== undefined).map((c) => this.end(c)));
  }

  private async end(connection: RedisClient): Promise<void> {
    if (connection.status === 'ready') {
      let timer: NodeJS.Timeout | undefined;
      const quit = connection.quit().then(
        () => true,
        () => false,
      );
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), this.timeoutMs);
      });
      const done = await Promise.race([quit, timeout]);
      if (timer) clearTimeout(timer);
      if (done) return;
    }
    connection.disconnect();
  }

  private options(role: Role): RedisOptions {
    const common: RedisOptions = {
      lazyConnect: true,
      // Requests never wait for a connect (no offline queue), so this only bounds how long one
      // attempt to a black-holed host keeps the socket before the next try; a little more room
      // than a command gets helps TLS handshakes over a real network.
      connectTimeout: Math.max(this.timeoutMs, 500),
      // As long as one command may wait: the first unanswered command tears the socket down, so
      // the commands after it (the same request's next ones) fail at once instead of each
      // waiting its own `timeoutMs` (three in a row held a request for 3 × timeoutMs).
      socketTimeout: this.timeoutMs,
      // How long disconnect() lets a socket close by itself before destroying it. ioredis arms
      // this timer even for a socket that is already gone (and never clears it), which would
      // hold the process for the default 2 s on shutdown.
      disconnectTimeout: this.timeoutMs,
      retryStrategy: (times: number) =>
        Math.min(50 * 2 ** Math.min(times, 10), MAX_RECONNECT_DELAY_MS) + Math.floor(Math.random() * 100),
      reconnectOnError: (error: Error) => error.message.startsWith('READONLY'),
      connectionName: role === 'client' ? 'ingress-gateway' : 'ingress-gateway-sub',
      ...(this.tls && { tls: this.tls }),
    };
    if (role === 'subscriber') {
      return {
        ...common,
        enableOfflineQueue: true,
        maxRetriesPerRequest: null,
        autoResubscribe: false,
        // duplicate() starts from the client's options: a SUBSCRIBE cut before its reply (the
        // socket timeout tears down a stalled one) must be sent again on the next connection.
        autoResendUnfulfilledCommands: true,
        enableAutoPipelining: false,
        commandTimeout: undefined,
      };
    }
    return {
      ...common,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: this.timeoutMs,
      // Commands issued in the same tick by concurrent requests go out in one write.
      enableAutoPipelining: true,
    };
  }

  /**
   * The same behaviour on a cluster: the node connections get the options of `options(role)`;
   * the cluster itself neither queues nor resends (see the class comment).
   */
  private clusterOptions(role: Role, target?: RedisClusterTarget): ClusterOptions {
    const { retryStrategy, enableOfflineQueue, enableAutoPipelining, ...node } = this.options(role);
    return {
      lazyConnect: true,
      enableOfflineQueue,
      enableAutoPipelining,
      clusterRetryStrategy: retryStrategy as ClusterOptions['clusterRetryStrategy'],
      retryDelayOnFailover: role === 'client' ? 0 : 100,
      retryDelayOnClusterDown: role === 'client' ? 0 : 100,
      slotsRefreshTimeout: Math.max(this.timeoutMs, 1000),
      // With TLS the seed nodes keep their names, which their certificates carry.
      ...(this.tls && { dnsLookup: (address: string, callback: (error: null, address: string) => void) => callback(null, address) }),
      redisOptions: {
        ...node,
        ...(target?.username && { username: target.username }),
        ...(target?.password && { password: target.password }),
      },
    };
  }

  private watch(connection: RedisClient, role: Role): void {
    const state = this.logState[role];
    const onError = (error: unknown) => {
      if (this.closed) return;
      const now = Date.now();
      if (!state.down || now - state.lastLogAt >= ERROR_LOG_EVERY_MS) {
        this.logger.warn(
          { redis: this.target, connection: role, err: { message: this.reason(error) }, suppressed: state.suppressed },
          state.down ? 'redis still unreachable' : 'redis unreachable',
        );
        state.lastLogAt = now;
        state.suppressed = 0;
      } else {
        state.suppressed += 1;
      }
      state.down = true;
    };
    connection.on('error', onError);
    // A cluster reports what happens to each node connection separately.
    if (connection instanceof Cluster) connection.on('node error', onError);
    connection.on('ready', () => {
      if (state.down) this.logger.info({ redis: this.target, connection: role }, 'redis reconnected');
      else this.logger.debug({ redis: this.target, connection: role }, 'redis connected');
      state.down = false;
      state.suppressed = 0;
    });
    connection.on('end', () => {
      // ioredis gives up only on errors it deems fatal for the connector; keep trying anyway.
      if (this.closed) return;
      state.down = true;
      const timer = setTimeout(() => {
        this.restartTimers.delete(timer);
        if (!this.closed && connection.status === 'end') connection.connect().catch(() => undefined);
      }, MAX_RECONNECT_DELAY_MS);
      timer.unref();
      this.restartTimers.add(timer);
    });
  }

  private connectionState(): string {
    const status = this.client.status;
    return status === 'ready' ? 'connection lost' : status;
  }

  /** A short reason, never with the URL's password. */
  private reason(error: unknown): string {
    let message = error instanceof Error ? error.message : String(error);
    if (message.startsWith("Stream isn't writeable")) message = `not connected (${this.connectionState()})`;
    for (const secret of this.secrets) message = message.split(secret).join('***');
    return message;
  }
}
