import type { Cluster } from 'ioredis';

const SLOTS = 16384;

/** A master of the cluster as the client's slot table knows it, and the slots it serves. */
interface Master {
  key: string;
  slots: number[];
}

export interface ClusterHealth {
  /** Masters that did not answer PING, with why (no password: the caller redacts). */
  unreachable: Array<{ master: string; error: string }>;
  /** The slots no reachable master serves, as ranges: `0-5460,10923-16383`; empty when none. */
  unreachableSlots: string;
}

/**
 * PINGs every master of the client's slot table, each on its own connection. A plain PING on a
 * cluster goes to one random node, so with one master dead it still answered "up" while writes
 * to that master's slots failed with CLUSTERDOWN. A slot that no master claims is unreachable
 * too.
 */
export async function checkEveryMaster(cluster: Cluster): Promise<ClusterHealth> {
  const masters = mastersOfSlots(cluster.slots);
  const connections = new Map(cluster.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]));
  const unreachable: ClusterHealth['unreachable'] = [];
  const lost: number[] = unclaimedSlots(cluster.slots);
  await Promise.all(
    masters.map(async ({ key, slots }) => {
      const node = connections.get(key);
      try {
        if (!node) throw new Error('no connection (lost)');
        await node.ping();
      } catch (error) {
        unreachable.push({ master: key, error: error instanceof Error ? error.message : String(error) });
        lost.push(...slots);
      }
    }),
  );
  unreachable.sort((a, b) => a.master.localeCompare(b.master));
  return { unreachable, unreachableSlots: slotRanges(lost) };
}

function mastersOfSlots(table: string[][]): Master[] {
  const masters = new Map<string, number[]>();
  for (let slot = 0; slot < SLOTS; slot++) {
    const key = table[slot]?.[0];
    if (key === undefined) continue;
    const slots = masters.get(key) ?? [];
    slots.push(slot);
    masters.set(key, slots);
  }
  return [...masters].map(([key, slots]) => ({ key, slots }));
}

function unclaimedSlots(table: string[][]): number[] {
  const unclaimed: number[] = [];
  for (let slot = 0; slot < SLOTS; slot++) if (table[slot]?.[0] === undefined) unclaimed.push(slot);
  return unclaimed;
}

/** [0, 1, 2, 7] → `0-2,7`. */
export function slotRanges(slots: number[]): string {
  const sorted = [...new Set(slots)].sort((a, b) => a - b);
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const start = sorted[i];
    while (i + 1 < sorted.length && sorted[i + 1] === sorted[i] + 1) i++;
    ranges.push(start === sorted[i] ? String(start) : `${start}-${sorted[i]}`);
  }
  return ranges.join(',');
}
