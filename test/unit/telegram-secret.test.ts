import { telegram } from '../../src/providers/telegram';
import { check } from './providers/support';

const SECRET = 'Abc_def-0123456789xyz';

/** The Telegram sender's check, as both the trigger preset and the channel route run it. */
const matches = (presented: string | undefined, secret: string) =>
  check(telegram, {
    raw: '{}',
    headers: presented === undefined ? {} : { 'x-telegram-bot-api-secret-token': presented },
    secrets: [secret],
  }).ok;

describe('the Telegram secret-token check', () => {
  it('accepts the exact secret', () => {
    expect(matches(SECRET, SECRET)).toBe(true);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['another secret', 'Abc_def-0123456789xyZ'],
    ['a prefix of it', SECRET.slice(0, -1)],
    ['it with more after', `${SECRET}x`],
    ['another case', SECRET.toUpperCase()],
    // HTTP strips the spaces around a header value before the gateway sees it; inside, they count.
    ['with a space inside', `${SECRET.slice(0, 4)} ${SECRET.slice(4)}`],
  ])('refuses a header that is %s', (_label, presented) => {
    expect(matches(presented, SECRET)).toBe(false);
  });

  it('never matches when the channel secret is empty', () => {
    expect(matches('', '')).toBe(false);
    expect(matches('anything', '')).toBe(false);
  });
});
