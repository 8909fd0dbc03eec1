import { randomBytes } from 'node:crypto';
import { isSealed, keyId, SecretsCipher, SecretUnreadableError, type SealedSecret } from '../../src/secrets/cipher';
import { SECRET_FIELDS } from '../../src/registry/secret-fields';
import { SealedFields } from '../../src/secrets/sealed-fields';
import { StoreUnavailableError } from '../../src/store-error';

const keyA = randomBytes(32);
const keyB = randomBytes(32);

describe('SecretsCipher (AES-256-GCM)', () => {
  const cipher = new SecretsCipher(keyA);

  it('opens what it sealed; the sealed form holds neither the secret nor the key, and names the key', () => {
    const sealed = cipher.seal('app-secret-value', 'channels/wa/appSecret');
    expect(JSON.stringify(sealed)).not.toContain('app-secret-value');
    expect(JSON.stringify(sealed)).not.toContain(keyA.toString('base64'));
    expect(sealed).toMatchObject({ $sealed: 'aes-256-gcm', kid: keyId(keyA) });
    expect(cipher.open(sealed, 'channels/wa/appSecret')).toBe('app-secret-value');
  });

  it('uses a fresh IV each time: the same secret seals differently', () => {
    const one = cipher.seal('same', 'c');
    const two = cipher.seal('same', 'c');
    expect(one.iv).not.toBe(two.iv);
    expect(one.ct).not.toBe(two.ct);
  });

  it('opens a value sealed under SECRETS_KEY_PREVIOUS during a rotation, and seals under the new key', () => {
    const old = new SecretsCipher(keyA).seal('rotating', 'ctx');
    const rotated = new SecretsCipher(keyB, keyA);
    expect(rotated.open(old, 'ctx')).toBe('rotating');
    expect(rotated.seal('x', 'ctx').kid).toBe(keyId(keyB));
  });

  it('refuses a value sealed under a key it does not have, as a 503-class store error naming the key id', () => {
    const sealed = new SecretsCipher(keyB).seal('other', 'ctx');
    let caught: unknown;
    try {
      new SecretsCipher(keyA).open(sealed, 'ctx');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SecretUnreadableError);
    expect(caught).toBeInstanceOf(StoreUnavailableError);
    expect((caught as SecretUnreadableError).kid).toBe(keyId(keyB));
    expect((caught as Error).message).toContain(keyId(keyB));
  });

  it('refuses an altered value, and a value moved to another record or field', () => {
    const sealed = cipher.seal('moved', 'channels/a/appSecret');
    const flipped = Buffer.from(sealed.ct, 'base64');
    flipped[0] ^= 1;
    expect(() => cipher.open({ ...sealed, ct: flipped.toString('base64') }, 'channels/a/appSecret')).toThrow(SecretUnreadableError);
    expect(() => cipher.open(sealed, 'channels/b/appSecret')).toThrow(SecretUnreadableError);
    expect(() => cipher.open({ ...sealed, tag: '' }, 'channels/a/appSecret')).toThrow(SecretUnreadableError);
    expect(() => cipher.open({ ...sealed, $sealed: 'rot13' } as unknown as SealedSecret, 'channels/a/appSecret')).toThrow(SecretUnreadableError);
  });
});

describe('SealedFields', () => {
  const cipher = new SecretsCipher(keyA);
  const channels = new SealedFields('channels', SECRET_FIELDS.channels, cipher);
  const triggers = new SealedFields('triggers', SECRET_FIELDS.triggers, cipher);

  it('seals every secret field of every channel type and nothing else', () => {
    for (const channel of [
      { provider: 'whatsapp', workspaceId: 'ws', appSecret: 'wa-secret', verifyTokenHash: 'h' },
      { provider: 'twilio', workspaceId: 'ws', accountSid: 'AC1', authToken: 'tw-secret' },
      { provider: 'telegram', workspaceId: 'ws', botId: '42', secretToken: 'tg-secret' },
    ]) {
      const sealed = channels.seal('ch-1', channel) as Record<string, unknown>;
      const text = JSON.stringify(sealed);
      for (const secret of ['wa-secret', 'tw-secret', 'tg-secret']) expect(text).not.toContain(secret);
      for (const [name, value] of Object.entries(channel)) {
        if (['appSecret', 'authToken', 'secretToken'].includes(name)) expect(isSealed(sealed[name])).toBe(true);
        else expect(sealed[name]).toBe(value);
      }
      expect(channels.open('ch-1', JSON.parse(text))).toEqual(channel);
    }
  });

  it('seals each of a trigger provider\'s secrets, and leaves a trigger without provider as it is', () => {
    const trigger = { workflowId: 'wf', provider: { name: 'github', secrets: ['gh-one', 'gh-two'], events: ['push'] } };
    const sealed = triggers.seal('t-1', trigger) as { provider: { secrets: unknown[]; events: string[] } };
    expect(sealed.provider.secrets.every(isSealed)).toBe(true);
    expect(sealed.provider.events).toEqual(['push']);
    expect(JSON.stringify(sealed)).not.toMatch(/gh-one|gh-two/);
    expect(triggers.open('t-1', JSON.parse(JSON.stringify(sealed)))).toEqual(trigger);
    const plain = { workflowId: 'wf', auth: { tokenHash: 'abc' } };
    expect(triggers.seal('t-2', plain)).toEqual(plain);
  });

  it('does not change the record it is given', () => {
    const channel = { appSecret: 's' };
    channels.seal('c', channel);
    expect(channel).toEqual({ appSecret: 's' });
  });

  it('still reads secrets stored in clear before SECRETS_KEY was set (migration), and marks them for resealing', () => {
    const stored = { provider: 'whatsapp', appSecret: 'stored-in-clear' };
    expect(channels.open('c', stored)).toEqual(stored);
    expect(channels.needsReseal(stored)).toBe(true);
    expect(channels.needsReseal(channels.seal('c', stored))).toBe(false);
    expect(channels.needsReseal({ provider: 'whatsapp' })).toBe(false);
  });

  it('marks values sealed under the previous key for resealing', () => {
    const old = new SealedFields('channels', SECRET_FIELDS.channels, new SecretsCipher(keyB)).seal('c', { appSecret: 's' });
    const rotated = new SealedFields('channels', SECRET_FIELDS.channels, new SecretsCipher(keyA, keyB));
    expect(rotated.needsReseal(old)).toBe(true);
    expect(rotated.open('c', old)).toEqual({ appSecret: 's' });
  });

  it('without SECRETS_KEY stores values as they are, and refuses a sealed value instead of using it', () => {
    const none = new SealedFields('channels', SECRET_FIELDS.channels);
    expect(none.seal('c', { appSecret: 's' })).toEqual({ appSecret: 's' });
    expect(none.needsReseal({ appSecret: 's' })).toBe(false);
    const sealed = channels.seal('c', { appSecret: 's' });
    expect(() => none.open('c', sealed)).toThrow(/SECRETS_KEY is not set/);
  });
});
