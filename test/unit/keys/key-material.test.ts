import { jwksTtl, parseCertificateChain, parseJwks } from '../../../src/keys/key-material';
import { makeChain } from '../families/cert-chain';

const jwks = (count: number) => Buffer.from(JSON.stringify({ keys: Array.from({ length: count }, (_, i) => ({ kty: 'RSA', kid: `k${i}` })) }));

describe('key material', () => {
  test('a key set of up to 100 keys is read; more is not a key set', () => {
    expect(parseJwks(jwks(100), undefined)?.value.keys).toHaveLength(100);
    expect(parseJwks(jwks(101), undefined)).toBeUndefined();
  });

  test.each([
    ['{"keys":[{"kid":"no kty"}]}'],
    ['{"keys":{}}'],
    ['[]'],
    ['null'],
  ])('%s is not a key set', (text) => {
    expect(parseJwks(Buffer.from(text), undefined)).toBeUndefined();
  });

  test.each([
    [undefined, 300_000],
    ['no-cache', 300_000],
    ['public, max-age=21600', 21_600_000],
    ['s-maxage=10, max-age=600', 600_000],
    ['max-age="900"', 900_000],
    [['public', 'max-age=7200'], 7_200_000],
    ['max-age=99999999999', 86_400_000],
  ])('Cache-Control %j keeps a key set %d ms', (header, ms) => {
    expect(jwksTtl(header)).toBe(ms);
  });

  describe('a certificate chain file (PayPal)', () => {
    const chain = makeChain({ leafKey: 'rsa', leafSubject: '/CN=messageverificationcerts.paypal.com' });
    const file = (...pems: string[]) => Buffer.from(pems.join(''));

    test('is read leaf first, kept until the first notAfter (24 h at most)', () => {
      const material = parseCertificateChain(file(chain.leaf, chain.intermediate), Date.now());
      expect(material?.value.map((certificate) => certificate.subject)).toEqual(['CN=messageverificationcerts.paypal.com', 'CN=igw test intermediate']);
      expect(material?.ttlMs).toBe(86_400_000);
    });

    test('more than 5 certificates, none, or one not valid now is not a chain', () => {
      expect(parseCertificateChain(file(...Array(6).fill(chain.leaf)), Date.now())).toBeUndefined();
      expect(parseCertificateChain(Buffer.from('not a certificate'), Date.now())).toBeUndefined();
      expect(parseCertificateChain(file(chain.leaf, chain.intermediate), Date.now() + 3 * 86_400_000)).toBeUndefined();
    });
  });
});
