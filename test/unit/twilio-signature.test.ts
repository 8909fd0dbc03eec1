/**
 * X-Twilio-Signature against the vectors of Twilio's official Node SDK test suite
 * (repository twilio/twilio-node, file spec/validation.spec.js, "Request validation"), and
 * against signatures made by the `twilio` package itself for the other cases.
 */
import { createHash } from 'node:crypto';
import twilio from 'twilio';
import {
  computeTwilioSignature,
  twilioUrlCandidates,
  verifyTwilioBodyHash,
  verifyTwilioSignature,
  type TwilioParams,
} from '../../src/providers/twilio/signature';

const params = (record: Record<string, string | string[]>): TwilioParams =>
  new Map(Object.entries(record).map(([name, value]) => [name, Array.isArray(value) ? value : [value]]));

// twilio/twilio-node spec/validation.spec.js
const token = '12345';
const requestUrl = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const defaultParams = params({
  CallSid: 'CA1234567890ABCDE',
  Caller: '+14158675309',
  Digits: '1234',
  From: '+14158675309',
  To: '+18005551212',
});
const defaultSignature = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';
const body = '{"property": "value", "boolean": true}';
const bodySignature = '0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620';
const none = params({});

describe("X-Twilio-Signature: the vectors of twilio-node's spec/validation.spec.js", () => {
  it('computes the default signature of a form request', () => {
    expect(computeTwilioSignature(token, requestUrl, defaultParams)).toBe(defaultSignature);
    expect(verifyTwilioSignature(token, defaultSignature, requestUrl, defaultParams)).toBe(true);
  });

  it.each([
    ['a wrong signature', 'WRONG_SIGNATURE'],
    ['no signature', undefined],
    ['an empty signature', ''],
  ])('refuses %s', (_label, header) => {
    expect(verifyTwilioSignature(token, header, requestUrl, defaultParams)).toBe(false);
  });

  it('validates a JSON body through bodySHA256 (URL signed without parameters)', () => {
    expect(createHash('sha256').update(body).digest('hex')).toBe(bodySignature);
    const url = `${requestUrl}&bodySHA256=${bodySignature}`;
    expect(verifyTwilioSignature(token, 'a9nBmqA0ju/hNViExpshrM61xv4=', url, none)).toBe(true);
    expect(verifyTwilioBodyHash(Buffer.from(body), url)).toBe(true);
    expect(verifyTwilioBodyHash(Buffer.from(`${body} `), url)).toBe(false);
  });

  it('validates an empty JSON body', () => {
    const url = `${requestUrl}&bodySHA256=44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a`;
    expect(verifyTwilioSignature(token, 'Ldidvp12m26NI7eqEvxnEpkd9Hc=', url, none)).toBe(true);
    expect(verifyTwilioBodyHash(Buffer.from('{}'), url)).toBe(true);
  });

  it('validates a URL whose only query parameter is bodySHA256', () => {
    const url = `https://mycompany.com/myapp.php?bodySHA256=${bodySignature}`;
    expect(verifyTwilioSignature(token, 'y77kIzt2vzLz71DgmJGsen2scGs=', url, none)).toBe(true);
    expect(verifyTwilioBodyHash(Buffer.from(body), url)).toBe(true);
  });

  it('fails a body check when the URL has no bodySHA256', () => {
    expect(verifyTwilioBodyHash(Buffer.from(body), requestUrl)).toBe(false);
  });

  it.each([
    ['an https URL with a port, by stripping it', 'https://mycompany.com:1234/myapp.php?foo=1&bar=2', defaultSignature],
    ['an http URL with its port', 'http://mycompany.com:1234/myapp.php?foo=1&bar=2', 'Zmvh+3yNM1Phv2jhDCwEM3q5ebU='],
    ['an https URL without port, by adding 443', requestUrl, 'kvajT1Ptam85bY51eRf/AJRuM3w='],
    ['an http URL without port, by adding 80', 'http://mycompany.com/myapp.php?foo=1&bar=2', '0ZXoZLH/DfblKGATFgpif+LLRf4='],
    ['a URL with credentials', 'https://user:pass@mycompany.com/myapp.php?foo=1&bar=2', 'CukzLTc1tT5dXEDIHm/tKBanW10='],
    ['a URL with just a username', 'https://user@mycompany.com/myapp.php?foo=1&bar=2', '2YRLlVAflCqxaNicjMpJcSTgzSs='],
    ['a URL with credentials, by adding the port', 'https://user:pass@mycompany.com/myapp.php?foo=1&bar=2', 'ZQFR1PTIZXF2MXB8ZnKCvnnA+rI='],
    ['a URL with special characters', `${requestUrl}&Body=It's+amazing`, 'TfZzewPq8wqrGlMfyAud8+/IvJ0='],
  ])('validates %s', (_label, url, signature) => {
    expect(verifyTwilioSignature(token, signature, url, defaultParams)).toBe(true);
  });

  it('validates a repeated parameter whatever the order of its values', () => {
    for (const addresses of [
      ['+1325xxxxxxx', '+1415xxxxxxx'],
      ['+1415xxxxxxx', '+1325xxxxxxx'],
    ]) {
      const repeated = params({ 'MessagingBinding.Address': addresses });
      expect(verifyTwilioSignature(token, '83O6e2vORAoJHUNzJjDWN1jz+BA=', requestUrl, repeated)).toBe(true);
    }
  });

  it('validates several parameters with repeated, duplicated values', () => {
    const multi = params({ Sid: 'CA123', SidAccount: 'AC123', Digits: ['5678', '1234', '1234'] });
    expect(verifyTwilioSignature(token, 'IK+Dwps556ElfBT0I3Rgjkr1wJU=', requestUrl, multi)).toBe(true);
  });

  it('refuses a signature of another URL', () => {
    const signature = computeTwilioSignature(token, 'https://example.com/path?test=param', none);
    expect(verifyTwilioSignature(token, signature, 'https://example.com/path?test=param2', none)).toBe(false);
  });
});

describe('X-Twilio-Signature: cases signed by the twilio package', () => {
  const authToken = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';
  const inbound = {
    AccountSid: 'AC0123456789abcdef0123456789abcdef',
    MessageSid: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
    From: 'whatsapp:+14155238886',
    To: 'whatsapp:+15005550006',
    Body: 'Olá, ça va? 👋 & <ok> = 100%',
    ProfileName: 'Zoë',
    NumMedia: '0',
  };

  it.each([
    'https://hooks.example.com/api/channels/twilio/ch_1',
    'https://hooks.example.com:443/api/channels/twilio/ch_1',
    'https://hooks.example.com:8443/api/channels/twilio/ch_1?x=1&y=a%20b',
    "https://hooks.example.com/api/channels/twilio/ch_1?note=it's",
    'http://10.0.0.7:8080/api/channels/twilio/ch_1',
  ])('accepts what the SDK signs for %s, and refuses it after any change', (url) => {
    const signature = twilio.getExpectedTwilioSignature(authToken, url, inbound);
    expect(twilio.validateRequest(authToken, signature, url, inbound)).toBe(true);
    expect(verifyTwilioSignature(authToken, signature, url, params(inbound))).toBe(true);
    expect(verifyTwilioSignature(authToken, signature, url, params({ ...inbound, Body: 'changed' }))).toBe(false);
    expect(verifyTwilioSignature(authToken, signature, `${url}${url.includes('?') ? '&' : '?'}z=1`, params(inbound))).toBe(false);
    expect(verifyTwilioSignature(`${authToken}x`, signature, url, params(inbound))).toBe(false);
  });

  it('accepts both with and without the default port, whichever the SDK signed', () => {
    const bare = 'https://hooks.example.com/api/channels/twilio/ch_1';
    const ported = 'https://hooks.example.com:443/api/channels/twilio/ch_1';
    expect(verifyTwilioSignature(authToken, twilio.getExpectedTwilioSignature(authToken, ported, inbound), bare, params(inbound))).toBe(true);
    expect(verifyTwilioSignature(authToken, twilio.getExpectedTwilioSignature(authToken, bare, inbound), ported, params(inbound))).toBe(true);
  });

  it('matches the SDK on media parameters (MediaUrl0, MediaContentType0…)', () => {
    const media = { ...inbound, NumMedia: '2', MediaUrl0: 'https://api.twilio.com/a', MediaContentType0: 'image/jpeg', MediaUrl1: 'https://api.twilio.com/b', MediaContentType1: 'application/pdf' };
    const url = 'https://hooks.example.com/api/channels/twilio/ch_1';
    expect(computeTwilioSignature(authToken, url, params(media))).toBe(twilio.getExpectedTwilioSignature(authToken, url, media));
  });

  it('matches the SDK on repeated parameters', () => {
    const repeated = { Sid: 'SM1', Tag: ['b', 'a', 'b', 'c'] };
    const url = 'https://hooks.example.com/x';
    expect(computeTwilioSignature(authToken, url, params(repeated))).toBe(twilio.getExpectedTwilioSignature(authToken, url, repeated));
  });

  it('tries the URL as received first, then the normalised forms', () => {
    expect(twilioUrlCandidates("https://h.example.com/p?q=it's")).toEqual([
      "https://h.example.com/p?q=it's",
      "https://h.example.com:443/p?q=it's",
      'https://h.example.com/p?q=it%27s',
      'https://h.example.com:443/p?q=it%27s',
    ]);
  });

  it('never matches with an empty auth token', () => {
    const url = 'https://hooks.example.com/x';
    expect(verifyTwilioSignature('', computeTwilioSignature('', url, none), url, none)).toBe(false);
  });
});
