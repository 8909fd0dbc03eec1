/**
 * docs/openapi.json under Redocly's `recommended` ruleset (@redocly/openapi-core, offline):
 * no error, no warning. scripts/lint-openapi.mjs runs the linter in a child process, since
 * @redocly/openapi-core is an ES module.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openApiDocument } from '../../src/routes/openapi-document';
import { tempDir } from '../helpers/tmp';

const root = join(__dirname, '..', '..');

interface LintResult {
  errors: number;
  warnings: number;
  problems: Array<{ ruleId: string; severity: string; message: string; pointer?: string }>;
}

async function lint(file: string): Promise<LintResult> {
  const run = await promisify(execFile)(process.execPath, [join(root, 'scripts', 'lint-openapi.mjs'), file], { cwd: root }).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
  );
  return JSON.parse(run.stdout) as LintResult;
}

describe("Redocly's recommended ruleset", () => {
  const tmp = tempDir('igw-openapi-lint-');
  afterAll(() => tmp.cleanup());

  it('finds no error and no warning in docs/openapi.json', async () => {
    const result = await lint(join(root, 'docs', 'openapi.json'));
    expect(result.problems).toEqual([]);
    expect([result.errors, result.warnings]).toEqual([0, 0]);
  });

  it('does flag an operation without security and one without a 4xx (the linter is not a no-op)', async () => {
    const broken = openApiDocument() as any;
    delete broken.paths['/healthz'].get.security;
    const metricsResponses = broken.paths['/metrics'].get.responses;
    for (const status of Object.keys(metricsResponses)) if (status.startsWith('4')) delete metricsResponses[status];
    const file = join(tmp.dir, 'broken.json');
    writeFileSync(file, JSON.stringify(broken));
    const result = await lint(file);
    expect(result.problems.map((p) => `${p.ruleId} ${p.pointer}`).sort()).toEqual([
      'operation-4xx-response #/paths/~1metrics/get/responses',
      'security-defined #/paths/~1healthz/get',
    ]);
  });
});
