/**
 * What the scenarios share on top of the test helpers: a registry file, a gateway that is
 * always stopped, topic records parsed back into events, and a steady request stream.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConsumedRecord } from '../helpers/kafka-mock';
import { longestDrainMs } from '../../src/publish/timing';
import { startGateway, type GatewayProcessOptions, type RunningGateway } from '../helpers/server';
import { Cleanup, sleep, UNLIMITED } from './lib';

export const TRIGGER_PATH = 'rel-open';
export const SECURED_PATH = 'rel-secured';
export const TYPED_PATH = 'rel-typed';
export const BEARER = 'reliability-token-123';
export const CHANNEL_ID = 'rel_wa';
export const APP_SECRET = 'reliability-app-secret';
export const VERIFY_TOKEN = 'reliability-verify-token';
export const PHONE_NUMBER_ID = '106540352242922';
/** Signed-sender triggers (contract §10), one per scheme family, for forged/stale/malformed signatures. */
export const PROVIDER_SECRET = 'reliability-provider-secret';
export const STANDARD_WEBHOOKS_SECRET = `whsec_${Buffer.from('reliability-standard-webhooks-key').toString('base64')}`;
export const PROVIDER_PATHS = { github: 'rel-github', stripe: 'rel-stripe', slack: 'rel-slack', 'standard-webhooks': 'rel-stdwh', telegram: 'rel-telegram' } as const;
export const TELEGRAM_CHANNEL_ID = 'rel_tg';
export const TELEGRAM_SECRET = 'reliability-telegram-secret';
export const TWILIO_CHANNEL_ID = 'rel_tw';
export const TWILIO_ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
export const TWILIO_AUTH_TOKEN = 'reliability-twilio-auth-token';

/** A short random id that keeps topics, keys and prefixes of one run apart from any other. */
export const runId = () => randomBytes(4).toString('hex');

/** A temp folder with the registry file every scenario's gateway is seeded from. */
export function workDir(cleanup: Cleanup, tag: string): { dir: string; triggersFile: string } {
  const dir = mkdtempSync(join(tmpdir(), `igw-rel-${tag}-`));
  cleanup.add(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));
  const triggersFile = join(dir, 'registry.json');
  writeFileSync(
    triggersFile,
    JSON.stringify({
      triggers: {
        [TRIGGER_PATH]: { workflowId: 'wf-rel', workspaceId: 'ws-rel', deployed: true },
        [SECURED_PATH]: { workflowId: 'wf-rel-secured', workspaceId: 'ws-rel', deployed: true, auth: { token: BEARER } },
        ...Object.fromEntries(
          Object.entries(PROVIDER_PATHS).map(([name, path]) => [
            path,
            { workflowId: `wf-${path}`, workspaceId: 'ws-rel', deployed: true, provider: { name, secrets: [name === 'standard-webhooks' ? STANDARD_WEBHOOKS_SECRET : PROVIDER_SECRET] } },
          ]),
        ),
        [TYPED_PATH]: {
          workflowId: 'wf-rel-typed',
          workspaceId: 'ws-rel',
          deployed: true,
          inputFormat: [
            { name: 'amount', type: 'number' },
            { name: 'meta', type: 'object' },
            { name: 'docs', type: 'file[]' },
          ],
        },
      },
      channels: {
        [CHANNEL_ID]: {
          provider: 'whatsapp',
          workspaceId: 'ws-rel',
          inboxId: 'inbox-rel',
          phoneNumberId: PHONE_NUMBER_ID,
          verifyToken: VERIFY_TOKEN,
          appSecret: APP_SECRET,
        },
        [TELEGRAM_CHANNEL_ID]: { provider: 'telegram', workspaceId: 'ws-rel', inboxId: 'inbox-rel', secretToken: TELEGRAM_SECRET },
        [TWILIO_CHANNEL_ID]: {
          provider: 'twilio',
          workspaceId: 'ws-rel',
          inboxId: 'inbox-rel',
          accountSid: TWILIO_ACCOUNT_SID,
          authToken: TWILIO_AUTH_TOKEN,
        },
      },
    }),
  );
  return { dir, triggersFile };
}

/**
 * Starts dist/main.js (info logs: the helper waits for the `listening` line) with unlimited
 * rates and the shortest grace its publish deadline allows (the gateway refuses a shorter one);
 * the cleanup stops it (SIGKILL after 6 s).
 */
export async function gatewayWith(cleanup: Cleanup, env: Record<string, string>, options?: GatewayProcessOptions): Promise<RunningGateway> {
  const deadline = Number(env.PUBLISH_TIMEOUT_MS ?? '5000');
  // The shortest drain the deadline allows (checked at start), and request timeouts below it.
  const grace = longestDrainMs(deadline);
  const timeouts = {
    SHUTDOWN_GRACE_MS: String(grace),
    REQUEST_TIMEOUT_MS: String(Math.min(15_000, grace - 500)),
    HEADERS_TIMEOUT_MS: String(Math.min(10_000, grace - 1000)),
  };
  const gateway = await startGateway({ LOG_LEVEL: 'info', ...timeouts, ...UNLIMITED, ...env }, undefined, options);
  cleanup.add(`stop gateway pid ${gateway.child.pid}`, () => stopGateway(gateway));
  return gateway;
}

export async function stopGateway(gateway: RunningGateway): Promise<void> {
  const { child } = gateway;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const force = setTimeout(() => child.kill('SIGKILL'), 6000);
  await gateway.stop('SIGTERM');
  clearTimeout(force);
}

/** A published trigger event as read back from the topic or the file sink. */
export interface PublishedEvent {
  id: string;
  seq?: number;
  idempotencyKey?: string;
}

export function eventOfRecord(record: ConsumedRecord): PublishedEvent | undefined {
  if (!record.value) return undefined;
  try {
    const value = JSON.parse(record.value) as { id: string; data?: { idempotencyKey?: string; input?: { seq?: number } } };
    return { id: value.id, seq: value.data?.input?.seq, idempotencyKey: value.data?.idempotencyKey };
  } catch {
    return { id: record.headers.ce_id ?? '?' };
  }
}

/** Records grouped by the body's `seq`: a group of more than one is a duplicate. */
export function duplicatesBySeq(events: PublishedEvent[]): { groups: Map<number, PublishedEvent[]>; extra: number } {
  const groups = new Map<number, PublishedEvent[]>();
  for (const event of events) {
    if (event.seq === undefined) continue;
    let group = groups.get(event.seq);
    if (!group) groups.set(event.seq, (group = []));
    group.push(event);
  }
  let extra = 0;
  for (const group of groups.values()) extra += group.length - 1;
  return { groups, extra };
}

/**
 * Fires `fire(n)` every `intervalMs` (n = 0, 1, 2, ...) without waiting for the previous call,
 * until stop() or `maxCount`; stop() resolves once every call has settled.
 */
export class SteadyStream {
  private stopped = false;
  private readonly pending = new Set<Promise<unknown>>();
  private loop?: Promise<void>;
  count = 0;

  constructor(
    private readonly fire: (n: number) => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly maxCount: number,
  ) {}

  get inFlight(): number {
    return this.pending.size;
  }

  start(): void {
    this.loop = (async () => {
      const started = performance.now();
      while (!this.stopped && this.count < this.maxCount) {
        const call = this.fire(this.count++);
        this.pending.add(call);
        void call.finally(() => this.pending.delete(call));
        // Scheduled from the start time, so slow answers never slow the stream down.
        const next = started + this.count * this.intervalMs;
        await sleep(Math.max(0, next - performance.now()));
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await Promise.allSettled([...this.pending]);
  }
}
