import { describe, expect, it } from 'vitest';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import { runConsolidationPass, type PassInput } from '../../src/core/disruption/pass.ts';
import type { Catalog, Cluster, NodePool } from '../../src/core/model/types.ts';
import { cluster, daemonSetPod, Gi, hours, instanceType, m5Catalog, Mi, minutes, node, nodePool, on, pdb, pod, T0 } from '../builders.ts';

function pass(c: Cluster, pools: NodePool[] = [nodePool()], catalog: Catalog = m5Catalog(), extra: Partial<PassInput> = {}) {
  return runConsolidationPass({ cluster: c, nodePools: pools, catalog, nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull, ...extra });
}
const reasonsOf = (outcome: ReturnType<typeof pass>, name: string) => [
  ...(outcome.verdicts.find((v) => v.node.name === name)?.reasons ?? []),
  ...(outcome.notes.get(name) ?? []),
];
const big = (name: string) => node({ name, instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14162 * Mi, pods: 58 } });

describe('a consolidation pass', () => {
  it('deletes an empty node (only daemonset pods) in one emptiness decision', () => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: [...on('a', pod()), daemonSetPod('b')] });
    const out = pass(c);
    expect(out.decisions[0]).toMatchObject({ method: 'emptiness', reason: 'Empty', action: 'delete', nodes: ['b'], savingsPerHour: 0.096 });
  });

  it('a node deleted as empty receives no pods from a later decision of the same pass', () => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: [...on('a', pod()), daemonSetPod('a'), daemonSetPod('b')] });
    const out = pass(c);
    expect(out.decisions.flatMap((d) => d.nodes)).toEqual(['b']);
  });

  it('deletes a lightly used node whose pods fit on another node', () => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: [...on('a', pod(), pod()), ...on('b', pod())] });
    const out = pass(c);
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]).toMatchObject({ method: 'single-node', action: 'delete', replacements: [] });
  });

  it('replaces an oversized node with the cheapest type that holds its pods', () => {
    const heavy = node({ name: 'big', instanceType: 'm5.4xlarge', allocatable: { cpu: 15890, memory: 58025 * Mi, pods: 234 } });
    const c = cluster({ nodes: [heavy], pods: on('big', pod({ requests: { cpu: 1500, memory: 2 * Gi } }), pod({ requests: { cpu: 1500, memory: 2 * Gi } })) });
    const out = pass(c);
    expect(out.decisions[0]).toMatchObject({ method: 'single-node', action: 'replace', currentPricePerHour: 0.768 });
    expect(out.decisions[0]!.replacements[0]!.instanceTypes[0]).toBe('m5.xlarge');
    expect(out.decisions[0]!.savingsPerHour).toBeCloseTo(0.768 - 0.192, 6);
  });

  // Without a consolidateAfter wait a node that receives pods stays a candidate, so
  // the first plan goes as far as the next pass would; with a wait (or Karpenter's rule) it is left alone.
  it.each([
    ['consolidateAfter 0s: the receiving node is then emptied too', 0, true, ['delete', 'delete']],
    ['consolidateAfter 1m: the receiving node waits for the next pass', 60_000, true, ['delete']],
    ["Karpenter's rule (reopenReceivers false): left alone", 0, false, ['delete']],
  ] as const)('%s', (_name, consolidateAfterMs, reopenReceivers, actions) => {
    // `keep` (not disruptable) has the most room: kube-scheduler sends a's pod there, the search to b.
    const keep = { ...big('keep'), annotations: { 'karpenter.sh/do-not-disrupt': 'true' } };
    const nodes = [big('a'), big('b'), keep];
    const pods = [
      ...on('a', pod({ requests: { cpu: 500, memory: Gi } })),
      ...on('b', pod({ requests: { cpu: 1000, memory: Gi } })),
      ...on('keep', pod({ requests: { cpu: 100, memory: Gi } })),
    ];
    const out = pass(cluster({ nodes, pods }), [nodePool({ consolidateAfterMs })], m5Catalog(), { methods: ['single-node'], reopenReceivers });
    expect(out.decisions.map((d) => d.action)).toEqual(actions);
    expect(out.decisions[0]).toMatchObject({ action: 'delete', nodes: ['a'] });
    if (actions.length === 2) {
      // b goes with its own pod and the one it received from a (both fit on keep)
      expect(out.decisions[1]).toMatchObject({ nodes: ['b'], currentPricePerHour: 0.192 });
      expect(out.decisions[1]!.evictedPods).toHaveLength(2);
      expect(Object.values(out.decisions[1]!.podDestinations ?? {})).toEqual(['keep', 'keep']);
    } else {
      expect(reasonsOf(out, 'b').join(' ')).toContain('receives pods from decision 1 of this pass');
    }
  });

  it('merges three nodes none of which can go alone into one cheaper node (multi-node)', () => {
    const nodes = ['a', 'b', 'c'].map(big);
    const pods = nodes.flatMap((n) => on(n.name, pod({ requests: { cpu: 2500, memory: 1 * Gi } })));
    const out = pass(cluster({ nodes, pods }));
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]).toMatchObject({ method: 'multi-node', action: 'replace', currentPricePerHour: 0.576 });
    expect(out.decisions[0]!.nodes).toHaveLength(3);
    expect(out.decisions[0]!.replacements[0]!.instanceTypes[0]).toBe('m5.2xlarge');
  });

  it('merges more than 100 nodes at once when replacements are unbounded and MAX_NODES_PER_COMMAND allows it', () => {
    const nodes = Array.from({ length: 120 }, (_, i) => node({ name: `n${String(i).padStart(3, '0')}` }));
    const pods = nodes.flatMap((n) => on(n.name, pod({ requests: { cpu: 1000, memory: Gi } })));
    const catalog: Catalog = { ...m5Catalog(), instanceTypes: [...m5Catalog().instanceTypes, instanceType('x.huge', { cpu: 200_000, memory: 800 * Gi, pods: 737 }, 5.0)] };
    const out = pass(cluster({ nodes, pods }), [nodePool()], catalog, { replacementBound: null, maxNodesPerCommand: 120 });
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]).toMatchObject({ method: 'multi-node', action: 'replace' });
    expect(out.decisions[0]!.nodes).toHaveLength(120);
    expect(out.decisions[0]!.replacements[0]!.instanceTypes).toEqual(['x.huge']);
    expect(out.decisions[0]).not.toHaveProperty('cappedAt');
    // By default a command takes at most 100 nodes (Karpenter's multi-node cap), and the plan says so.
    const capped = pass(cluster({ nodes, pods }), [nodePool()], catalog, { replacementBound: null });
    expect(capped.decisions[0]!.nodes).toHaveLength(100);
    expect(capped.decisions[0]!.cappedAt).toEqual({ maxNodes: 100, eligible: 120 });
  });

  it.each([
    ['WhenUnderutilized merges but never swaps one for one', 'WhenUnderutilized', 'multi-node'],
    ['WhenCheaper swaps one for one but never merges', 'WhenCheaper', 'single-node'],
  ] as const)('%s', (_name, policy, method) => {
    const nodes = ['a', 'b', 'c'].map(big);
    const pods = nodes.flatMap((n) => on(n.name, pod({ requests: { cpu: 2500, memory: 1 * Gi } })));
    const heavy = node({ name: 'big', instanceType: 'm5.4xlarge', allocatable: { cpu: 15890, memory: 58025 * Mi, pods: 234 } });
    const out = pass(cluster({ nodes: [...nodes, heavy], pods: [...pods, ...on('big', pod({ requests: { cpu: 3000, memory: 1 * Gi } }))] }), [nodePool({ consolidationPolicy: policy })]);
    expect(out.decisions.length).toBeGreaterThan(0);
    expect(out.decisions.every((d) => d.method === method)).toBe(true);
  });

  it('WhenEmpty only deletes empty nodes and says why it keeps the others', () => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: [...on('a', pod())] });
    const out = pass(c, [nodePool({ consolidationPolicy: 'WhenEmpty' })]);
    expect(out.decisions.map((d) => d.nodes)).toEqual([['b']]);
    expect(reasonsOf(out, 'a').join(' ')).toMatch(/only removes empty nodes/);
  });

  it.each([
    ['do-not-disrupt pod', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }, /do-not-disrupt/],
    ['legacy do-not-evict pod', { annotations: { 'karpenter.sh/do-not-evict': 'true' } }, /do-not-evict/],
    ['do-not-disrupt for 6h, started 3h ago', { annotations: { 'karpenter.sh/do-not-disrupt': '6h' } }, /until 2026-11-21T15:00:00Z/],
    ['pod with no controller owner', { ownerReferences: [] }, /no controller owner/],
  ])('a %s keeps its node', (_name, overrides, reason) => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: [...on('a', pod(), pod()), ...on('b', pod(overrides))] });
    const out = pass(c);
    expect(out.decisions.flatMap((d) => d.nodes)).toEqual(['a']);
    expect(reasonsOf(out, 'b').join(' ')).toMatch(reason);
  });

  it.each([
    ['do-not-disrupt for 1h, started 3h ago', { annotations: { 'karpenter.sh/do-not-disrupt': '1h' } }],
    ['a finished pod with do-not-disrupt', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' }, phase: 'Succeeded' as const }],
  ])('%s does not block', (_name, overrides) => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: [...on('a', pod(), pod()), ...on('b', pod(overrides))] });
    expect(pass(c).decisions.flatMap((d) => d.nodes)).toContain('b');
  });

  it.each([
    ['a PDB at zero', [pdb({ name: 'web', selector: { matchLabels: { app: 'web' } }, disruptionsAllowed: 0 })], /PodDisruptionBudget default\/web, which allows no disruptions/],
    ['two PDBs', [pdb({ name: 'p1', selector: { matchLabels: { app: 'web' } } }), pdb({ name: 'p2', selector: {} })], /more than one PodDisruptionBudget/],
  ])('%s keeps the node', (_name, pdbs, reason) => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: [...on('a', pod(), pod()), ...on('b', pod({ labels: { app: 'web' } }))], pdbs });
    const out = pass(c);
    expect(out.decisions.flatMap((d) => d.nodes)).toEqual(['a']);
    expect(reasonsOf(out, 'b').join(' ')).toMatch(reason);
  });

  it('a PDB that allows one disruption does not block', () => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: [...on('a', pod(), pod()), ...on('b', pod({ labels: { app: 'web' } }))], pdbs: [pdb({ disruptionsAllowed: 1 })] });
    expect(pass(c).decisions).toHaveLength(1);
  });

  it.each([
    ['NotReady', { ready: false }, /not Ready/],
    ['being deleted', { deleting: true }, /being deleted/],
    ['tainted as disrupted', { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' as const }] }, /already being disrupted/],
    ['annotated do-not-disrupt', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }, /node has karpenter.sh\/do-not-disrupt/],
    ['annotated do-not-consolidate', { annotations: { 'karpenter.sh/do-not-consolidate': 'true' } }, /do-not-consolidate/],
    ['of an unknown pool', { nodePool: 'gpu' }, /NodePool "gpu", which is not configured/],
  ])('an empty node that is %s is left alone', (_name, overrides, reason) => {
    const c = cluster({ nodes: [node({ name: 'a', ...overrides })] });
    const out = pass(c);
    expect(out.decisions).toEqual([]);
    expect(reasonsOf(out, 'a').join(' ')).toMatch(reason);
  });

  it.each([
    ['consolidateAfter Never disables consolidation', { consolidateAfterMs: null }, /consolidateAfter: Never/],
    ['a pod started 3h ago is too recent for consolidateAfter 4h', { consolidateAfterMs: hours(4) }, /waits consolidateAfter 4h/],
  ])('%s', (_name, poolOverrides, reason) => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: [...on('a', pod()), ...on('b', pod())] });
    const out = pass(c, [nodePool(poolOverrides)]);
    expect(out.decisions).toEqual([]);
    expect(reasonsOf(out, 'a').join(' ')).toMatch(reason);
  });

  it('consolidateAfter 2h allows a node whose last pod started 3h ago', () => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: [...on('a', pod()), ...on('b', pod())] });
    expect(pass(c, [nodePool({ consolidateAfterMs: hours(2) })]).decisions).toHaveLength(1);
  });

  it('budgets cap deletions: 4 empty nodes at 50% delete 2', () => {
    const c = cluster({ nodes: ['a', 'b', 'c', 'd'].map((name) => node({ name })) });
    const out = pass(c, [nodePool({ budgets: [{ nodes: { percent: 50 } }] })]);
    expect(out.decisions.flatMap((d) => d.nodes)).toHaveLength(2);
    expect(reasonsOf(out, 'd').join(' ')).toMatch(/disruption budget/);
  });

  it('each decision sees the cluster as the earlier ones left it', () => {
    // b and c each hold a 1000m pod; a has room for one of them only.
    const c = cluster({
      nodes: ['a', 'b', 'c'].map((name) => node({ name })),
      pods: [...on('a', pod({ requests: { cpu: 800, memory: Gi } })), ...on('b', pod({ requests: { cpu: 1000, memory: Gi } })), ...on('c', pod({ requests: { cpu: 1000, memory: Gi } }))],
    });
    const out = pass(c, [nodePool({ requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }, { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] })]);
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]!.action).toBe('delete');
  });

  it('a savings threshold blocks a marginal replacement and the plan says by how much', () => {
    const heavy = node({ name: 'x', instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14162 * Mi, pods: 58 } });
    const pods = on('x', ...Array.from({ length: 5 }, () => pod({ requests: { cpu: 300, memory: 512 * Mi } })));
    const out = pass(cluster({ nodes: [heavy], pods }), [nodePool({ savingsThresholdCents: 20 })]);
    expect(out.decisions).toEqual([]);
    expect(reasonsOf(out, 'x').join(' ')).toMatch(/savings 9\.6 cents\/hr below required 120\.0 cents\/hr \(disruption cost 6\.0, threshold 20\)/);
  });

  it('a pool limit keeps a replacement from being launched', () => {
    const heavy = node({ name: 'big', instanceType: 'm5.4xlarge', capacity: { cpu: 16000, memory: 64 * Gi, pods: 234 }, allocatable: { cpu: 15890, memory: 58025 * Mi, pods: 234 } });
    const c = cluster({ nodes: [heavy], pods: on('big', pod({ requests: { cpu: 1500, memory: 2 * Gi } })) });
    expect(pass(c, [nodePool({ limits: { cpu: 1000 } })]).decisions).toEqual([]);
    expect(pass(c, [nodePool({ limits: { cpu: 4000 } })]).decisions).toHaveLength(1);
  });

  it('spot nodes are only replaced by spot behind the SpotToSpotConsolidation gate', () => {
    const spot = node({ name: 's', instanceType: 'm5.4xlarge', capacityType: 'spot', allocatable: { cpu: 15890, memory: 58025 * Mi, pods: 234 } });
    const c = cluster({ nodes: [spot], pods: on('s', pod()) });
    const pools = [nodePool({ requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] }] })];
    const out = pass(c, pools);
    expect(out.decisions).toEqual([]);
    expect(reasonsOf(out, 's').join(' ')).toMatch(/SpotToSpotConsolidation/);
    // with the gate on, the small m5 catalog has fewer than 15 cheaper types
    const gated = runConsolidationPass({ cluster: c, nodePools: pools, catalog: m5Catalog(), nowMs: T0, gates: { spotToSpotConsolidation: true }, parseDuration: durationOrNull });
    expect(gated.notes.get('s')?.join(' ')).toMatch(/at least 15/);
  });

  it('orders candidates cheapest to disrupt first', () => {
    // both a and b could go; only one may (budget 1). b has one pod, a has three: b goes.
    const c = cluster({
      nodes: ['a', 'b', 'c'].map((name) => node({ name })),
      pods: [...on('a', pod(), pod(), pod()), ...on('b', pod()), ...on('c', pod())],
    });
    const out = pass(c, [nodePool({ budgets: [{ nodes: { count: 1 } }], consolidationPolicy: 'WhenCheaper' })]);
    expect(out.decisions.flatMap((d) => d.nodes)).toEqual(['b']);
  });

  it('a node whose pods cannot move anywhere says which pod and why', () => {
    const c = cluster({ nodes: [node({ name: 'a' })], pods: on('a', pod({ name: 'huge', requests: { cpu: 1900, memory: Gi } })) });
    const out = pass(c, [nodePool({ requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }, { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] })]);
    expect(out.decisions).toEqual([]);
    expect(reasonsOf(out, 'a').join(' ')).toMatch(/no cheaper replacement|cannot all run elsewhere/);
    expect(minutes(1)).toBe(60_000);
  });
});
