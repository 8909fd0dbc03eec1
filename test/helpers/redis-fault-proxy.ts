/**
 * A TCP proxy between a Redis client and a real Redis that refuses chosen commands, for
 * tests of a Redis that fails at one exact step. A refused command is swapped, in its place
 * in the stream, for a command Redis does not know, so Redis itself answers it with an error
 * in that command's turn: pipelining and the order of replies stay as they are. Everything
 * else, both ways, passes through untouched.
 *
 * It can also stop answering from one exact command on (`holdFrom`: that command and all
 * after it on the same connection never reach Redis) and drop every connection it relays
 * (`cutConnections`: a network blip; the client connects again through the proxy).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export type CommandMatcher = (args: string[]) => boolean;

const REFUSED_COMMAND = 'IGW-TEST-REFUSED-COMMAND';
const REFUSED = Buffer.from(`*1\r\n$${REFUSED_COMMAND.length}\r\n${REFUSED_COMMAND}\r\n`);

export class RedisFaultProxy {
  /** Commands refused so far. */
  refused = 0;
  /** Connections held by holdFrom() so far. */
  held = 0;
  private readonly rules: Array<{ match: CommandMatcher; remaining: number }> = [];
  private holdMatch?: CommandMatcher;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on a port of its own choosing, forwarding to `upstream` (the test Redis). */
  static async start(upstream: { host: string; port: number }): Promise<RedisFaultProxy> {
    let proxy: RedisFaultProxy | undefined;
    const server = createServer((client) => proxy?.relay(client, upstream));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('redis fault proxy: no port');
    proxy = new RedisFaultProxy(server, address.port);
    return proxy;
  }

  url(db = 0): string {
    return `redis://127.0.0.1:${this.port}/${db}`;
  }

  /** The next `times` commands that `match` (arguments as text, command name first) get an error. */
  refuseNext(match: CommandMatcher, times = 1): void {
    this.rules.push({ match, remaining: times });
  }

  /** Drops every rule: from now on everything passes. */
  stopRefusing(): void {
    this.rules.length = 0;
  }

  /** The next command that `match`es, and everything its connection sends after it, never reaches Redis. */
  holdFrom(match: CommandMatcher): void {
    this.holdMatch = match;
  }

  /** Drops every relayed connection; new ones are still accepted. */
  cutConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket, upstream: { host: string; port: number }): void {
    const server = createConnection(upstream.port, upstream.host);
    for (const socket of [client, server]) {
      this.sockets.add(socket);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        server.destroy();
      });
      socket.on('error', () => undefined);
    }
    server.pipe(client);
    let pending: Buffer = Buffer.alloc(0);
    let holding = false;
    client.on('data', (chunk: Buffer) => {
      if (holding) return;
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (let command = nextCommand(pending); command; command = nextCommand(pending)) {
        if (this.holdMatch?.(command.args)) {
          this.holdMatch = undefined;
          this.held += 1;
          holding = true;
          return;
        }
        server.write(this.shouldRefuse(command.args) ? REFUSED : pending.subarray(0, command.bytes));
        pending = pending.subarray(command.bytes);
      }
    });
  }

  private shouldRefuse(args: string[]): boolean {
    const rule = this.rules.find((r) => r.remaining > 0 && r.match(args));
    if (!rule) return false;
    rule.remaining -= 1;
    this.refused += 1;
    return true;
  }
}

/** One complete command at the start of `buffer` (a RESP array of bulk strings), or undefined. */
function nextCommand(buffer: Buffer): { args: string[]; bytes: number } | undefined {
  const header = readLine(buffer, 0);
  if (!header) return undefined;
  if (buffer[0] !== 0x2a /* '*' */) return { args: header.text.trim().split(/\s+/), bytes: header.next }; // inline
  const count = Number(header.text.slice(1));
  const args: string[] = [];
  let position = header.next;
  for (let i = 0; i < count; i += 1) {
    const length = readLine(buffer, position);
    if (!length) return undefined;
    const size = Number(length.text.slice(1));
    const end = length.next + size;
    if (end + 2 > buffer.length) return undefined;
    args.push(buffer.toString('utf8', length.next, end));
    position = end + 2;
  }
  return { args, bytes: position };
}

function readLine(buffer: Buffer, from: number): { text: string; next: number } | undefined {
  const end = buffer.indexOf('\r\n', from);
  return end < 0 ? undefined : { text: buffer.toString('latin1', from, end), next: end + 2 };
}
