// Where consolidation may send the pods it moves, as Karpenter v1.14 decides it: nodes inside their
// consolidateAfter window take none (Karpenter's "should not consolidate pods onto a destination node that
// is under its consolidateAfter window"), while a pool that never consolidates is an open destination
// ("should consolidate pods onto a destination node with consolidateAfter set to Never").
import { describe, expect, it } from 'vitest';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import { runConsolidationPass } from '../../src/core/disruption/pass.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import type { Cluster, NodePool } from '../../src/core/model/types.ts';
import { cluster, hours, m5Catalog, node, nodePool, on, pod, T0 } from '../builders.ts';

const seconds = (n: number): number => n * 1000;

function pass(c: Cluster, pools: NodePool[]) {
  return runConsolidationPass({ cluster: c, nodePools: pools, catalog: m5Catalog(), nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull });
}
const reasonsOf = (outcome: ReturnType<typeof pass>, name: string) => [
  ...(outcome.verdicts.find((v) => v.node.name === name)?.reasons ?? []),
  ...(outcome.notes.get(name) ?? []),
];

/** Karpenter's setup: two nodes of the cheapest type, two pods on `dest`, one on `src`; only deleting `src` saves. */
function twoNodes(destLastPodEventAgoMs: number, destPool = 'default') {
  const recent = T0 - destLastPodEventAgoMs;
  return cluster({
    nodes: [node({ name: 'dest', nodePool: destPool }), node({ name: 'src' })],
    pods: [
      ...on('dest', pod({ createdAt: recent, startedAt: recent }), pod({ createdAt: recent, startedAt: recent })),
      ...on('src', pod({ createdAt: T0 - hours(3), startedAt: T0 - hours(3) })),
    ],
  });
}

describe('a destination inside its consolidateAfter window', () => {
  it.each([
    ['last pod event 30s ago, consolidateAfter 1m: no move onto it', seconds(30), 60_000, []],
    ['last pod event 2m ago, consolidateAfter 1m: src is deleted onto it', seconds(120), 60_000, [['src']]],
    ['consolidateAfter 0s: no window, src is deleted onto it', seconds(30), 0, [['src']]],
  ] as const)('%s', (_name, agoMs, consolidateAfterMs, deleted) => {
    const out = pass(twoNodes(agoMs), [nodePool({ consolidateAfterMs })]);
    expect(out.decisions.map((d) => d.nodes)).toEqual(deleted);
    if (deleted.length === 0) expect(reasonsOf(out, 'src').join(' ')).toMatch(/node dest has room but is inside its NodePool's consolidateAfter window/);
  });

  it('a destination pool with consolidateAfter: Never is always open to moved pods', () => {
    const pools = [nodePool({ consolidateAfterMs: 60_000 }), nodePool({ name: 'keep', consolidateAfterMs: null })];
    const out = pass(twoNodes(seconds(30), 'keep'), pools);
    expect(out.decisions.map((d) => d.nodes)).toEqual([['src']]);
  });

  it('a pending pod, or one off a node being deleted, may still go there', () => {
    const c = cluster({
      nodes: [node({ name: 'dest' }), node({ name: 'gone', deleting: true }), node({ name: 'src' })],
      pods: [...on('gone', pod({ name: 'leaving' })), ...on('src', pod({ name: 'moved' })), pod({ name: 'pending', phase: 'Pending' })],
    });
    const simulator = createSimulator({ cluster: c, nodePools: [nodePool()], catalog: m5Catalog() });
    const [leaving, moved, pending] = ['leaving', 'moved', 'pending'].map((n) => c.pods.find((p) => p.name === n)!);
    const result = simulator.simulate({ excludedNodes: new Set(['src', 'gone']), pods: [leaving!, moved!, pending!], maxNewNodes: 0, closedToMovedPods: new Set(['dest']) });
    expect(result.placements.map((p) => [p.pod.name, p.nodeName]).sort()).toEqual([['leaving', 'dest'], ['pending', 'dest']]);
    expect(result.unschedulable.map((u) => u.pod.name)).toEqual(['moved']);
  });
});

describe('hostname topology spread counts the hosts kube-scheduler counts', () => {
  const spread = [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: { matchLabels: { app: 'web' } } }];
  const web = (name: string) => pod({ name, labels: { app: 'web' }, topologySpread: spread });

  it('a pod may be stacked on a host that already runs one (Karpenter, counting a host it could launch, would not)', () => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' }), node({ name: 'c' })], pods: [...on('a', web('w1')), ...on('b', web('w2')), ...on('c', web('w3'))] });
    const out = pass(c, [nodePool()]);
    expect(out.decisions.length).toBeGreaterThan(0);
    expect(out.decisions[0]).toMatchObject({ action: 'delete', replacements: [] });
  });

  it('when the skew is exceeded, the reason says which hosts were counted', () => {
    // b runs no web pod and has no room: it still counts as a host with zero, so a's second pod exceeds the skew.
    const filler = pod({ name: 'filler', requests: { cpu: 1900, memory: 1024 ** 2 } });
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' }), node({ name: 'c' })], pods: [...on('a', web('w1')), ...on('b', filler), ...on('c', web('w3'))] });
    const simulator = createSimulator({ cluster: c, nodePools: [nodePool()], catalog: m5Catalog() });
    const moved = c.pods.find((p) => p.name === 'w3')!;
    const result = simulator.simulate({ excludedNodes: new Set(['c']), pods: [moved], maxNewNodes: 0 });
    expect(result.unschedulable[0]?.reason).toMatch(/skew 2 > maxSkew 1 in node a \(hosts counted as kube-scheduler counts them: the existing nodes, not a node Karpenter could launch\)/);
  });
});

describe("preferences under Karpenter's default policy (Respect)", () => {
  // One web replica per node, each preferring a host without another (preferred anti-affinity).
  const away = { weight: 100, term: { labelSelector: { matchLabels: { app: 'web' } }, namespaces: [], topologyKey: 'kubernetes.io/hostname' } };
  const web = (name: string) => pod({ name, labels: { app: 'web' }, preferredPodAntiAffinity: [away] });
  const xlarge = (name: string) => node({ name, instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14162 * 1024 ** 2, pods: 58 } });
  const run = (c: Cluster, preferencePolicy: 'Respect' | 'Ignore') =>
    runConsolidationPass({ cluster: c, nodePools: [nodePool()], catalog: m5Catalog(), nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull, preferencePolicy });
  const moves = (out: ReturnType<typeof run>) => out.decisions.map((d) => `${d.action} ${d.nodes.join('+')}${d.replacements[0] ? ` -> ${d.replacements[0].instanceTypes[0]}` : ''}`);

  it.each([
    ['same-price nodes, Respect: a new node of the same price would keep it, so nothing is taken', 'm5.large', 'Respect', []],
    ['same-price nodes, Ignore: replicas are stacked, c (and a) deleted', 'm5.large', 'Ignore', ['delete c+a']],
    ['c oversized, Respect: c is replaced by a smaller node that keeps the preference', 'm5.xlarge', 'Respect', ['replace c -> m5.large']],
    ['c oversized, Ignore: replicas are stacked, c (and a) deleted', 'm5.xlarge', 'Ignore', ['delete c+a']],
  ] as const)('%s', (_name, cType, policy, expected) => {
    const c = cluster({
      nodes: [node({ name: 'a' }), node({ name: 'b' }), cType === 'm5.large' ? node({ name: 'c' }) : xlarge('c')],
      // c's replica is the cheapest to move: a and b run one more pod each.
      pods: [...on('a', web('w1'), pod()), ...on('b', web('w2'), pod()), ...on('c', web('w3'))],
    });
    expect(moves(run(c, policy))).toEqual(expected);
  });
});
