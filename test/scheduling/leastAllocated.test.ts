// kube-scheduler's placement (least allocated) against a brute-force reference: the simulation keeps
// nodes of one shape in score order and looks at the first feasible node of each shape only
// (leastAllocated.ts); each pod must still land where examining every node would put it.
import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/core/model/types.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import { cluster, Gi, m5Catalog, Mi, node, nodePool, pod } from '../builders.ts';

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const SHAPES = [
  { cpu: 1930, memory: 7 * Gi, pods: 5 },
  { cpu: 3920, memory: 15 * Gi, pods: 9 },
  { cpu: 3920, memory: 30 * Gi, pods: 7 },
  { cpu: 7910, memory: 30 * Gi, pods: 12 },
];

function reference(nodes: readonly Node[], bound: readonly Pod[], excluded: ReadonlySet<string>, moving: readonly Pod[]): Map<string, string | undefined> {
  const free = new Map(nodes.map((n) => [n.name, { cpu: n.allocatable['cpu']!, memory: n.allocatable['memory']!, pods: n.allocatable['pods']! }]));
  const movingUids = new Set(moving.map((p) => p.uid));
  for (const p of bound) {
    if (movingUids.has(p.uid)) continue;
    const f = free.get(p.nodeName!)!;
    f.cpu -= p.requests['cpu']!;
    f.memory -= p.requests['memory']!;
    f.pods -= 1;
  }
  const out = new Map<string, string | undefined>();
  for (const p of moving) {
    let best: string | undefined;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (const n of [...nodes].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const f = free.get(n.name)!;
      if (excluded.has(n.name) || f.cpu < p.requests['cpu']! || f.memory < p.requests['memory']! || f.pods < 1) continue;
      const score = ((f.cpu - p.requests['cpu']!) / n.allocatable['cpu']! + (f.memory - p.requests['memory']!) / n.allocatable['memory']!) / 2;
      if (score > bestScore) {
        best = n.name;
        bestScore = score;
      }
    }
    out.set(p.uid, best);
    if (best === undefined) break;
    const f = free.get(best)!;
    f.cpu -= p.requests['cpu']!;
    f.memory -= p.requests['memory']!;
    f.pods -= 1;
  }
  return out;
}

describe('least-allocated placement matches examining every node', () => {
  it.each(Array.from({ length: 12 }, (_, k) => ({ seed: k + 1 })))('random cluster, seed $seed', ({ seed }) => {
    const rand = random(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    const nodes = Array.from({ length: 36 }, (_, i) => node({ name: `n${String(i).padStart(2, '0')}`, allocatable: { ...pick(SHAPES) } }));
    const bound: Pod[] = [];
    for (const n of nodes) {
      const count = Math.floor(rand() * n.allocatable['pods']!);
      for (let k = 0; k < count; k++) {
        bound.push({ ...pod({ requests: { cpu: pick([50, 100, 250, 500]), memory: pick([64, 256, 1024]) * Mi } }), nodeName: n.name });
      }
    }
    const excluded = new Set(nodes.filter(() => rand() < 0.3).map((n) => n.name));
    const moving = bound.filter((p) => excluded.has(p.nodeName!) || rand() < 0.1);
    const simulator = createSimulator({ cluster: cluster({ nodes, pods: bound }), nodePools: [nodePool()], catalog: m5Catalog() });
    const result = simulator.simulate({
      excludedNodes: excluded,
      pods: moving,
      maxNewNodes: 0,
      placement: 'least-allocated',
      podOrder: 'as-given',
      stopAtFirstFailure: true,
    });
    const actual = new Map<string, string | undefined>(result.placements.map((p) => [p.pod.uid, p.nodeName]));
    for (const u of result.unschedulable) actual.set(u.pod.uid, undefined);
    expect(moving.length).toBeGreaterThan(0);
    expect(actual).toEqual(reference(nodes, bound, excluded, moving));
  });
});
