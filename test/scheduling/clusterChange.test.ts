// A cluster made by a change (scheduling/clusterChange.ts) is indexed from the previous cluster's index;
// each case checks that this index, and the simulations built on it, are what a fresh build of the same
// cluster gives (a fresh build: a copy of the cluster, which carries no record of the change).
import { describe, expect, it } from 'vitest';
import type { Cluster, Node, Pod } from '../../src/core/model/types.ts';
import { changeCluster, listedPositionsOn, podCount, unboundPods, type ClusterChange } from '../../src/core/scheduling/clusterChange.ts';
import { indexCluster, type IndexedCluster } from '../../src/core/scheduling/existingNodes.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import { cluster, daemonSetPod, m5Catalog, Mi, node, nodePool, on, pod } from '../builders.ts';

const spread = (app: string): Partial<Pod> => ({
  labels: { app },
  topologySpread: [
    { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app } } },
  ],
});
const antiHost = (app: string): Partial<Pod> => ({
  labels: { app },
  podAntiAffinity: [{ labelSelector: { matchLabels: { app } }, topologyKey: 'kubernetes.io/hostname', namespaces: [] }],
});

function start(): Cluster {
  const nodes = ['a', 'b', 'c', 'd'].map((name, i) => node({ name, zone: i % 2 ? 'us-east-1b' : 'us-east-1a' }));
  return cluster({
    nodes,
    pods: [
      ...on('a', pod({ name: 'web-1', ...spread('web') }), pod({ name: 'db-1', ...antiHost('db') }), daemonSetPod('a')),
      ...on('b', pod({ name: 'web-2', ...spread('web') }), pod({ name: 'ports', hostPorts: [{ port: 8080, protocol: 'TCP' }] })),
      ...on('c', pod({ name: 'db-2', ...antiHost('db') }), pod({ name: 'done', phase: 'Succeeded' }), pod({ name: 'leaving', terminating: true })),
      ...on('d', pod({ name: 'web-3', ...spread('web') })),
      pod({ name: 'pending' }),
    ],
  });
}

const uidOn = (c: Cluster, nodeName: string): Map<string, string> => new Map(c.pods.filter((p) => p.nodeName === nodeName && p.phase !== 'Succeeded' && !p.terminating).map((p) => [p.uid, 'b']));
const fresh = (c: Cluster): Cluster => ({ ...c, nodes: [...c.nodes], pods: [...c.pods] });
const replacement = (name: string): Node => node({ name, zone: 'us-east-1b', allocatable: { cpu: 3920, memory: 15 * 1024 * Mi, pods: 58 } });

/** What a simulation sees of an index (the pods compared by identity, the rest by value). */
function summary(indexed: IndexedCluster) {
  return {
    nodes: indexed.nodes.map(({ node: n, ...rest }) => ({ ...rest, node: n.name })),
    byName: [...indexed.nodeIndexByName],
    counted: indexed.counted.map((p) => `${p.uid}@${p.nodeName}`),
    countedNodes: [...indexed.countedNodes],
    podsByNode: indexed.podsByNode.map((pods) => pods.map((p) => p.uid).sort()),
    listedOn: [...indexed.listedOn],
  };
}

interface Case {
  readonly name: string;
  readonly change: (c: Cluster) => ClusterChange;
}

describe('a changed cluster is indexed as a fresh build indexes it', () => {
  it.each<Case>([
    { name: 'a node removed with its pods', change: () => ({ removedNodes: new Set(['d']) }) },
    { name: "a node removed, its pods rebound to another node", change: (c) => ({ removedNodes: new Set(['a']), rebound: uidOn(c, 'a') }) },
    {
      name: 'a node replaced: pods rebound to the replacement, with its daemonset pod',
      change: (c) => ({
        removedNodes: new Set(['a']),
        rebound: new Map([...uidOn(c, 'a').keys()].map((uid) => [uid, 'new-1'])),
        addedNodes: [replacement('new-1')],
        addedPods: [daemonSetPod('new-1')],
      }),
    },
    {
      name: 'a node with a terminating and a finished pod removed (indexed afresh, same result)',
      change: (c) => ({ removedNodes: new Set(['c']), rebound: new Map(c.pods.filter((p) => p.nodeName === 'c').map((p) => [p.uid, 'd'])) }),
    },
    {
      name: 'pods evicted from a node that stays, a replacement added with its daemonset pod (a plan laid out)',
      change: (c) => ({
        removedNodes: new Set(),
        removedPods: c.pods.filter((p) => p.nodeName === 'a' && !p.isDaemonSetPod),
        addedNodes: [replacement('new-1')],
        addedPods: [daemonSetPod('new-1')],
      }),
    },
    { name: 'a pod holding a host port evicted from a node that stays', change: (c) => ({ removedNodes: new Set(), removedPods: c.pods.filter((p) => p.name === 'ports') }) },
    {
      name: 'a finished pod removed from a node that stays (indexed afresh, same result)',
      change: (c) => ({ removedNodes: new Set(), removedPods: c.pods.filter((p) => p.name === 'done') }),
    },
    {
      name: 'a node removed, a pod added bound to no node (the pending pods follow the change)',
      change: () => ({ removedNodes: new Set(['d']), addedPods: [pod({ name: 'pending-2' })] }),
    },
    {
      name: 'moved pods appended to existing nodes, host ports included',
      change: (c) => ({
        removedNodes: new Set(['b']),
        addedPods: c.pods.filter((p) => p.nodeName === 'b' && !p.isDaemonSetPod).map((p) => ({ ...p, nodeName: 'c' })),
      }),
    },
  ])('$name', ({ change }) => {
    const first = start();
    indexCluster(first);
    const once = changeCluster(first, change(first));
    const twice = changeCluster(once, { removedNodes: new Set(['d']), rebound: new Map(once.pods.filter((p) => p.nodeName === 'd').map((p) => [p.uid, 'c'])) });
    for (const changed of [once, twice]) {
      expect(summary(indexCluster(changed))).toEqual(summary(indexCluster(fresh(changed))));
      expect(podCount(changed)).toBe(changed.pods.length);
      expect(unboundPods(changed)).toEqual(changed.pods.filter((p) => p.nodeName === undefined));
    }
  });

  it('simulates a changed cluster as a fresh copy of it, topology and host ports included', () => {
    const first = start();
    const input = { nodePools: [nodePool()], catalog: m5Catalog() };
    // The first simulator works out its label lists and match sets: the changed cluster's index starts from them.
    const movers = first.pods.filter((p) => p.nodeName === 'a' && !p.isDaemonSetPod);
    createSimulator({ cluster: first, ...input }).simulate({ excludedNodes: new Set(['a']), pods: movers, maxNewNodes: 1 });
    const changed = changeCluster(first, { removedNodes: new Set(['a']), rebound: uidOn(first, 'a'), addedNodes: [replacement('new-1')], addedPods: [daemonSetPod('new-1')] });
    const request = {
      excludedNodes: new Set(['b']),
      pods: [...changed.pods.filter((p) => p.nodeName === 'b'), pod({ name: 'web-4', ...spread('web') }), pod({ name: 'db-3', ...antiHost('db') })],
      maxNewNodes: 1,
    };
    const derived = createSimulator({ cluster: changed, ...input }).simulate(request);
    const rebuilt = createSimulator({ cluster: fresh(changed), ...input }).simulate(request);
    const placed = (r: typeof derived) => r.placements.map((p) => `${p.pod.name}->${p.nodeName}`);
    expect(placed(derived)).toEqual(placed(rebuilt));
    expect(derived.unschedulable.map((u) => u.reason)).toEqual(rebuilt.unschedulable.map((u) => u.reason));
    expect(placed(derived).length).toBeGreaterThan(0);
  });
});

describe('a cluster changed twice, the cluster in between never simulated', () => {
  // The index in between only carries its seed on (PodIndexSeed.composedWith): the pods it added (db-9
  // and web-9 on new-1) are not in the first index's lists, so the last index must read them afresh.
  it('simulates as a fresh copy of it: the pods added in between repel and spread as they should', () => {
    const first = start();
    const input = { nodePools: [nodePool()], catalog: m5Catalog() };
    const movers = first.pods.filter((p) => p.nodeName === 'a' && !p.isDaemonSetPod);
    createSimulator({ cluster: first, ...input }).simulate({ excludedNodes: new Set(['a']), pods: movers, maxNewNodes: 1 });
    const between = changeCluster(first, {
      removedNodes: new Set(['a']),
      rebound: uidOn(first, 'a'),
      addedNodes: [replacement('new-1')],
      addedPods: [daemonSetPod('new-1'), ...on('new-1', pod({ name: 'db-9', ...antiHost('db') }), pod({ name: 'web-9', ...spread('web') }))],
    });
    const last = changeCluster(between, { removedNodes: new Set(['d']), rebound: new Map(between.pods.filter((p) => p.nodeName === 'd').map((p) => [p.uid, 'c'])) });
    const request = { excludedNodes: new Set<string>(), pods: [pod({ name: 'db-3', ...antiHost('db') }), pod({ name: 'web-4', ...spread('web') }), pod({ name: 'web-5', ...spread('web') })], maxNewNodes: 0, placement: 'least-allocated' as const };
    const derived = createSimulator({ cluster: last, ...input }).simulate(request);
    const rebuilt = createSimulator({ cluster: fresh(last), ...input }).simulate(request);
    const placed = (r: typeof derived) => r.placements.map((p) => `${p.pod.name}->${p.nodeName}`);
    expect(placed(derived)).toEqual(placed(rebuilt));
    expect(derived.unschedulable.map((u) => u.reason)).toEqual(rebuilt.unschedulable.map((u) => u.reason));
    // b, c and new-1 each hold a db pod (db-9 added in between): the new one fits on none of them.
    expect(derived.unschedulable.map((u) => u.pod.name)).toEqual(['db-3']);
    expect(placed(derived)).toHaveLength(2);
  });
});

describe("the pod positions of a changed cluster's nodes", () => {
  it('are what walking its pod list finds, in list order, asked once or again', () => {
    const first = start();
    const changed = changeCluster(first, { removedNodes: new Set(['c']), rebound: uidOn(first, 'c'), addedNodes: [replacement('new-1')], addedPods: on('new-1', pod({ name: 'moved' })) });
    const again = changeCluster(changed, { removedNodes: new Set(['a']), addedNodes: [], addedPods: [] });
    for (const c of [first, changed, again]) {
      indexCluster(c);
      const names = c.nodes.map((n) => n.name);
      const walk = new Map(names.map((name) => [name, c.pods.flatMap((p, at) => (p.nodeName === name ? [at] : []))]));
      expect(listedPositionsOn(c, names)).toEqual(walk);
      expect(listedPositionsOn(c, names.slice(1))).toEqual(new Map(names.slice(1).map((name) => [name, walk.get(name)])));
    }
    expect(listedPositionsOn(changed, ['b']).get('b')!.length).toBeGreaterThan(2);
  });
});
