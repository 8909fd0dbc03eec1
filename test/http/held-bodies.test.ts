/**
 * Issue 9, item 1: senders without a valid credential must not take the memory that other
 * tenants' requests need. Eleven connections each send all but the last bytes of a 3 MB
 * WhatsApp body and pause; together they would hold the whole MAX_INFLIGHT_BODY_BYTES (32 MiB).
 */
import request from 'supertest';
import { signWhatsAppBody } from '../helpers/meta-signature';
import { testApp } from '../helpers/app';
import { hookUrl, triggerInput, TRIGGER_TOKEN } from '../helpers/http';
import { holdUpload, listen, waitFor, type HeldUpload, type Listening } from '../helpers/sockets';

const DECLARED = 3 * 1024 * 1024;
/** Eleven of these fit in 32 MiB with 4,432 bytes to spare. */
const HELD = 3_050_000;
const ATTACKERS = 11;
const APP_SECRET = 'held-app-secret';
const OTHER_BODY = JSON.stringify({ pad: 'p'.repeat(8000) });

async function setUp(env: Record<string, string> = {}) {
  // A minute per window: the minimum transfer rate is not what these tests are about.
  const t = testApp({ BODY_MIN_RATE: '1/60', ...env });
  await t.addChannel('wa-victim', {
    provider: 'whatsapp',
    workspaceId: 'ws-attacked',
    inboxId: 'inbox-1',
    phoneNumberId: '1000',
    verifyToken: 'verify-token-1',
    appSecret: APP_SECRET,
  });
  await t.addTrigger('other-tenant', triggerInput({ workspaceId: 'ws-other', auth: { token: TRIGGER_TOKEN } }));
  return t;
}

describe('bodies held by senders without a valid credential (issue 9, item 1)', () => {
  let server: Listening | undefined;
  let uploads: HeldUpload[] = [];

  afterEach(async () => {
    for (const upload of uploads) upload.destroy();
    uploads = [];
    await server?.close();
  });

  it.each([
    ['without a signature header', {}],
    ['with a malformed signature header', { 'x-hub-signature-256': 'sha256=not-hex' }],
    ['with a sha1 signature', { 'x-hub-signature-256': `sha1=${'0'.repeat(40)}` }],
  ])('an unsigned POST %s is answered 401 before a byte of its body is buffered', async (_name, headers) => {
    const t = await setUp();
    server = await listen(t.app);
    const upload = holdUpload(server.port, '/api/channels/whatsapp/wa-victim', headers, DECLARED, 64 * 1024);
    uploads.push(upload);
    await waitFor('the answer, or the body in the budget', () => upload.answered() || t.deps.bodyBudget.inUse > 0);
    expect(t.deps.bodyBudget.inUse).toBe(0);
    const answer = await upload.answer;
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body).error.details.reason).toBe('signature_missing');
  });

  it('eleven held unsigned 3 MB WhatsApp bodies leave another tenant\'s authenticated request answered 2xx', async () => {
    const t = await setUp();
    server = await listen(t.app);
    uploads = Array.from({ length: ATTACKERS }, () => holdUpload(server!.port, '/api/channels/whatsapp/wa-victim', {}, DECLARED, HELD));
    const answered = () => uploads.filter((u) => u.answered()).length;
    await waitFor('every attacker answered, or the budget full', () => answered() === ATTACKERS || t.deps.bodyBudget.inUse === ATTACKERS * HELD);

    const other = await request(t.app)
      .post(hookUrl('other-tenant'))
      .set('Authorization', `Bearer ${TRIGGER_TOKEN}`)
      .set('Content-Type', 'application/json')
      .send(OTHER_BODY);
    expect(other.status).toBe(200);
    expect(t.deps.bodyBudget.inUse).toBe(0);
    expect((await Promise.all(uploads.map((u) => u.answer))).map((a) => a.status)).toEqual(Array(ATTACKERS).fill(401));
  });

  it('eleven held bodies with a well-formed but wrong signature hold at most one share of the budget (429 past it); another tenant gets 2xx', async () => {
    // Each attacker from its own address (a botnet): the channel's and the workspace's shares cap them.
    const t = await setUp({ TRUST_PROXY: 'loopback' });
    server = await listen(t.app);
    const forged = { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` };
    uploads = Array.from({ length: ATTACKERS }, (_, i) =>
      holdUpload(server!.port, '/api/channels/whatsapp/wa-victim', { ...forged, 'x-forwarded-for': `203.0.113.${i + 1}` }, DECLARED, HELD),
    );
    const answered = () => uploads.filter((u) => u.answered()).length;
    await waitFor('each attacker answered or holding its whole body', () => answered() + t.deps.bodyBudget.inUse / HELD === ATTACKERS);

    const share = (t.deps.bodyBudget.max * t.deps.config.MAX_INFLIGHT_BODY_SHARE) / 100;
    expect(t.deps.bodyBudget.heldBy('workspace:ws-attacked')).toBeLessThanOrEqual(share);
    const other = await request(t.app)
      .post(hookUrl('other-tenant'))
      .set('Authorization', `Bearer ${TRIGGER_TOKEN}`)
      .set('X-Forwarded-For', '198.51.100.7')
      .set('Content-Type', 'application/json')
      .send(OTHER_BODY);
    expect(other.status).toBe(200);

    const refused = (await Promise.all(uploads.filter((u) => u.answered()).map((u) => u.answer))).map((a) => JSON.parse(a.body).error.details.reason);
    expect(new Set(refused)).toEqual(new Set(['body_share_exceeded']));
  });

  it('a correctly signed delivery still gets 2xx while those forged bodies are held', async () => {
    const t = await setUp({ TRUST_PROXY: 'loopback' });
    await t.addChannel('wa-other', {
      provider: 'whatsapp',
      workspaceId: 'ws-other',
      inboxId: 'inbox-2',
      phoneNumberId: '2000',
      verifyToken: 'verify-token-2',
      appSecret: APP_SECRET,
    });
    server = await listen(t.app);
    const forged = { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` };
    uploads = Array.from({ length: ATTACKERS }, (_, i) =>
      holdUpload(server!.port, '/api/channels/whatsapp/wa-victim', { ...forged, 'x-forwarded-for': `203.0.113.${i + 1}` }, DECLARED, HELD),
    );
    const answered = () => uploads.filter((u) => u.answered()).length;
    await waitFor('each attacker answered or holding its whole body', () => answered() + t.deps.bodyBudget.inUse / HELD === ATTACKERS);

    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [], pad: 'p'.repeat(8000) });
    const delivery = await request(t.app)
      .post('/api/channels/whatsapp/wa-other')
      .set('X-Forwarded-For', '198.51.100.8')
      .set('Content-Type', 'application/json')
      .set('X-Hub-Signature-256', signWhatsAppBody(body, APP_SECRET))
      .send(body);
    expect(delivery.status).toBe(200);
  });
});
