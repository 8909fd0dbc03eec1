import { telegramSecretMatches } from '../../src/channels/telegram/secret';

const SECRET = 'Abc_def-0123456789xyz';

describe('telegramSecretMatches', () => {
  it('accepts the exact secret', () => {
    expect(telegramSecretMatches(SECRET, SECRET)).toBe(true);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['another secret', 'Abc_def-0123456789xyZ'],
    ['a prefix of it', SECRET.slice(0, -1)],
    ['it with more after', `${SECRET}x`],
    ['another case', SECRET.toUpperCase()],
    ['surrounded by spaces', ` ${SECRET} `],
  ])('refuses a header that is %s', (_label, presented) => {
    expect(telegramSecretMatches(presented, SECRET)).toBe(false);
  });

  it('never matches when the channel secret is empty', () => {
    expect(telegramSecretMatches('', '')).toBe(false);
    expect(telegramSecretMatches('anything', '')).toBe(false);
  });
});
