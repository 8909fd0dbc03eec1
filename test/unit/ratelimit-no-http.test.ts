/**
 * The rate limiter says what a charge comes to (a plain value); src/http/rate-limit-headers.ts
 * writes the X-RateLimit-* headers. Nothing under src/ratelimit/ takes an express request or
 * response (issue 35: HTTP stays above the domain).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const RATELIMIT = join(__dirname, '..', '..', 'src', 'ratelimit');

it('no module of src/ratelimit/ imports express or sets a header', () => {
  const found = readdirSync(RATELIMIT)
    .filter((name) => name.endsWith('.ts'))
    .flatMap((name) => {
      const source = readFileSync(join(RATELIMIT, name), 'utf8');
      return [/from 'express'/, /\bsetHeader\(/, /['"`]X-RateLimit-/i].filter((pattern) => pattern.test(source)).map((pattern) => `${name}: ${pattern.source}`);
    });
  expect(found).toEqual([]);
});
