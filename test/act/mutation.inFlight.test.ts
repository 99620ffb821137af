// Mutation-testing gaps (npm run mutation) in the in-flight protection (core/disruption/inFlight.ts):
// the cluster the next pass plans on while commands are unfinished. Nodes of such commands (old ones
// and replacements) are in flight; the pods still on draining nodes are placed first on their
// command's own replacement, then anywhere else; what fits nowhere is pending.
import { describe, expect, it } from 'vitest';
import { planAroundInFlight, unplacedNote, type InFlightInput } from '../../src/core/disruption/inFlight.ts';
import type { Cluster, Pod } from '../../src/core/model/types.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import type { DisruptionCommand, ReplacementSpec } from '../../src/core/state/types.ts';
import { cluster, daemonSet, m5Catalog, minutes, node, nodePool, on, pod, T0 } from '../builders.ts';

const disrupted = [{ key: 'eks-consolidator.io/disrupting', effect: 'NoSchedule' as const }];
const LARGE: ReplacementSpec = { instanceTypes: ['m5.large'], capacityType: 'on-demand', zones: ['us-east-1b'], pricePerHour: 0.096 };

function command(overrides: Partial<DisruptionCommand>): DisruptionCommand {
  return {
    id: 'c1',
    createdAt: T0 - minutes(20),
    nodes: ['a'],
    method: 'single-node',
    reason: 'Underutilized',
    step: 'evicting',
    updatedAt: T0 - minutes(1),
    version: 0,
    ...overrides,
  };
}

function view(c: Cluster, commands: DisruptionCommand[], over: Partial<InFlightInput> = {}) {
  return planAroundInFlight({
    cluster: c,
    commands,
    nodePools: [nodePool()],
    catalog: m5Catalog(),
    nowMs: T0,
    replacementPool: () => 'default',
    simulatorFactory: createSimulator,
    ...over,
  });
}

const where = (c: Cluster, name: string) => c.pods.find((p) => p.name === name);
const workloadPods = (c: Cluster) => c.pods.filter((p) => !p.isDaemonSetPod);

describe('nodes in flight', () => {
  it('old nodes still there and registered replacements are in flight; a vanished old node is not', () => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'r', instanceId: 'i-r' }), node({ name: 'other' })] });
    const v = view(c, [command({ nodes: ['a', 'vanished'], replacements: [LARGE], launched: [{ index: 0, ref: 'i-r', instanceId: 'i-r' }] })]);
    expect([...v.inFlight].sort()).toEqual(['a', 'r']);
  });

  it('finds a registered replacement by its Node name when its instance is not recorded', () => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'r', instanceId: 'i-r' })] });
    const v = view(c, [command({ replacements: [LARGE], launched: [{ index: 0, ref: 'claim-r', nodeName: 'r' }] })]);
    expect([...v.inFlight].sort()).toEqual(['a', 'r']);
    expect(v.cluster.nodes.map((n) => n.name)).toEqual(['a', 'r']);
  });

  it('closes draining nodes to new pods, and shows the command\'s registered replacement Ready and free of start-up taints', () => {
    const notYet = node({
      name: 'r',
      instanceId: 'i-r',
      ready: false,
      unschedulable: true,
      taints: [
        { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
        { key: 'example.com/team', effect: 'NoSchedule' },
      ],
    });
    const c = cluster({ nodes: [node({ name: 'a' }), notYet, node({ name: 'other' })] });
    const v = view(c, [command({ replacements: [LARGE], launched: [{ index: 0, ref: 'i-r', instanceId: 'i-r' }] })]);
    const byName = new Map(v.cluster.nodes.map((n) => [n.name, n]));
    expect(byName.get('a')).toMatchObject({ unschedulable: true });
    expect(byName.get('r')).toMatchObject({ ready: true, unschedulable: false, taints: [{ key: 'example.com/team', effect: 'NoSchedule' }] });
    expect(byName.get('other')).toBe(c.nodes[2]);
  });
});

describe('a replacement not registered yet', () => {
  it('is counted as the node it will be: named after the command, of its type, pool, zone and capacity type, with the pool\'s taints and daemonset pods', () => {
    const pool = nodePool({ templateLabels: { team: 'web' }, templateTaints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }] });
    const ds = daemonSet({ name: 'agent' });
    const c = cluster({ nodes: [node({ name: 'a' })], daemonSets: [ds], pods: on('a', pod({ name: 'x', tolerations: [{ key: 'dedicated', operator: 'Exists' }] })) });
    const v = view(c, [command({ replacements: [LARGE, { ...LARGE, capacityType: 'spot', zones: [] }], launched: [{ index: 0, ref: 'i-pending' }] })], { nodePools: [pool] });
    const promised = v.cluster.nodes.filter((n) => n.name.includes('of-c1'));
    expect(promised.map((n) => n.name)).toEqual(['replacement-of-c1', 'replacement-2-of-c1']);
    const [first, second] = promised;
    expect(first).toMatchObject({
      instanceType: 'm5.large',
      capacityType: 'on-demand',
      zone: 'us-east-1b',
      ready: true,
      readySince: T0,
      deleting: false,
      unschedulable: false,
      createdAt: T0 - minutes(20),
      taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }],
      allocatable: m5Catalog().instanceTypes[0]!.allocatable,
    });
    expect(first!.labels).toMatchObject({
      team: 'web',
      'kubernetes.io/hostname': 'replacement-of-c1',
      'node.kubernetes.io/instance-type': 'm5.large',
      'karpenter.sh/capacity-type': 'on-demand',
      'topology.kubernetes.io/zone': 'us-east-1b',
      'karpenter.sh/nodepool': 'default',
    });
    expect(second).toMatchObject({ capacityType: 'spot' });
    expect(second).not.toHaveProperty('zone');
    expect(second!.labels).not.toHaveProperty(['topology.kubernetes.io/zone']);
    expect([...v.inFlight].sort()).toEqual(['a', 'replacement-2-of-c1', 'replacement-of-c1']);
    // The pool's daemonset runs on each promised node, and the pod went to the command's own replacement.
    expect(v.cluster.pods.filter((p) => p.isDaemonSetPod).map((p) => p.nodeName)).toEqual(['replacement-of-c1', 'replacement-2-of-c1']);
    expect(where(v.cluster, 'x')?.nodeName).toMatch(/of-c1$/);
  });

  it('takes its pool from the record when the spec does not say; an unknown type promises nothing', () => {
    const c = cluster({ nodes: [node({ name: 'a' })] });
    const v = view(c, [command({ replacements: [LARGE] })], { nodePools: [nodePool({ name: 'other', templateLabels: { from: 'record' } })], replacementPool: () => 'other' });
    expect(v.cluster.nodes.find((n) => n.name === 'replacement-of-c1')?.labels).toMatchObject({ from: 'record', 'karpenter.sh/nodepool': 'other' });
    const withSpecPool = view(c, [command({ replacements: [{ ...LARGE, nodePool: 'default' }] })], {
      nodePools: [nodePool({ name: 'other', templateLabels: { from: 'record' } }), nodePool({ name: 'default', templateLabels: { from: 'spec' } })],
      replacementPool: () => 'other',
    });
    expect(withSpecPool.cluster.nodes.find((n) => n.name === 'replacement-of-c1')?.labels).toMatchObject({ from: 'spec', 'karpenter.sh/nodepool': 'default' });
    const noPool = view(c, [command({ replacements: [LARGE] })], { replacementPool: () => undefined });
    const promised = noPool.cluster.nodes.find((n) => n.name === 'replacement-of-c1')!;
    expect(promised.labels).not.toHaveProperty(['karpenter.sh/nodepool']);
    expect(promised.taints).toEqual([]);
    const unknown = view(c, [command({ replacements: [{ ...LARGE, instanceTypes: ['x9.huge', 'm5.large'] }] })]);
    expect(unknown.cluster.nodes.map((n) => n.name)).toEqual(['a']);
    expect([...unknown.inFlight]).toEqual(['a']);
  });
});

describe('a rollback', () => {
  it('gives the old nodes back (their pods stay, open to pods) and moves the pods off its registered replacement', () => {
    const c = cluster({
      nodes: [node({ name: 'a', taints: disrupted, unschedulable: false }), node({ name: 'r', instanceId: 'i-r' }), node({ name: 'other' })],
      pods: [...on('a', pod({ name: 'stays' })), ...on('r', pod({ name: 'leaves' }))],
    });
    const v = view(c, [command({ step: 'rollingBack', replacements: [LARGE, LARGE], launched: [{ index: 0, ref: 'i-r', instanceId: 'i-r' }] })]);
    expect([...v.inFlight].sort()).toEqual(['a', 'r']);
    expect(where(v.cluster, 'stays')?.nodeName).toBe('a');
    expect(where(v.cluster, 'leaves')?.nodeName).toMatch(/^(a|other)$/);
    const byName = new Map(v.cluster.nodes.map((n) => [n.name, n]));
    expect(byName.get('a')?.unschedulable).toBe(false);
    expect(byName.get('r')?.unschedulable).toBe(true);
    // No replacement is promised for a command being undone.
    expect(v.cluster.nodes.map((n) => n.name)).toEqual(['a', 'r', 'other']);
  });
});

describe('the pods of draining nodes', () => {
  it('go to their own command\'s replacement before any other room, and moving them ends their termination', () => {
    const leaving: Pod = { ...pod({ name: 'x' }), terminating: true };
    const c = cluster({
      nodes: [node({ name: 'a' }), node({ name: 'other' }), node({ name: 'r', instanceId: 'i-r' })],
      pods: [...on('a', leaving, pod({ name: 'y' }))],
    });
    const v = view(c, [command({ replacements: [LARGE], launched: [{ index: 0, ref: 'i-r', instanceId: 'i-r' }] })]);
    expect(workloadPods(v.cluster).map((p) => [p.name, p.nodeName, p.terminating])).toEqual([
      ['x', 'r', false],
      ['y', 'r', false],
    ]);
    expect(v.nominated.size).toBe(0);
    expect(v.unplaced).toEqual([]);
  });

  it('that do not fit on the replacement go elsewhere, and the node receiving them is nominated for the command', () => {
    const big = (name: string) => pod({ name, requests: { cpu: 1200, memory: 1024 ** 3 } });
    const c = cluster({
      nodes: [node({ name: 'a', instanceType: 'm5.xlarge' }), node({ name: 'r', instanceId: 'i-r' }), node({ name: 'other' })],
      pods: on('a', big('p1'), big('p2')),
    });
    const v = view(c, [command({ replacements: [LARGE], launched: [{ index: 0, ref: 'i-r', instanceId: 'i-r' }] })]);
    expect(workloadPods(v.cluster).map((p) => p.nodeName).sort()).toEqual(['other', 'r']);
    expect([...v.nominated]).toEqual([['other', 'c1']]);
    expect(v.unplaced).toEqual([]);
  });

  it('of a delete go anywhere but another draining node; daemonset, mirror and finished pods stay', () => {
    const c = cluster({
      nodes: [node({ name: 'a' }), node({ name: 'b' }), node({ name: 'e' })],
      pods: [
        ...on('a', pod({ name: 'web' }), pod({ name: 'ds', isDaemonSetPod: true }), pod({ name: 'mirror', isMirrorPod: true }), pod({ name: 'job', phase: 'Succeeded' }), pod({ name: 'failed', phase: 'Failed' })),
        ...on('b', pod({ name: 'api' })),
      ],
    });
    const v = view(c, [command({ nodes: ['a'] }), command({ id: 'c2', nodes: ['b'] })]);
    expect(where(v.cluster, 'web')?.nodeName).toBe('e');
    expect(where(v.cluster, 'api')?.nodeName).toBe('e');
    for (const name of ['ds', 'mirror', 'job', 'failed']) expect(where(v.cluster, name)?.nodeName, name).toBe('a');
    expect([...v.nominated].sort()).toEqual([['e', 'c2']]);
  });

  it('that fit nowhere are pending, off the node they are leaving', () => {
    const huge = pod({ name: 'huge', requests: { cpu: 1900, memory: 1024 ** 3 } });
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'f' })], pods: [...on('a', huge, pod({ name: 'small' })), ...on('f', pod({ name: 'filler', requests: { cpu: 1000, memory: 1024 ** 3 } }))] });
    const v = view(c, [command({})]);
    expect(v.unplaced.map((p) => p.name)).toEqual(['huge']);
    expect([...v.nominated]).toEqual([['f', 'c1']]);
    const pending = where(v.cluster, 'huge')!;
    expect(pending.nodeName).toBeUndefined();
    expect(pending.phase).toBe('Pending');
    expect(where(v.cluster, 'small')?.nodeName).toBe('f');
    expect(where(v.cluster, 'filler')?.nodeName).toBe('f');
  });

  it('nothing to place: the view keeps the cluster\'s pods where they are', () => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: on('b', pod({ name: 'elsewhere' })) });
    const v = view(c, [command({})]);
    expect(v.nominated.size).toBe(0);
    expect(v.unplaced).toEqual([]);
    expect(v.cluster.pods).toEqual(c.pods);
    expect([...v.inFlight]).toEqual(['a']);
  });
});

describe('several replacements, several commands', () => {
  it('each replacement is found by its own index: both registered are in flight, one not registered is promised', () => {
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'r1', instanceId: 'i-r1' }), node({ name: 'r2', instanceId: 'i-r2' })] });
    const both = view(c, [command({ replacements: [LARGE, LARGE], launched: [{ index: 0, ref: 'i-r1', instanceId: 'i-r1' }, { index: 1, ref: 'i-r2', instanceId: 'i-r2' }] })]);
    expect([...both.inFlight].sort()).toEqual(['a', 'r1', 'r2']);
    const one = view(c, [command({ replacements: [LARGE, LARGE], launched: [{ index: 0, ref: 'i-r1', instanceId: 'i-r1' }, { index: 1, ref: 'i-pending', instanceId: 'i-pending' }] })]);
    expect([...one.inFlight].sort()).toEqual(['a', 'r1', 'replacement-2-of-c1']);
  });

  it('a command\'s own replacement is kept for its own pods: another command\'s pods go there only if room is left', () => {
    // r has room for one 1.2-core pod: c1's. c2 (a delete) has a bigger pod that fits on r or e.
    const c = cluster({
      nodes: [node({ name: 'a' }), node({ name: 'b' }), node({ name: 'r', instanceId: 'i-r' }), node({ name: 'e' })],
      pods: [...on('a', pod({ name: 'mine', requests: { cpu: 1200, memory: 1024 ** 3 } })), ...on('b', pod({ name: 'theirs', requests: { cpu: 1300, memory: 1024 ** 3 } }))],
    });
    const v = view(c, [command({ replacements: [LARGE], launched: [{ index: 0, ref: 'i-r', instanceId: 'i-r' }] }), command({ id: 'c2', nodes: ['b'] })]);
    expect(where(v.cluster, 'mine')?.nodeName).toBe('r');
    expect(where(v.cluster, 'theirs')?.nodeName).toBe('e');
    expect([...v.nominated]).toEqual([['e', 'c2']]);
  });
});

describe('nodes someone else is deleting', () => {
  const karpenterDisrupted = [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' as const }];

  it.each([
    ['a deletion timestamp', { deleting: true }],
    ["Karpenter's disruption taint", { taints: karpenterDisrupted }],
  ])('%s: its workload pods are placed first, and the node that takes them is named for it', (_name, marked) => {
    const c = cluster({
      nodes: [node({ name: 'gone', ...marked }), node({ name: 'b' })],
      pods: [...on('gone', pod({ name: 'web' }), pod({ name: 'ds', isDaemonSetPod: true }), pod({ name: 'done', phase: 'Succeeded' }))],
    });
    const v = view(c, []);
    expect(where(v.cluster, 'web')?.nodeName).toBe('b');
    // Daemonset and finished pods go with their node.
    expect(where(v.cluster, 'ds')?.nodeName).toBe('gone');
    expect(where(v.cluster, 'done')?.nodeName).toBe('gone');
    expect([...v.nominatedForDeleting]).toEqual([['b', 'gone']]);
    expect([...v.nominated]).toEqual([]);
    // Not ours: not in flight, and it is not closed to pods by us.
    expect([...v.inFlight]).toEqual([]);
    expect(v.cluster.nodes.find((n) => n.name === 'gone')?.unschedulable).toBe(false);
    expect(v.unplaced).toEqual([]);
    expect(unplacedNote(v)).toBeUndefined();
  });

  it('a pod held by do-not-disrupt stays on the deleted node; one that fits nowhere is pending and the note says whose it is', () => {
    const huge = pod({ name: 'huge', requests: { cpu: 1900, memory: 1024 ** 3 } });
    const held = pod({ name: 'held', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
    const c = cluster({ nodes: [node({ name: 'gone', deleting: true }), node({ name: 'b' })], pods: [...on('gone', huge, held), ...on('b', pod({ name: 'filler', requests: { cpu: 1000, memory: 1024 ** 3 } }))] });
    const v = view(c, []);
    expect(where(v.cluster, 'held')?.nodeName).toBe('gone');
    expect(v.unplaced.map((p) => p.name)).toEqual(['huge']);
    expect(v.unplacedOffDeleting).toBe(1);
    expect(where(v.cluster, 'huge')).toMatchObject({ phase: 'Pending' });
    expect(where(v.cluster, 'huge')?.nodeName).toBeUndefined();
    expect(unplacedNote(v)).toBe('1 pod(s) of nodes being deleted have no place yet (default/huge): nothing new is decided until they do');
  });

  it('a node both our command and another deletion send pods to is named for our command only', () => {
    const c = cluster({
      nodes: [node({ name: 'a' }), node({ name: 'gone', deleting: true }), node({ name: 'b' })],
      pods: [...on('a', pod({ name: 'mine' })), ...on('gone', pod({ name: 'theirs' }))],
    });
    const v = view(c, [command({})]);
    expect(where(v.cluster, 'mine')?.nodeName).toBe('b');
    expect(where(v.cluster, 'theirs')?.nodeName).toBe('b');
    expect([...v.nominated]).toEqual([['b', 'c1']]);
    expect([...v.nominatedForDeleting]).toEqual([]);
  });

  it('the note names both kinds when both have pods with no place', () => {
    const huge = (name: string) => pod({ name, requests: { cpu: 1900, memory: 1024 ** 3 } });
    const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'gone', deleting: true })], pods: [...on('a', huge('h1')), ...on('gone', huge('h2'), huge('h3'), huge('h4'))] });
    const v = view(c, [command({})]);
    expect(v.unplaced).toHaveLength(4);
    expect(v.unplacedOffDeleting).toBe(3);
    expect(unplacedNote(v)).toMatch(/^4 pod\(s\) of unfinished disruption commands and of nodes being deleted have no place yet \(default\/h\d, default\/h\d, default\/h\d, \.\.\.\)/);
  });
});
