/**
 * Contract §2.9, "no request can end the process" (issue 20 item 1). Seeded, mutated multipart,
 * JSON, form and text bodies go to webhook triggers (inline files, and streamed to a file
 * store), and signed, mutated Twilio form bodies to a Twilio channel, through a real HTTP server
 * in this process. Nothing may reach 'uncaughtException' or 'unhandledRejection'; every answer is
 * a 2xx or a 4xx with the contract's error body (no 5xx: the stores here cannot fail); and the
 * gateway still serves good requests afterwards.
 *
 * A failure names its case's seed: FUZZ_SEED=<seed> FUZZ_CASES=1 replays exactly that case.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import twilio from 'twilio';
import type { FileStore } from '../../src/files/file-store';
import { ERROR_CATALOGUE, type ErrorCode } from '../../src/outcomes/codes';
import { httpServerSettings } from '../../src/container';
import { createHttpServer } from '../../src/http/server';
import { testApp } from '../helpers/app';
import { Rng, twilioForm, webhookBody, type FuzzBody } from '../helpers/fuzz-bodies';
import { hookUrl, triggerInput } from '../helpers/http';
import { recordProcessErrors } from '../helpers/process-errors';
import { listen, type Listening } from '../helpers/sockets';

const FIRST_SEED = Number(process.env.FUZZ_SEED ?? 20_261_126);
const CASES = Number(process.env.FUZZ_CASES ?? 3000);

const PUBLIC = 'https://hooks.example.com';
const CHANNEL_ID = 'ch_fuzz';
const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const AUTH_TOKEN = 'twilio-auth-token-for-the-fuzz-test';
const TWILIO_PATH = `/api/channels/twilio/${CHANNEL_ID}`;
const FIXTURES_DIR = join(__dirname, '..', 'fixtures', 'twilio');
const TWILIO_FIXTURES = readdirSync(FIXTURES_DIR)
  .filter((name) => name.endsWith('.form'))
  .map((name) => readFileSync(join(FIXTURES_DIR, name), 'utf8').trim());

/** A file store that reads each upload to its end and keeps only its size. */
function countingFileStore(): FileStore {
  return {
    name: 'counting',
    bufferBytes: 64 * 1024,
    start: async () => undefined,
    ping: async () => undefined,
    close: async () => undefined,
    async put(key: string, body: Readable) {
      for await (const _chunk of body);
      return { url: `s3://fuzz/${key}`, key };
    },
    discard: async () => undefined,
  };
}

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function send(port: number, path: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Why `answer` breaks the contract, or undefined when it keeps it. */
function contractProblem(answer: Answer): string | undefined {
  if (answer.status >= 200 && answer.status < 300) return undefined;
  if (answer.status < 400 || answer.status >= 500) return `status ${answer.status}`;
  if (!answer.contentType.startsWith('application/json')) return `a ${answer.status} with content type ${answer.contentType}`;
  const parsed = JSON.parse(answer.body) as { error?: { code?: ErrorCode; message?: unknown; details?: unknown } };
  const keys = Object.keys(parsed.error ?? {}).filter((key) => !['code', 'message', 'details'].includes(key));
  const code = parsed.error?.code;
  if (Object.keys(parsed).length !== 1 || !code || keys.length > 0 || typeof parsed.error?.message !== 'string') return `body ${answer.body.slice(0, 200)}`;
  if (ERROR_CATALOGUE[code]?.status !== answer.status) return `code ${code} with status ${answer.status}`;
  return undefined;
}

function headersOf(fuzz: FuzzBody): Record<string, string> {
  return fuzz.contentType === undefined ? {} : { 'content-type': fuzz.contentType };
}

/** A Twilio case: signed by the twilio package over the (mutated) form, mostly correctly. */
function twilioCase(rng: Rng): { path: string; headers: Record<string, string>; body: Buffer; what: string } {
  const form = twilioForm(rng, TWILIO_FIXTURES);
  const values = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(form)) values.set(name, [...(values.get(name) ?? []), value]);
  const params = Object.fromEntries(values);
  if (rng.chance(0.1)) {
    // The JSON variant: the URL carries bodySHA256 and is signed without parameters.
    const body = Buffer.from(JSON.stringify(Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v[0]]))));
    const path = `${TWILIO_PATH}?bodySHA256=${createHash('sha256').update(body).digest('hex')}`;
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, PUBLIC + path, {});
    return { path, headers: { 'content-type': 'application/json', 'x-twilio-signature': signature }, body, what: 'twilio json' };
  }
  const signature = rng.chance(0.9) ? twilio.getExpectedTwilioSignature(AUTH_TOKEN, PUBLIC + TWILIO_PATH, params) : rng.pick(['', 'AAAA', 'x'.repeat(28)]);
  // A body that is not a form has no parameters to sign: those few cases end at the signature (401).
  const contentType = rng.chance(0.9)
    ? rng.pick(['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', 'Application/X-WWW-Form-Urlencoded'])
    : rng.pick(['text/plain', 'multipart/form-data; boundary=b']);
  return { path: TWILIO_PATH, headers: { 'content-type': contentType, 'x-twilio-signature': signature }, body: Buffer.from(form), what: 'twilio form' };
}

describe('parser fuzz: no request ends the process, every answer keeps the contract', () => {
  const env = {
    PUBLIC_BASE_URL: PUBLIC,
    RATE_LIMIT_DEFAULT: '1000000/60',
    RATE_LIMIT_WORKSPACE: '1000000/60',
    AUTH_FAILURE_LIMIT: '1000000/60',
    // Small limits, so that huge values meet them often.
    MAX_BODY_BYTES: String(64 * 1024),
    MAX_FILE_BYTES: String(32 * 1024),
    INLINE_FILE_MAX_BYTES: String(1024),
  };
  const inline = testApp(env);
  const streaming = testApp(env);
  streaming.deps.files = countingFileStore();
  const servers: Listening[] = [];

  beforeAll(async () => {
    for (const t of [inline, streaming]) {
      await t.addTrigger('fz-plain', triggerInput());
      await t.addTrigger('fz-typed', triggerInput({ inputFormat: [{ name: 'doc', type: 'file[]' }, { name: 'count', type: 'number' }, { name: 'obj', type: 'object' }, { name: 'flag', type: 'boolean' }] }));
      await t.addTrigger('fz-check', triggerInput());
      await t.addChannel(CHANNEL_ID, { provider: 'twilio', workspaceId: 'ws_1', inboxId: 'inbox_1', accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
      servers.push(await listen(t.app, createHttpServer(httpServerSettings(t.deps.config), t.app).server));
    }
  });
  afterAll(async () => {
    agent.destroy();
    for (const server of servers) await server.close();
  });

  it(`${CASES} cases from seed ${FIRST_SEED}`, async () => {
    const recorder = recordProcessErrors();
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    try {
      for (let i = 0; i < CASES && failures.length < 5; i++) {
        const seed = FIRST_SEED + i;
        const rng = new Rng(seed);
        const server = rng.chance(0.5) ? servers[0] : servers[1];
        const target = rng.chance(0.2)
          ? twilioCase(rng)
          : (() => {
              const fuzz = webhookBody(rng);
              return { path: hookUrl(rng.pick(['fz-plain', 'fz-typed'])), headers: headersOf(fuzz), body: fuzz.body, what: fuzz.what };
            })();
        const answer = await Promise.race([
          send(server.port, target.path, target.headers, target.body).catch((error: Error) => ({ status: 0, contentType: '', body: error.message })),
          recorder.nextEvent().then(() => ({ status: -1, contentType: '', body: '' })),
        ]);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const problem = answer.status === -1 ? 'no answer: the request escaped its handler' : answer.status === 0 ? `no answer: ${answer.body}` : contractProblem(answer);
        const escaped = recorder.events.splice(0).map((event) => `${event.kind}: ${String((event.error as Error)?.stack ?? event.error)}`);
        if (problem || escaped.length > 0) {
          failures.push(`seed ${seed} (${target.what}, ${target.path}, ${JSON.stringify(target.headers['content-type'])}): ${[problem, ...escaped].filter(Boolean).join('; ')}`);
        }
        if (escaped.length > 0) break; // a real gateway would have exited here; the connection is stuck

      }
    } finally {
      recorder.stop();
    }
    expect(failures).toEqual([]);
    // The fuzz reached the parsers: most cases got past authentication into a 2xx or a parse refusal.
    expect((statuses.get(200) ?? 0) + (statuses.get(400) ?? 0) + (statuses.get(413) ?? 0)).toBeGreaterThan(CASES / 2);
    // A bound on the run, not on the gateway: 3000 cases took 60 s on a quiet machine and over 170 s beside stress-ng.
  }, 900_000);

  it('still serves a good trigger request and a good Twilio callback on both servers afterwards', async () => {
    const form = readFileSync(join(FIXTURES_DIR, 'sms-inbound.form'), 'utf8').trim();
    for (const [n, t] of [inline, streaming].entries()) {
      const before = t.sink.records.length;
      const hook = await send(servers[n].port, hookUrl('fz-check'), { 'content-type': 'application/json' }, Buffer.from(`{"after":"fuzz-${n}"}`));
      expect(hook.status).toBe(200);
      expect(t.sink.events().at(-1)!.data.input).toEqual({ after: `fuzz-${n}` });
      // A fresh message id: the fuzz may already have sent this fixture's.
      const params = new URLSearchParams(form);
      params.set('MessageSid', `SM${'e'.repeat(31)}${n}`);
      const fresh = params.toString();
      const freshSignature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, PUBLIC + TWILIO_PATH, Object.fromEntries(new URLSearchParams(fresh)));
      const callback = await send(servers[n].port, TWILIO_PATH, { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': freshSignature }, Buffer.from(fresh));
      expect(callback.status).toBe(200);
      expect(t.sink.records.length).toBeGreaterThan(before + 1);
    }
  });
});
