// A brute-force reference for the simulation's node choice: every node examined for every pod, free
// room tracked by hand. The simulation skips nodes through its indexes (best fit: untouchedNodes.ts,
// touchedOrder.ts; least allocated: leastAllocated.ts); the tests compare the two on random clusters.
import type { Node, Pod } from '../../src/core/model/types.ts';
import type { SimulationResult } from '../../src/core/scheduling/types.ts';

export function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export interface Room {
  cpu: number;
  memory: number;
  pods: number;
}

/** Picks the node for a pod among those with room (sorted by name), or undefined. */
export type Choose = (pod: Pod, fits: readonly { node: Node; room: Room }[]) => Node | undefined;

/** Places `moving` (in the given order) off the excluded nodes and off the nodes they are on. */
export function referencePlacement(
  nodes: readonly Node[],
  bound: readonly Pod[],
  excluded: ReadonlySet<string>,
  moving: readonly Pod[],
  choose: Choose,
): Map<string, string | undefined> {
  const free = new Map(nodes.map((n) => [n.name, { cpu: n.allocatable['cpu']!, memory: n.allocatable['memory']!, pods: n.allocatable['pods']! }]));
  const movingUids = new Set(moving.map((p) => p.uid));
  for (const p of bound) {
    if (movingUids.has(p.uid)) continue;
    const room = free.get(p.nodeName!)!;
    room.cpu -= p.requests['cpu']!;
    room.memory -= p.requests['memory']!;
    room.pods -= 1;
  }
  const byName = [...nodes].sort((a, b) => (a.name < b.name ? -1 : 1));
  const out = new Map<string, string | undefined>();
  for (const p of moving) {
    const fits = byName
      .map((node) => ({ node, room: free.get(node.name)! }))
      .filter(({ node, room }) => !excluded.has(node.name) && room.cpu >= p.requests['cpu']! && room.memory >= p.requests['memory']! && room.pods >= 1);
    const chosen = choose(p, fits);
    out.set(p.uid, chosen?.name);
    if (!chosen) break;
    const room = free.get(chosen.name)!;
    room.cpu -= p.requests['cpu']!;
    room.memory -= p.requests['memory']!;
    room.pods -= 1;
  }
  return out;
}

/** Where a simulation put each pod (undefined: nowhere). */
export function placedBy(result: SimulationResult): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>(result.placements.map((p) => [p.pod.uid, p.nodeName]));
  for (const u of result.unschedulable) out.set(u.pod.uid, undefined);
  return out;
}
