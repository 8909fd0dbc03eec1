import { isSecretName, publishableHeaders, publishableQuery } from '../../src/ingest/headers';

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
    'x-my-auth': 'custom',
    connection: 'keep-alive',
    'transfer-encoding': 'chunked',
    'keep-alive': 'timeout=5',
    'x-forwarded-for': ['1.1.1.1', '2.2.2.2'],
  };

  it('removes credentials, signatures, hop-by-hop headers and the trigger\'s auth header', () => {
    const out = publishableHeaders(incoming, 'x-my-auth');
    expect(out).toEqual({
      host: 'gw.example.com',
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/abc',
      'x-github-event': 'push',
      'x-github-delivery': 'd-1',
      'x-shopify-hmac-sha256': 'abc',
      'x-forwarded-for': '1.1.1.1, 2.2.2.2',
    });
  });

  it('keeps a non-secret custom header when it is not the trigger\'s auth header', () => {
    expect(publishableHeaders({ 'x-my-auth': 'v' })).toEqual({ 'x-my-auth': 'v' });
  });

  it('skips undefined values', () => {
    expect(publishableHeaders({ a: undefined, b: 'x' })).toEqual({ b: 'x' });
  });
});

describe('isSecretName', () => {
  it.each(['authorization', 'Cookie', 'x-api-key', 'x_api_key', 'apikey', 'x-auth-token', 'client_secret', 'x-hub-signature-256', 'password', 'x-session-id', 'x-credential'])(
    '%s is secret',
    (name) => expect(isSecretName(name)).toBe(true),
  );
  it.each(['content-type', 'x-github-event', 'user-agent', 'x-request-id'])('%s is not', (name) => expect(isSecretName(name)).toBe(false));
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
});
