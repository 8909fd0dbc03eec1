/**
 * A stand-in for the providers' key hosts: one local HTTPS server whose certificate (from a
 * throw-away CA made with openssl) names every allow-listed host, and a dial that sends the
 * fetcher's checked public address there. Nothing leaves the machine; the server counts the
 * connections it accepted, so a test can prove that none was opened.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Dial } from '../../../src/keys/transport';
import { tempDir } from '../../helpers/tmp';

export const KEY_HOSTS = [
  'sns.us-east-1.amazonaws.com',
  'sns.eu-west-1.amazonaws.com',
  'sns.us-west-2.amazonaws.com',
  'sns.cn-north-1.amazonaws.com.cn',
  'www.googleapis.com',
  'login.microsoftonline.com',
  'login.botframework.com',
  'desk.zoho.eu',
  'desk.zoho.in',
  'api-m.paypal.com',
  'sandbox.plaid.com',
  'evil.example.com',
];

export interface TestCa {
  ca: string;
  key: string;
  cert: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/** A CA and a server certificate for `hosts`, signed by it. */
export function makeCa(hosts: readonly string[] = KEY_HOSTS): TestCa {
  const { dir, cleanup } = tempDir('igw-keys-');
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=igw test CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign'], dir);
    openssl(['req', ...ec, '-keyout', 'host.key', '-out', 'host.csr', '-subj', '/CN=igw key host'], dir);
    writeFileSync(join(dir, 'ext.cnf'), `subjectAltName=${hosts.map((host) => `DNS:${host}`).join(',')}\n`);
    openssl(['x509', '-req', '-in', 'host.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'host.pem',
      '-days', '2', '-extfile', 'ext.cnf'], dir);
    const read = (name: string) => readFileSync(join(dir, name), 'utf8');
    return { ca: read('ca.pem'), key: read('host.key'), cert: read('host.pem') };
  } finally {
    cleanup();
  }
}

/** A self-signed certificate and its RSA key (what AWS SNS signs with), valid for `days`. */
export function makeSigningCertificate(days = 2): { cert: string; key: string } {
  const { dir, cleanup } = tempDir('igw-sns-');
  try {
    openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'sns.key', '-out', 'sns.pem', '-days', String(days),
      '-subj', '/CN=sns.amazonaws.com'], dir);
    return { cert: readFileSync(join(dir, 'sns.pem'), 'utf8'), key: readFileSync(join(dir, 'sns.key'), 'utf8') };
  } finally {
    cleanup();
  }
}

export type Route = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

export interface KeyHost {
  /** Connections accepted (TCP), whatever came of them. */
  accepted(): number;
  /** Requests answered, as `host path`. */
  requests: string[];
  route(hostPath: string, handler: Route): void;
  /** Sends every checked address to this server. */
  dial: Dial;
  /** The addresses the fetcher asked to dial. */
  dialed: string[];
  close(): Promise<void>;
}

export async function startKeyHost(tls: TestCa): Promise<KeyHost> {
  const routes = new Map<string, Route>();
  const requests: string[] = [];
  const dialed: string[] = [];
  let accepted = 0;
  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const hostPath = `${req.headers.host} ${req.url}`;
      requests.push(hostPath);
      const handler = routes.get(hostPath);
      if (handler) handler(req, res, Buffer.concat(chunks));
      else res.writeHead(404).end();
    });
  });
  server.on('connection', () => accepted++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    accepted: () => accepted,
    requests,
    route: (hostPath, handler) => routes.set(hostPath, handler),
    dial: (address) => {
      dialed.push(address);
      return { host: '127.0.0.1', port };
    },
    dialed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A resolver that answers every name with one public address (a documentation-free, routable one). */
export const PUBLIC_ADDRESS = '52.94.236.248';
export const publicResolver = async () => [{ address: PUBLIC_ADDRESS, family: 4 }];
