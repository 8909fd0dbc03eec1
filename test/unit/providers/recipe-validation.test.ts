import { generateKeyPairSync } from 'node:crypto';
import { hmacRecipe } from '../../../src/providers/hmac';
import { catalogue } from '../../../src/providers/catalogue';
import { RECIPE_PRESETS } from '../../../src/providers/recipe/presets';
import { recipeSchema } from '../../../src/providers/recipe/schema';
import { providerInputSchema, publicProvider, requirePublicUrl, toStoredProvider } from '../../../src/providers/trigger-field';
import presets from '../../../src/providers/presets.json';
import { problems } from './recipe-support';

const base = { signature: { header: 'x-sig', encoding: 'hex' }, algorithm: 'hmac-sha256' };
const recipeField = (recipe: Record<string, unknown>, keys: Record<string, unknown> = { secrets: ['s'] }) => ({ name: 'recipe', ...keys, options: { recipe } });

const ed25519 = generateKeyPairSync('ed25519').publicKey;
const ed25519Raw = Buffer.from(ed25519.export({ format: 'jwk' }).x as string, 'base64url');
const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey;
const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey;
const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;

describe('a recipe is checked at PUT (contract §10.1 C), each refusal naming its path', () => {
  it('accepts a whole recipe and stores it with its defaults', () => {
    expect(problems(recipeField(base))).toEqual([]);
    const stored = toStoredProvider(providerInputSchema.parse(recipeField({ ...base, signature: { header: 'X-Sig', encoding: 'hex' } })));
    expect(stored.options?.recipe).toEqual({ signature: { header: 'x-sig', format: 'raw', encoding: 'hex' }, algorithm: 'hmac-sha256', signedContent: '{body}' });
  });

  it.each([
    ['an unknown field', { ...base, extra: 1 }, 'options.recipe: Unrecognized key: "extra"'],
    ['an unknown signature field', { ...base, signature: { header: 'x', encoding: 'hex', colour: 'red' } }, 'options.recipe.signature: Unrecognized key: "colour"'],
    ['a template without {body}', { ...base, signedContent: '{timestamp}' }, 'options.recipe.signedContent: signedContent must contain {body}'],
    ['{body} twice', { ...base, signedContent: '{body}.{body}' }, 'options.recipe.signedContent: {body} appears more than once'],
    ['an unknown placeholder', { ...base, signedContent: '{nonce}{body}' }, 'options.recipe.signedContent: unknown placeholder {nonce}; known: {body} {timestamp} {id} {method} {url} {header:NAME}'],
    ['{timestamp} without a timestamp source', { ...base, signedContent: '{timestamp}.{body}' }, 'options.recipe.timestamp: signedContent uses {timestamp}: timestamp { header?, unit } is required'],
    ['{timestamp} with a unit but no header or kv pair', { ...base, timestamp: { unit: 's' }, signedContent: '{timestamp}.{body}' }, 'options.recipe.timestamp.header: a timestamp needs a source: timestamp.header or signature.timestampKey'],
    ['a timestamp source the template does not use', { ...base, timestamp: { header: 'x-ts', unit: 's' } }, 'options.recipe.signedContent: a timestamp source is only checked when signed: signedContent must contain {timestamp}'],
    ['a kv format without signatureKeys', { ...base, signature: { header: 'x', format: 'kv', encoding: 'hex' } }, 'options.recipe.signature.signatureKeys: a kv format needs signatureKeys'],
    ['{id} without an id header', { ...base, signedContent: '{id}{body}' }, 'options.recipe.id: id { header } and {id} in signedContent go together'],
    ['five signature headers', { ...base, signature: { headers: ['a', 'b', 'c', 'd', 'e'], encoding: 'hex' } }, 'options.recipe.signature.headers: Too big: expected array to have <=4 items'],
    ['a prefix over 16 characters', { ...base, signature: { header: 'x', encoding: 'hex', prefix: 'p'.repeat(17) } }, 'options.recipe.signature.prefix: Too big: expected string to have <=16 characters'],
    ['an unknown algorithm', { ...base, algorithm: 'md5' }, 'options.recipe.algorithm: Invalid option: expected one of "hmac-sha1"|"hmac-sha256"|"hmac-sha512"|"ed25519"|"ecdsa-p256-sha256"|"rsa-pkcs1-sha256"'],
  ])('refuses %s', (_label, recipe, problem) => {
    expect(problems(recipeField(recipe))).toContain(problem);
  });

  it('refuses publicKeys with an HMAC algorithm, secrets with a public-key one, and neither', () => {
    expect(problems(recipeField(base, { secrets: ['s'], publicKeys: [ed25519Raw.toString('hex')] }))).toEqual([
      'publicKeys: recipe verifies with shared secrets; publicKeys are for public-key schemes',
    ]);
    expect(problems(recipeField({ ...base, algorithm: 'ed25519' }, { secrets: ['s'] }))).toEqual([
      'secrets: recipe verifies with publicKeys, not secrets (a public-key algorithm)',
    ]);
    expect(problems(recipeField(base, {}))).toEqual(['secrets: 1-2 secrets are required']);
    expect(problems(recipeField({ ...base, algorithm: 'ed25519' }, {}))).toEqual(['publicKeys: 1-2 publicKeys are required']);
  });

  it('refuses a secret its key form cannot decode (a base64 key that is not base64)', () => {
    expect(problems(recipeField({ ...base, key: { encoding: 'base64' } }, { secrets: ['not base64!'] }))).toEqual(['secrets.0: the secret must be base64 key bytes']);
  });

  it('refuses {url} while PUBLIC_BASE_URL is unset, and takes it once set', () => {
    const input = { provider: providerInputSchema.parse(recipeField({ ...base, signedContent: '{url}{body}' })) };
    expect(() => requirePublicUrl(input, undefined)).toThrow(expect.objectContaining({ details: [expect.objectContaining({ path: 'provider.options.recipe.signedContent' })] }));
    expect(requirePublicUrl(input, 'https://hooks.example.com')).toBe(input);
    expect(() => requirePublicUrl({ provider: providerInputSchema.parse({ name: 'square', secrets: ['k'] }) }, undefined)).toThrow();
    expect(requirePublicUrl({ provider: providerInputSchema.parse({ name: 'workos', secrets: ['k'] }) }, undefined)).toBeDefined();
  });
});

describe('publicKeys (contract §10.1 B)', () => {
  const ed = (key: string) => ({ name: 'recipe', publicKeys: [key], options: { recipe: { ...base, algorithm: 'ed25519' } } });

  it('takes an Ed25519 key as hex, base64, whpk_ base64, base64 SPKI or PEM, and shows each as the same fingerprint', () => {
    const forms = [
      ed25519Raw.toString('hex'),
      ed25519Raw.toString('base64'),
      `whpk_${ed25519Raw.toString('base64')}`,
      ed25519.export({ format: 'der', type: 'spki' }).toString('base64'),
      ed25519.export({ format: 'pem', type: 'spki' }) as string,
    ];
    const fingerprints = forms.map((key) => {
      expect(problems(ed(key))).toEqual([]);
      return publicProvider(toStoredProvider(providerInputSchema.parse(ed(key)))).publicKeys;
    });
    expect(new Set(fingerprints.map((f) => JSON.stringify(f))).size).toBe(1);
    expect(fingerprints[0]).toEqual([expect.stringMatching(/^sha256:[0-9a-f]{64}$/)]);
    expect(JSON.stringify(publicProvider(toStoredProvider(providerInputSchema.parse(ed(forms[0])))))).not.toContain(forms[0]);
  });

  it('refuses a key of the wrong type or size, naming its index', () => {
    expect(problems({ ...ed(ed25519Raw.toString('hex')), publicKeys: [ed25519Raw.toString('hex'), Buffer.alloc(33, 1).toString('hex')] })).toEqual([
      'publicKeys.1: not a public key: expected PEM, hex or base64 (raw key or SPKI DER)',
    ]);
    const ecdsa = (key: string) => ({ name: 'recipe', publicKeys: [key], options: { recipe: { ...base, algorithm: 'ecdsa-p256-sha256' } } });
    expect(problems(ecdsa(p256.export({ format: 'der', type: 'spki' }).toString('base64')))).toEqual([]);
    expect(problems(ecdsa(p384.export({ format: 'der', type: 'spki' }).toString('base64')))).toEqual(['publicKeys.0: a P-256 (prime256v1) public key is expected']);
    expect(problems(ecdsa(ed25519.export({ format: 'pem', type: 'spki' }) as string))).toEqual(['publicKeys.0: a P-256 (prime256v1) public key is expected']);
    const rsa = { name: 'recipe', publicKeys: [rsa1024.export({ format: 'pem', type: 'spki' }) as string], options: { recipe: { ...base, algorithm: 'rsa-pkcs1-sha256' } } };
    expect(problems(rsa)).toEqual(['publicKeys.0: an RSA key of at least 2048 bits is expected']);
  });

  it('refuses a private key, whose public key could be derived from it: publicKeys are kept in clear, never sealed', () => {
    const ed25519Pair = generateKeyPairSync('ed25519');
    const rsaPair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ecPair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const withAlgorithm = (algorithm: string, key: string) => ({ name: 'recipe', publicKeys: [key], options: { recipe: { ...base, algorithm } } });
    const privateForms: Array<[string, string]> = [
      ['ed25519', ed25519Pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string],
      ['rsa-pkcs1-sha256', rsaPair.privateKey.export({ format: 'pem', type: 'pkcs1' }) as string],
      ['ecdsa-p256-sha256', ecPair.privateKey.export({ format: 'pem', type: 'sec1' }) as string],
      // A public key first and its private key after it in one text: only the first block would be read.
      ['ed25519', `${ed25519Pair.publicKey.export({ format: 'pem', type: 'spki' })}${ed25519Pair.privateKey.export({ format: 'pem', type: 'pkcs8' })}`],
    ];
    for (const [algorithm, key] of privateForms) {
      expect(problems(withAlgorithm(algorithm, key))).toEqual(['publicKeys.0: a private key: give only the public key (publicKeys are stored in clear)']);
    }
    expect(problems({ name: 'discord', publicKeys: [ed25519Pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string] })).toEqual([
      'publicKeys.0: a private key: give only the public key (publicKeys are stored in clear)',
    ]);
    expect(problems(withAlgorithm('ed25519', ed25519Pair.publicKey.export({ format: 'pem', type: 'spki' }) as string))).toEqual([]);
  });

  it('are refused on a preset that verifies with secrets', () => {
    expect(problems({ name: 'github', secrets: ['s'], publicKeys: [ed25519Raw.toString('hex')] })).toEqual([
      'publicKeys: github verifies with shared secrets; publicKeys are for public-key schemes',
    ]);
    expect(problems({ name: 'github' })).toEqual(['secrets: 1-2 secrets are required']);
  });
});

describe('the hmac options are the recipe they denote (contract §10.1 H)', () => {
  it('map to a recipe the recipe rules accept', () => {
    const options = { header: 'x-sig', algorithm: 'sha1', encoding: 'base64', prefix: 'sha1=', timestampHeader: 'x-ts', signedContent: '{timestamp}:{body}' };
    const recipe = hmacRecipe(options);
    expect(recipe).toEqual({
      signature: { header: 'x-sig', format: 'raw', encoding: 'base64', prefix: 'sha1=' },
      timestamp: { header: 'x-ts', unit: 's' },
      algorithm: 'hmac-sha1',
      signedContent: '{timestamp}:{body}',
      kind: [{ body: '/type' }, { body: '/event' }],
    });
    expect(recipeSchema.safeParse(recipe).success).toBe(true);
  });
});

describe('the shipped presets of recipe families (contract §10.1 C)', () => {
  it('are catalogue entries: each one is listed with the recipe it ships, and every recipe passes the rules', () => {
    expect(RECIPE_PRESETS.map((p) => p.name)).toEqual(presets.map((entry) => entry.name));
    const entries = new Map(catalogue().map((entry) => [entry.name, entry]));
    for (const entry of presets) {
      expect(recipeSchema.safeParse(entry.recipe).success).toBe(true);
      expect(entries.get(entry.name)).toMatchObject({ recipe: entry.recipe, fetches: [], authenticates: 'body' });
    }
    expect(entries.get('discord')).toMatchObject({ family: 'ed25519', keys: 'publicKeys' });
    expect(entries.get('sendgrid')).toMatchObject({ family: 'ecdsa', keys: 'publicKeys' });
    expect(entries.get('workos')).toMatchObject({ family: 'hmac-recipe', keys: 'secrets' });
    expect(entries.get('standard-webhooks')).toMatchObject({ keys: 'secrets|publicKeys' });
    expect(entries.get('telegram')).toMatchObject({ family: 'token', authenticates: 'sender' });
  });

  it('ship every row of the table', () => {
    const names = RECIPE_PRESETS.map((p) => p.name).sort();
    expect(names).toEqual(
      [
        'workos', 'paddle', 'calendly', 'mux', 'rootly', 'tiktok', 'box', 'twitch', 'zendesk', 'hubspot', 'square', 'trello',
        'razorpay', 'woocommerce', 'typeform', 'vercel', 'notion', 'calcom', 'clickup', 'attio', 'ashby', 'greenhouse', 'jira', 'bitbucket', 'coinbase-commerce',
        'teams-outgoing', 'discord', 'telnyx', 'sendgrid',
        // §10 presets that were code and are catalogue entries now (contract §10.1: a preset of a recipe family is an entry).
        'shopify', 'intercom', 'pagerduty', 'sentry', 'dropbox',
        // §10.1 D's handshakes that need a preset.
        'xero', 'worldline',
      ].sort(),
    );
  });
});
