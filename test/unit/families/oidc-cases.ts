/**
 * The cases every OIDC preset must refuse, shared by their tests: algorithm confusion, `alg:
 * none`, an unknown `kid`, and key material or key URLs in the token header (a `jku`/`x5u` aimed
 * at a local listener that counts connections: it must count none).
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { JWTPayload } from 'jose';
import type { FamilyResult } from '../../../src/providers/families/result';
import type { KeyHost } from '../keys/key-host';
import { hs256, rs256, rsaKey, unsigned, type RsaKey } from './jwt-keys';

export interface OidcCase {
  /** The platform's key, pinned in `verifyPinned`, served at `route` for `verifyFetched`. */
  key: () => RsaKey;
  claims: () => JWTPayload;
  verifyPinned: (token: string) => Promise<FamilyResult>;
  verifyFetched: (token: string) => Promise<FamilyResult>;
  serveKeys: () => void;
  host: () => KeyHost;
  route: string;
}

export function refusesForgedTokens(c: OidcCase): void {
  test('a token signed by another key under the same kid is signature_invalid', async () => {
    expect(await c.verifyPinned(await rs256(rsaKey(c.key().kid), c.claims()))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('alg none, and HS256 keyed with the public key, are signature_invalid', async () => {
    expect(await c.verifyPinned(unsigned(c.claims(), { kid: c.key().kid }))).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(await c.verifyPinned(await hs256(c.claims(), c.key().publicPem, { kid: c.key().kid }))).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  test('an unknown kid, or none, is signature_invalid (pinned set: nothing fetched)', async () => {
    expect(await c.verifyPinned(await rs256(rsaKey('unknown-kid'), c.claims()))).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(await c.verifyPinned(await rs256(c.key(), c.claims(), { kid: undefined }))).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(c.host().accepted()).toBe(0);
  });

  test('an embedded jwk or x5c of the signer is not used', async () => {
    const attacker = rsaKey(c.key().kid);
    const withJwk = await rs256(attacker, c.claims(), { jwk: { kty: 'RSA', n: attacker.jwk.n, e: attacker.jwk.e } });
    const withX5c = await rs256(attacker, c.claims(), { x5c: [Buffer.from('not the platform').toString('base64')] });
    expect(await c.verifyPinned(withJwk)).toEqual({ ok: false, reason: 'signature_invalid' });
    expect(await c.verifyPinned(withX5c)).toEqual({ ok: false, reason: 'signature_invalid' });
  });

  describe('a jku or x5u in the token header is never fetched', () => {
    let listener: Server;
    let connections = 0;
    let port = 0;
    beforeEach(async () => {
      connections = 0;
      listener = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      listener.listen(0, '127.0.0.1');
      await once(listener, 'listening');
      port = (listener.address() as AddressInfo).port;
    });
    afterEach(() => listener.close());

    test.each(['jku', 'x5u'])('%s naming a local listener: never connected, the forged token refused', async (parameter) => {
      c.serveKeys();
      const token = await rs256(rsaKey('attacker'), c.claims(), { [parameter]: `https://127.0.0.1:${port}/keys` });
      expect(await c.verifyFetched(token)).toEqual({ ok: false, reason: 'signature_invalid' });
      expect(connections).toBe(0);
      expect(c.host().requests).toEqual([c.route]);
    });
  });
}
