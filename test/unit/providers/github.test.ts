import { github } from '../../../src/providers/github';
import { accepted, check, refusedWith, tampered } from './support';

// Published vectors: octokit/webhooks-methods.js, test/verify.test.ts.
const SECRET = 'mysecret';
const BODY = '{"foo":"bar"}';
const SIGNATURE = 'sha256=4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3';
// The "#71" vector: GitHub escapes control characters as upper-case \u001B; those bytes are signed.
const ESCAPED_SECRET = 'development';
const ESCAPED_BODY = String.raw`{"foo":"Foo\n\u001B[34mbar: ♥♥♥♥♥♥♥♥\nthis-is-lost\u001B[0m\u001B[2K"}`;
const ESCAPED_SIGNATURE = 'sha256=afecc3caa27548bb90d51a50384cb2868b9a3327b4ad6a01c9bd4ed0f8b0b12c';

const headers = (signature: string) => ({ 'x-hub-signature-256': signature, 'x-github-event': 'push', 'x-github-delivery': 'guid-1' });

describe('github preset', () => {
  it('accepts the published vector and refuses it with one byte changed', () => {
    expect(check(github, { raw: BODY, headers: headers(SIGNATURE), secrets: [SECRET] })).toMatchObject(accepted);
    expect(check(github, { raw: tampered(BODY), headers: headers(SIGNATURE), secrets: [SECRET] })).toEqual(refusedWith('signature_invalid'));
    expect(check(github, { raw: BODY, headers: headers(SIGNATURE), secrets: ['foo'] })).toEqual(refusedWith('signature_invalid'));
  });

  it('trap: verifies the raw bytes with upper-case \\u001B escapes, which a re-serialised body would lose', () => {
    expect(check(github, { raw: ESCAPED_BODY, headers: headers(ESCAPED_SIGNATURE), secrets: [ESCAPED_SECRET] })).toMatchObject(accepted);
    const reserialised = JSON.stringify(JSON.parse(ESCAPED_BODY));
    expect(reserialised).not.toBe(ESCAPED_BODY);
    expect(check(github, { raw: reserialised, headers: headers(ESCAPED_SIGNATURE), secrets: [ESCAPED_SECRET] })).toEqual(
      refusedWith('signature_invalid'),
    );
  });

  it('accepts with either of two secrets (octokit verifyWithFallback)', () => {
    expect(check(github, { raw: BODY, headers: headers(SIGNATURE), secrets: ['foo', SECRET] })).toMatchObject({ ok: true, secret: SECRET });
  });

  it.each([
    ['no X-Hub-Signature-256', {}, 'signature_missing'],
    ['the legacy sha1 header only', { 'x-hub-signature': 'sha1=0000000000000000000000000000000000000000' }, 'signature_missing'],
    ['another prefix', { 'x-hub-signature-256': SIGNATURE.replace('sha256=', 'sha1=') }, 'signature_missing'],
    ['not hex', { 'x-hub-signature-256': 'sha256=zz' }, 'signature_missing'],
    ['a truncated signature', { 'x-hub-signature-256': SIGNATURE.slice(0, -2) }, 'signature_missing'],
  ])('refuses %s', (_label, h, reason) => {
    expect(check(github, { raw: BODY, headers: h, secrets: [SECRET] })).toEqual(refusedWith(reason));
  });

  it('reads the kind as X-GitHub-Event plus the body action, and the delivery GUID', () => {
    expect(github.kind({ 'x-github-event': 'pull_request' }, { action: 'opened' })).toBe('pull_request.opened');
    expect(github.kind({ 'x-github-event': 'push' }, { ref: 'refs/heads/main' })).toBe('push');
    expect(github.kind({ 'x-github-event': 'issues' }, { payload: '{"action":"closed"}' })).toBe('issues.closed');
    expect(github.deliveryId({ 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' }, {})).toBe('72d3162e-cc78-11e3-81ab-4c9367dc0958');
  });
});
