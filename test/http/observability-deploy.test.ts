/**
 * deploy/observability (the Grafana dashboard and the Prometheus alerting rules) against the
 * /metrics of a running gateway (the real container in embedded mode, in-process): every
 * metric they query exists, every label they filter or group by is one the metric has, and
 * every reason, outcome and route value they match is one the gateway writes. promtool is
 * not available, so the PromQL is read with regular expressions.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request as httpRequest, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import { createAdminApp, createApp } from '../../src/app';
import { configSchema } from '../../src/config/schema';
import { createContainer, type Container } from '../../src/container';
import { Refusal } from '../../src/outcomes/refusal';
import { REASONS, SUCCESS_OUTCOMES, type Reason } from '../../src/outcomes/reasons';
import { createLogger } from '../../src/observability/logger';
import { createMetrics } from '../../src/observability/metrics';
import { TOPIC_STATES } from '../../src/publish/sink';
import { toStoredTrigger } from '../../src/registry/records';
import { tempDir } from '../helpers/tmp';

const DEPLOY = join(__dirname, '..', '..', 'deploy', 'observability');
const dashboard = JSON.parse(readFileSync(join(DEPLOY, 'grafana-dashboard.json'), 'utf8'));
const rules = parseYaml(readFileSync(join(DEPLOY, 'prometheus-rules.yml'), 'utf8'));

/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = ['instance', 'job'];
const METRIC_NAME = /\b(?:igw|process|nodejs)_[a-z0-9_]+\b/g;
const SELECTOR = /\b((?:igw|process|nodejs)_[a-z0-9_]+)\{([^}]*)\}/g;
const MATCHER = /([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"/g;
const GROUPING = /\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g;

interface Query {
  where: string;
  expr: string;
}

function dashboardQueries(): Query[] {
  const queries: Query[] = [];
  for (const panel of dashboard.panels) {
    for (const target of panel.targets ?? []) queries.push({ where: `panel "${panel.title}" ${target.refId}`, expr: target.expr });
  }
  for (const variable of dashboard.templating.list) {
    if (variable.type === 'query') queries.push({ where: `variable ${variable.name}`, expr: variable.definition });
  }
  return queries;
}

function ruleQueries(): Query[] {
  return rules.groups.flatMap((group: any) => group.rules.map((rule: any) => ({ where: `alert ${rule.alert}`, expr: rule.expr })));
}

/** `# TYPE name type` of a Prometheus text exposition. */
function metricTypes(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
}

/** A histogram's _bucket/_sum/_count series belong to the histogram. */
function family(name: string, types: Map<string, string>): string {
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return base !== name && types.get(base) === 'histogram' ? base : name;
}

const KNOWN_OUTCOMES = new Set<string>([
  ...Object.keys(SUCCESS_OUTCOMES),
  ...(Object.keys(REASONS) as Reason[]).map((reason) => new Refusal(reason, '').outcome),
  'error',
]);

describe('deploy/observability against /metrics of a running gateway', () => {
  let container: Container;
  /** The public listener (ingress routes) and the admin listener (/metrics), as main.ts runs them. */
  let server: Server;
  let adminServer: Server;
  let url: string;
  let adminUrl: string;
  let exposition: string;
  let types: Map<string, string>;
  const tmp = tempDir('igw-observability-');
  const config = configSchema.parse({ EVENTS_DIR: tmp.dir, PUBLISH_QUEUE_MAX: '1234', MAX_INFLIGHT_BODY_BYTES: '65536' });

  beforeAll(async () => {
    container = createContainer(config, createLogger('silent'));
    await container.start();
    await container.deps.registry.triggers.put('observed', toStoredTrigger({ workflowId: 'wf', workspaceId: 'ws', deployed: true }));
    server = createServer(createApp(container.deps)).listen(0, '127.0.0.1');
    adminServer = createServer(createAdminApp(container.deps)).listen(0, '127.0.0.1');
    await Promise.all([once(server, 'listening'), once(adminServer, 'listening')]);
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    adminUrl = `http://127.0.0.1:${(adminServer.address() as AddressInfo).port}`;
    // One request per ingress route, so that their route labels appear in /metrics.
    expect((await request(url).post('/api/webhooks/trigger/observed').send({ a: 1 })).status).toBe(200);
    for (const path of ['/api/channels/whatsapp/x', '/api/channels/twilio/x', '/api/channels/telegram/x']) await request(url).post(path).send('{}');
    // The admin listener's own routes, so that their route labels appear too.
    expect((await request(adminUrl).get('/readyz')).status).toBe(200);
    expect((await request(adminUrl).get('/openapi.json')).status).toBe(200);
    await request(adminUrl).get('/metrics');
    exposition = (await request(adminUrl).get('/metrics')).text;
    types = metricTypes(exposition);
  });

  afterAll(async () => {
    server?.close();
    adminServer?.close();
    await container?.close();
    tmp.cleanup();
  });

  it('the dashboard and the rules query something (the checks below are not vacuous)', () => {
    expect(dashboardQueries().length).toBeGreaterThan(20);
    expect(ruleQueries().length).toBeGreaterThanOrEqual(6);
    expect(types.size).toBeGreaterThan(20);
  });

  it.each([
    ['the dashboard', dashboardQueries],
    ['the alerting rules', ruleQueries],
  ])('every metric %s queries exists in /metrics', (_name, queries) => {
    const missing: string[] = [];
    for (const { where, expr } of queries()) {
      for (const [name] of expr.matchAll(METRIC_NAME)) {
        if (!types.has(family(name, types))) missing.push(`${where}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });


  it('the dashboard shows refusals by reason and by route, from igw_http_requests_total', () => {
    const refusals = dashboardQueries().filter(({ expr }) => /igw_http_requests_total\{[^}]*status=~"4\.\.\|5\.\."/.test(expr));
    const groupings = refusals.map(({ expr }) => [...expr.matchAll(GROUPING)].map(([, list]) => list.replace(/\s/g, '')).join());
    expect(groupings).toEqual(expect.arrayContaining(['reason', 'route,reason']));
  });

  it.each([
    ['the dashboard', dashboardQueries],
    ['the alerting rules', ruleQueries],
  ])('every label %s matches or groups by belongs to the metrics of the query, with values the gateway writes', (_name, queries) => {
    const problems: string[] = [];
    const routes = new Set([...exposition.matchAll(/route="([^"]+)"/g)].map((m) => m[1]));
    for (const { where, expr } of queries()) {
      const labelsOfQuery = new Set(TARGET_LABELS);
      for (const [name] of expr.matchAll(METRIC_NAME)) {
        const base = family(name, types);
        const metric = container.deps.metrics.registry.getSingleMetric(base) as { labelNames?: string[] } | undefined;
        for (const label of metric?.labelNames ?? []) labelsOfQuery.add(label);
        if (name.endsWith('_bucket')) labelsOfQuery.add('le');
      }
      for (const [, name, matchers] of expr.matchAll(SELECTOR)) {
        const metric = container.deps.metrics.registry.getSingleMetric(family(name, types)) as { labelNames?: string[] } | undefined;
        const own = new Set([...(metric?.labelNames ?? []), ...TARGET_LABELS, ...(name.endsWith('_bucket') ? ['le'] : [])]);
        for (const [, label, op, value] of matchers.matchAll(MATCHER)) {
          if (!own.has(label)) problems.push(`${where}: ${name} has no label ${label}`);
          if (op.startsWith('!') || value.startsWith('$')) continue;
          const values = value.split('|');
          if (label === 'reason') problems.push(...values.filter((v) => !(v in REASONS) && !(v in SUCCESS_OUTCOMES)).map((v) => `${where}: no reason ${v}`));
          if (label === 'outcome') problems.push(...values.filter((v) => !KNOWN_OUTCOMES.has(v)).map((v) => `${where}: no outcome ${v}`));
          if (label === 'route') problems.push(...values.filter((v) => !routes.has(v)).map((v) => `${where}: no route ${v}`));
          if (label === 'state') problems.push(...values.filter((v) => !(TOPIC_STATES as readonly string[]).includes(v)).map((v) => `${where}: no topic state ${v}`));
        }
      }
      for (const [, list] of expr.matchAll(GROUPING)) {
        for (const label of list.split(',').map((l) => l.trim()).filter(Boolean)) {
          if (!labelsOfQuery.has(label)) problems.push(`${where}: groups by ${label}, a label of none of its metrics`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('the dashboard is well formed: unique panel ids, every query on the data source variable, a 24-column grid', () => {
    const ids = dashboard.panels.map((p: any) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels.filter((p: any) => p.type !== 'row')) {
      expect(panel.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(panel.gridPos.x + panel.gridPos.w).toBeLessThanOrEqual(24);
      const refIds = panel.targets.map((t: any) => t.refId);
      expect(new Set(refIds).size).toBe(refIds.length);
    }
  });

  it('every rule is a complete alert: name, expression, duration, severity and summary', () => {
    for (const rule of rules.groups.flatMap((group: any) => group.rules)) {
      expect(rule).toMatchObject({
        alert: expect.stringMatching(/^Igw[A-Za-z0-9]+$/),
        expr: expect.any(String),
        for: expect.stringMatching(/^\d+[smh]$/),
        labels: { severity: expect.stringMatching(/^(page|warning)$/) },
        annotations: { summary: expect.any(String) },
      });
    }
  });

  it('the bounds the gauges report are the configured ones', () => {
    expect(exposition).toMatch(/^igw_publish_queue_max_records 1234$/m);
    expect(exposition).toMatch(/^igw_body_budget_bytes_max 65536$/m);
    expect(exposition).toMatch(/^igw_publish_queue_records 0$/m);
  });

  it('igw_body_budget_bytes_in_use shows a body being read, and 0 once it is answered', async () => {
    const inUse = async () => Number(/^igw_body_budget_bytes_in_use (\S+)$/m.exec((await request(adminUrl).get('/metrics')).text)![1]);
    const { port } = server.address() as AddressInfo;
    const req = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/api/webhooks/trigger/observed', headers: { 'content-type': 'text/plain', 'content-length': 5000 } });
    const answered = new Promise<number>((resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
    });
    req.write('a'.repeat(3000));
    for (let i = 0; (await inUse()) < 3000; i++) {
      if (i > 500) throw new Error('the held body never showed in igw_body_budget_bytes_in_use');
      await new Promise((resolve) => setImmediate(resolve));
    }
    req.end('b'.repeat(2000));
    expect(await answered).toBe(200);
    for (let i = 0; (await inUse()) !== 0; i++) {
      if (i > 500) throw new Error('igw_body_budget_bytes_in_use did not return to 0');
      await new Promise((resolve) => setImmediate(resolve));
    }
  });
});

describe('igw_publish_queue_records', () => {
  it('reads the queue at each scrape', async () => {
    const metrics = createMetrics();
    let queued = 3;
    metrics.watch({ queuedRecords: () => queued, queueMaxRecords: 10, bodyBytesInUse: () => 0, bodyBytesMax: 1 });
    expect(await metrics.registry.metrics()).toMatch(/^igw_publish_queue_records 3$/m);
    queued = 7;
    expect(await metrics.registry.metrics()).toMatch(/^igw_publish_queue_records 7$/m);
  });
});
