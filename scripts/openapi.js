#!/usr/bin/env node
// Writes docs/openapi.json from the built gateway (npm run openapi builds first). The
// document is generated from the zod schemas that validate requests: run this after any
// change to them, and commit the result (test/unit/openapi-document.test.ts fails until then).
'use strict';
const { mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const { openApiDocumentText } = require(join(root, 'dist', 'routes', 'openapi-document.js'));
mkdirSync(join(root, 'docs'), { recursive: true });
writeFileSync(join(root, 'docs', 'openapi.json'), openApiDocumentText());
process.stdout.write('wrote docs/openapi.json\n');
