#!/usr/bin/env node
// Starts the built gateway in embedded mode (no Redis, no Kafka) with the example triggers
// and prints curl lines that work against it. Ctrl-C stops it.
'use strict';
const { spawn } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');
const port = process.env.PORT || '8080';
const adminPort = process.env.ADMIN_PORT || '8081';
const eventsDir = process.env.EVENTS_DIR || join(root, 'data', 'events');
const adminToken = process.env.ADMIN_TOKEN || 'demo-admin-token';

const child = spawn(process.execPath, [join(root, 'dist', 'main.js')], {
  env: { ...process.env, PORT: port, ADMIN_PORT: adminPort, EVENTS_DIR: eventsDir, ADMIN_TOKEN: adminToken, TRIGGERS_FILE: join(root, 'examples', 'triggers.json') },
  stdio: ['ignore', 'pipe', 'inherit'],
});

let shown = false;
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  if (!shown && String(chunk).includes('"msg":"listening"')) {
    shown = true;
    const base = `http://localhost:${port}`;
    const adminBase = `http://localhost:${adminPort}`;
    process.stdout.write(`
Gateway ready in embedded mode. Events go to ${eventsDir}/workflow.triggers.ndjson

Send an event (run it twice: the second answer is replayed with Idempotent-Replayed: true, nothing is published again):
  curl -i -X POST ${base}/api/webhooks/trigger/demo -H 'Authorization: Bearer demo-token' -H 'Content-Type: application/json' -H 'Idempotency-Key: order-1' -d '{"event":"order.created","id":"order-1","amount":"12.50"}'

Upload a file, then read the trigger back through the admin API (its own port, ${adminPort}):
  curl -i -X POST ${base}/api/webhooks/trigger/demo -H 'Authorization: Bearer demo-token' -F 'attachments[]=@package.json' -F amount=3
  curl -s ${adminBase}/admin/triggers/demo -H 'Authorization: Bearer ${adminToken}'

Metrics: curl -s ${adminBase}/metrics

`);
  }
});

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill('SIGTERM'));
child.on('exit', (code) => process.exit(code ?? 0));
