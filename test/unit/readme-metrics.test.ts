import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { registerDependencyMetrics } from '../../src/observability/dependencies';
import { CHANNEL_FOREIGN_METRICS } from '../../src/providers/channels';
import { createMetrics } from '../../src/observability/metrics';

/** The metrics table lives in the manual, docs/metrics.md. */
const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'metrics.md'), 'utf8');

/** Rows of the first markdown table after `heading`, as cells without backticks (header row dropped). */
function tableAfter(heading: string): string[][] {
  const start = doc.indexOf(heading);
  if (start < 0) throw new Error(`docs/metrics.md has no "${heading}"`);
  const lines = doc.slice(start).split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const end = lines.findIndex((line, i) => i > first && !line.startsWith('|'));
  return lines.slice(first + 2, end).map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim().replace(/`/g, '')));
}

describe('docs/metrics.md metrics table', () => {
  it('lists exactly the gateway metrics, each with its type, labels and help text', async () => {
    // The metrics of src/observability/metrics.ts, and those the container adds for the dependencies.
    const { registry } = createMetrics(CHANNEL_FOREIGN_METRICS);
    registerDependencyMetrics(registry, []);
    const metrics = (await registry.getMetricsAsJSON()).filter((metric) => metric.name.startsWith('igw_'));
    const expected = metrics.map((metric) => {
      const labels = (registry.getSingleMetric(metric.name) as unknown as { labelNames: string[] }).labelNames;
      return [metric.name, String(metric.type), labels.length > 0 ? labels.join(', ') : '—', metric.help];
    });
    const documented = tableAfter('### Metrics');
    expect(documented.sort((a, b) => a[0].localeCompare(b[0]))).toEqual(expected.sort((a, b) => a[0].localeCompare(b[0])));
    expect(documented.length).toBeGreaterThan(10);
  });
});
