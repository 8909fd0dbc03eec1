// Copies the providers' kinds files (src/providers/kinds/*.json, read at start-up by
// src/providers/kinds-files.ts) beside the compiled module: tsc copies only JSON it sees imported.
//
//   node scripts/copy-kinds.js <the build's providers folder, e.g. dist/providers>
const { cpSync } = require('node:fs');
const { join } = require('node:path');

const target = process.argv[2];
if (!target) throw new Error('usage: node scripts/copy-kinds.js <build>/providers');
cpSync(join(__dirname, '..', 'src', 'providers', 'kinds'), join(target, 'kinds'), { recursive: true });
