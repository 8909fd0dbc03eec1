/**
 * librdkafka's mock Kafka cluster, started through Debian's `kcat` (one process that is both
 * the broker and a consumer of the given topics), for tests that talk Kafka over TCP.
 *
 *   kcat -b x -X test.mock.num.brokers=1 [-X test.mock.broker.rtt=N] -X check.crcs=true -u -J -o beginning
 *        (-C -t <topic> | -G <group> <topic>...)
 *
 * What librdkafka 2.0.2's mock (the one in Debian 12's kcat 1.7.1) can and cannot do, found
 * by trying it:
 * - topics are created on first use (any Metadata request, the consumer's or the producer's),
 *   with 4 partitions; there is no CreateTopics and no setting to pre-create them.
 * - it listens on a random port of 127.0.0.1 only, with no setting to choose it: `port` below
 *   puts a TCP forwarder of this process on a known port in front of it (the mock's metadata
 *   still names its own port, which kafkajs then uses).
 * - it does not enforce message.max.bytes (a 2 MB record is accepted).
 * - kafkajs' idempotent producer cannot start against it: kafkajs asks the controller named
 *   in the Metadata answer for a producer id, and the mock names controller 0 while its only
 *   broker is 1 (KafkaJSBrokerNotFound), so tests use idempotent=false.
 * - kcat's simple consumer (-C) reads one topic only (the last -t wins); the balanced
 *   consumer (-G, the mock runs the group coordinator too) takes a list of topics, but the
 *   mock's group join takes about 3 s before the first record is read.
 * - `-J` prints every record as one JSON line (headers as [name, value, ...]): values and
 *   headers with tabs, newlines or any other byte survive, unlike a `-f` format.
 * pause()/resume() stop and continue the whole process (broker and consumer) with SIGSTOP and
 * SIGCONT. The kcat process is killed by stop(), by an exit hook of this process, and by a
 * watchdog shell that kills it as soon as this process's end of its stdin pipe closes (so
 * even a test worker killed outright leaves nothing behind).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { delimiter, join } from 'node:path';

export interface ConsumedRecord {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  headers: Record<string, string>;
  value: string | null;
}

export interface KafkaMockOptions {
  /** Topics the built-in consumer reads from the beginning (created on start). */
  topics: string[];
  /** Simulated broker latency (test.mock.broker.rtt). */
  rttMs?: number;
  /** Serve the bootstrap address on this port of 127.0.0.1 (a forwarder in front of the mock). */
  port?: number;
}

export interface KafkaMock {
  /** Bootstrap address, `127.0.0.1:<port>`. */
  readonly brokers: string;
  /** The mock's own listener, `127.0.0.1:<port>` (equals brokers unless `port` was given). */
  readonly mockAddress: string;
  /** Records consumed so far, in arrival order (per partition in offset order). */
  records(topic?: string): ConsumedRecord[];
  /** Resolves with the topic's records once `count` have arrived or the predicate holds. */
  waitFor(
    until: number | ((records: ConsumedRecord[]) => boolean),
    timeoutMs?: number,
    topic?: string,
  ): Promise<ConsumedRecord[]>;
  /** SIGSTOP: the broker stops answering (connections stay open). */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Kills the broker; safe twice. */
  stop(): Promise<void>;
}

const KCAT = 'kcat';
const START_TIMEOUT_MS = 15_000;

/**
 * Starts kcat in the background and, in a subshell, waits for this process to close the
 * shell's stdin, then kills kcat. Prints kcat's pid on stderr first.
 */
const WATCHDOG = [
  'exec 3<&0 0</dev/null',
  'kcat "$@" &',
  'k=$!',
  'echo "kcat-pid $k" >&2',
  '( cat <&3 >/dev/null; kill -KILL "$k" 2>/dev/null ) &',
  'w=$!',
  'exec 3<&-',
  'wait "$k"',
  // kcat is reaped now and its pid free for reuse (pid_max can be 32768): stop the watchdog.
  'status=$?',
  'kill "$w" 2>/dev/null',
  'exit "$status"',
].join('\n');

const live = new Set<() => void>();
let exitHookInstalled = false;
let started = 0;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const kill of live) kill();
  });
}

export function findKcat(): string {
  const dirs = (process.env.PATH ?? '').split(delimiter).concat(['/usr/bin', '/usr/local/bin']);
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, KCAT);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(
    'kcat is not installed: the Kafka tests run against librdkafka\'s mock cluster started by kcat. ' +
      'Install it with `apt-get install -y kcat` (Debian/Ubuntu).',
  );
}

/** A port of 127.0.0.1 that was free a moment ago (nothing listens on it now). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startKafkaMock(options: KafkaMockOptions): Promise<KafkaMock> {
  const kcat = findKcat();
  if (options.topics.length === 0) throw new Error('startKafkaMock: give at least one topic');
  installExitHook();

  const args = ['-b', 'x', '-X', 'test.mock.num.brokers=1'];
  if (options.rttMs !== undefined) args.push('-X', `test.mock.broker.rtt=${options.rttMs}`);
  // Records reach the consumer within ~100 ms rather than the default 500. check.crcs: the
  // consumer verifies each batch's CRC-32C (librdkafka's own code, not kafkajs's, which
  // patches/ changes) and reports a mismatch instead of the records.
  args.push('-X', 'fetch.wait.max.ms=100', '-X', 'check.crcs=true', '-u', '-J', '-o', 'beginning');
  if (options.topics.length === 1) args.push('-C', '-t', options.topics[0]);
  else args.push('-G', `kafka-mock-${process.pid}-${++started}`, ...options.topics);

  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'kafka-mock', ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, PATH: `${kcat.slice(0, kcat.lastIndexOf('/'))}${delimiter}${process.env.PATH ?? ''}` },
  });

  const consumed: ConsumedRecord[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let kcatPid: number | undefined;
  let mockAddress: string | undefined;
  let exited = false;
  let forwarder: Server | undefined;
  const sockets = new Set<Socket>();

  // Kills kcat only: the shell reaps it (`wait`) and then exits, so the shell's exit means kcat
  // is gone for good. Before kcat's pid is known the shell itself is killed (the watchdog
  // still kills kcat when stdin closes).
  const kill = () => {
    try {
      // Once the shell has exited kcat is reaped and its pid may belong to another process.
      if (exited) return;
      if (kcatPid !== undefined) process.kill(kcatPid, 'SIGKILL');
      else child.kill('SIGKILL');
    } catch {
      // already gone
    } finally {
      child.stdin?.destroy();
    }
  };
  live.add(kill);

  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  child.once('exit', () => {
    exited = true;
    live.delete(kill);
    for (const wake of waiters) wake();
  });

  let stdoutBuffer = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    stdoutBuffer += chunk;
    let newline: number;
    while ((newline = stdoutBuffer.indexOf('\n')) >= 0) {
      const line = stdoutBuffer.slice(0, newline);
      stdoutBuffer = stdoutBuffer.slice(newline + 1);
      if (line.trim() === '') continue;
      consumed.push(parseRecord(line));
    }
    for (const wake of waiters) wake();
  });

  let stderrBuffer = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    if (stderr.length < 20_000) stderr += chunk;
    stderrBuffer += chunk;
    let newline: number;
    while ((newline = stderrBuffer.indexOf('\n')) >= 0) {
      const line = stderrBuffer.slice(0, newline);
      stderrBuffer = stderrBuffer.slice(newline + 1);
      const pid = /^kcat-pid (\d+)$/.exec(line);
      if (pid) kcatPid = Number(pid[1]);
      const address = /replaced with (127\.0\.0\.1:\d+)/.exec(line);
      if (address) mockAddress ??= address[1];
    }
    for (const wake of waiters) wake();
  });

  const until = (condition: () => boolean, timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (condition()) return finish();
        if (exited) return finish(new Error(`kcat exited while waiting for ${what}:\n${stderr}`));
      };
      const timer = setTimeout(() => finish(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
      function finish(error?: Error) {
        clearTimeout(timer);
        waiters.delete(check);
        if (error) reject(error);
        else resolve();
      }
      waiters.add(check);
      check();
    });

  try {
    // Started once it listens and its pid is known. The consumer reads from the beginning, so
    // it need not be assigned yet: with -G the mock's group join takes about 3 s, and records
    // written meanwhile show up after it.
    await until(
      () => kcatPid !== undefined && mockAddress !== undefined,
      START_TIMEOUT_MS,
      'the kcat mock cluster to start',
    );
    if (options.port !== undefined) {
      const target = mockAddress!.split(':');
      forwarder = await listenForwarder(options.port, target[0], Number(target[1]), sockets);
    }
  } catch (error) {
    kill();
    await closed;
    throw error;
  }

  const brokers = options.port !== undefined ? `127.0.0.1:${options.port}` : mockAddress!;
  const ofTopic = (topic?: string) => (topic === undefined ? consumed.slice() : consumed.filter((r) => r.topic === topic));
  let stopping: Promise<void> | undefined;

  return {
    brokers,
    mockAddress: mockAddress!,
    records: ofTopic,
    async waitFor(condition, timeoutMs = 10_000, topic) {
      const test =
        typeof condition === 'number' ? (records: ConsumedRecord[]) => records.length >= condition : condition;
      try {
        await until(() => test(ofTopic(topic)), timeoutMs, 'records');
      } catch (error) {
        const got = ofTopic(topic).length;
        throw new Error(`${(error as Error).message} (have ${got} record(s)${topic ? ` on ${topic}` : ''})`);
      }
      return ofTopic(topic);
    },
    pause() {
      if (kcatPid !== undefined && !exited) process.kill(kcatPid, 'SIGSTOP');
    },
    resume() {
      if (kcatPid !== undefined && !exited) process.kill(kcatPid, 'SIGCONT');
    },
    stop() {
      stopping ??= (async () => {
        if (forwarder) {
          for (const socket of sockets) socket.destroy();
          await new Promise<void>((resolve) => forwarder!.close(() => resolve()));
        }
        kill();
        await closed;
      })();
      return stopping;
    },
  };
}

function parseRecord(line: string): ConsumedRecord {
  const json = JSON.parse(line) as {
    topic: string;
    partition: number;
    offset: number;
    key: string | null;
    payload: string | null;
    headers?: string[] | Record<string, string>;
  };
  const headers: Record<string, string> = {};
  if (Array.isArray(json.headers)) {
    for (let i = 0; i + 1 < json.headers.length; i += 2) headers[json.headers[i]] = json.headers[i + 1];
  } else if (json.headers) {
    Object.assign(headers, json.headers);
  }
  return {
    topic: json.topic,
    partition: json.partition,
    offset: json.offset,
    key: json.key,
    headers,
    value: json.payload,
  };
}

function listenForwarder(port: number, host: string, targetPort: number, sockets: Set<Socket>): Promise<Server> {
  const server = createServer((client) => {
    const upstream = connect(targetPort, host);
    sockets.add(client);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
