import request from 'supertest';
import Stripe from 'stripe';
import { WorkOS } from '@workos-inc/node';
import { ADMIN_TOKEN, testApp } from '../helpers/app';
import { expectError, hookUrl, triggerInput } from '../helpers/http';

/**
 * `name: "recipe"` (contract §10.1 C): a scheme carried by the trigger as data. An operator
 * copies a shipped recipe from the catalogue and it verifies what the preset verifies.
 */

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const eventOf = (record: { value: string }) => JSON.parse(record.value);

describe('a recipe trigger', () => {
  const t = testApp();
  const put = (path: string, provider: Record<string, unknown>) => request(t.admin).put(`/admin/triggers/${path}`).set(admin).send(triggerInput({ provider: provider as never }));

  it('takes the recipe the catalogue ships for WorkOS and verifies what the WorkOS SDK signs', async () => {
    const entry = await request(t.admin).get('/admin/providers/workos').set(admin);
    expect(entry.body.data).toMatchObject({ name: 'workos', family: 'hmac-recipe', authenticates: 'body', keys: 'secrets', fetches: [] });
    const recipe = entry.body.data.recipe;
    expect((await put('copied', { name: 'recipe', secrets: ['wh_copied'], toleranceSeconds: 180, options: { recipe } })).status).toBe(200);
    const workos = new WorkOS('sk_test_recipe_trigger');
    const body = JSON.stringify({ id: 'event_01J0', event: 'dsync.user.created', data: { id: 'directory_user_01E1' } });
    const ms = Date.now();
    const header = `t=${ms}, v1=${await workos.webhooks.computeSignature(ms, body, 'wh_copied')}`;
    const res = await request(t.app).post(hookUrl('copied')).set('Content-Type', 'application/json').set('WorkOS-Signature', header).send(body);
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records.at(-1)!).data.provider).toEqual({ name: 'recipe', kind: 'dsync.user.created', deliveryId: 'event_01J0', verified: true, authenticates: 'body' });
    expect(eventOf(t.sink.records.at(-1)!).data.headers['workos-signature']).toBeUndefined();
    const read = await request(t.admin).get('/admin/triggers/copied').set(admin);
    expect(read.body.data.provider).toMatchObject({ name: 'recipe', secretsSet: 1, toleranceSeconds: 180, options: { recipe: expect.objectContaining({ algorithm: 'hmac-sha256' }) } });
    expect(JSON.stringify(read.body)).not.toContain('wh_copied');
  });

  it("written for Stripe's scheme, accepts the header Stripe's SDK generates", async () => {
    const recipe = {
      signature: { header: 'stripe-signature', format: 'kv', pairSeparator: ',', timestampKey: 't', signatureKeys: ['v1'], encoding: 'hex' },
      timestamp: { unit: 's' },
      algorithm: 'hmac-sha256',
      signedContent: '{timestamp}.{body}',
      deliveryId: { body: '/id' },
      kind: { body: '/type' },
    };
    expect((await put('stripe-like', { name: 'recipe', secrets: ['whsec_stripe_like'], options: { recipe } })).status).toBe(200);
    const body = JSON.stringify({ id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy', object: 'event', type: 'customer.created', data: { object: { id: 'cus_9s6XKzkNRiz8i3' } } });
    const header = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: 'whsec_stripe_like' });
    const res = await request(t.app).post(hookUrl('stripe-like')).set('Content-Type', 'application/json').set('Stripe-Signature', header).send(body);
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records.at(-1)!).data.provider).toMatchObject({ kind: 'customer.created', deliveryId: 'evt_1NG8Du2eZvKYlo2CUI79vXWy' });
    const wrong = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: 'whsec_other' });
    const refused = await request(t.app).post(hookUrl('stripe-like')).set('Content-Type', 'application/json').set('Stripe-Signature', wrong).send(body);
    expect(expectError(refused, 'UNAUTHORIZED').details.reason).toBe('signature_invalid');
  });

  it('refuses a recipe that breaks a rule with 400, details naming the path', async () => {
    const recipe = { signature: { header: 'x-sig', encoding: 'hex' }, algorithm: 'hmac-sha256', signedContent: '{timestamp}{body}{body}' };
    const res = await put('bad', { name: 'recipe', secrets: ['s'], options: { recipe } });
    const details = expectError(res, 'BAD_REQUEST').details;
    expect(details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'provider.options.recipe.signedContent', message: '{body} appears more than once' }),
        expect.objectContaining({ path: 'provider.options.recipe.timestamp' }),
      ]),
    );
    expect((await request(t.admin).get('/admin/triggers/bad').set(admin)).status).toBe(404);
  });
});

describe('the catalogue (contract §10.1 G)', () => {
  const t = testApp();

  it('says of every entry its family, what it authenticates, the keys it takes and what it fetches; recipes carry their recipe', async () => {
    const res = await request(t.admin).get('/admin/providers').set(admin);
    expect(res.status).toBe(200);
    for (const entry of res.body.data) {
      // Only the presets whose keys may be fetched (contract §10.1 F) name hosts; every other fetches nothing.
      const fetching = ['aws-sns', 'google-pubsub', 'plaid', 'paypal', 'zoho-desk', 'graph-rich', 'bot-framework', 'google-chat'].includes(entry.name);
      expect(entry).toMatchObject({ family: expect.any(String), authenticates: expect.stringMatching(/^(body|fields|sender)$/), keys: expect.any(String) });
      if (fetching) expect(entry.fetches.length).toBeGreaterThan(0);
      else expect(entry.fetches).toEqual([]);
    }
    const byName = new Map(res.body.data.map((entry: { name: string }) => [entry.name, entry]));
    expect(byName.get('box')).toMatchObject({ recipe: expect.objectContaining({ signedContent: '{body}{timestamp}' }), handshakes: [] });
    expect(byName.get('twitch')).toMatchObject({ handshakes: [expect.stringContaining('webhook_callback_verification')] });
    expect(byName.get('discord')).toMatchObject({ family: 'ed25519', keys: 'publicKeys', acknowledgement: 'no-content' });
    expect(byName.get('github')).not.toHaveProperty('recipe');
  });
});
