// A move's new nodes sized for cost (methods/costEfficient.ts): Karpenter's methods land a merge on the
// one type that holds all its pods; when smaller types cost less per unit of what the pods ask, the same
// nodes repacked onto several of them save more, and that move is taken instead.
import { describe, expect, it } from 'vitest';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import { runConsolidationPass } from '../../src/core/disruption/pass.ts';
import type { Catalog, Cluster, NodePool } from '../../src/core/model/types.ts';
import { cluster, Gi, instanceType, node, nodePool, on, pod, T0 } from '../builders.ts';

const pass = (c: Cluster, pools: NodePool[], catalog: Catalog) =>
  runConsolidationPass({ cluster: c, nodePools: pools, catalog, nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull });

/** `old` costs $0.20 (4 cores), `medium` $0.40 (8 cores), `small` `smallPrice` (2 cores). */
const catalogWith = (smallPrice: number): Catalog => ({
  region: 'us-east-1',
  instanceTypes: [
    instanceType('old', { cpu: 4000, memory: 16 * Gi, pods: 58 }, 0.2),
    instanceType('medium', { cpu: 8000, memory: 32 * Gi, pods: 58 }, 0.4),
    instanceType('small', { cpu: 2000, memory: 8 * Gi, pods: 29 }, smallPrice),
  ],
});
// Three 4-core nodes, each with four 600m pods (2,400m): no two fit into one, all three fit one `medium`.
const threeNodes = () => {
  const names = ['a', 'b', 'c'];
  return cluster({
    nodes: names.map((name) => node({ name, instanceType: 'old', allocatable: { cpu: 4000, memory: 16 * Gi, pods: 58 } })),
    pods: names.flatMap((name) => on(name, ...[1, 2, 3, 4].map((i) => pod({ name: `${name}-${i}`, requests: { cpu: 600, memory: Gi } })))),
  });
};

describe('a merge sized for cost', () => {
  it.each([
    // [name, small's price, expected replacement types, expected method/move, savings]
    ['six smalls ($0.30) beat one medium ($0.40): the repack is taken', 0.05, Array(6).fill('small'), { method: 'multi-node', move: 'm-to-n' }, 0.3],
    ['six smalls ($0.42) cost more than one medium: Karpenter\'s merge stays', 0.07, ['medium'], { method: 'multi-node' }, 0.2],
  ] as const)('%s', (_name, smallPrice, types, shape, savings) => {
    const out = pass(threeNodes(), [nodePool()], catalogWith(smallPrice));
    expect(out.decisions).toHaveLength(1);
    const d = out.decisions[0]!;
    expect(d).toMatchObject({ action: 'replace', ...shape });
    if (!('move' in shape)) expect(d).not.toHaveProperty('move');
    expect([...d.nodes].sort()).toEqual(['a', 'b', 'c']);
    expect(d.replacements.map((r) => r.instanceTypes[0])).toEqual(types);
    expect(d.savingsPerHour).toBeCloseTo(savings, 6);
  });

  it('each new node keeps room for the largest moved pod: two 600m pods on a 2-core small, not three', () => {
    const d = pass(threeNodes(), [nodePool()], catalogWith(0.05)).decisions[0]!;
    const perNode = new Map<string, number>();
    for (const destination of Object.values(d.podDestinations ?? {})) perNode.set(destination, (perNode.get(destination) ?? 0) + 1);
    expect([...perNode.values()]).toEqual([2, 2, 2, 2, 2, 2]);
  });
});
