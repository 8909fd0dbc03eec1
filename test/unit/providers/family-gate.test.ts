import { KeyFetcher } from '../../../src/keys/key-fetcher';
import { createMetrics } from '../../../src/observability/metrics';
import { familyDiagnostics, familyRefusal } from '../../../src/providers/family-gate';
import { openGate } from '../../../src/providers/gate';
import { providerNamed } from '../../../src/providers/registry';

const request = (headers: Record<string, string>) => ({ headers, query: {}, url: 'https://hooks.example.com/api/webhooks/trigger/t' });

describe('the gate and the family presets (contract §10.1 D, E)', () => {
  it('keeps the synchronous path for a preset without verifyFamily: no promise per request', () => {
    const raw = Buffer.from('{"event_name":"push"}');
    const gate = openGate({ name: 'gitlab', secrets: ['secret-token'] }, request({ 'x-gitlab-token': 'secret-token' }), createMetrics());
    const answer = gate!.afterBody(raw);
    expect(answer).toBeUndefined();
  });

  it('awaits a family preset, its refusal the catalogue status: 401, 403, 503 with Retry-After', async () => {
    const gate = openGate({ name: 'vonage', secrets: ['s'] }, request({ authorization: 'Bearer a.b.c' }), createMetrics(), undefined, new KeyFetcher({ enabled: false }));
    const pending = gate!.afterBody(Buffer.from('{}'));
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).rejects.toMatchObject({ status: 401, reason: 'signature_missing' });
    expect(familyRefusal('key_url_not_allowed')).toMatchObject({ status: 401 });
    expect(familyRefusal('sender_not_allowed')).toMatchObject({ status: 403 });
    expect(familyRefusal('key_unavailable')).toMatchObject({ status: 503, retryable: true });
  });

  it('the diagnostics say where the key came from, whether the key URL was allowed and the sender; never a URL', () => {
    const sns = providerNamed('aws-sns')!;
    expect(familyDiagnostics(sns, { ok: false, reason: 'key_url_not_allowed' })).toEqual({ keyUrlAllowed: false });
    expect(familyDiagnostics(sns, { ok: false, reason: 'sender_not_allowed', sender: 'arn:aws:sns:us-east-1:123456789012:t' })).toEqual({
      keyUrlAllowed: true,
      sender: 'arn:aws:sns:us-east-1:123456789012:t',
    });
    expect(familyDiagnostics(sns, { ok: false, reason: 'key_unavailable' })).toEqual({ keyUrlAllowed: true, keySource: 'fetched' });
    const pubsub = providerNamed('google-pubsub')!;
    expect(familyDiagnostics(pubsub, { ok: true, keySource: 'cache', kid: 'k1', sender: 'a@b.iam.gserviceaccount.com' })).toEqual({
      keySource: 'cache',
      kid: 'k1',
      sender: 'a@b.iam.gserviceaccount.com',
    });
  });

  // Adyen, Mailgun, SNS, Graph, Bot Framework and Apple read the body before its signature holds,
  // so before the pipeline reserves its parse memory: an unauthenticated sender must not get a
  // parse that costs far more than its bytes (`[{},{},…]` takes 21-26 times them).
  it.each(['adyen', 'mailgun', 'aws-sns', 'graph-rich', 'bot-framework', 'apple-app-store'])(
    '%s refuses unparsed a body whose parse would take more than ten times its bytes',
    async (name) => {
      const heavy = Buffer.from(JSON.stringify({ notificationItems: [], signature: {}, Type: 'Notification', value: [], padding: Array(100_000).fill({}) }));
      const parse = jest.spyOn(JSON, 'parse');
      try {
        const options = { 'aws-sns': { topicArns: ['arn:aws:sns:us-east-1:123456789012:t'] }, 'graph-rich': { appId: 'a', tenantIds: ['t'] }, 'bot-framework': { appId: 'a' }, 'apple-app-store': { bundleId: 'b', environment: 'Production' } }[name] ?? {};
        const result = await providerNamed(name)!.verifyFamily!(
          { headers: { authorization: 'Bearer a.b.c' }, query: {}, url: 'https://hooks.example.com/t', secrets: ['00ff'], options, toleranceSeconds: 300, nowSeconds: Math.floor(Date.now() / 1000), raw: heavy },
          new KeyFetcher({ enabled: false }),
        );
        expect(result).toEqual({ ok: false, reason: 'signature_missing' });
        expect(parse.mock.calls.filter(([text]) => typeof text === 'string' && text.length >= heavy.length)).toEqual([]);
      } finally {
        parse.mockRestore();
      }
    },
  );
});
