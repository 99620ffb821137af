// kube-scheduler's placement (least allocated) against a brute-force reference: the simulation keeps
// nodes of one shape in score order and looks at the first feasible node of each shape only
// (leastAllocated.ts); each pod must still land where examining every node would put it.
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/core/model/types.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import { cluster, Gi, m5Catalog, Mi, node, nodePool, pod } from '../builders.ts';
import { placedBy, random, referencePlacement, type Choose } from './reference.ts';

const SHAPES = [
  { cpu: 1930, memory: 7 * Gi, pods: 5 },
  { cpu: 3920, memory: 15 * Gi, pods: 9 },
  { cpu: 3920, memory: 30 * Gi, pods: 7 },
  { cpu: 7910, memory: 30 * Gi, pods: 12 },
];

/** kube-scheduler's LeastAllocated: the best mean free share after the pod; ties by name (the first). */
const leastAllocated: Choose = (pod, fits) => {
  let best: (typeof fits)[number] | undefined;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (const f of fits) {
    const score = ((f.room.cpu - pod.requests['cpu']!) / f.node.allocatable['cpu']! + (f.room.memory - pod.requests['memory']!) / f.node.allocatable['memory']!) / 2;
    if (score > bestScore) {
      best = f;
      bestScore = score;
    }
  }
  return best?.node;
};

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
    expect(moving.length).toBeGreaterThan(0);
    expect(placedBy(result)).toEqual(referencePlacement(nodes, bound, excluded, moving, leastAllocated));
  });
});
