/**
 * deploy/observability/prometheus-rules.yml under promtool's rule tests
 * (prometheus-rules.test.yml): every alert fires on the series meant to raise it, with its
 * rendered summary, and stays quiet on healthy pods and before its `for:`.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';

const DIR = join(__dirname, '..', '..', 'deploy', 'observability');
const rules = parseYaml(readFileSync(join(DIR, 'prometheus-rules.yml'), 'utf8'));
const tests = parseYaml(readFileSync(join(DIR, 'prometheus-rules.test.yml'), 'utf8'));

const alertNames: string[] = rules.groups.flatMap((group: any) => group.rules.map((rule: any) => rule.alert)).filter(Boolean);
const ruleTests: any[] = tests.tests.flatMap((test: any) => test.alert_rule_test ?? []);

function promtool(args: string[]) {
  const run = spawnSync('promtool', args, { cwd: DIR, encoding: 'utf8' });
  if (run.error) {
    throw new Error(`promtool is not installed (${run.error.message}): it ships with Prometheus; apt-get install -y prometheus (Debian/Ubuntu) or brew install prometheus`);
  }
  return run;
}

describe('the alerting rules', () => {
  it('pass promtool\'s rule tests', () => {
    const run = promtool(['test', 'rules', 'prometheus-rules.test.yml']);
    expect(`${run.stdout}${run.stderr}`).toContain('SUCCESS');
    expect(run.status).toBe(0);
  });

  it('are valid rules', () => {
    const run = promtool(['check', 'rules', 'prometheus-rules.yml']);
    expect(run.status).toBe(0);
  });

  it('every alert has a test where it fires and one where it stays quiet', () => {
    expect(alertNames.length).toBeGreaterThanOrEqual(10);
    for (const name of alertNames) {
      const cases = ruleTests.filter((test) => test.alertname === name);
      expect(`${name}: fires ${cases.some((test) => test.exp_alerts.length > 0)}`).toBe(`${name}: fires true`);
      // Quiet: an empty expectation, or a pod among the inputs that is not expected to fire.
      const firingInstances = new Set(cases.flatMap((test) => test.exp_alerts.map((alert: any) => alert.exp_labels.instance)));
      const inputInstances = new Set(
        tests.tests
          .filter((test: any) => (test.alert_rule_test ?? []).some((rule: any) => rule.alertname === name))
          .flatMap((test: any) => test.input_series.map((series: any) => series.series.match(/instance="([^"]+)"/)?.[1])),
      );
      const quiet = cases.some((test) => test.exp_alerts.length === 0) || [...inputInstances].some((instance) => !firingInstances.has(instance));
      expect(`${name}: quiet ${quiet}`).toBe(`${name}: quiet true`);
    }
  });

  it('feed only metrics the rules read (test/http/observability-deploy.test.ts holds those to /metrics)', () => {
    const ruleText = readFileSync(join(DIR, 'prometheus-rules.yml'), 'utf8');
    for (const series of tests.tests.flatMap((test: any) => test.input_series.map((input: any) => input.series as string))) {
      const metric = series.slice(0, series.indexOf('{'));
      expect(`${metric}: ${ruleText.includes(metric)}`).toBe(`${metric}: true`);
    }
  });
});
