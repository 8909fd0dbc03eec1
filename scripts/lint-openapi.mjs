#!/usr/bin/env node
// Lints an OpenAPI document (default docs/openapi.json) with Redocly's `recommended` ruleset,
// offline. Prints one JSON line: { errors, warnings, problems: [{ ruleId, severity, message, pointer }] }.
// Exits 1 when there is any error or warning. test/unit/openapi-lint.test.ts runs it.
// A script of its own because @redocly/openapi-core is an ES module, which jest (CommonJS here) cannot load.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';

const file = resolve(process.argv[2] ?? 'docs/openapi.json');
const config = await createConfig({ extends: ['recommended'] });
const problems = await lintFromString({ source: readFileSync(file, 'utf8'), absoluteRef: file, config });
const summary = problems.map((p) => ({
  ruleId: p.ruleId,
  severity: p.severity,
  message: p.message,
  pointer: p.location?.[0]?.pointer,
}));
const count = (severity) => summary.filter((p) => p.severity === severity).length;
process.stdout.write(`${JSON.stringify({ errors: count('error'), warnings: count('warn'), problems: summary })}\n`);
process.exitCode = summary.some((p) => p.severity === 'error' || p.severity === 'warn') ? 1 : 0;
