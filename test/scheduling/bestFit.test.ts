// Best fit against a brute-force reference: the simulation skips excluded nodes, nodes it has already
// changed and nodes whose pod slots are used up without looking at them one by one (untouchedNodes.ts,
// touchedOrder.ts); whatever it skips, each pod must still land where scanning every node would put it:
// the feasible node left with the least free cpu, ties by name.
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/core/model/types.ts';
import { UntouchedNodes } from '../../src/core/scheduling/untouchedNodes.ts';
import { buildCpuOrder, buildExistingNodes } from '../../src/core/scheduling/existingNodes.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import { cluster, m5Catalog, Mi, node, nodePool, pod } from '../builders.ts';
import { placedBy, random, referencePlacement, type Choose } from './reference.ts';

/** Best fit: the node left with the least free cpu, ties by name; pods largest first. */
const bestFit: Choose = (_pod, fits) => fits.reduce<(typeof fits)[number] | undefined>((best, f) => (!best || f.room.cpu < best.room.cpu ? f : best), undefined)?.node;

const largestFirst = (pods: readonly Pod[]): Pod[] =>
  [...pods].sort(
    (a, b) => b.requests['cpu']! - a.requests['cpu']! || b.requests['memory']! - a.requests['memory']! || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );

describe('best fit skips what cannot take a pod, and places exactly as a full scan', () => {
  it.each(Array.from({ length: 12 }, (_, k) => ({ seed: k + 1 })))('random cluster, seed $seed', ({ seed }) => {
    const rand = random(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    // Few pod slots per node, so that nodes run out of slots long before cpu (the case the skips are for).
    const nodes = Array.from({ length: 40 }, (_, i) =>
      node({ name: `n${String(i).padStart(2, '0')}`, allocatable: { cpu: pick([2000, 4000, 8000]), memory: 16384 * Mi, pods: pick([3, 4, 6, 11]) } }),
    );
    const bound: Pod[] = [];
    for (const n of nodes) {
      const count = Math.floor(rand() * n.allocatable['pods']!);
      for (let k = 0; k < count; k++) bound.push({ ...pod({ requests: { cpu: pick([50, 100, 250]), memory: pick([64, 128]) * Mi } }), nodeName: n.name });
    }
    const excluded = new Set(nodes.filter(() => rand() < 0.35).map((n) => n.name));
    // The excluded nodes' pods, and a few pods of nodes that stay (their room is freed first).
    const moving = bound.filter((p) => excluded.has(p.nodeName!) || rand() < 0.1);
    const simulator = createSimulator({ cluster: cluster({ nodes, pods: bound }), nodePools: [nodePool()], catalog: m5Catalog() });
    const result = simulator.simulate({ excludedNodes: excluded, pods: moving, maxNewNodes: 0, stopAtFirstFailure: true });

    expect(placedBy(result)).toEqual(referencePlacement(nodes, bound, excluded, largestFirst(moving), bestFit));
    expect(moving.length).toBeGreaterThan(0);
  });
});

describe('UntouchedNodes', () => {
  const nodes = buildExistingNodes(
    cluster({
      nodes: [
        node({ name: 'a', allocatable: { cpu: 1000, memory: 1024 * Mi, pods: 5 } }),
        node({ name: 'b', allocatable: { cpu: 2000, memory: 1024 * Mi, pods: 5 } }),
        node({ name: 'c', allocatable: { cpu: 3000, memory: 1024 * Mi, pods: 1 } }),
        node({ name: 'd', allocatable: { cpu: 4000, memory: 1024 * Mi, pods: 5 } }),
        node({ name: 'e', allocatable: { cpu: 5000, memory: 1024 * Mi, pods: 5 } }),
      ],
      pods: [{ ...pod({ requests: { cpu: 10, memory: 0 } }), nodeName: 'c' }],
    }),
  );
  const order = buildCpuOrder(nodes);
  const indexOf = (name: string) => nodes.find((n) => n.name === name)!.index;
  const nameAt = (position: number) => (position < order.nodeIndexes.length ? nodes[order.nodeIndexes[position]!]!.name : 'end');

  it('starts with the nodes that have a free pod slot (c has none)', () => {
    const untouched = new UntouchedNodes(order);
    const seen: string[] = [];
    for (let k = untouched.firstFrom(0); k < order.nodeIndexes.length; k = untouched.firstFrom(k + 1)) seen.push(nameAt(k));
    expect(seen).toEqual(['a', 'b', 'd', 'e']);
  });

  it('skips removed nodes, runs of them included, and stays right after the chains are shortened', () => {
    const untouched = new UntouchedNodes(order);
    untouched.remove(indexOf('b'));
    untouched.remove(indexOf('d'));
    expect(nameAt(untouched.firstFrom(1))).toBe('e');
    expect(nameAt(untouched.firstFrom(0))).toBe('a');
    untouched.remove(indexOf('e'));
    expect(nameAt(untouched.firstFrom(1))).toBe('end');
    untouched.remove(indexOf('a'));
    expect(nameAt(untouched.firstFrom(0))).toBe('end');
  });
});
