import { renderRefusal } from '../../src/http/errors';
import { ERROR_CATALOGUE } from '../../src/outcomes/codes';
import { REASONS, RETRY_AFTER_SECONDS, type Reason, type ReasonEntry } from '../../src/outcomes/reasons';
import { Refusal } from '../../src/outcomes/refusal';

const reasons = Object.keys(REASONS) as Reason[];
const entry = (reason: Reason): ReasonEntry => REASONS[reason];

describe('a refusal is rendered as the catalogue says', () => {
  it.each(reasons)('%s: its status, code and Retry-After', (reason) => {
    const { code, retryAfter } = entry(reason);
    const rendered = renderRefusal(new Refusal(reason, 'why'));
    expect(rendered.status).toBe(ERROR_CATALOGUE[code].status);
    expect(rendered.body.error.code).toBe(code);
    expect(rendered.body.error.message).toBe('why');
    if (retryAfter === undefined) expect(rendered.headers).not.toHaveProperty('Retry-After');
    // A computed wait the refusal forgot to carry still asks for one second, never none.
    else expect(rendered.headers['Retry-After']).toBe(retryAfter === 'computed' ? '1' : String(retryAfter));
    expect(Object.keys(rendered.headers).filter((name) => name !== 'Retry-After')).toEqual([]);
  });

  it('gives every retryable 503 and 409 in_flight a Retry-After, and no 4xx the sender must fix', () => {
    for (const reason of reasons) {
      const { code, retryAfter } = entry(reason);
      const { status, retryable } = ERROR_CATALOGUE[code];
      if (status === 503 || status === 429 || reason === 'in_flight') expect(`${reason}: ${retryAfter !== undefined}`).toBe(`${reason}: true`);
      if (!retryable) expect(`${reason}: ${retryAfter}`).toBe(`${reason}: undefined`);
    }
    expect(entry('sink_unavailable').retryAfter).toBe(RETRY_AFTER_SECONDS);
  });

  it("renders a refusal's own wait: seconds as given, a time as whole seconds from now (rounded up, at least 1)", () => {
    expect(renderRefusal(new Refusal('closed', 'draining', {}, { retryAfterSeconds: 1 })).headers['Retry-After']).toBe('1');
    const inAMinute = new Date(Date.now() + 59_500);
    expect(renderRefusal(new Refusal('rate_limited', 'spent', {}, { retryAt: inAMinute })).headers['Retry-After']).toBe('60');
    const past = new Date(Date.now() - 5_000);
    expect(renderRefusal(new Refusal('auth_throttled', 'blocked', {}, { retryAt: past })).headers['Retry-After']).toBe('1');
  });

  it('renders Allow on a 405 and WWW-Authenticate when the refusal asks for a scheme', () => {
    const notAllowed = renderRefusal(new Refusal('method_not_allowed', 'only GET, POST is accepted', undefined, { allow: ['GET', 'POST'] }));
    expect(notAllowed).toEqual({
      status: 405,
      headers: { Allow: 'GET, POST' },
      body: { error: { code: 'METHOD_NOT_ALLOWED', message: 'only GET, POST is accepted' } },
    });
    const bearer = renderRefusal(new Refusal('credentials_invalid', 'missing or invalid credentials', undefined, { challenge: 'Bearer' }));
    expect(bearer.headers).toEqual({ 'WWW-Authenticate': 'Bearer' });
    expect(bearer.body).toEqual({ error: { code: 'UNAUTHORIZED', message: 'missing or invalid credentials', details: { reason: 'credentials_invalid' } } });
  });

  it('carries the reason in details unless the code says it alone; a list of issues is sent as it is', () => {
    expect(renderRefusal(new Refusal('not_found', 'no such trigger')).body).toEqual({ error: { code: 'NOT_FOUND', message: 'no such trigger' } });
    expect(renderRefusal(new Refusal('in_flight', 'busy key', {})).body.error.details).toEqual({ reason: 'in_flight' });
    expect(renderRefusal(new Refusal('invalid_schema', 'bad', [{ path: 'a' }])).body.error.details).toEqual([{ path: 'a' }]);
  });

  it('is a domain value: its reason fixes its code, status, outcome and retry advice, and it holds no headers or body', () => {
    const refusal = new Refusal('queue_full', 'full', {});
    expect(refusal).toBeInstanceOf(Error);
    expect({ code: refusal.code, status: refusal.status, outcome: refusal.outcome, retryable: refusal.retryable }).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      status: 503,
      outcome: 'unavailable',
      retryable: true,
    });
    expect(refusal).not.toHaveProperty('headers');
    expect(refusal).not.toHaveProperty('body');
  });
});
