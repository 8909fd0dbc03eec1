/**
 * Part of scenario 4 (bad input): the attacks of issue 9, items 1–4, on a gateway that also
 * serves two tenants who did nothing wrong. While the attacks run, another tenant's
 * authenticated requests and a correctly signed WhatsApp delivery must keep getting 2xx;
 * afterwards the attacked tenant's quota must be whole.
 *
 *   held unsigned bodies   11 × 3 MB to a WhatsApp channel without a signature, paused before the end
 *   held forged bodies     11 × the same with a well-formed, wrong signature (read, then refused)
 *   unsigned floods        unsigned deliveries and wrong tokens against a tenant with a quota
 *   trickling bodies       bodies sent a byte at a time
 *   token guessing         wrong bearer and admin tokens from one address, and from many
 *
 * Attackers and tenants are told apart by X-Forwarded-For (the gateway trusts loopback).
 * Each round has its own victims and addresses (10.<round>.x.y), so a round can warm the
 * process up before the measured one without throttles or quotas carrying over.
 */
import { signWhatsAppBody } from '../helpers/meta-signature';
import { holdUpload, type HeldUpload } from '../helpers/sockets';
import type { RunningGateway } from '../helpers/server';
import { APP_SECRET, CHANNEL_ID, PHONE_NUMBER_ID, TRIGGER_PATH } from './fixtures';
import { countBy, formatCounts, header, is2xx, rawExchange, send, sleep, statusOf, type RawOutcome, type Sent } from './lib';

export const ATTACK_ADMIN_TOKEN = 'reliability-admin-token-4411';
const VICTIM_TOKEN = 'victim-tenant-token-7781';
const OTHER_TOKEN = 'other-tenant-token-3390';
const victims = (round: number) => ({
  channel: `rel_wa_attacked_${round}`,
  quota: `rel-attacked-quota-${round}`,
  other: `rel-other-tenant-${round}`,
});
const VICTIM_QUOTA = 30;
const DECLARED = 3 * 1024 * 1024;
const HELD = 3_050_000;
const HELD_CONNECTIONS = 11;
/** MAX_INFLIGHT_BODY_SHARE (50 %) of MAX_INFLIGHT_BODY_BYTES (32 MiB) holds five of these bodies. */
const HELD_IN_A_SHARE = Math.floor((32 * 1024 * 1024 * 0.5) / HELD);
/** Every attack is over by then (the gateway's own bounds are far shorter); the client cuts what is left. */
const ATTACK_BOUND_MS = 25_000;

export interface AttackResults {
  heldUnsigned: Array<number | string | undefined>;
  heldForged: Array<number | string | undefined>;
  floods: Sent[];
  trickles: RawOutcome[];
  adminGuesses: Sent[];
  otherTenant: Sent[];
  signedDelivery: Sent[];
  victimAfter: Sent[];
  /** Every status the attackers and tenants saw (for the zero-5xx check). */
  statuses: number[];
}

const json = { 'content-type': 'application/json' };
const from = (address: string) => ({ 'x-forwarded-for': address });

export async function registerVictims(gateway: RunningGateway, round: number): Promise<void> {
  const names = victims(round);
  const put = async (path: string, body: unknown) => {
    const res = await send(gateway.adminUrl, path, {
      method: 'PUT',
      headers: { ...json, authorization: `Bearer ${ATTACK_ADMIN_TOKEN}` },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`PUT ${path} answered ${res.status ?? res.error}: ${res.body}`);
  };
  await put(`/admin/channels/${names.channel}`, {
    provider: 'whatsapp',
    workspaceId: 'ws-attacked',
    inboxId: 'inbox-attacked',
    phoneNumberId: '2000',
    verifyToken: 'attacked-verify-token',
    appSecret: 'attacked-app-secret',
  });
  await put(`/admin/triggers/${names.quota}`, {
    workflowId: 'wf-attacked',
    workspaceId: 'ws-attacked',
    deployed: true,
    auth: { token: VICTIM_TOKEN },
    rateLimit: { limit: VICTIM_QUOTA, windowSeconds: 60 },
  });
  await put(`/admin/triggers/${names.other}`, { workflowId: 'wf-other', workspaceId: 'ws-other', deployed: true, auth: { token: OTHER_TOKEN } });
}

export async function runAttacks(gateway: RunningGateway, round: number): Promise<AttackResults> {
  const names = victims(round);
  const attacker = (n: number) => `10.${round}.1.${n}`;
  const tenant = (n: number) => `10.${round}.2.${n}`;
  const channel = `/api/channels/whatsapp/${names.channel}`;
  const uploads: HeldUpload[] = [];
  const hold = (headers: Record<string, string>, n: number) => {
    const upload = holdUpload(gateway.port, channel, { ...headers, ...from(attacker(n)) }, DECLARED, HELD);
    uploads.push(upload);
    return upload;
  };
  const bounded = async (upload: HeldUpload) => {
    const timer = setTimeout(() => upload.destroy(), ATTACK_BOUND_MS);
    const answer = await upload.answer;
    clearTimeout(timer);
    upload.destroy();
    return answer.status ?? answer.error;
  };
  const forged = { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` };
  const heldUnsigned = Promise.all(Array.from({ length: HELD_CONNECTIONS }, (_, i) => bounded(hold({}, i + 1))));
  const heldForged = Promise.all(Array.from({ length: HELD_CONNECTIONS }, (_, i) => bounded(hold(forged, i + 21))));

  // Floods: from one address (throttled after AUTH_FAILURE_LIMIT) and from 100 (each under it).
  const floods = (async () => {
    const sent: Sent[] = [];
    const body = '{"object":"whatsapp_business_account","entry":[]}';
    for (let i = 0; i < 300; i++) {
      const address = attacker(i % 2 === 0 ? 50 : 100 + (i % 100));
      sent.push(await send(gateway.url, channel, { headers: { ...json, ...from(address) }, body }));
      sent.push(
        await send(gateway.url, `/api/webhooks/trigger/${names.quota}`, {
          headers: { ...json, ...from(address), authorization: `Bearer guess-${i}` },
          body: '{"guess":true}',
        }),
      );
    }
    return sent;
  })();

  const trickleHead = (n: number) =>
    `POST /api/webhooks/trigger/${TRIGGER_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: ${attacker(70 + n)}\r\n` +
    'Content-Type: application/json\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n{';
  const trickles = Promise.all(
    Array.from({ length: 6 }, (_, n) =>
      rawExchange(gateway.port, [trickleHead(n), ...Array.from({ length: 100 }, () => [{ pauseMs: 200 }, 'x']).flat()], ATTACK_BOUND_MS),
    ),
  );

  const adminGuesses = (async () => {
    const sent: Sent[] = [];
    for (let i = 0; i < 60; i++) {
      sent.push(await send(gateway.adminUrl, '/admin/triggers', { method: 'GET', headers: { ...from(attacker(60)), authorization: `Bearer admin-guess-${i}` } }));
    }
    return sent;
  })();

  // The tenants who did nothing wrong, until every attack is over.
  let attacking = true;
  const otherTenant: Sent[] = [];
  const signedDelivery: Sent[] = [];
  const tenants = (async () => {
    for (let n = 0; attacking; n++) {
      otherTenant.push(
        await send(gateway.url, `/api/webhooks/trigger/${names.other}`, {
          headers: { ...json, ...from(tenant(1)), authorization: `Bearer ${OTHER_TOKEN}` },
          body: JSON.stringify({ n, pad: 'p'.repeat(8000) }),
        }),
      );
      const delivery = whatsappDelivery(round, n);
      signedDelivery.push(
        await send(gateway.url, `/api/channels/whatsapp/${CHANNEL_ID}`, {
          headers: { ...json, ...from(tenant(2)), 'x-hub-signature-256': signWhatsAppBody(Buffer.from(delivery), APP_SECRET) },
          body: delivery,
        }),
      );
      await sleep(100);
    }
  })();

  const results = {
    heldUnsigned: await heldUnsigned,
    heldForged: await heldForged,
    floods: await floods,
    trickles: await trickles,
    adminGuesses: await adminGuesses,
  };
  attacking = false;
  await tenants;

  // The attacked tenant's own client: its whole quota is there, and no more.
  const victimAfter: Sent[] = [];
  for (let i = 0; i <= VICTIM_QUOTA; i++) {
    victimAfter.push(
      await send(gateway.url, `/api/webhooks/trigger/${names.quota}`, {
        headers: { ...json, ...from(tenant(3)), authorization: `Bearer ${VICTIM_TOKEN}` },
        body: JSON.stringify({ i }),
      }),
    );
  }

  const statuses = [
    ...results.heldUnsigned,
    ...results.heldForged,
    ...results.floods.map((s) => s.status),
    ...results.trickles.map((o) => o.status),
    ...results.adminGuesses.map((s) => s.status),
    ...otherTenant.map((s) => s.status),
    ...signedDelivery.map((s) => s.status),
    ...victimAfter.map((s) => s.status),
  ].filter((s): s is number => typeof s === 'number');
  return { ...results, otherTenant, signedDelivery, victimAfter, statuses };
}

/** The checks of the attack phase: name, pass, the numbers. */
export function judgeAttacks(r: AttackResults): Array<[string, boolean, string]> {
  const counts = (values: Array<number | string | undefined>) => formatCounts(countBy(values, (v) => String(v ?? 'none')));
  const reasons = (sent: Sent[]) =>
    formatCounts(
      countBy(sent, (s) => {
        try {
          return `${s.status} ${JSON.parse(s.body).error?.details?.reason ?? ''}`.trim();
        } catch {
          return statusOf(s);
        }
      }),
    );
  const floodStatuses = new Set(r.floods.map((s) => s.status));
  const victimStatuses = r.victimAfter.map((s) => s.status);
  const trickleStatuses = r.trickles.map((o) => o.status);
  return [
    [
      'other tenants get 2xx during the attacks (an authenticated trigger and a signed WhatsApp delivery)',
      r.otherTenant.length > 0 && r.otherTenant.every(is2xx) && r.signedDelivery.every(is2xx),
      `trigger: ${counts(r.otherTenant.map(statusOf))}; WhatsApp: ${counts(r.signedDelivery.map(statusOf))}`,
    ],
    [
      'held unsigned 3 MB bodies are answered 401 before their body is read',
      r.heldUnsigned.every((s) => s === 401),
      counts(r.heldUnsigned),
    ],
    [
      'held forged bodies: at most a share is read, the rest get 429 body_share_exceeded, the held ones 408 when they stall',
      r.heldForged.every((s) => s === 429 || s === 408) && r.heldForged.filter((s) => s === 408).length <= HELD_IN_A_SHARE,
      counts(r.heldForged),
    ],
    [
      'unsigned floods and wrong tokens: 401, then 429 auth_throttled; never charged',
      [...floodStatuses].every((s) => s === 401 || s === 429) && victimStatuses.slice(0, VICTIM_QUOTA).every((s) => s === 200),
      `${r.floods.length} sent: ${reasons(r.floods)}; the attacked tenant afterwards: ${counts(victimStatuses.slice(0, VICTIM_QUOTA))} ` +
        `(first X-RateLimit-Remaining ${header(r.victimAfter[0], 'x-ratelimit-remaining')}), then ${victimStatuses[VICTIM_QUOTA]}`,
    ],
    [
      'the attacked tenant\'s quota is whole and still enforced',
      header(r.victimAfter[0], 'x-ratelimit-remaining') === String(VICTIM_QUOTA - 1) && victimStatuses[VICTIM_QUOTA] === 429,
      `${VICTIM_QUOTA} allowed per minute: ${counts(victimStatuses)}`,
    ],
    [
      'trickling bodies get 408 body_too_slow',
      trickleStatuses.every((s) => s === 408),
      `${counts(trickleStatuses)}, slowest ${Math.round(Math.max(...r.trickles.map((o) => o.ms)))} ms`,
    ],
    [
      'admin token guessing: 401, then 429 auth_throttled',
      r.adminGuesses.slice(0, 20).every((s) => s.status === 401) && r.adminGuesses.slice(20).every((s) => s.status === 429),
      reasons(r.adminGuesses),
    ],
  ];
}

function whatsappDelivery(round: number, n: number): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'WABA',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550000000', phone_number_id: PHONE_NUMBER_ID },
              contacts: [{ profile: { name: 'Tenant' }, wa_id: '15551230001' }],
              messages: [{ from: '15551230001', id: `wamid.attack-${round}-${n}`, timestamp: '1700000000', type: 'text', text: { body: `during the attack ${n}` } }],
            },
          },
        ],
      },
    ],
  });
}
