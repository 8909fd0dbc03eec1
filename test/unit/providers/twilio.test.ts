import { twilio } from '../../../src/providers/twilio';
import { twilioUrlCandidates } from '../../../src/providers/twilio/signature';
import { accepted, check, refusedWith } from './support';

// Published vectors: twilio/twilio-php, tests/Twilio/Unit/RequestValidatorTest.php (the example of
// Twilio's webhook security page: Auth Token 12345).
const TOKEN = '12345';
const URL = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const FORM = new URLSearchParams({
  CallSid: 'CA1234567890ABCDE',
  Caller: '+14158675309',
  Digits: '1234',
  From: '+14158675309',
  To: '+18005551212',
}).toString();
const SIGNATURE = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';
const JSON_BODY = '{"property": "value", "boolean": true}';
const BODY_HASH = '0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620';
const JSON_SIGNATURE = 'a9nBmqA0ju/hNViExpshrM61xv4=';

const deliver = (raw: string, signature: string, url = URL) =>
  check(twilio, { raw, headers: { 'x-twilio-signature': signature }, secrets: [TOKEN], url });

describe('twilio preset', () => {
  it('accepts the published form vector, whatever the order of the parameters in the body', () => {
    expect(deliver(FORM, SIGNATURE)).toMatchObject(accepted);
    const reordered = 'To=%2B18005551212&Digits=1234&From=%2B14158675309&Caller=%2B14158675309&CallSid=CA1234567890ABCDE';
    expect(deliver(reordered, SIGNATURE)).toMatchObject(accepted);
  });

  it('refuses a changed parameter and an extra query parameter', () => {
    expect(deliver(FORM.replace('Digits=1234', 'Digits=1235'), SIGNATURE)).toEqual(refusedWith('signature_invalid'));
    expect(deliver(FORM, SIGNATURE, `${URL}&extra=1`)).toEqual(refusedWith('signature_invalid'));
  });

  it('accepts repeated parameters (values de-duplicated and sorted)', () => {
    const form = 'Sid=CA123&SidAccount=AC123&Digits=5678&Digits=1234&Digits=1234';
    expect(deliver(form, 'IK+Dwps556ElfBT0I3Rgjkr1wJU=')).toMatchObject(accepted);
  });

  it('trap: with and without the default port', () => {
    // testValidateAddsPortHttps / testValidateAddsPortHttp: Twilio signed the URL with :443 / :80.
    expect(deliver(FORM, 'kvajT1Ptam85bY51eRf/AJRuM3w=')).toMatchObject(accepted);
    expect(deliver(FORM, '0ZXoZLH/DfblKGATFgpif+LLRf4=', URL.replace('https', 'http'))).toMatchObject(accepted);
    // testValidateRemovesPortHttps: called on a port, signed without it.
    expect(deliver(FORM, SIGNATURE, URL.replace('.com', '.com:1234'))).toMatchObject(accepted);
    // testValidateRemovesPortHttp: signed with the non-default port, which is kept.
    expect(deliver(FORM, 'Zmvh+3yNM1Phv2jhDCwEM3q5ebU=', URL.replace('.com', '.com:1234').replace('https', 'http'))).toMatchObject(accepted);
  });

  it('tries the URL as called, without its port and with the default port', () => {
    expect(twilioUrlCandidates('https://a.example/p?q=1').sort()).toEqual(['https://a.example/p?q=1', 'https://a.example:443/p?q=1']);
    expect(twilioUrlCandidates('http://a.example:8080/p').sort()).toEqual(['http://a.example/p', 'http://a.example:8080/p']);
  });

  it('trap: a JSON body is signed through bodySHA256 in the URL', () => {
    const url = `${URL}&bodySHA256=${BODY_HASH}`;
    expect(deliver(JSON_BODY, JSON_SIGNATURE, url)).toMatchObject(accepted);
    expect(deliver(JSON_BODY.replace('value', 'valuf'), JSON_SIGNATURE, url)).toEqual(refusedWith('signature_invalid'));
  });

  it.each([
    ['no header', {}, 'signature_missing'],
    ['not base64 of 20 bytes', { 'x-twilio-signature': 'FAIL' }, 'signature_missing'],
  ])('refuses %s', (_label, h, reason) => {
    expect(check(twilio, { raw: FORM, headers: h, secrets: [TOKEN], url: URL })).toEqual(refusedWith(reason));
  });

  it('reads message and call kinds and a delivery id; acknowledges with empty TwiML', () => {
    expect(twilio.kind({}, { MessageSid: 'SM1', SmsStatus: 'received', Body: 'hi' })).toBe('message.inbound');
    expect(twilio.kind({}, { MessageSid: 'SM1', MessageStatus: 'delivered' })).toBe('message.status.delivered');
    expect(twilio.kind({}, { CallSid: 'CA1', CallStatus: 'completed' })).toBe('call.status.completed');
    expect(twilio.deliveryId({}, { MessageSid: 'SM1', MessageStatus: 'delivered' })).toBe('SM1:delivered');
    expect(twilio.deliveryId({}, { MessageSid: 'SM1', SmsStatus: 'received' })).toBe('SM1');
    expect(twilio.kind({}, { MessageSid: 'SM1', MessageStatus: 'receiving' })).toBe('message.status.receiving');
    expect(twilio.deliveryId({}, { MessageSid: 'SM1', MessageStatus: 'receiving' })).toBe('SM1:receiving');
    expect(twilio.deliveryId({}, { CallSid: 'CA1', CallStatus: 'completed' })).toBe('CA1:completed');
    // Not covered by the signature: it never names the delivery (contract §5).
    expect(twilio.deliveryId({ 'i-twilio-idempotency-token': 'tok-1' }, { MessageSid: 'SM1' })).toBe('SM1');
    expect(twilio.acknowledgement).toBe('twiml');
  });
});
