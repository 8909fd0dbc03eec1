// A V8 CPU profile summed by where the time goes: Node's own modules, each package, the
// gateway's code, GC, idle. Native frames count for the nearest JavaScript caller (a socket
// write is Node's, a JSON.stringify is its caller's).
import type { Profiler } from 'node:inspector';

const EXPRESS = new Set(['express', 'router', 'body-parser', 'finalhandler', 'send', 'forwarded', 'proxy-addr', 'qs', 'raw-body', 'type-is', 'content-type', 'on-finished', 'parseurl', 'path-to-regexp', 'iconv-lite', 'media-typer', 'mime-types', 'accepts', 'negotiator', 'etag', 'debug']);
const IOREDIS = ['ioredis', '@ioredis/', 'redis-parser', 'denque', 'cluster-key-slot', 'standard-as-callback'];
const PINO = ['pino', 'sonic-boom', '@pinojs/', 'fast-redact', 'quick-format-unescaped', 'thread-stream', 'on-exit-leak-free'];

export interface ProfileSummary {
  /** Profiled wall time, µs. */
  totalUs: number;
  /** µs per category, most first. */
  categories: [string, number][];
  /** µs of self time per function, most first. */
  functions: [string, number][];
  /** µs of samples with a frame whose script URL contains the key somewhere on their stack (each sample counted once). */
  inclusive: [string, number][];
}

export function category(frame: Profiler.ProfileNode['callFrame']): string | undefined {
  const { url, functionName } = frame;
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'garbage collector';
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1];
  if (pkg) {
    if (EXPRESS.has(pkg)) return 'express and its dependencies';
    if (IOREDIS.some((name) => pkg.startsWith(name))) return 'ioredis';
    if (PINO.some((name) => pkg.startsWith(name))) return 'pino';
    return pkg;
  }
  if (url.includes('/dist/') || url.includes('/dist-bench/')) return 'own code';
  if (url.startsWith('node:internal/crypto')) return 'node: crypto';
  if (url.startsWith('node:')) return 'node: http, net, streams, timers…';
  return undefined;
}

export function summarise(profile: Profiler.Profile, inclusiveOf: string[] = []): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  const deltas = profile.timeDeltas ?? [];
  profile.samples?.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + deltas[i]));

  const inclusive = new Map<string, number>(inclusiveOf.map((part) => [part, 0]));
  const categories = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    let at: number | undefined = id;
    let found: string | undefined;
    while (at !== undefined && (found = category(byId.get(at)!.callFrame)) === undefined) at = parent.get(at);
    const key = found ?? 'native, no JavaScript caller';
    categories.set(key, (categories.get(key) ?? 0) + us);
    for (const part of inclusiveOf) {
      for (let up: number | undefined = id; up !== undefined; up = parent.get(up)) {
        if (byId.get(up)!.callFrame.url.includes(part)) {
          inclusive.set(part, inclusive.get(part)! + us);
          break;
        }
      }
    }
  }
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  return { totalUs: profile.endTime - profile.startTime, categories: sorted(categories), functions: sorted(functions), inclusive: [...inclusive] };
}
