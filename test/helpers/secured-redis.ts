/**
 * A throw-away redis-server with a password and, optionally, TLS (certificates from a CA made
 * for the test with openssl). Fails with how to install what is missing; never skips.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis, { type RedisOptions } from 'ioredis';
import { freePort, requireRedisServerBinary, sleep } from './redis';

export interface TestPki {
  dir: string;
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
}

function openssl(args: string[], cwd: string): void {
  const run = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (run.error) throw new Error(`openssl is not installed (${run.error.message}); install it with: apt-get install -y openssl`);
  if (run.status !== 0) throw new Error(`openssl ${args[0]} failed: ${run.stderr}`);
}

/** A CA, a server certificate for 127.0.0.1/localhost and a client certificate, all in `dir`. */
export function makeTestPki(dir: string): TestPki {
  const days = ['-days', '2'];
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', ...days, '-subj', '/CN=igw-test-ca'], dir);
  for (const [name, ext] of [
    ['server', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
    ['client', 'extendedKeyUsage=clientAuth'],
  ]) {
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=igw-test-${name}`], dir);
    writeFileSync(join(dir, `${name}.ext`), `${ext}\n`);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, ...days, '-extfile', `${name}.ext`], dir);
  }
  return {
    dir,
    caFile: join(dir, 'ca.crt'),
    serverCertFile: join(dir, 'server.crt'),
    serverKeyFile: join(dir, 'server.key'),
    clientCertFile: join(dir, 'client.crt'),
    clientKeyFile: join(dir, 'client.key'),
  };
}

export interface SecuredRedis {
  port: number;
  /** redis:// or rediss:// URL with the password in it. */
  url: string;
  /** Options for a test client to reach it (TLS trusted by the test CA, with the client certificate). */
  clientOptions: RedisOptions;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts redis-server on a free port with `requirepass`. With `pki`, it listens only on TLS;
 * `requireClientCert` turns on Redis's `tls-auth-clients yes`.
 */
export async function startSecuredRedis(options: { password: string; pki?: TestPki; requireClientCert?: boolean }): Promise<SecuredRedis> {
  requireRedisServerBinary();
  const port = await freePort();
  const { pki, password } = options;
  const args = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning', '--requirepass', password];
  if (pki) {
    args.push('--port', '0', '--tls-port', String(port), '--tls-cert-file', pki.serverCertFile, '--tls-key-file', pki.serverKeyFile);
    args.push('--tls-ca-cert-file', pki.caFile, '--tls-auth-clients', options.requireClientCert ? 'yes' : 'no');
  } else {
    args.push('--port', String(port));
  }
  const child: ChildProcess = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  process.once('exit', () => child.kill('SIGKILL'));

  const url = `${pki ? 'rediss' : 'redis'}://:${encodeURIComponent(password)}@127.0.0.1:${port}/0`;
  const clientOptions: RedisOptions = pki
    ? { tls: { ca: readFileSync(pki.caFile), cert: readFileSync(pki.clientCertFile), key: readFileSync(pki.clientKeyFile) } }
    : {};
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const client = new Redis(url, { ...clientOptions, lazyConnect: true, connectTimeout: 500, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      return { port, url, clientOptions, output: () => output, stop };
    } catch {
      await sleep(50);
    } finally {
      client.disconnect();
    }
  }
  await stop();
  throw new Error(`redis-server (${pki ? 'TLS' : 'password'}) on port ${port} did not start: ${output.trim()}`);
}
