// Memory per idle keep-alive connection: RSS with 2000 connections open (each has been
// answered once and stays open) minus RSS before they were opened.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NodeBinary } from './node-binaries';
import { startServer } from './processes';
import type { Target } from './targets';

const CONNECTIONS = 2000;

export interface IdleRow {
  node: string;
  target: string;
  beforeMiB: number;
  withConnectionsMiB: number;
  kibPerConnection: number;
}

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
}

/** Opens a connection, sends one request and resolves once the whole answer's head has come back. */
function answeredConnection(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n'));
    let seen = '';
    socket.on('data', (chunk) => {
      seen += chunk.toString('latin1');
      if (seen.includes('\r\n\r\n')) resolve(socket);
    });
    socket.on('error', reject);
  });
}

export async function idleConnectionRows(node: NodeBinary, targets: Target[]): Promise<IdleRow[]> {
  const rows: IdleRow[] = [];
  for (const target of targets) {
    const server = await startServer(node.path, target.script, target.env());
    const sockets: Socket[] = [];
    try {
      (await answeredConnection(server.port)).destroy();
      await sleep(500); // let start-up garbage be collected before the baseline is read
      const before = rssKiB(server.child.pid!);
      for (let i = 0; i < CONNECTIONS; i += 100) {
        sockets.push(...(await Promise.all(Array.from({ length: 100 }, () => answeredConnection(server.port)))));
      }
      await sleep(500);
      const after = rssKiB(server.child.pid!);
      rows.push({
        node: node.label,
        target: target.name,
        beforeMiB: Math.round(before / 1024),
        withConnectionsMiB: Math.round(after / 1024),
        kibPerConnection: Math.round(((after - before) / CONNECTIONS) * 10) / 10,
      });
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.stop();
    }
  }
  return rows;
}

export function idleConnectionTable(rows: IdleRow[]): string {
  return [
    `| node | target | RSS before MiB | RSS with ${CONNECTIONS} idle connections MiB | KiB per connection |`,
    '|---|---|---:|---:|---:|',
    ...rows.map((r) => `| ${r.node} | ${r.target} | ${r.beforeMiB} | ${r.withConnectionsMiB} | ${r.kibPerConnection} |`),
  ].join('\n');
}
