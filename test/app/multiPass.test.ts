// Consecutive passes sharing one state file, with a fake clock: what a pass learns by comparing what it
// sees with what the previous pass stored (docs/how-a-pass-decides.md, "Time and state between passes";
// Karpenter's consolidation, consolidationGracePeriod and disruption-controls designs).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPass, type PassScope } from '../../src/app/runPass.ts';
import { FileStateStore } from '../../src/adapters/state/fileStateStore.ts';
import type { Cluster, NodePool } from '../../src/core/model/types.ts';
import type { Plan } from '../../src/core/plan.ts';
import { cluster, daemonSetPod, m5Catalog, minutes, node, nodePool, on, pod, T0, workload } from '../builders.ts';

function passes(pools: NodePool[], scope: PassScope = 'all') {
  const store = new FileStateStore(join(mkdtempSync(join(tmpdir(), 'ekc-state-')), 'state.json'));
  return {
    store,
    async at(offsetMs: number, c: Cluster): Promise<Plan> {
      const result = await runPass(
        { readCluster: async () => c, loadCatalog: async () => ({ catalog: m5Catalog(), warnings: [] }), loadNodePools: async () => pools, state: store },
        { nowMs: T0 + offsetMs, gates: { spotToSpotConsolidation: false }, dryRun: true, persistState: true, scope, owner: 'test', leaseTtlMs: minutes(5) },
      );
      return result.plan;
    },
  };
}
const disrupted = (plan: Plan) => plan.decisions.flatMap((d) => d.nodes);
const reasons = (plan: Plan, name: string) => (plan.nodes.find((n) => n.name === name)?.reasons ?? []).join(' | ');

// a holds two pods with room to spare; b holds one small pod that fits on a.
const podA1 = pod({ name: 'a1' });
const podA2 = pod({ name: 'a2' });
const podB = pod({ name: 'b1' });
const base = () => cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: [...on('a', podA1, podA2), ...on('b', podB)] });

describe('pod events from observation', () => {
  it('a pod leaving is a pod event at the pass that sees it: consolidateAfter restarts', async () => {
    const p = passes([nodePool({ consolidateAfterMs: minutes(10), consolidationPolicy: 'WhenCheaper' })]);
    await p.at(0, base());
    // a2 left node a between the passes
    const without = cluster({ nodes: base().nodes, pods: [...on('a', podA1), ...on('b', podB)] });
    const second = await p.at(minutes(1), without);
    expect(reasons(second, 'a')).toMatch(/last pod event 0s ago; NodePool "default" waits consolidateAfter 10m/);
    const later = await p.at(minutes(12), without);
    expect(reasons(later, 'a')).not.toMatch(/consolidateAfter/);
  });

  it('a pod arriving (created now) restarts consolidateAfter too', async () => {
    const p = passes([nodePool({ consolidateAfterMs: minutes(10) })]);
    expect(disrupted(await p.at(0, base()))).toEqual(['b']);
    const arrived = pod({ name: 'new', createdAt: T0 + minutes(1), startedAt: T0 + minutes(1) });
    const c = cluster({ nodes: base().nodes, pods: [...base().pods, ...on('b', arrived)] });
    const plan = await p.at(minutes(2), c);
    expect(disrupted(plan)).not.toContain('b');
    expect(reasons(plan, 'b')).toMatch(/waits consolidateAfter 10m \(until 2026-11-21T12:11:00Z\)/);
  });
});

describe('emptiness TTL for WhenEmpty pools', () => {
  it('deletes a node only once it has been empty for consolidateAfter', async () => {
    const p = passes([nodePool({ consolidationPolicy: 'WhenEmpty', consolidateAfterMs: minutes(5) })], 'emptiness');
    const busy = cluster({ nodes: [node({ name: 'a' })], pods: [...on('a', pod()), daemonSetPod('a')] });
    const empty = cluster({ nodes: [node({ name: 'a' })], pods: [daemonSetPod('a')] });
    expect(disrupted(await p.at(0, busy))).toEqual([]);
    expect(disrupted(await p.at(minutes(1), empty))).toEqual([]); // emptied at +1m
    expect(disrupted(await p.at(minutes(4), empty))).toEqual([]);
    expect(disrupted(await p.at(minutes(6), empty))).toEqual(['a']);
  });

  it('the consolidation function leaves WhenEmpty pools to the emptiness function', async () => {
    const p = passes([nodePool({ consolidationPolicy: 'WhenEmpty' })], 'consolidation');
    const plan = await p.at(0, cluster({ nodes: [node({ name: 'a' })] }));
    expect(plan.decisions).toEqual([]);
    expect(plan.nodes[0]!.candidate).toBe(false);
  });
});

describe('consolidationGracePeriod', () => {
  // c cannot go anywhere: the only other node is full, and no cheaper type exists in the pool.
  const pools = [nodePool({ consolidationGracePeriodMs: minutes(60), requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }, { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] })];
  const c1 = pod({ name: 'c1', requests: { cpu: 1200, memory: 2 ** 30 } });
  const d1 = pod({ name: 'd1', requests: { cpu: 1200, memory: 2 ** 30 } });
  const stuckCluster = cluster({ nodes: [node({ name: 'c' }), node({ name: 'd' })], pods: [...on('c', c1), ...on('d', d1)] });
  const stuck = () => stuckCluster;

  it('protects a node evaluated with nothing worth doing, then releases it', async () => {
    const p = passes(pools);
    const first = await p.at(0, stuck());
    expect(first.decisions).toEqual([]);
    expect(reasons(first, 'c')).not.toMatch(/consolidationGracePeriod/);
    const second = await p.at(minutes(30), stuck());
    expect(reasons(second, 'c')).toMatch(/consolidationGracePeriod protects it until 2026-11-21T13:00:00Z/);
    const third = await p.at(minutes(61), stuck());
    expect(reasons(third, 'c')).not.toMatch(/consolidationGracePeriod/);
  });

  it('a pod event ends the protection', async () => {
    const p = passes(pools);
    await p.at(0, stuck());
    const moved = cluster({ nodes: stuck().nodes, pods: on('d', d1) });
    const plan = await p.at(minutes(10), moved);
    expect(reasons(plan, 'c')).not.toMatch(/consolidationGracePeriod/);
    expect(disrupted(plan)).toContain('c'); // now empty
  });

  it('a node for which a move worth making was found, but not taken this pass, is not protected', async () => {
    // A budget of 2 nodes: {a, b} and {c, d} can each be deleted (every pod fits on the other two), and
    // the pass takes {c, d} (two m5.xlarge save more). a and b had a cheaper configuration: the design
    // protects only nodes evaluated with nothing worth doing, so the next pass may still take them.
    const p = passes([nodePool({ consolidationGracePeriodMs: minutes(60), budgets: [{ nodes: { count: 2 } }] })]);
    const xlarge = { instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14 * 2 ** 30, pods: 58 } };
    const small = (name: string) => pod({ name, requests: { cpu: 100, memory: 2 ** 27 } });
    const four = cluster({
      nodes: [node({ name: 'a' }), node({ name: 'b' }), node({ name: 'c', ...xlarge }), node({ name: 'd', ...xlarge })],
      pods: [...on('a', small('a1')), ...on('b', small('b1')), ...on('c', small('c1')), ...on('d', small('d1'))],
    });
    const first = await p.at(0, four);
    expect(disrupted(first).sort()).toEqual(['c', 'd']);
    const second = await p.at(minutes(10), four);
    expect(reasons(second, 'a')).not.toMatch(/consolidationGracePeriod/);
    expect(disrupted(second).sort()).toEqual(['c', 'd']);
    // Weighed at each pass, never protected.
    const state = await p.store.load(T0 + minutes(10));
    expect(state.nodes['a']!.graceProtectedUntil).toBeUndefined();
    expect(state.nodes['a']!.lastEvaluatedAt).toBe(T0 + minutes(10));
  });

  it('Never and unset mean no protection', async () => {
    const p = passes([{ ...pools[0]!, consolidationGracePeriodMs: null }]);
    await p.at(0, stuck());
    expect(reasons(await p.at(minutes(30), stuck()), 'c')).not.toMatch(/consolidationGracePeriod/);
  });
});

describe('stabilization window and minimum node lifetime', () => {
  it('holds decisions after an action while pods are pending, at most 5 minutes', async () => {
    const p = passes([nodePool()]);
    // an action happened just before: record it as the Lambda's actuator would
    const state = await p.store.load(T0);
    await p.store.save({ ...state, cluster: { ...state.cluster, lastActionAt: T0 } }, state, T0);
    const pending = pod({ name: 'pending' });
    const c = cluster({ ...base(), pods: [...base().pods, pending] });
    const held = await p.at(minutes(1), c);
    expect(held.decisions).toEqual([]);
    expect(held.notes?.join(' ')).toMatch(/stabilizing after the last action: 1 pending pod/);
    expect(disrupted(await p.at(minutes(6), c))).toEqual(['b']);
  });

  it('does not hold when the cluster is settled, and holds while a workload is short of ready replicas', async () => {
    const p = passes([nodePool()]);
    const state = await p.store.load(T0);
    await p.store.save({ ...state, cluster: { ...state.cluster, lastActionAt: T0 } }, state, T0);
    expect(disrupted(await p.at(minutes(1), base()))).toEqual(['b']);
    const short = cluster({ ...base(), workloads: [workload({ desiredReplicas: 3, readyReplicas: 2 })] });
    expect((await p.at(minutes(2), short)).decisions).toEqual([]);
  });

  it('a node Ready for less than 5 minutes is not a candidate', async () => {
    const young = node({ name: 'young', createdAt: T0 - minutes(3), readySince: T0 - minutes(3) });
    const plan = await passes([nodePool()]).at(0, cluster({ nodes: [young] }));
    expect(plan.decisions).toEqual([]);
    expect(reasons(plan, 'young')).toMatch(/minimum node lifetime/);
  });
});

describe('no-change skip (polling)', () => {
  const stuckPools = [nodePool({ requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }, { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] })];
  const fullCluster = cluster({ nodes: [node({ name: 'c' })], pods: on('c', pod({ requests: { cpu: 1500, memory: 2 ** 30 } })) });
  const full = () => fullCluster;

  it('skips the search when nothing changed since a search that found nothing, for at most 5 minutes', async () => {
    const p = passes(stuckPools);
    await p.at(0, full());
    expect((await p.at(minutes(2), full())).notes?.join(' ')).toMatch(/search skipped/);
    expect((await p.at(minutes(6), full())).notes?.join(' ')).not.toMatch(/search skipped/);
  });

  it('a pass with no state store (the CLI without --state) neither hashes the cluster nor records a search', async () => {
    const deps = { readCluster: async () => full(), loadCatalog: async () => ({ catalog: m5Catalog(), warnings: [] }), loadNodePools: async () => stuckPools };
    const settings = { nowMs: T0, gates: { spotToSpotConsolidation: false }, dryRun: true, persistState: false, scope: 'all' as const, owner: 'test', leaseTtlMs: minutes(5) };
    const alone = await runPass(deps, settings);
    expect(alone.state.cluster.lastFingerprint).toBeUndefined();
    expect(alone.state.cluster.lastSearchAt).toBeUndefined();
    const p = passes(stuckPools);
    await p.at(0, full());
    expect((await p.store.load(T0)).cluster.lastFingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('searches again as soon as the cluster changes', async () => {
    const p = passes(stuckPools);
    await p.at(0, full());
    const changed = cluster({ nodes: full().nodes, pods: [] });
    const plan = await p.at(minutes(1), changed);
    expect(plan.notes?.join(' ')).not.toMatch(/search skipped/);
  });
});
