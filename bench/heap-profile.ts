// A V8 sampling heap profile summed as bench/cpu-profile.ts sums time: bytes allocated by
// category (Node's modules, each package, the gateway's code) and by the allocating function.
import type { HeapProfiler } from 'node:inspector';
import { category } from './cpu-profile';

export interface HeapSummary {
  totalBytes: number;
  categories: [string, number][];
  functions: [string, number][];
}

export function summariseHeap(profile: HeapProfiler.SamplingHeapProfile): HeapSummary {
  const categories = new Map<string, number>();
  const functions = new Map<string, number>();
  let totalBytes = 0;
  // A native allocation (a Buffer's store, a string built by JSON.stringify) counts for its nearest JavaScript caller.
  const walk = (node: HeapProfiler.SamplingHeapProfileNode, inherited: string | undefined) => {
    const own = category(node.callFrame) ?? inherited;
    if (node.selfSize > 0) {
      totalBytes += node.selfSize;
      const key = own ?? 'native, no JavaScript caller';
      categories.set(key, (categories.get(key) ?? 0) + node.selfSize);
      const frame = node.callFrame;
      const name = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`;
      functions.set(name, (functions.get(name) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, own);
  };
  walk(profile.head, undefined);
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  return { totalBytes, categories: sorted(categories), functions: sorted(functions) };
}
