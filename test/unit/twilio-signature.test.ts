/**
 * verifyTwilio (the one check both Twilio routes use) against the vectors of Twilio's official
 * Node SDK test suite (repository twilio/twilio-node, file spec/validation.spec.js, "Request
 * validation"), and against signatures made by the `twilio` package itself for the other cases.
 */
import { createHash } from 'node:crypto';
import twilio from 'twilio';
import { twilioUrlCandidates, verifyTwilio } from '../../src/providers/twilio/signature';

type Params = Record<string, string | string[]>;

/** The form body Twilio posts for these parameters (a repeated one once per value). */
function formOf(record: Params): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(record)) for (const one of Array.isArray(value) ? value : [value]) form.append(name, one);
  return form.toString();
}

/** verifyTwilio's verdict on a POST of `body` (a form of `record`, or raw text) to `url`. */
function verified(authToken: string, signature: string | undefined, url: string, body: Params | string, contentType?: string): boolean {
  const raw = Buffer.from(typeof body === 'string' ? body : formOf(body));
  const type = contentType ?? (typeof body === 'string' ? 'application/json' : 'application/x-www-form-urlencoded');
  const headers = signature === undefined ? { 'content-type': type } : { 'content-type': type, 'x-twilio-signature': signature };
  return verifyTwilio({ headers, query: {}, url, secrets: [authToken], options: {}, toleranceSeconds: 300, nowSeconds: 0, raw }).ok;
}

// twilio/twilio-node spec/validation.spec.js
const token = '12345';
const requestUrl = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const defaultParams: Params = {
  CallSid: 'CA1234567890ABCDE',
  Caller: '+14158675309',
  Digits: '1234',
  From: '+14158675309',
  To: '+18005551212',
};
const defaultSignature = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';
const body = '{"property": "value", "boolean": true}';
const bodySignature = '0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620';
const none: Params = {};

describe("X-Twilio-Signature: the vectors of twilio-node's spec/validation.spec.js", () => {
  it('computes the default signature of a form request', () => {
    expect(verified(token, defaultSignature, requestUrl, defaultParams)).toBe(true);
  });

  it.each([
    ['a wrong signature', 'WRONG_SIGNATURE'],
    ['no signature', undefined],
    ['an empty signature', ''],
  ])('refuses %s', (_label, header) => {
    expect(verified(token, header, requestUrl, defaultParams)).toBe(false);
  });

  it('validates a JSON body through bodySHA256 (URL signed without parameters)', () => {
    expect(createHash('sha256').update(body).digest('hex')).toBe(bodySignature);
    const url = `${requestUrl}&bodySHA256=${bodySignature}`;
    expect(verified(token, 'a9nBmqA0ju/hNViExpshrM61xv4=', url, body)).toBe(true);
    expect(verified(token, 'a9nBmqA0ju/hNViExpshrM61xv4=', url, `${body} `)).toBe(false);
  });

  it('validates an empty JSON body', () => {
    const url = `${requestUrl}&bodySHA256=44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a`;
    expect(verified(token, 'Ldidvp12m26NI7eqEvxnEpkd9Hc=', url, '{}')).toBe(true);
  });

  it('validates a URL whose only query parameter is bodySHA256', () => {
    const url = `https://mycompany.com/myapp.php?bodySHA256=${bodySignature}`;
    expect(verified(token, 'y77kIzt2vzLz71DgmJGsen2scGs=', url, body)).toBe(true);
  });

  // Signed over the URL alone, a body that is neither a form nor under bodySHA256 is not covered.
  it.each([
    ['JSON', 'application/json', body],
    ['text', 'text/plain', 'hello'],
    ['XML', 'application/xml', '<Response/>'],
  ])('refuses a %s body when the URL has no bodySHA256, even under a signature of the URL', (_label, type, payload) => {
    const signature = twilio.getExpectedTwilioSignature(token, requestUrl, {});
    expect(verified(token, signature, requestUrl, payload, type)).toBe(false);
  });

  it('accepts an empty body signed over the URL alone, and a form posted without a type', () => {
    expect(verified(token, twilio.getExpectedTwilioSignature(token, requestUrl, {}), requestUrl, '', 'application/json')).toBe(true);
    expect(verified(token, defaultSignature, requestUrl, formOf(defaultParams), '')).toBe(true);
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
    expect(verified(token, signature, url, defaultParams)).toBe(true);
  });

  it('validates a repeated parameter whatever the order of its values', () => {
    for (const addresses of [
      ['+1325xxxxxxx', '+1415xxxxxxx'],
      ['+1415xxxxxxx', '+1325xxxxxxx'],
    ]) {
      const repeated: Params = { 'MessagingBinding.Address': addresses };
      expect(verified(token, '83O6e2vORAoJHUNzJjDWN1jz+BA=', requestUrl, repeated)).toBe(true);
    }
  });

  it('validates several parameters with repeated, duplicated values', () => {
    const multi: Params = { Sid: 'CA123', SidAccount: 'AC123', Digits: ['5678', '1234', '1234'] };
    expect(verified(token, 'IK+Dwps556ElfBT0I3Rgjkr1wJU=', requestUrl, multi)).toBe(true);
  });

  it('refuses a signature of another URL', () => {
    const signature = twilio.getExpectedTwilioSignature(token, 'https://example.com/path?test=param', {});
    expect(verified(token, signature, 'https://example.com/path?test=param', none)).toBe(true);
    expect(verified(token, signature, 'https://example.com/path?test=param2', none)).toBe(false);
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
    expect(verified(authToken, signature, url, inbound)).toBe(true);
    expect(verified(authToken, signature, url, { ...inbound, Body: 'changed' })).toBe(false);
    expect(verified(authToken, signature, `${url}${url.includes('?') ? '&' : '?'}z=1`, inbound)).toBe(false);
    expect(verified(`${authToken}x`, signature, url, inbound)).toBe(false);
  });

  it('accepts both with and without the default port, whichever the SDK signed', () => {
    const bare = 'https://hooks.example.com/api/channels/twilio/ch_1';
    const ported = 'https://hooks.example.com:443/api/channels/twilio/ch_1';
    expect(verified(authToken, twilio.getExpectedTwilioSignature(authToken, ported, inbound), bare, inbound)).toBe(true);
    expect(verified(authToken, twilio.getExpectedTwilioSignature(authToken, bare, inbound), ported, inbound)).toBe(true);
  });

  it('matches the SDK on media parameters (MediaUrl0, MediaContentType0…)', () => {
    const media = { ...inbound, NumMedia: '2', MediaUrl0: 'https://api.twilio.com/a', MediaContentType0: 'image/jpeg', MediaUrl1: 'https://api.twilio.com/b', MediaContentType1: 'application/pdf' };
    const url = 'https://hooks.example.com/api/channels/twilio/ch_1';
    expect(verified(authToken, twilio.getExpectedTwilioSignature(authToken, url, media), url, media)).toBe(true);
  });

  it('matches the SDK on repeated parameters', () => {
    const repeated = { Sid: 'SM1', Tag: ['b', 'a', 'b', 'c'] };
    const url = 'https://hooks.example.com/x';
    expect(verified(authToken, twilio.getExpectedTwilioSignature(authToken, url, repeated), url, repeated)).toBe(true);
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
    expect(verified('', twilio.getExpectedTwilioSignature('', url, {}), url, none)).toBe(false);
  });
});
