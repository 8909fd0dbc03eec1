/**
 * Without an OTLP endpoint the OpenTelemetry SDK is never loaded: a process that builds the
 * container and the app and serves a webhook has no module of the SDK (sdk-trace, exporter,
 * resources, core…) in its require cache. The same process with an endpoint set has them (so the check can fail).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/tmp';

const ROOT = join(__dirname, '..', '..');

const SCRIPT = `
const { once } = require('node:events');
const { createServer } = require('node:http');
const dist = (name) => require(require('node:path').join(process.cwd(), 'dist', name));
const { configSchema } = dist('config/schema.js');
const { createContainer } = dist('container.js');
const { createApp } = dist('app.js');
const { createLogger } = dist('observability/logger.js');
const { toStoredTrigger } = dist('registry/records.js');
(async () => {
  const config = configSchema.parse(JSON.parse(process.env.TEST_CONFIG));
  const container = createContainer(config, createLogger('silent'));
  await container.start();
  await container.deps.registry.triggers.put('lazy', toStoredTrigger({ workflowId: 'wf', workspaceId: 'ws', deployed: true }));
  const server = createServer(createApp(container.deps)).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const res = await fetch('http://127.0.0.1:' + server.address().port + '/api/webhooks/trigger/lazy', {
    method: 'POST', headers: { 'content-type': 'application/json', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, body: '{}',
  });
  // @opentelemetry/api itself is prom-client's dependency (exemplars) and always loaded; the SDK is ours.
  const loaded = Object.keys(require.cache).filter(
    (file) => file.includes('/node_modules/@opentelemetry/') && !file.includes('/node_modules/@opentelemetry/api/'),
  );
  server.close();
  await container.close();
  // Exit like main.ts does: an exporter still retrying must not keep the process up.
  process.stdout.write(JSON.stringify({ status: res.status, loaded: loaded.length }), () => process.exit(0));
})();
`;

function run(config: Record<string, string>): { status: number; loaded: number } {
  if (!existsSync(join(ROOT, 'dist', 'container.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does it first)');
  const tmp = tempDir('igw-lazy-');
  try {
    const child = spawnSync(process.execPath, ['-e', SCRIPT], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', TEST_CONFIG: JSON.stringify({ EVENTS_DIR: tmp.dir, ...config }) },
      encoding: 'utf8',
      timeout: 20_000,
    });
    if (child.status !== 0) throw new Error(`the script failed (${child.status}):\n${child.stdout}\n${child.stderr}`);
    return JSON.parse(child.stdout);
  } finally {
    tmp.cleanup();
  }
}

describe('the OpenTelemetry SDK is loaded only with an OTLP endpoint', () => {
  it('is not loaded when OTEL_EXPORTER_OTLP_ENDPOINT is unset, though the event is published', () => {
    expect(run({})).toEqual({ status: 200, loaded: 0 });
  });

  it('is loaded when it is set', () => {
    // Nothing listens there: spans are dropped at shutdown with a warning, the request is unaffected.
    const result = run({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(result.status).toBe(200);
    expect(result.loaded).toBeGreaterThan(10);
  });
});
