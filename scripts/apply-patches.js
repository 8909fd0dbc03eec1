// npm's postinstall: applies patches/ to node_modules with patch-package (a dev dependency).
// A production-only install (npm ci --omit=dev) has no patch-package: it keeps the libraries
// unpatched, which is correct and slower, and says so. The Docker image installs everything,
// so the patches apply, and prunes the dev dependencies after.
const { spawnSync } = require('node:child_process');

let cli;
try {
  cli = require.resolve('patch-package/index.js');
} catch {
  console.warn('apply-patches: patch-package is not installed (a production-only install?): patches/ not applied (kafkajs and ioredis run unpatched, slower); see docs/choices.md');
  process.exit(0);
}
const { status, error } = spawnSync(process.execPath, [cli, '--error-on-fail'], { stdio: 'inherit' });
if (error) throw error;
process.exit(status ?? 1);
