import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { WorkOS } from '@workos-inc/node';
import { verifyAs } from './recipe-support';

const now = Math.floor(Date.now() / 1000);
const hmacHex = (key: string | Buffer, text: string | Buffer, alg = 'sha256') => createHmac(alg, key).update(text).digest('hex');
const hmacB64 = (key: string | Buffer, text: string | Buffer, alg = 'sha256') => createHmac(alg, key).update(text).digest('base64');

const WORKOS_RECIPE = {
  signature: { header: 'workos-signature', format: 'kv', pairSeparator: ',', timestampKey: 't', signatureKeys: ['v1'], encoding: 'hex' },
  timestamp: { unit: 'ms' },
  algorithm: 'hmac-sha256',
  signedContent: '{timestamp}.{body}',
  deliveryId: { body: '/id' },
  kind: { body: '/event' },
};
const workosTrigger = (secrets = ['wh_secret_1'], toleranceSeconds = 180) => ({ name: 'recipe', secrets, toleranceSeconds, options: { recipe: WORKOS_RECIPE } });

describe('the recipe engine: a kv header (WorkOS, signed by its SDK)', () => {
  const workos = new WorkOS('sk_test_recipe');
  const body = '{"id":"event_01","event":"user.created","data":{"id":"user_01"}}';

  it('accepts what WorkOS signs (t=<ms>, v1=<hex> with a space after the comma), and refuses a changed byte', async () => {
    const ms = Date.now();
    const header = `t=${ms}, v1=${await workos.webhooks.computeSignature(ms, body, 'wh_secret_1')}`;
    expect(await workos.webhooks.verifyHeader({ payload: body, sigHeader: header, secret: 'wh_secret_1' })).toBe(true);
    expect(verifyAs(workosTrigger(), { raw: body, headers: { 'workos-signature': header } })).toEqual({ ok: true, secret: 'wh_secret_1' });
    expect(verifyAs(workosTrigger(), { raw: body.replace('01', '02'), headers: { 'workos-signature': header } })).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  it('reads the timestamp in milliseconds: stale or ahead by more than the tolerance is refused, both ways', async () => {
    for (const offsetMs of [-200_000, 200_000]) {
      const ms = Date.now() + offsetMs;
      const header = `t=${ms}, v1=${await workos.webhooks.computeSignature(ms, body, 'wh_secret_1')}`;
      expect(verifyAs(workosTrigger(), { raw: body, headers: { 'workos-signature': header } })).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
    }
  });

  it('verifies with the second secret while rotating, and skips signature keys it does not know', async () => {
    const ms = Date.now();
    const good = await workos.webhooks.computeSignature(ms, body, 'wh_secret_new');
    const header = `t=${ms}, v0=${'a'.repeat(64)}, v1=${'b'.repeat(64)}, v1=${good}`;
    expect(verifyAs(workosTrigger(['wh_secret_old', 'wh_secret_new']), { raw: body, headers: { 'workos-signature': header } })).toEqual({ ok: true, secret: 'wh_secret_new' });
  });

  it.each([
    ['no header', {}],
    ['no timestamp pair', { 'workos-signature': `v1=${'a'.repeat(64)}` }],
    ['a timestamp that is not a number', { 'workos-signature': `t=soon, v1=${'a'.repeat(64)}` }],
    ['a signature of the wrong length', { 'workos-signature': `t=${Date.now()}, v1=abcd` }],
    ['a signature that is not hex', { 'workos-signature': `t=${Date.now()}, v1=${'z'.repeat(64)}` }],
  ])('refuses %s as signature_missing', (_label, headers) => {
    expect(verifyAs(workosTrigger(), { raw: body, headers })).toEqual({ ok: false, reason: 'signature_missing' });
  });
});

describe('the recipe engine: formats, encodings, templates', () => {
  const body = '{"type":"thing.done","id":"evt_9"}';

  it('list format: versioned entries, unknown versions skipped (Standard Webhooks-like v1a beside v1)', () => {
    const recipe = {
      signature: { header: 'sig', format: 'list', listSeparator: ' ', signatureKeys: ['v1'], encoding: 'base64' },
      timestamp: { header: 'ts', unit: 's' },
      id: { header: 'msg-id' },
      algorithm: 'hmac-sha256',
      signedContent: '{id}.{timestamp}.{body}',
    };
    const good = hmacB64('k', `msg_1.${now}.${body}`);
    const headers = { sig: `v1a,${'A'.repeat(86)}== v1,${good}`, ts: String(now), 'msg-id': 'msg_1' };
    expect(verifyAs({ name: 'recipe', secrets: ['k'], options: { recipe } }, { raw: body, headers })).toEqual({ ok: true, secret: 'k' });
    expect(verifyAs({ name: 'recipe', secrets: ['k'], options: { recipe } }, { raw: body, headers: { ...headers, 'msg-id': 'msg_2' } })).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  it('list format with "=" versions and a "," separator (PagerDuty-like), and a prefix per entry', () => {
    const recipe = { signature: { header: 'x-sig', format: 'list', listSeparator: ',', signatureKeys: ['v1'], encoding: 'hex' }, algorithm: 'hmac-sha256' };
    const headers = { 'x-sig': `v1=${'0'.repeat(64)},v1=${hmacHex('s', body)}` };
    expect(verifyAs({ name: 'recipe', secrets: ['s'], options: { recipe } }, { raw: body, headers }).ok).toBe(true);
  });

  it('base64url signatures, hmac-sha512, a base64 key with a stripped prefix', () => {
    const key = Buffer.from('0123456789abcdef0123456789abcdef');
    const recipe = { signature: { header: 'x-sig', encoding: 'base64url' }, algorithm: 'hmac-sha512', key: { encoding: 'base64', stripPrefix: 'whsec_' } };
    const signature = createHmac('sha512', key).update(body).digest('base64url');
    const trigger = { name: 'recipe', secrets: [`whsec_${key.toString('base64')}`], options: { recipe } };
    expect(verifyAs(trigger, { raw: body, headers: { 'x-sig': signature } }).ok).toBe(true);
    // The same secret used as utf8 bytes does not verify: the key form is part of the scheme.
    const asUtf8 = { ...trigger, options: { recipe: { ...recipe, key: undefined } } };
    expect(verifyAs(asUtf8, { raw: body, headers: { 'x-sig': signature } })).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  it('{method}{url}{body}{timestamp} (HubSpot-like) and {header:NAME}: the exact bytes of each part', () => {
    const url = 'https://gw.example.com/api/webhooks/trigger/hs?x=1';
    const recipe = {
      signature: { header: 'x-sig', encoding: 'base64' },
      timestamp: { header: 'x-ts', unit: 'ms' },
      algorithm: 'hmac-sha256',
      signedContent: '{method}{url}{body}{timestamp}|{header:X-Account}',
    };
    const ms = String(Date.now());
    const headers = { 'x-sig': hmacB64('cs', `POST${url}${body}${ms}|acct 7`), 'x-ts': ms, 'x-account': 'acct 7' };
    expect(verifyAs({ name: 'recipe', secrets: ['cs'], options: { recipe } }, { raw: body, headers, url }).ok).toBe(true);
    expect(verifyAs({ name: 'recipe', secrets: ['cs'], options: { recipe } }, { raw: body, headers: { ...headers, 'x-account': 'acct 8' }, url }).ok).toBe(false);
  });

  it('RFC 3339 timestamps with nanoseconds (Twitch) or an offset (Box)', () => {
    const recipe = { signature: { header: 'x-sig', encoding: 'hex', prefix: 'sha256=' }, timestamp: { header: 'x-ts', unit: 'rfc3339' }, algorithm: 'hmac-sha256', signedContent: '{timestamp}{body}' };
    const fresh = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1456789Z');
    const offset = new Date(Date.now() - 7 * 3600_000).toISOString().replace(/\.\d{3}Z$/, '-07:00');
    for (const ts of [fresh, offset]) {
      const headers = { 'x-sig': `sha256=${hmacHex('k', ts + body)}`, 'x-ts': ts };
      expect(verifyAs({ name: 'recipe', secrets: ['k'], options: { recipe } }, { raw: body, headers }).ok).toBe(true);
    }
    const stale = '2020-01-01T00:00:00Z';
    expect(verifyAs({ name: 'recipe', secrets: ['k'], options: { recipe } }, { raw: body, headers: { 'x-sig': `sha256=${hmacHex('k', stale + body)}`, 'x-ts': stale } })).toEqual({
      ok: false,
      reason: 'timestamp_out_of_tolerance',
    });
  });

  it('requireHeaders: a missing or different value is signature_missing (Box signature version)', () => {
    const recipe = { signature: { header: 'x-sig', encoding: 'base64' }, algorithm: 'hmac-sha256', requireHeaders: { 'Box-Signature-Version': '1' } };
    const headers = { 'x-sig': hmacB64('k', body) };
    const trigger = { name: 'recipe', secrets: ['k'], options: { recipe } };
    expect(verifyAs(trigger, { raw: body, headers: { ...headers, 'box-signature-version': '1' } }).ok).toBe(true);
    expect(verifyAs(trigger, { raw: body, headers: { ...headers, 'box-signature-version': '2' } })).toEqual({ ok: false, reason: 'signature_missing' });
    expect(verifyAs(trigger, { raw: body, headers })).toEqual({ ok: false, reason: 'signature_missing' });
  });

  it('several headers are all tried, every signature against every key (Box primary/secondary)', () => {
    const recipe = { signature: { headers: ['sig-primary', 'sig-secondary'], encoding: 'base64' }, algorithm: 'hmac-sha256' };
    const trigger = { name: 'recipe', secrets: ['primary-key', 'secondary-key'], options: { recipe } };
    const headers = { 'sig-primary': hmacB64('stale-key', body), 'sig-secondary': hmacB64('secondary-key', body) };
    expect(verifyAs(trigger, { raw: body, headers })).toEqual({ ok: true, secret: 'secondary-key' });
  });

  it('bounds the work: at most 8 signatures of a header are looked at, whatever its length', () => {
    const recipe = { signature: { header: 'x-sig', format: 'list', listSeparator: ',', encoding: 'hex' }, algorithm: 'hmac-sha256' };
    const good = hmacHex('k', body);
    const trigger = { name: 'recipe', secrets: ['k'], options: { recipe } };
    expect(verifyAs(trigger, { raw: body, headers: { 'x-sig': [...Array(7).fill('0'.repeat(64)), good].join(',') } }).ok).toBe(true);
    const flood = [...Array(5000).fill('0'.repeat(64)), good].join(',');
    // Count the work rather than time it: each signature looked at (all of HMAC length here) is compared
    // with the key's HMAC in constant time once; 8 comparisons at most, not 5001.
    // The engine calls through the core module object, so spy on that object itself.
    const nodeCrypto = require('node:crypto') as typeof import('node:crypto');
    const hmacs = jest.spyOn(nodeCrypto, 'createHmac');
    const compared = jest.spyOn(nodeCrypto, 'timingSafeEqual');
    try {
      expect(verifyAs(trigger, { raw: body, headers: { 'x-sig': flood } })).toEqual({ ok: false, reason: 'signature_invalid' });
      expect(hmacs).toHaveBeenCalledTimes(1);
      expect(compared.mock.calls.length).toBeGreaterThan(0);
      expect(compared.mock.calls.length).toBeLessThanOrEqual(8);
    } finally {
      hmacs.mockRestore();
      compared.mockRestore();
    }
  });
});

describe('the recipe engine: public keys', () => {
  const body = '{"event":"processed","sg_event_id":"e1"}';

  it('Ed25519 over {timestamp}{body}, with two keys while rotating', () => {
    const old = generateKeyPairSync('ed25519');
    const current = generateKeyPairSync('ed25519');
    const raw = (key: typeof old.publicKey) => (key.export({ format: 'jwk' }).x as string);
    const hexKey = (key: typeof old.publicKey) => Buffer.from(raw(key), 'base64url').toString('hex');
    const recipe = { signature: { header: 'x-signature-ed25519', encoding: 'hex' }, timestamp: { header: 'x-signature-timestamp', unit: 's' }, algorithm: 'ed25519', signedContent: '{timestamp}{body}' };
    const signature = sign(null, Buffer.from(`${now}${body}`), current.privateKey).toString('hex');
    const trigger = { name: 'recipe', publicKeys: [hexKey(old.publicKey), hexKey(current.publicKey)], options: { recipe } };
    const headers = { 'x-signature-ed25519': signature, 'x-signature-timestamp': String(now) };
    expect(verifyAs(trigger, { raw: body, headers }).ok).toBe(true);
    expect(verifyAs(trigger, { raw: `${body} `, headers })).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(verifyAs({ ...trigger, publicKeys: [hexKey(old.publicKey)] }, { raw: body, headers })).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  it('bounds the work: at most 2 signatures are verified with each public key (each verification hashes the body again)', () => {
    const pair = generateKeyPairSync('ed25519');
    const hexKey = Buffer.from(pair.publicKey.export({ format: 'jwk' }).x as string, 'base64url').toString('hex');
    const recipe = { signature: { header: 'x-sig', format: 'list', listSeparator: ',', encoding: 'hex' }, algorithm: 'ed25519' };
    const trigger = { name: 'recipe', publicKeys: [hexKey], options: { recipe } };
    const good = sign(null, Buffer.from(body), pair.privateKey).toString('hex');
    const forged = sign(null, Buffer.from(body), generateKeyPairSync('ed25519').privateKey).toString('hex');
    expect(verifyAs(trigger, { raw: body, headers: { 'x-sig': `${forged},${good}` } }).ok).toBe(true);
    expect(verifyAs(trigger, { raw: body, headers: { 'x-sig': `${forged},${forged},${good}` } })).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  it('ECDSA P-256 in DER and in raw r||s, the key as base64 SPKI', () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const spki = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    const recipe = { signature: { header: 'x-sig', encoding: 'base64' }, timestamp: { header: 'x-ts', unit: 's', retriesKeepTimestamp: true }, algorithm: 'ecdsa-p256-sha256', signedContent: '{timestamp}{body}' };
    const trigger = { name: 'recipe', publicKeys: [spki], options: { recipe } };
    for (const dsaEncoding of ['der', 'ieee-p1363'] as const) {
      const signature = sign('sha256', Buffer.from(`${now}${body}`), { key: privateKey, dsaEncoding }).toString('base64');
      expect(verifyAs(trigger, { raw: body, headers: { 'x-sig': signature, 'x-ts': String(now) } }).ok).toBe(true);
    }
    // Retries keep their first timestamp: no tolerance unless the trigger sets one.
    const old = now - 86_400;
    const late = sign('sha256', Buffer.from(`${old}${body}`), privateKey).toString('base64');
    expect(verifyAs(trigger, { raw: body, headers: { 'x-sig': late, 'x-ts': String(old) } }).ok).toBe(true);
    expect(verifyAs({ ...trigger, toleranceSeconds: 600 }, { raw: body, headers: { 'x-sig': late, 'x-ts': String(old) } })).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });

  it('RSA PKCS#1 v1.5 SHA-256 with a PEM key', () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const recipe = { signature: { header: 'x-sig', encoding: 'base64' }, algorithm: 'rsa-pkcs1-sha256' };
    const trigger = { name: 'recipe', publicKeys: [publicKey.export({ format: 'pem', type: 'spki' }) as string], options: { recipe } };
    const signature = sign('sha256', Buffer.from(body), privateKey).toString('base64');
    expect(verifyAs(trigger, { raw: body, headers: { 'x-sig': signature } }).ok).toBe(true);
    expect(verifyAs(trigger, { raw: body.replace('e1', 'e2'), headers: { 'x-sig': signature } })).toEqual({ ok: false, reason: 'signature_invalid' });
  });
});
