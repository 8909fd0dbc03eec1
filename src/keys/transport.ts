import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';

/** Where to open the connection for a checked address: the address itself on 443, or (tests) a local stand-in. */
export type Dial = (address: string, family: 4 | 6) => { host: string; port: number };

export const dialChecked: Dial = (address) => ({ host: address, port: 443 });

export interface TransportLimits {
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  maxBodyBytes: number;
}

/** Contract §10.1 F: 2 s to connect (TLS included), 5 s in all, 64 KiB of body. */
export const KEY_FETCH_LIMITS: TransportLimits = { connectTimeoutMs: 2000, totalTimeoutMs: 5000, maxBodyBytes: 64 * 1024 };

export interface TransportOptions {
  dial: Dial;
  limits: TransportLimits;
  /** Roots to verify the server against; absent: the system's. */
  ca?: string | Buffer | Array<string | Buffer>;
}

export interface Outbound {
  url: URL;
  /** The address the host resolved to, already checked public: the only one connected to. */
  address: string;
  family: 4 | 6;
  method: 'GET' | 'POST';
  /** A JSON body for POST (Plaid's key API). */
  json?: unknown;
}

export type TransportResult =
  | { ok: true; body: Buffer; headers: Record<string, string | string[] | undefined> }
  | { ok: false; outcome: 'timeout' | 'error' | 'status' | 'too_large' };

/**
 * One HTTPS exchange with a key host: TLS verified for the URL's host name, no redirect followed
 * (anything but 200 is a failure), no compression, bounded in time and size.
 */
export function send(outbound: Outbound, options: TransportOptions): Promise<TransportResult> {
  const { url, method } = outbound;
  const target = options.dial(outbound.address, outbound.family);
  const payload = outbound.json === undefined ? undefined : Buffer.from(JSON.stringify(outbound.json));
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: TransportResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connect);
      if (!result.ok) req.destroy();
      resolve(result);
    };
    const req = request({
      host: target.host,
      port: target.port,
      servername: url.hostname,
      path: url.pathname + url.search,
      method,
      agent: false,
      ca: options.ca,
      rejectUnauthorized: true,
      headers: {
        host: url.hostname,
        accept: 'application/json, application/x-pem-file, */*',
        'accept-encoding': 'identity',
        'user-agent': 'ingress-gateway-key-fetcher',
        ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
      },
    });
    const total = setTimeout(() => finish({ ok: false, outcome: 'timeout' }), options.limits.totalTimeoutMs);
    const connect = setTimeout(() => finish({ ok: false, outcome: 'timeout' }), options.limits.connectTimeoutMs);
    req.on('socket', (socket) => (socket as TLSSocket).once('secureConnect', () => clearTimeout(connect)));
    req.on('error', () => finish({ ok: false, outcome: 'error' }));
    req.on('response', (res) => {
      const declared = Number(res.headers['content-length']);
      if (res.statusCode !== 200) return finish({ ok: false, outcome: 'status' });
      if (declared > options.limits.maxBodyBytes) return finish({ ok: false, outcome: 'too_large' });
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.limits.maxBodyBytes) return finish({ ok: false, outcome: 'too_large' });
        chunks.push(chunk);
      });
      res.on('end', () => finish({ ok: true, body: Buffer.concat(chunks), headers: res.headers }));
      res.on('error', () => finish({ ok: false, outcome: 'error' }));
    });
    req.end(payload);
  });
}
