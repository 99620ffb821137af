// The timing rules of Karpenter's consolidation design (stabilization window, minimum node lifetime,
// no-change skip), the cluster fingerprint they rely on, and what `save` considers changed.
import { describe, expect, it } from 'vitest';
import type { Cluster } from '../../src/core/model/types.ts';
import { applyChanges, diffPassState } from '../../src/core/state/diff.ts';
import {
  clusterFingerprint,
  minimumLifetimeOk,
  noChangeSkip,
  recordAction,
  recordSearch,
  stabilizationHold,
} from '../../src/core/state/observe.ts';
import { emptyPassState, type PassState } from '../../src/core/state/types.ts';
import { cluster, hours, minutes, node, nodeState, on, pdb, pod, T0, workload } from '../builders.ts';

const withAction = (at: number | undefined): Pick<PassState, 'cluster'> => ({
  cluster: at === undefined ? { version: 1 } : { version: 1, lastActionAt: at },
});

describe('stabilizationHold', () => {
  const pending = pod({ name: 'web-new', phase: 'Pending' });
  const bound = on('n1', pod({ name: 'web-old' }))[0]!;
  it.each<{ name: string; lastActionAt?: number; now: number; cluster: Cluster; hold: boolean }>([
    { name: 'no action yet: no hold', now: T0, cluster: cluster({ pods: [pending] }), hold: false },
    { name: 'pending pod 1 min after an action: hold', lastActionAt: T0 - minutes(1), now: T0, cluster: cluster({ pods: [pending, bound] }), hold: true },
    { name: 'pending pod, 5 min after the action: released', lastActionAt: T0 - minutes(5), now: T0, cluster: cluster({ pods: [pending] }), hold: false },
    { name: 'settled 1 min after an action: no wait', lastActionAt: T0 - minutes(1), now: T0, cluster: cluster({ pods: [bound] }), hold: false },
    {
      name: 'workload not ready: hold',
      lastActionAt: T0 - minutes(2),
      now: T0,
      cluster: cluster({ workloads: [workload({ desiredReplicas: 3, readyReplicas: 2 })] }),
      hold: true,
    },
    {
      name: 'workloads ready: no hold',
      lastActionAt: T0 - minutes(2),
      now: T0,
      cluster: cluster({ workloads: [workload({ desiredReplicas: 3, readyReplicas: 3 })] }),
      hold: false,
    },
    {
      name: 'unbound terminal pods are not pending',
      lastActionAt: T0 - minutes(1),
      now: T0,
      cluster: cluster({ pods: [pod({ phase: 'Succeeded' }), pod({ phase: 'Failed' }), pod({ phase: 'Pending', terminating: true })] }),
      hold: false,
    },
  ])('$name', ({ lastActionAt, now, cluster: c, hold }) => {
    const result = stabilizationHold(c, withAction(lastActionAt), now);
    expect(result.hold).toBe(hold);
    if (hold) {
      expect(result.until).toBe(lastActionAt! + minutes(5));
      expect(result.why).toMatch(/pending|not ready/);
    }
  });

  it('names what it waits for', () => {
    const result = stabilizationHold(
      cluster({ pods: [pod({ namespace: 'shop', name: 'cart-1' })], workloads: [workload({ namespace: 'shop', name: 'cart', readyReplicas: 1 })] }),
      withAction(T0),
      T0 + minutes(1),
    );
    expect(result.why).toContain('shop/cart-1');
    expect(result.why).toContain('Deployment shop/cart 1/3 ready');
  });

  it('a pass records its action', () => {
    expect(recordAction({ version: 2 }, T0)).toEqual({ version: 2, lastActionAt: T0 });
  });
});

describe('minimumLifetimeOk (Ready for 5 minutes)', () => {
  it.each<[string, Parameters<typeof node>[0], boolean]>([
    ['Ready 4m59s', { readySince: T0 - minutes(5) + 1000 }, false],
    ['Ready exactly 5m', { readySince: T0 - minutes(5) }, true],
    ['Ready 1h', { readySince: T0 - hours(1) }, true],
    ['not Ready', { ready: false, readySince: undefined }, false],
    ['Ready, transition time unknown, created 10m ago', { readySince: undefined, createdAt: T0 - minutes(10) }, true],
    ['Ready, transition time unknown, created 1m ago', { readySince: undefined, createdAt: T0 - minutes(1) }, false],
  ])('%s', (_name, overrides, expected) => {
    expect(minimumLifetimeOk(node(overrides), T0)).toBe(expected);
  });
});

describe('noChangeSkip (polling, capped at 5 minutes)', () => {
  const fp = 'fingerprint-a';
  const searched = (at: number, foundNothing = true, fingerprint = fp): Pick<PassState, 'cluster'> => ({
    cluster: recordSearch({ version: 1 }, fingerprint, foundNothing, at),
  });
  it.each<[string, Pick<PassState, 'cluster'>, number, boolean]>([
    ['never searched', { cluster: { version: 0 } }, T0, false],
    ['same cluster, found nothing, 3 min ago: skip', searched(T0 - minutes(3)), T0, true],
    ['same cluster, found nothing, 4m59s ago: skip', searched(T0 - minutes(5) + 1000), T0, true],
    ['same cluster, found nothing, 5 min ago: search again', searched(T0 - minutes(5)), T0, false],
    ['same cluster, but the last search found something', searched(T0 - minutes(1), false), T0, false],
    ['cluster changed', searched(T0 - minutes(1), true, 'fingerprint-b'), T0, false],
    ['clock went backwards (CLI --now earlier): search', searched(T0 + minutes(1)), T0, false],
  ])('%s', (_name, state, now, skip) => {
    const result = noChangeSkip(fp, state, now);
    expect(result.skip).toBe(skip);
    if (skip) expect(result.until).toBe(state.cluster.lastSearchAt! + minutes(5));
  });
});

describe('clusterFingerprint', () => {
  const n1 = node({ name: 'n1' });
  const n2 = node({ name: 'n2' });
  const p1 = on('n1', pod({ name: 'a' }))[0]!;
  const p2 = on('n2', pod({ name: 'b' }))[0]!;
  const base = cluster({ nodes: [n1, n2], pods: [p1, p2], pdbs: [pdb({ name: 'web' })] });
  const fp = clusterFingerprint(base);

  it('ignores listing order', () => {
    expect(clusterFingerprint(cluster({ ...base, nodes: [n2, n1], pods: [p2, p1] }))).toBe(fp);
    expect(fp).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each<[string, Cluster]>([
    ['a pod changes phase', { ...base, pods: [{ ...p1, phase: 'Succeeded' }, p2] }],
    ['a pod moves', { ...base, pods: [{ ...p1, nodeName: 'n2' }, p2] }],
    ['a pod appears', { ...base, pods: [p1, p2, pod({ name: 'c' })] }],
    ['a node is tainted', { ...base, nodes: [{ ...n1, taints: [{ key: 'k', effect: 'NoSchedule' }] }, n2] }],
    ['a node is cordoned', { ...base, nodes: [{ ...n1, unschedulable: true }, n2] }],
    ['a node becomes NotReady', { ...base, nodes: [{ ...n1, ready: false }, n2] }],
    ['a do-not-disrupt annotation is removed', { ...base, pods: [{ ...p1, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }, p2] }],
    ['a PDB allows no disruption', { ...base, pdbs: [{ ...base.pdbs[0]!, disruptionsAllowed: 0 }] }],
  ])('changes when %s', (_name, changed) => {
    expect(clusterFingerprint(changed)).not.toBe(fp);
  });

  it('folds in the pass\'s other inputs', () => {
    expect(clusterFingerprint(base, { pools: ['default'] })).not.toBe(clusterFingerprint(base, { pools: ['other'] }));
    expect(clusterFingerprint(base, { a: 1, b: 2 })).toBe(clusterFingerprint(base, { b: 2, a: 1 }));
  });
});

describe('diffPassState (what save writes)', () => {
  const a = nodeState({ name: 'a', version: 3 });
  const b = nodeState({ name: 'b', version: 1 });
  const previous: PassState = { ...emptyPassState(), nodes: { a, b }, cluster: { version: 5, lastSearchAt: T0 - minutes(3) } };

  it('nothing changed: nothing to write', () => {
    expect(diffPassState(previous, previous)).toEqual({ putNodes: [], deleteNodes: [] });
  });

  it('writes changed and new nodes, deletes gone ones, writes the cluster when changed', () => {
    const c = nodeState({ name: 'c', version: 0 });
    const next: PassState = {
      ...previous,
      nodes: { a: { ...a, lastEvaluatedAt: T0 }, c },
      cluster: { ...previous.cluster, lastSearchAt: T0 },
    };
    const changes = diffPassState(next, previous);
    expect(changes.putNodes.map((n) => n.name)).toEqual(['a', 'c']);
    expect(changes.deleteNodes.map((n) => n.name)).toEqual(['b']);
    expect(changes.cluster?.lastSearchAt).toBe(T0);
    const stored = applyChanges(next, changes);
    expect(stored.nodes.a!.version).toBe(4);
    expect(stored.nodes.c!.version).toBe(1);
    expect(stored.cluster.version).toBe(6);
  });

  it('an explicitly undefined member is no change', () => {
    const next: PassState = { ...previous, nodes: { a: { ...a, graceProtectedUntil: undefined }, b } };
    expect(diffPassState(next, previous).putNodes).toEqual([]);
  });
});
