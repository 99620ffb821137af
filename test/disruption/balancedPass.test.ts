// `consolidationPolicy: Balanced` through a whole pass: which moves the score lets through, what the
// plan says about the ones it refuses, and what it leaves alone (emptiness, other pools).
import { describe, expect, it } from 'vitest';
import { runConsolidationPass, type PassInput } from '../../src/core/disruption/pass.ts';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import type { Cluster, Node, NodePool, Pod } from '../../src/core/model/types.ts';
import { cluster, Gi, m5Catalog, Mi, node, nodePool, on, pod, T0 } from '../builders.ts';

function pass(c: Cluster, pools: NodePool[], extra: Partial<PassInput> = {}) {
  return runConsolidationPass({ cluster: c, nodePools: pools, catalog: m5Catalog(), nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull, ...extra });
}
const balanced = (overrides: Partial<NodePool> = {}) => nodePool({ consolidationPolicy: 'Balanced', ...overrides });
const sized = (name: string, type: 'm5.large' | 'm5.xlarge' | 'm5.2xlarge' | 'm5.4xlarge', pool = 'default'): Node => {
  const allocatable = {
    'm5.large': { cpu: 1930, memory: 6903 * Mi, pods: 29 },
    'm5.xlarge': { cpu: 3920, memory: 14162 * Mi, pods: 58 },
    'm5.2xlarge': { cpu: 7910, memory: 28783 * Mi, pods: 58 },
    'm5.4xlarge': { cpu: 15890, memory: 58025 * Mi, pods: 234 },
  }[type];
  return node({ name, instanceType: type, allocatable, nodePool: pool });
};
const cpuPods = (count: number, cpuMillis: number): Pod[] => Array.from({ length: count }, () => pod({ requests: { cpu: cpuMillis, memory: 256 * Mi } }));

const pinned = (cpuMillis: number): Pod => pod({ requests: { cpu: cpuMillis, memory: 256 * Mi }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });

/**
 * Three m5.xlarge nodes ($0.192/hr each). `x` runs `busy` pods that would fit on an m5.large; `y` and
 * `z` are nearly full with pods that may not be disrupted (2 x 1750m each): not candidates, but part
 * of the pool's totals.
 * Pool disruption = (busy + 1) + 3 + 3. Replacing x by an m5.large saves 0.096 of 0.576 (16.7%).
 */
function halfEmptyNode(busy: number): Cluster {
  return cluster({
    nodes: [sized('x', 'm5.xlarge'), sized('y', 'm5.xlarge'), sized('z', 'm5.xlarge')],
    pods: [...on('x', ...cpuPods(busy, 1500 / busy)), ...on('y', pinned(1750), pinned(1750)), ...on('z', pinned(1750), pinned(1750))],
  });
}

describe('Balanced: single-node moves', () => {
  it.each([
    // busy pods -> x's disruption (busy+1) of (busy+7): score = 0.1667 / ((busy+1)/(busy+7))
    ['approved: one pod moved for 16.7% of the cost (score 0.67)', 1, 0.6667, true],
    ['rejected: three pods moved for the same saving (score 0.42)', 3, 0.4167, false],
  ])('%s', (_name, busy, score, approved) => {
    const out = pass(halfEmptyNode(busy), [balanced()]);
    if (approved) {
      expect(out.decisions).toHaveLength(1);
      expect(out.decisions[0]).toMatchObject({ method: 'single-node', action: 'replace', nodes: ['x'] });
      expect(out.decisions[0]!.scores).toEqual([expect.objectContaining({ nodePool: 'default', k: 2, threshold: 0.5, approved: true })]);
      expect(out.decisions[0]!.scores![0]!.score).toBeCloseTo(score, 3);
      expect(out.rejectedMoves.filter((m) => m.nodes.includes('x'))).toEqual([]);
    } else {
      expect(out.decisions).toEqual([]);
      const rejected = out.rejectedMoves.find((m) => m.method === 'single-node' && m.nodes.join() === 'x');
      expect(rejected).toMatchObject({ action: 'replace', bound: false });
      expect(rejected!.scores[0]!.score).toBeCloseTo(score, 3);
      expect(out.notes.get('x')).toContainEqual(expect.stringMatching(/^Balanced: score 0\.42 < 0\.50 \(k 2\): saves 16\.7% of NodePool "default"'s cost/));
    }
  });

  it('the rejected move is taken by WhenEmptyOrUnderutilized, which does not score', () => {
    const out = pass(halfEmptyNode(3), [nodePool()]);
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]).toMatchObject({ method: 'single-node', action: 'replace', nodes: ['x'] });
    expect(out.decisions[0]!.scores).toBeUndefined();
    expect(out.rejectedMoves).toEqual([]);
  });

  it.each([
    // The same 0.42 move under the RFC's integer form of the tolerance (handover annotation).
    ['k 3 approves the 0.42 move (threshold 0.33)', 3, 1],
    ['k 2 rejects it', 2, 0],
    ['k 1 rejects it', 1, 0],
  ])('escape hatch: %s', (_name, k, decisions) => {
    const out = pass(halfEmptyNode(3), [balanced({ balancedK: k })]);
    expect(out.decisions).toHaveLength(decisions);
    if (decisions > 0) expect(out.decisions[0]!.scores![0]).toMatchObject({ k, approved: true });
  });

  it('a node whose best case (an outright delete) cannot pass is refused without simulating', () => {
    // x runs 20 small pods: deleting it for free would save 33.3% for 21/27 = 77.8% of the disruption (0.43).
    const simulated: string[][] = [];
    const out = pass(halfEmptyNode(20), [balanced()], {
      simulatorFactory: (input) => {
        const real = createSimulator(input);
        return {
          simulate: (request) => {
            simulated.push([...request.excludedNodes]);
            return real.simulate(request);
          },
        };
      },
    });
    expect(out.decisions).toEqual([]);
    const x = out.rejectedMoves.find((m) => m.method === 'single-node' && m.nodes.join() === 'x');
    expect(x).toMatchObject({ bound: true });
    expect(x!.action).toBeUndefined();
    expect(x!.scores[0]!.score).toBeCloseTo(0.4286, 3);
    expect(simulated).not.toContainEqual(['x']);
    expect(out.notes.get('x')).toContainEqual(expect.stringMatching(/^Balanced: even deleting outright would score 0\.43 < 0\.50/));
  });
});

describe('Balanced: multi-node moves', () => {
  // a, b, c: m5.xlarge with one 2500m pod each; merging all three onto an m5.2xlarge saves $0.192.
  const mergeable = (extraPodsOnKeepers: number) => {
    const keepers = ['k1', 'k2', 'k3'].map((n) => sized(n, 'm5.xlarge'));
    const movers = ['a', 'b', 'c'].map((n) => sized(n, 'm5.xlarge'));
    const keeperPods = keepers.flatMap((n) =>
      on(n.name, pod({ requests: { cpu: 3500, memory: Gi }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }), ...cpuPods(extraPodsOnKeepers, 10)),
    );
    return cluster({ nodes: [...keepers, ...movers], pods: [...keeperPods, ...movers.flatMap((n) => on(n.name, pod({ requests: { cpu: 2500, memory: Gi } })))] });
  };

  it('approved when the rest of the pool carries enough of the disruption', () => {
    // Pool: 6 nodes ($1.152), disruption 3 x (1 + 4) + 3 x 2 = 21; the merge saves 16.7% for 6/21 = 28.6%: 0.58.
    const out = pass(mergeable(3), [balanced()]);
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]).toMatchObject({ method: 'multi-node', action: 'replace' });
    expect([...out.decisions[0]!.nodes].sort()).toEqual(['a', 'b', 'c']);
    expect(out.decisions[0]!.scores![0]!.score).toBeCloseTo(0.5833, 3);
  });

  it('rejected when the movers are half of the disruption: the plan lists the refused merges', () => {
    // Disruption 6 + 3 x 2 = 12; the merge saves 16.7% for 50%: 0.33.
    const out = pass(mergeable(0), [balanced()]);
    expect(out.decisions).toEqual([]);
    const merge = out.rejectedMoves.find((m) => m.method === 'multi-node' && m.nodes.length === 3);
    expect(merge).toMatchObject({ action: 'replace', bound: false });
    expect(merge!.scores[0]!.score).toBeCloseTo(0.3333, 3);
    // The same cluster under WhenEmptyOrUnderutilized merges.
    expect(pass(mergeable(0), [nodePool()]).decisions[0]).toMatchObject({ method: 'multi-node' });
  });
});

describe('Balanced: ranking under a budget', () => {
  // Budget of one node. a (m5.xlarge, 1 pod: $0.192 for disruption 2) is cheaper to disrupt than
  // b (m5.2xlarge, 2 pods: $0.384 for 3), but b brings more money per unit of disruption.
  const twoChoices = () =>
    cluster({
      nodes: [sized('a', 'm5.xlarge'), sized('b', 'm5.2xlarge'), sized('p1', 'm5.xlarge'), sized('p2', 'm5.xlarge')],
      pods: [...on('a', ...cpuPods(1, 1500)), ...on('b', ...cpuPods(2, 750)), ...on('p1', pinned(1750), pinned(1750)), ...on('p2', pinned(1750), pinned(1750))],
    });
  const oneNode = [{ nodes: { count: 1 } }];

  it.each([
    ['Balanced tries the best savings per disruption first (b)', 'Balanced', 'b'],
    ['other policies keep the seed order, cheapest to disrupt first (a)', 'WhenEmptyOrUnderutilized', 'a'],
  ] as const)('%s', (_name, policy, first) => {
    const out = pass(twoChoices(), [nodePool({ consolidationPolicy: policy, budgets: oneNode })]);
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]!.nodes).toEqual([first]);
  });
});

describe('Balanced: what is not scored', () => {
  it('an empty node is deleted by emptiness without a score, as Karpenter does (its score would be 0.33)', () => {
    // e ($0.096, empty) and f ($0.768, one pod that cannot move): deleting e would score (0.111)/(1/3).
    const c = cluster({ nodes: [sized('e', 'm5.large'), sized('f', 'm5.4xlarge')], pods: on('f', pod({ requests: { cpu: 15000, memory: Gi } })) });
    const out = pass(c, [balanced()]);
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]).toMatchObject({ method: 'emptiness', nodes: ['e'] });
    expect(out.decisions[0]!.scores).toBeUndefined();
  });

  it('a pool that is not Balanced keeps its own rules, even when its pods land on a Balanced pool\'s node', () => {
    const c = halfEmptyNode(3);
    const other = cluster({
      nodes: [...c.nodes, ...['p', 'q'].map((n) => sized(n, 'm5.xlarge', 'other'))],
      pods: [...c.pods, ...on('p', ...cpuPods(3, 500)), ...on('q', ...cpuPods(2, 1750))],
    });
    const out = pass(other, [balanced(), nodePool({ name: 'other' })]);
    const byNode = new Map(out.decisions.flatMap((d) => d.nodes.map((n) => [n, d])));
    expect(byNode.has('x')).toBe(false);
    // q's two pods go to p and to x: the destination's pool is not scored (it loses no node).
    expect(byNode.get('q')).toMatchObject({ action: 'delete' });
    expect(Object.values(byNode.get('q')!.podDestinations ?? {}).sort()).toEqual(['p', 'x']);
    expect(byNode.get('q')!.scores).toBeUndefined();
  });

  it('the seed savings threshold still applies to a Balanced pool: a move the score approves can be blocked by it', () => {
    const out = pass(halfEmptyNode(1), [balanced({ savingsThresholdCents: 10 })]);
    expect(out.decisions).toEqual([]);
    expect(out.notes.get('x')).toContainEqual(expect.stringMatching(/below required/));
  });
});
