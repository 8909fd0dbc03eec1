import { isSecretName, publishableHeaders, publishableQuery } from '../../src/ingest/headers';
import { triggerInputSchema } from '../../src/registry/schemas';

describe('publishableHeaders', () => {
  const incoming = {
    host: 'gw.example.com',
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/abc',
    'x-github-event': 'push',
    'x-github-delivery': 'd-1',
    authorization: 'Bearer secret',
    'proxy-authorization': 'Basic x',
    cookie: 'a=b',
    'set-cookie': ['c=d'],
    'x-api-key': 'k',
    'x-hub-signature': 'sha1=..',
    'x-hub-signature-256': 'sha256=..',
    'stripe-signature': 't=1,v1=..',
    'x-shopify-hmac-sha256': 'abc',
    'x-gitlab-token': 'gl',
    'x-my-header': 'custom',
    connection: 'keep-alive',
    'transfer-encoding': 'chunked',
    'keep-alive': 'timeout=5',
    'x-forwarded-for': ['1.1.1.1', '2.2.2.2'],
  };

  it('removes credentials, signatures, hop-by-hop headers and the trigger\'s auth header', () => {
    const out = publishableHeaders(incoming, { authHeader: 'x-my-header' });
    expect(out).toEqual({
      host: 'gw.example.com',
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/abc',
      'x-github-event': 'push',
      'x-github-delivery': 'd-1',
      'x-forwarded-for': '1.1.1.1, 2.2.2.2',
    });
  });

  it('keeps a custom header that is not the trigger\'s auth header and does not look like a credential', () => {
    expect(publishableHeaders({ 'x-my-header': 'v' })).toEqual({ 'x-my-header': 'v' });
  });

  it('withholds the credential headers that a deny-list of exact names missed', () => {
    const credentials = {
      'x-auth': 'a1',
      'x-access-key': 'a2',
      'x-webhook-key': 'a3',
      'x-shopify-hmac-sha256': 'a4',
      'x-slack-signature': 'a5',
      'x-twilio-signature': 'a6',
      'x-telegram-bot-api-secret-token': 'a7',
      'x-session': 'a8',
      'x-amz-credential': 'a9',
      'x-password': 'a10',
    };
    const out = publishableHeaders({ ...credentials, 'x-github-event': 'push' });
    expect(out).toEqual({ 'x-github-event': 'push' });
  });

  it('publishes only the trigger\'s allow-list when it has one, and never a credential even then', () => {
    const out = publishableHeaders(incoming, { allow: ['x-github-event', 'x-github-delivery', 'authorization'] });
    expect(out).toEqual({ 'x-github-event': 'push', 'x-github-delivery': 'd-1' });
  });

  it('publishes no header for an empty allow-list', () => {
    expect(publishableHeaders(incoming, { allow: [] })).toEqual({});
  });

  it('skips undefined values', () => {
    expect(publishableHeaders({ a: undefined, b: 'x' })).toEqual({ b: 'x' });
  });
});

describe('isSecretName', () => {
  it.each([
    'authorization', 'Cookie', 'x-api-key', 'x_api_key', 'apikey', 'x-auth-token', 'client_secret', 'x-hub-signature-256',
    'password', 'x-session-id', 'x-credential', 'X-Auth', 'x-access-key', 'x-webhook-key', 'x-shopify-hmac-sha256', 'key', 'auth',
    'sig', 'passwd', 'pwd', 'jwt',
  ])('%s is secret', (name) => expect(isSecretName(name)).toBe(true));
  it.each(['content-type', 'x-github-event', 'user-agent', 'x-request-id', 'x-shopify-topic', 'page'])('%s is not', (name) =>
    expect(isSecretName(name)).toBe(false),
  );
});

describe('publishableQuery', () => {
  it('removes credential-like parameters and __proto__', () => {
    // as node's querystring parses it: a null-prototype object that can hold an own __proto__
    const query = Object.assign(Object.create(null), { a: '1', token: 't', hub_verify_token: 'v', api_key: 'k', list: ['x', 'y'] });
    Object.defineProperty(query, '__proto__', { value: 'p', enumerable: true });
    expect(Object.keys(query)).toContain('__proto__');
    const out = publishableQuery(query);
    expect(out).toEqual({ a: '1', list: ['x', 'y'] });
    expect(Object.hasOwn(out, '__proto__')).toBe(false);
  });

  it('withholds ?key= and ?auth= and the like', () => {
    const query = { key: 'k1', auth: 'a1', sig: 's1', signature: 's2', access_token: 't1', hmac: 'h1', page: '2' };
    expect(publishableQuery(query)).toEqual({ page: '2' });
  });
});

describe('trigger publishHeaders', () => {
  const base = { workflowId: 'wf', workspaceId: 'ws', deployed: true };

  it('is an allow-list of header names, lower-cased', () => {
    const parsed = triggerInputSchema.parse({ ...base, publishHeaders: ['X-GitHub-Event', 'x-github-delivery'] });
    expect(parsed.publishHeaders).toEqual(['x-github-event', 'x-github-delivery']);
  });

  it('refuses a name that looks like a credential, naming it', () => {
    const result = triggerInputSchema.safeParse({ ...base, publishHeaders: ['x-github-event', 'X-Hub-Signature-256'] });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({ path: ['publishHeaders', 1] });
    expect(result.error?.issues[0].message).toContain('credential');
  });
});
