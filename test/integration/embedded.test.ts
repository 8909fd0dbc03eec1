import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { runGatewayToExit, startGateway, type RunningGateway } from '../helpers/server';
import { tempDir, writeJson } from '../helpers/tmp';

const TOKEN = 'embedded-secret-token-1234';
const ADMIN = 'embedded-admin-token-5678';

describe('the built gateway in embedded mode', () => {
  const tmp = tempDir();
  let gateway: RunningGateway;

  beforeAll(async () => {
    const triggersFile = writeJson(tmp.dir, 'triggers.json', {
      triggers: {
        orders: { workflowId: 'wf-1', workspaceId: 'ws-1', deployed: true, auth: { token: TOKEN } },
      },
    });
    gateway = await startGateway({
      TRIGGERS_FILE: triggersFile,
      EVENTS_DIR: join(tmp.dir, 'events'),
      ADMIN_TOKEN: ADMIN,
      MAX_BODY_BYTES: '65536',
    });
  });

  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    tmp.cleanup();
  });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}/api/webhooks/trigger/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it('acknowledges only what is in the file sink, and replays a duplicate', async () => {
    const first = await post({ event: 'order.created', id: 'o-1' }, { 'idempotency-key': 'k-1' });
    expect(first.status).toBe(200);
    const eventId = first.headers.get('x-event-id');
    const lines = readFileSync(join(tmp.dir, 'events', 'workflow.triggers.ndjson'), 'utf8').trim().split('\n');
    const record = JSON.parse(lines[lines.length - 1]);
    expect(record).toMatchObject({ topic: 'workflow.triggers', key: 'wf-1', value: { id: eventId, type: 'webhook.trigger' } });
    expect(record.value.data.common).toEqual({ event: 'order.created', id: 'o-1' });

    const again = await post({ event: 'order.created', id: 'o-1' }, { 'idempotency-key': 'k-1' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-event-id')).toBe(eventId);
    const after = readFileSync(join(tmp.dir, 'events', 'workflow.triggers.ndjson'), 'utf8').trim().split('\n');
    expect(after).toHaveLength(lines.length);
  });

  it('answers 413 to an oversize chunked body without reading it all, and keeps serving', async () => {
    // Twice the limit (64 KiB) and then nothing more, never the body's end: only a gateway that
    // answers without the whole body answers at all.
    const status = await sendWithoutEnd(gateway.port, 16 * 1024, 2 * 64 * 1024);
    expect(status).toBe(413);
    const health = await fetch(`${gateway.url}/healthz`);
    expect(health.status).toBe(200);
    expect((await post({ ok: true })).status).toBe(200);
  });

  it('never writes the token to the sink or the log', async () => {
    await post({ event: 'x' }, { 'x-api-key': 'another-secret', cookie: 'session=secret-cookie' });
    await fetch(`${gateway.url}/api/webhooks/trigger/orders`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}-wrong` } });
    await fetch(`${gateway.adminUrl}/admin/triggers/orders`, { headers: { authorization: `Bearer ${ADMIN}` } });
    await gateway.waitForOutput('"path":"/admin/triggers/orders"');
    const sinkText = readFileSync(join(tmp.dir, 'events', 'workflow.triggers.ndjson'), 'utf8');
    for (const secret of [TOKEN, ADMIN, 'another-secret', 'secret-cookie']) {
      expect(sinkText).not.toContain(secret);
      expect(gateway.output()).not.toContain(secret);
    }
    expect(gateway.output()).toContain('"outcome":"unauthorized"');
  });
});

describe('starting and stopping', () => {
  it('exits 2 with one line per bad setting, naming the variable', async () => {
    const { code, output } = await runGatewayToExit({ PORT: 'abc', RATE_LIMIT_DEFAULT: '10 per minute', KAFKA_IDEMPOTENT: 'maybe' });
    expect(code).toBe(2);
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.some((l) => l.includes('PORT'))).toBe(true);
    expect(lines.some((l) => l.includes('RATE_LIMIT_DEFAULT'))).toBe(true);
    expect(lines.some((l) => l.includes('KAFKA_IDEMPOTENT'))).toBe(true);
  });

  it('exits 2 when TRIGGERS_FILE holds an invalid trigger', async () => {
    const tmp = tempDir();
    const file = writeJson(tmp.dir, 'bad.json', { triggers: { ok: { workflowId: 'w', workspaceId: 's', deployed: 'yes' } } });
    const { code, output } = await runGatewayToExit({ TRIGGERS_FILE: file, EVENTS_DIR: join(tmp.dir, 'e'), PORT: '0' });
    tmp.cleanup();
    expect(code).toBe(2);
    expect(output).toContain('TRIGGERS_FILE: triggers.ok.deployed');
  });

  it('drains on SIGTERM: readiness answers 503 while the in-flight request is acknowledged, then the process exits 0', async () => {
    const tmp = tempDir();
    const triggersFile = writeJson(tmp.dir, 't.json', { triggers: { slow: { workflowId: 'w', workspaceId: 's', deployed: true } } });
    const gateway = await startGateway({ TRIGGERS_FILE: triggersFile, EVENTS_DIR: join(tmp.dir, 'events') });
    try {
      let readiness: Response | undefined;
      // The body arrives in two parts; SIGTERM lands between them, and the rest is sent once the gateway drains.
      const status = await sendInTwoParts(gateway.port, '/api/webhooks/trigger/slow', '{"event":"late"}', async () => {
        gateway.child.kill('SIGTERM');
        await gateway.waitForOutput('"msg":"draining"');
        readiness = await fetch(`${gateway.adminUrl}/readyz`);
      });
      expect(status).toBe(200);
      expect(readiness?.status).toBe(503);
      expect(((await readiness?.json()) as { error: { details: unknown } }).error.details).toMatchObject({ status: 'draining' });
      expect(await gateway.exited).toBe(0);
      expect(existsSync(join(tmp.dir, 'events', 'workflow.triggers.ndjson'))).toBe(true);
      expect(gateway.output()).toContain('"msg":"draining"');
    } finally {
      await gateway.stop('SIGKILL');
      tmp.cleanup();
    }
  });
});

/**
 * Streams `bytes` of a JSON body chunked (no Content-Length), then waits without ever ending
 * the body; resolves with the status of the answer that came meanwhile.
 */
function sendWithoutEnd(port: number, chunkSize: number, bytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(
      { port, host: '127.0.0.1', method: 'POST', path: '/api/webhooks/trigger/orders', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } },
      (res) => {
        answered = true;
        clearTimeout(giveUp);
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      },
    );
    const giveUp = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within 15 s to a body of ${bytes} bytes so far, not ended`));
    }, 15_000);
    req.on('error', (error) => (answered ? undefined : reject(error)));
    const chunk = Buffer.alloc(chunkSize, 'a');
    let sent = 0;
    const pump = () => {
      if (answered || sent >= bytes) return;
      sent += chunk.length;
      req.write(chunk, pump);
    };
    req.write('{"pad":"', pump);
  });
}

/**
 * Sends a request whose body comes in two parts: the first once the server has the request
 * (its 100 Continue says it has read the headers and is handling it), the rest once
 * `between` has resolved.
 */
function sendInTwoParts(port: number, path: string, body: string, between: () => Promise<void>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), expect: '100-continue' },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.on('continue', () => {
      req.write(body.slice(0, 5));
      between().then(() => req.end(body.slice(5)), reject);
    });
    req.flushHeaders();
  });
}
