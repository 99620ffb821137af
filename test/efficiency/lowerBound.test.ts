import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../src/core/buildPlan.ts';
import { runConsolidationPass } from '../../src/core/disruption/pass.ts';
import { indexCatalog } from '../../src/core/disruption/prices.ts';
import { clusterLowerBound } from '../../src/core/efficiency/lowerBound.ts';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import type { Catalog, Cluster, NodePool } from '../../src/core/model/types.ts';
import { cluster, Gi, instanceType, m5Catalog, Mi, node, nodePool, on, pod, T0 } from '../builders.ts';

// `a`: 2 cores at $0.10 ($0.05/core); `b`: 4 cores at $0.16 ($0.04/core) but little memory.
const catalog: Catalog = {
  region: 'us-east-1',
  instanceTypes: [instanceType('a', { cpu: 2000, memory: 8 * Gi, pods: 10 }, 0.1), instanceType('b', { cpu: 4000, memory: 4 * Gi, pods: 10 }, 0.16)],
};
const aNode = (name: string, keep = false) =>
  node({ name, instanceType: 'a', allocatable: { cpu: 2000, memory: 8 * Gi, pods: 10 }, annotations: keep ? { 'karpenter.sh/do-not-disrupt': 'true' } : {} });

function run(c: Cluster, pools: NodePool[] = [nodePool()], cat: Catalog = catalog) {
  const outcome = runConsolidationPass({ cluster: c, nodePools: pools, catalog: cat, nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull });
  const bound = clusterLowerBound({ cluster: c, nodePools: pools, catalog: cat, verdicts: outcome.verdicts });
  const plan = buildPlan(outcome, { nowMs: T0, dryRun: true, prices: indexCatalog(cat), lowerBound: bound });
  return { outcome, bound, plan };
}

describe('lower bound', () => {
  it.each([
    // [name, pod memory, expected bound]: the locked node ($0.10, 0.5 core free) is always kept, and no
    // 1-core pod fits in its free half core. Each pod pays, on the type it uses, the type's price times
    // the larger of its cpu and memory shares of that type (a node's cpu cannot serve one pod while its
    // memory serves another's on another node).
    // 1Gi: on b a pod takes 1/4 of the cpu and 1/4 of the memory ($0.04), on a half the cpu ($0.05).
    ['cpu-bound: the cheapest cores are type b', 1 * Gi, 0.1 + 3 * 0.04],
    // 3Gi: on b 3/4 of its memory ($0.12), on a half its cpu ($0.05): type a.
    ['memory binds on b: type a is cheaper per pod', 3 * Gi, 0.1 + 3 * 0.05],
    // 5Gi: no pod fits on b (4Gi); on a 5/8 of its memory ($0.0625).
    ['a pod larger than b cannot use b at all', 5 * Gi, 0.1 + 3 * 0.0625],
  ] as const)('%s', (_name, memory, expected) => {
    const c = cluster({
      nodes: [aNode('locked', true), aNode('x'), aNode('y')],
      pods: [
        ...on('locked', pod({ requests: { cpu: 1500, memory: 1 * Gi } })),
        ...on('x', pod({ requests: { cpu: 1000, memory } }), pod({ requests: { cpu: 1000, memory } })),
        ...on('y', pod({ requests: { cpu: 1000, memory } })),
      ],
    });
    const { bound } = run(c);
    expect(bound.startCostPerHour).toBeCloseTo(0.3, 9);
    expect(bound.lockedCostPerHour).toBeCloseTo(0.1, 9);
    expect(bound.lowerBoundPerHour).toBeCloseTo(expected, 6);
  });

  it('the plan carries its efficiency: end cost never below the bound, and why nodes were kept', () => {
    const nodes = ['p', 'q', 'r', 's'].map((name) => node({ name, instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14162 * Mi, pods: 58 } }));
    const pods = nodes.flatMap((n) => on(n.name, pod({ requests: { cpu: 1200, memory: Gi } })));
    const pdbProtected = pod({ labels: { app: 'web' }, requests: { cpu: 100, memory: Gi } });
    const c = cluster({
      nodes: [...nodes, node({ name: 'guarded' })],
      pods: [...pods, ...on('guarded', pdbProtected)],
      pdbs: [{ namespace: 'default', name: 'web', selector: { matchLabels: { app: 'web' } }, disruptionsAllowed: 0 }],
    });
    const { plan } = run(c, [nodePool({ budgets: [{ nodes: { count: 1 } }] })], m5Catalog());
    const e = plan.efficiency!;
    expect(e.lowerBoundPerHour).not.toBeNull();
    expect(e.endCostPerHour).toBeGreaterThanOrEqual(e.lowerBoundPerHour! - 1e-9);
    expect(e.endCostPerHour).toBeCloseTo(e.startCostPerHour - plan.summary!.savingsPerHour!, 6);
    expect(e.ratio).toBeCloseTo(e.endCostPerHour / e.lowerBoundPerHour!, 2);
    expect(e.heldBack['pdb']).toEqual({ nodes: 1, pricePerHour: 0.096 });
    expect(e.heldBack['budget']?.nodes).toBeGreaterThan(0);
  });
});
