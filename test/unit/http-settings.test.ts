import { loadConfig } from '../../src/config/load';

function load(env: NodeJS.ProcessEnv) {
  const result = loadConfig(env);
  return result.ok ? { config: result.config, problems: [] as string[] } : { config: undefined, problems: result.problems };
}

describe('listener, timeout and abuse settings (issue 9, items 3, 4, 11)', () => {
  it('defaults: admin port 8081, headers 10 s < request 15 s < grace 25 s, no trusted proxy', () => {
    const { config } = load({});
    expect(config).toMatchObject({
      ADMIN_PORT: 8081,
      HEADERS_TIMEOUT_MS: 10_000,
      REQUEST_TIMEOUT_MS: 15_000,
      SHUTDOWN_GRACE_MS: 25_000,
      BODY_MIN_RATE: { limit: 1024, windowSeconds: 5 },
      AUTH_FAILURE_LIMIT: { limit: 100, windowSeconds: 60 },
      MAX_INFLIGHT_BODY_SHARE: 50,
    });
    expect(config!.TRUST_PROXY).toBeUndefined();
  });

  it.each([
    ['loopback', 'loopback'],
    ['10.0.0.0/8, 192.168.1.7', '10.0.0.0/8, 192.168.1.7'],
    ['fd00::/8,loopback,uniquelocal', 'fd00::/8,loopback,uniquelocal'],
    ['false', false],
    ['2', 2],
  ])('TRUST_PROXY=%s is read as express takes it', (value, expected) => {
    expect(load({ TRUST_PROXY: value }).config!.TRUST_PROXY).toEqual(expected);
  });

  it.each(['10.0.0.0/33', 'not-an-address', '10.0.0.1/8/8', 'localhost', '::1/129'])('TRUST_PROXY=%s is refused', (value) => {
    expect(load({ TRUST_PROXY: value }).problems.some((line) => line.startsWith('TRUST_PROXY:'))).toBe(true);
  });

  it('refuses TRUST_PROXY=true (every hop believed: any sender picks its client address), telling the operator to name the proxies', () => {
    expect(load({ TRUST_PROXY: 'true' }).problems).toEqual([expect.stringMatching(/^TRUST_PROXY: true would believe every X-Forwarded-For hop.*hop count.*addresses\/subnets/)]);
  });

  it('refuses timeouts that would outlast the drain, each problem naming the variable to change', () => {
    expect(load({ HEADERS_TIMEOUT_MS: '15000' }).problems).toEqual(['HEADERS_TIMEOUT_MS: must be below REQUEST_TIMEOUT_MS (15000)']);
    expect(load({ SHUTDOWN_GRACE_MS: '15000' }).problems).toEqual([
      'REQUEST_TIMEOUT_MS: must be below SHUTDOWN_GRACE_MS (15000): a request still arriving at SIGTERM would outlast the drain',
    ]);
    expect(load({ SHUTDOWN_GRACE_MS: '3000', PUBLISH_TIMEOUT_MS: '300', REQUEST_TIMEOUT_MS: '2500', HEADERS_TIMEOUT_MS: '1000' }).problems).toEqual([]);
  });

  it('refuses ADMIN_PORT equal to PORT, except both 0 (any free port each)', () => {
    expect(load({ PORT: '9000', ADMIN_PORT: '9000' }).problems).toEqual(['ADMIN_PORT: must differ from PORT']);
    expect(load({ PORT: '0', ADMIN_PORT: '0' }).problems).toEqual([]);
  });
});
