/**
 * Issue 36, the declarative recipe (contract §10.1 C): the worked example of the contract (the
 * WorkOS-shaped recipe) verifies deliveries signed by @workos-inc/node, and each refusal the
 * contract lists at PUT is a 400 whose details name the offending path.
 */
import { generateKeyPairSync } from 'node:crypto';
import { WorkOS } from '@workos-inc/node';
import request from 'supertest';
import { testApp } from '../../helpers/app';
import { expectError } from '../../helpers/http';
import { adminAuth, describePreset, examplePayload, putTrigger } from '../../helpers/presets';

const workos = new WorkOS('sk_test_presets_unused');
const SECRET = 'workos-webhook-secret-recipe';

/** §10.1 C, verbatim. */
const WORKED_EXAMPLE = {
  signature: { header: 'workos-signature', format: 'kv', pairSeparator: ',', timestampKey: 't', signatureKeys: ['v1'], encoding: 'hex' },
  timestamp: { unit: 'ms' },
  algorithm: 'hmac-sha256',
  signedContent: '{timestamp}.{body}',
  deliveryId: { body: '/id' },
  kind: { body: '/event' },
};

describePreset('recipe (the contract\'s worked example)', 'recipe-workos', {
  provider: { name: 'recipe', secrets: [SECRET], toleranceSeconds: 180, options: { recipe: WORKED_EXAMPLE } },
  body: examplePayload('workos', 'dsync.user.updated.json'),
  async sign(body, at) {
    const t = at * 1000;
    return { body, headers: { 'WorkOS-Signature': `t=${t}, v1=${await workos.webhooks.computeSignature(t, body, SECRET)}` } };
  },
  accepts: (d) =>
    workos.webhooks.constructEvent({ payload: d.body, sigHeader: d.headers['WorkOS-Signature'], secret: SECRET }).then(
      () => true,
      () => false,
    ),
  expected: { name: 'recipe', kind: 'dsync.user.updated', deliveryId: 'event_07FKJ843CVE8F7BXQSPFH0M53V' },
  signatureHeaders: ['WorkOS-Signature'],
  toleranceSeconds: 180,
});

const ed25519Hex = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');
const recipe = (changes: Record<string, unknown>) => ({ ...WORKED_EXAMPLE, ...changes });
const withoutKeys = (object: Record<string, unknown>, ...keys: string[]) => Object.fromEntries(Object.entries(object).filter(([k]) => !keys.includes(k)));
const hmacProvider = (r: Record<string, unknown>) => ({ name: 'recipe', secrets: [SECRET], options: { recipe: r } });

describe('recipe validation at PUT (contract §10.1 C): 400 naming the path, nothing stored', () => {
  const t = testApp();

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['an unknown field', hmacProvider(recipe({ flavour: 'vanilla' })), /^provider\.options\.recipe/],
    ['an unknown field of signature', hmacProvider(recipe({ signature: { ...WORKED_EXAMPLE.signature, bogus: true } })), /^provider\.options\.recipe\.signature/],
    ['a template without {body}', hmacProvider(recipe({ signedContent: '{timestamp}.' })), /^provider\.options\.recipe\.signedContent/],
    ['a placeholder twice', hmacProvider(recipe({ signedContent: '{timestamp}.{body}.{timestamp}' })), /^provider\.options\.recipe\.signedContent/],
    ['a template over 256 characters', hmacProvider(recipe({ signedContent: `${'x'.repeat(250)}{timestamp}.{body}` })), /^provider\.options\.recipe\.signedContent/],
    [
      '{timestamp} without a timestamp source',
      hmacProvider({ ...withoutKeys(WORKED_EXAMPLE, 'timestamp'), signature: withoutKeys(WORKED_EXAMPLE.signature, 'timestampKey') }),
      /^provider\.options\.recipe/,
    ],
    ['a timestamp source the template does not use', hmacProvider(recipe({ signedContent: '{body}' })), /^provider\.options\.recipe/],
    ['{url} while PUBLIC_BASE_URL is unset', hmacProvider(recipe({ signedContent: '{url}{timestamp}.{body}' })), /^provider\.options\.recipe/],
    ['a kv format without signatureKeys', hmacProvider(recipe({ signature: withoutKeys(WORKED_EXAMPLE.signature, 'signatureKeys') })), /^provider\.options\.recipe\.signature/],
    ['a prefix over 16 characters', hmacProvider(recipe({ signature: { ...WORKED_EXAMPLE.signature, prefix: 'p'.repeat(17) } })), /^provider\.options\.recipe\.signature/],
    ['publicKeys with an HMAC algorithm', { name: 'recipe', publicKeys: [ed25519Hex], options: { recipe: WORKED_EXAMPLE } }, /^provider\.(publicKeys|options\.recipe\.algorithm)/],
    ['secrets with a public-key algorithm', hmacProvider(recipe({ algorithm: 'ed25519' })), /^provider\.(secrets|options\.recipe\.algorithm)/],
  ])('refuses %s', async (_label, provider, path) => {
    const res = await putTrigger(t, 'recipe-refused', provider);
    const error = expectError(res, 'BAD_REQUEST');
    expect(error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.stringMatching(path) })]));
    expect(await t.registry.triggers.get('recipe-refused')).toBeUndefined();
  });

  it('accepts the worked example itself (the refusals above are about their one change)', async () => {
    const res = await putTrigger(t, 'recipe-accepted', hmacProvider(WORKED_EXAMPLE));
    expect(res.status).toBe(200);
    const read = await request(t.admin).get('/admin/triggers/recipe-accepted').set(adminAuth);
    expect(read.body.data.provider).toMatchObject({ name: 'recipe', secretsSet: 1 });
    expect(read.text).not.toContain(SECRET);
  });
});
