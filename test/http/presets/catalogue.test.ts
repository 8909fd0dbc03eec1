/**
 * Issue 36, what an operator sees (contract §10.1 B, G, H): the catalogue lists each shipped
 * preset with its family, what it authenticates, its keys, what it fetches and, for recipe
 * presets, the recipe itself (copyable into a `recipe` trigger); public keys are checked at PUT
 * (400 naming the index) and shown only as `sha256:<hex>` fingerprints.
 */
import { generateKeyPairSync } from 'node:crypto';
import { WorkOS } from '@workos-inc/node';
import request from 'supertest';
import { testApp } from '../../helpers/app';
import { expectError } from '../../helpers/http';
import { adminAuth, deliver, eventOf, examplePayload, putTrigger, registerTrigger } from '../../helpers/presets';

const HMAC_RECIPES = [
  'workos', 'paddle', 'calendly', 'mux', 'rootly', 'tiktok', 'box', 'twitch', 'zendesk', 'hubspot', 'square', 'trello',
  'razorpay', 'woocommerce', 'typeform', 'vercel', 'notion', 'calcom', 'clickup', 'attio', 'ashby', 'greenhouse', 'jira',
  'bitbucket', 'coinbase-commerce', 'teams-outgoing',
];
const PUBLIC_KEY_RECIPES: Array<[string, string]> = [['discord', 'ed25519'], ['telnyx', 'ed25519'], ['sendgrid', 'ecdsa']];

const ed25519Raw = () => Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url');
const spki = (key: ReturnType<typeof generateKeyPairSync>['publicKey']) => key.export({ format: 'der', type: 'spki' }).toString('base64');

describe('GET /admin/providers: the shipped recipes (contract §10.1 G, H)', () => {
  const t = testApp();
  const catalogue = async () => {
    const res = await request(t.admin).get('/admin/providers').set(adminAuth);
    expect(res.status).toBe(200);
    return new Map<string, Record<string, any>>(res.body.data.map((entry: { name: string }) => [entry.name, entry]));
  };

  it.each(HMAC_RECIPES)('lists %s as an HMAC recipe over the body, keyed by secrets, fetching nothing, with its recipe', async (name) => {
    const entry = (await catalogue()).get(name);
    expect(entry).toMatchObject({
      name,
      family: 'hmac-recipe',
      authenticates: 'body',
      keys: 'secrets',
      fetches: [],
      recipe: expect.objectContaining({ algorithm: expect.stringMatching(/^hmac-sha(1|256|512)$/), signature: expect.any(Object) }),
    });
    // A template always signs the body; absent, it is `{body}` (the hmac preset's default).
    expect(entry?.recipe.signedContent ?? '{body}').toContain('{body}');
  });

  it.each(PUBLIC_KEY_RECIPES)('lists %s as a %s recipe keyed by publicKeys, fetching nothing', async (name, family) => {
    expect((await catalogue()).get(name)).toMatchObject({
      name,
      family,
      authenticates: 'body',
      keys: 'publicKeys',
      fetches: [],
      recipe: expect.objectContaining({ algorithm: family === 'ed25519' ? 'ed25519' : 'ecdsa-p256-sha256' }),
    });
  });

  it('lists recipe as keyed by secrets or publicKeys (its algorithm decides, contract §10.1 C)', async () => {
    expect((await catalogue()).get('recipe')).toMatchObject({ name: 'recipe', family: 'hmac-recipe', keys: 'secrets|publicKeys', fetches: [] });
  });

  it('shows the WorkOS recipe as the contract describes it, and one by name', async () => {
    const one = await request(t.admin).get('/admin/providers/workos').set(adminAuth);
    expect(one.status).toBe(200);
    expect(one.body.data.recipe).toMatchObject({
      signature: expect.objectContaining({ header: expect.stringMatching(/^workos-signature$/i), format: 'kv', timestampKey: 't', signatureKeys: ['v1'], encoding: 'hex' }),
      timestamp: expect.objectContaining({ unit: 'ms' }),
      algorithm: 'hmac-sha256',
      signedContent: '{timestamp}.{body}',
    });
  });

  it('the catalogue\'s WorkOS recipe, copied into a recipe trigger, verifies a delivery signed by @workos-inc/node', async () => {
    const { recipe } = (await request(t.admin).get('/admin/providers/workos').set(adminAuth)).body.data;
    const secret = 'workos-secret-copied-recipe';
    await registerTrigger(t, 'copied-recipe', { name: 'recipe', secrets: [secret], options: { recipe } });
    const body = examplePayload('workos', 'dsync.user.updated.json');
    const timestamp = Date.now();
    const v1 = await new WorkOS('sk_test_presets_unused').webhooks.computeSignature(timestamp, body, secret);
    const res = await deliver(t, 'copied-recipe', { body, headers: { 'WorkOS-Signature': `t=${timestamp}, v1=${v1}` } });
    expect(res.status).toBe(200);
    expect(eventOf(t.sink.records[0]).data.provider).toMatchObject({ name: 'recipe', kind: 'dsync.user.updated', deliveryId: 'event_07FKJ843CVE8F7BXQSPFH0M53V', verified: true });
  });
});

describe('publicKeys at PUT and on reads (contract §10.1 B)', () => {
  const t = testApp();

  it('shows public keys only as distinct sha256:<hex> fingerprints, never the keys', async () => {
    const keys = [ed25519Raw().toString('hex'), ed25519Raw().toString('hex')];
    const put = await registerTrigger(t, 'discord-keys', { name: 'discord', publicKeys: keys });
    const read = await request(t.admin).get('/admin/triggers/discord-keys').set(adminAuth);
    for (const res of [put, read]) {
      const shown = res.body.data.provider.publicKeys;
      expect(shown).toEqual([expect.stringMatching(/^sha256:[0-9a-f]{64}$/), expect.stringMatching(/^sha256:[0-9a-f]{64}$/)]);
      expect(shown[0]).not.toBe(shown[1]);
      for (const key of keys) expect(res.text.toLowerCase()).not.toContain(key);
    }
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an Ed25519 key of 31 bytes (the second)', { name: 'discord', publicKeys: [ed25519Raw().toString('hex'), ed25519Raw().subarray(1).toString('hex')] }, 'provider.publicKeys.1'],
    ['a base64 Ed25519 key of 33 bytes', { name: 'telnyx', publicKeys: [Buffer.concat([ed25519Raw(), Buffer.from([0])]).toString('base64')] }, 'provider.publicKeys.0'],
    ['an Ed25519 key where P-256 SPKI is expected', { name: 'sendgrid', publicKeys: [spki(generateKeyPairSync('ed25519').publicKey)] }, 'provider.publicKeys.0'],
    ['a key that is not base64 SPKI at all', { name: 'sendgrid', publicKeys: ['not a key'] }, 'provider.publicKeys.0'],
    // A public key derives from it, but publicKeys are stored in clear (only secrets are sealed).
    ['a private key (PEM) where the public key is expected', { name: 'discord', publicKeys: [generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()] }, 'provider.publicKeys.0'],
    [
      'an RSA key under 2048 bits',
      {
        name: 'recipe',
        publicKeys: [generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'pem', type: 'spki' }).toString()],
        options: { recipe: { signature: { header: 'x-signature', encoding: 'base64' }, algorithm: 'rsa-pkcs1-sha256', signedContent: '{body}', deliveryId: { body: '/id' }, kind: { body: '/type' } } },
      },
      'provider.publicKeys.0',
    ],
  ])('refuses 400 %s, naming the index', async (_label, provider, path) => {
    const res = await putTrigger(t, 'bad-key', provider);
    const error = expectError(res, 'BAD_REQUEST');
    expect(error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.stringMatching(new RegExp(`^${path.replace(/\./g, '\\.')}`)) })]));
    expect(await t.registry.triggers.get('bad-key')).toBeUndefined();
  });

  it('refuses 400 publicKeys on a preset that takes secrets, naming the field', async () => {
    const res = await putTrigger(t, 'bad-key', { name: 'github', secrets: ['s'], publicKeys: [ed25519Raw().toString('hex')] });
    const details: Array<{ path: string; keys?: string[] }> = expectError(res, 'BAD_REQUEST').details;
    expect(details.some((d) => d.path.startsWith('provider.publicKeys') || (d.path === 'provider' && d.keys?.includes('publicKeys')))).toBe(true);
  });

  it('accepts an RSA key of 2048 bits on the same recipe (the refusal above is about its size)', async () => {
    const res = await putTrigger(t, 'rsa-2048', {
      name: 'recipe',
      publicKeys: [generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'pem', type: 'spki' }).toString()],
      options: { recipe: { signature: { header: 'x-signature', encoding: 'base64' }, algorithm: 'rsa-pkcs1-sha256', signedContent: '{body}', deliveryId: { body: '/id' }, kind: { body: '/type' } } },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.provider.publicKeys).toEqual([expect.stringMatching(/^sha256:[0-9a-f]{64}$/)]);
  });

  it('a public-key preset needs no secrets (contract §10.1 B)', async () => {
    const res = await putTrigger(t, 'telnyx-no-secrets', { name: 'telnyx', publicKeys: [ed25519Raw().toString('base64')] });
    expect(res.status).toBe(200);
    expect(res.body.data.provider).toMatchObject({ name: 'telnyx', publicKeys: [expect.stringMatching(/^sha256:[0-9a-f]{64}$/)] });
  });
});
