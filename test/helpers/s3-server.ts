/**
 * A real S3-protocol server over TCP for tests: moto's server (`python3 -m moto.server`),
 * started on a port of its own choosing. It implements multipart uploads faithfully
 * (CreateMultipartUpload, UploadPart with S3's 5 MiB minimum, Complete, Abort and
 * ListMultipartUploads), which the tests need to prove that nothing is left behind.
 */
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { Readable } from 'node:stream';

/** Credentials the SDK's default chain reads from the environment; moto takes any. */
export const TEST_AWS_ENV = {
  AWS_ACCESS_KEY_ID: 'igw-test-access-key',
  AWS_SECRET_ACCESS_KEY: 'igw-test-secret-key',
  AWS_REGION: 'us-east-1',
};

const HOW_TO_START =
  "the S3 test server is moto's: `python3 -m moto.server` must run (pip install 'moto[server]'; this machine image ships it)";

export class S3TestServer {
  readonly client: S3Client;

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    private readonly output: () => string,
  ) {
    this.client = new S3Client({
      region: TEST_AWS_ENV.AWS_REGION,
      endpoint: this.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: TEST_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: TEST_AWS_ENV.AWS_SECRET_ACCESS_KEY },
    });
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async start(timeoutMs = 30_000): Promise<S3TestServer> {
    // .ci/run names the interpreter that has moto (the image's pyenv one) when python3 does not.
    const python = process.env.MOTO_PYTHON ?? 'python3';
    const probe = spawnSync(python, ['-c', 'import moto.server, flask'], { encoding: 'utf8' });
    if (probe.status !== 0) throw new Error(`${HOW_TO_START}\n${probe.stderr ?? probe.error?.message ?? ''}`);
    const child = spawn(python, ['-m', 'moto.server', '-H', '127.0.0.1', '-p', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
    child.stderr!.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`moto did not start within ${timeoutMs} ms: ${HOW_TO_START}\n${output}`)), timeoutMs);
      const poll = setInterval(() => {
        const match = output.match(/Running on http:\/\/127\.0\.0\.1:(\d+)/);
        if (!match) return;
        clearInterval(poll);
        clearTimeout(timer);
        resolve(Number(match[1]));
      }, 20);
      child.once('exit', (code) => {
        clearInterval(poll);
        clearTimeout(timer);
        reject(new Error(`moto exited with ${code}: ${HOW_TO_START}\n${output}`));
      });
    });
    return new S3TestServer(child, port, () => output);
  }

  async createBucket(name: string): Promise<void> {
    await this.client.send(new CreateBucketCommand({ Bucket: name }));
  }

  /** Every object key in the bucket. */
  async keys(bucket: string): Promise<string[]> {
    const listed = await this.client.send(new ListObjectsV2Command({ Bucket: bucket }));
    return (listed.Contents ?? []).map((object) => object.Key ?? '').sort();
  }

  /** Multipart uploads still open (neither completed nor aborted). */
  async openUploads(bucket: string): Promise<string[]> {
    const listed = await this.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    return (listed.Uploads ?? []).map((upload) => `${upload.Key}#${upload.UploadId}`);
  }

  async object(bucket: string, key: string): Promise<{ sha256: string; size: number; contentType?: string }> {
    const got = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of got.Body as Readable) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    return { sha256: hash.digest('hex'), size, contentType: got.ContentType };
  }

  logs(): string {
    return this.output();
  }

  async stop(): Promise<void> {
    this.client.destroy();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

/**
 * A TCP proxy in front of the store: `goDown()` cuts every open connection and refuses new
 * ones (to the gateway the store is gone), `comeBack()` serves again with the store's data as
 * it was, as a store restarted on its own disk would.
 */
export class StoreOutageProxy {
  private readonly sockets = new Set<Socket>();
  private down = false;
  /** Bytes relayed towards the store so far. */
  bytesUp = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(upstreamPort: number): Promise<StoreOutageProxy> {
    let proxy: StoreOutageProxy | undefined;
    const server = createServer((client) => proxy?.relay(client, upstreamPort));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('store proxy: no port');
    proxy = new StoreOutageProxy(server, address.port);
    return proxy;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  goDown(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
  }

  comeBack(): void {
    this.down = false;
  }

  async close(): Promise<void> {
    this.goDown();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket, upstreamPort: number): void {
    if (this.down) {
      client.destroy();
      return;
    }
    const upstream = createConnection(upstreamPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => (this.bytesUp += chunk.length));
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
