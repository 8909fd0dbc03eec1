import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema } from '../../src/config/schema';
import { ERROR_CATALOGUE } from '../../src/outcomes/codes';
import { REASONS, type ReasonEntry } from '../../src/outcomes/reasons';

const read = (...path: string[]) => readFileSync(join(__dirname, '..', '..', ...path), 'utf8');
const readme = read('README.md');
/** The manual's tables: settings in docs/settings.md, error codes and reasons in docs/errors.md. */
const settingsDoc = read('docs', 'settings.md');
const errorsDoc = read('docs', 'errors.md');

/** Rows of the first markdown table after `heading` in `doc`, as cells without backticks (header row dropped). */
function tableAfter(doc: string, heading: string): string[][] {
  const lines = doc.slice(doc.indexOf(heading)).split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const end = lines.findIndex((line, i) => i > first && !line.startsWith('|'));
  return lines
    .slice(first + 2, end)
    .map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim().replace(/`/g, '')));
}

describe('README and the manual (docs/)', () => {
  it('lists exactly the error catalogue, with its statuses and retry advice', () => {
    const rows = tableAfter(errorsDoc, '## Error codes');
    const documented = Object.fromEntries(rows.map(([code, status, retry]) => [code, { status: Number(status), retryable: retry === 'yes' }]));
    expect(documented).toEqual(ERROR_CATALOGUE);
  });

  it('lists exactly the reason catalogue, each with its code, status, retry advice, Retry-After and explanation', () => {
    const rows = tableAfter(errorsDoc, '### Reasons');
    const documented = Object.fromEntries(
      rows.map(([reason, code, status, retry, retryAfter, explain]) => [reason, { code, status, retry, retryAfter, explain }]),
    );
    const expected = Object.fromEntries(
      Object.entries(REASONS as Record<string, ReasonEntry>).map(([reason, { code, explain, retryAfter }]) => [
        reason,
        {
          code,
          status: String(ERROR_CATALOGUE[code].status),
          retry: ERROR_CATALOGUE[code].retryable ? 'yes' : 'no',
          retryAfter: retryAfter === undefined ? '-' : String(retryAfter),
          explain,
        },
      ]),
    );
    expect(documented).toEqual(expected);
  });

  it('lists every setting with its default', () => {
    const rows = tableAfter(settingsDoc, '## Settings');
    const documented = new Map(rows.map(([name, defaultValue]) => [name, defaultValue]));
    const defaults = configSchema.parse({});
    for (const name of Object.keys(configSchema.shape)) {
      expect(documented.has(name)).toBe(true);
      const value = (defaults as Record<string, unknown>)[name] as { limit: number; windowSeconds: number } | string | undefined;
      const expected =
        value === undefined ? 'unset' : typeof value === 'object' ? `${value.limit}/${value.windowSeconds}` : String(value);
      expect(`${name}=${documented.get(name)}`).toBe(`${name}=${expected}`);
    }
    expect(documented.size).toBe(Object.keys(configSchema.shape).length);
  });

  it('names the two newcomer commands', () => {
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toContain('npm ci && npm test');
  });
});
