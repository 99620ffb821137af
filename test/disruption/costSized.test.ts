// A move's new nodes sized for cost (methods/costEfficient.ts): Karpenter's methods land a merge on the
// one type that holds all its pods; when smaller types cost less per unit of what the pods ask, the same
// nodes repacked onto several of them save more, and that move is taken instead.
import { describe, expect, it } from 'vitest';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import { runConsolidationPass } from '../../src/core/disruption/pass.ts';
import type { Catalog, Cluster, NodePool } from '../../src/core/model/types.ts';
import { catalogOf, cluster, Gi, instanceType, m5Catalog, Mi, node, nodePool, on, overflowCatalog, overflowCluster, pod, T0 } from '../builders.ts';

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

describe('a move refused for a full new node, taken with a roomier one', () => {
  const double = { instanceType: 'm5.2xlarge', allocatable: { cpu: 7910, memory: 28783 * Mi, pods: 58 }, capacity: { cpu: 8000, memory: 32 * Gi, pods: 58 } };
  /**
   * a1 (a 1500m pod) and a2 (a 900m pod), two m5.2xlarge, merge beside `keep` (an m5.large with
   * `keepFreeMillis` free). Packed, the 1500m pod gets an m5.large of its own and the 900m one keep's
   * room; kube-scheduler may bind the 900m pod first, to the empty new node, and with 1000m free on keep
   * the 1500m pod then fits nowhere. An m5.xlarge that keeps room for the largest pod beside what it is
   * planned to hold binds both in any order, and still saves.
   */
  function merge(keepFreeMillis: number) {
    const nodes = [node({ name: 'keep', nodePool: undefined }), node({ name: 'a1', ...double }), node({ name: 'a2', ...double })];
    const pods = [
      ...on('keep', pod({ requests: { cpu: 1930 - keepFreeMillis, memory: 128 * Mi } })),
      ...on('a1', pod({ name: 'big', requests: { cpu: 1500, memory: 128 * Mi } })),
      ...on('a2', pod({ name: 'mid', requests: { cpu: 900, memory: 128 * Mi } })),
    ];
    return runConsolidationPass({ cluster: cluster({ nodes, pods }), nodePools: [nodePool()], catalog: m5Catalog(), nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull, methods: ['multi-node'] });
  }

  it.each([
    ['1000m free on keep: the packed m5.large is refused, an m5.xlarge with room is taken', 1000, 'm5.xlarge', 0.576],
    ['1600m free on keep: the packed m5.large holds in every order and is taken', 1600, 'm5.large', 0.672],
  ] as const)('%s', (_name, keepFreeMillis, type, savings) => {
    const out = merge(keepFreeMillis);
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]!.nodes).toEqual(['a1', 'a2']);
    expect(out.decisions[0]!.replacements.map((r) => r.instanceTypes[0])).toEqual([type]);
    expect(out.decisions[0]!.savingsPerHour).toBeCloseTo(savings, 6);
  });
});

describe('a move whose pods overflow its new node into small holes: taken with every moved pod on new nodes', () => {
  // c (a $0.80 `huge`) holds two 900m pods and twenty 100m ones. Three kept nodes have 600m holes at 85%
  // allocated. Packed, the small pods fill the holes and the rest fits a 2-core `tiny`; kept room for a
  // 900m pod, a 3-core `mid3`. Either way, least-allocated scoring sends pods to the new node until it is
  // as allocated as the kept ones, more than it was planned to hold, and the last 900m pod finds no hole
  // big enough: both are refused. With every moved pod planned on one new node (a 4-core `e4` holds all
  // 3,800m) no binding order can fill it: a pod bound elsewhere only leaves it more room. That move is
  // taken (before the one keeping room for a 900m pod beside them, a dearer 5-core `mid5`).
  const catalog = overflowCatalog(0.8);
  const overflowing = (holeMillis: number) => overflowCluster(holeMillis, 2, 20);

  it('replaces c with an e4 holding all 22 pods', () => {
    const out = pass(overflowing(600), [nodePool()], catalog);
    expect(out.decisions.map((d) => [d.action, d.nodes, d.replacements.map((r) => r.instanceTypes[0])])).toEqual([['replace', ['c'], ['e4']]]);
    const destinations = Object.values(out.decisions[0]!.podDestinations ?? {});
    expect(destinations).toHaveLength(22);
    expect(new Set(destinations).size).toBe(1);
    expect(destinations[0]).not.toMatch(/^e\d$/);
  });

  it.each([
    ['1200m holes: the packed tiny is still refused (the holes fill before the last 900m pod comes)', 1200, [['replace', ['c'], ['e4']]]],
    ['3000m holes: the kept nodes take every pod in any order, and c is deleted', 3000, [['delete', ['c'], []]]],
  ] as const)('%s', (_name, holeMillis, expected) => {
    const out = pass(overflowing(holeMillis), [nodePool()], catalog);
    expect(out.decisions.map((d) => [d.action, d.nodes, d.replacements.map((r) => r.instanceTypes[0])])).toEqual(expected);
  });
});

/** A nearly full `big`: 3,900m, a 1300m pod the largest. */
const FULL_NODE = [1300, 900, 600, 400, 100, 100, 100, 100, 100, 100, 100];

/**
 * Four kept (do-not-disrupt) 4-core `big` nodes, each with a hole of `holeMillis`, and beside them the
 * nodes of `movable`, each a `big` holding pods of these cpu requests.
 */
function keptWithHoles(holeMillis: number, movable: Record<string, readonly number[]>): Cluster {
  const big = (name: string, annotations: Record<string, string> = {}) => node({ name, instanceType: 'big', allocatable: { cpu: 4000, memory: 16 * Gi, pods: 58 }, annotations });
  const kept = ['k1', 'k2', 'k3', 'k4'].map((name) => big(name, { 'karpenter.sh/do-not-disrupt': 'true' }));
  return cluster({
    nodes: [...kept, ...Object.keys(movable).map((name) => big(name))],
    pods: [
      ...kept.flatMap((k) => on(k.name, pod({ requests: { cpu: 4000 - holeMillis, memory: 16 * Mi } }))),
      ...Object.entries(movable).flatMap(([name, sizes]) => on(name, ...sizes.map((cpu) => pod({ requests: { cpu, memory: 16 * Mi } })))),
    ],
  });
}

describe('a full node onto one cheaper node of its size that holds every pod', () => {
  // n (a $0.40 4-core `big`) is nearly full: 3,900m of pods, a 1300m one the largest. Four kept nodes
  // have 1000m holes. Packed, the pods that fit go to the holes and the rest to a 3-core `half` ($0.27);
  // kept room for a 1300m pod, the same. Bound smallest first, the small pods fill the empty `half`
  // while it is the least allocated node, and the 1300m pod finds no room: both are refused. A `same`
  // ($0.36, 4 cores) planned to hold all eleven pods has room for each whatever the order: taken.
  it('replaces n with a same holding all eleven pods', () => {
    const catalog = catalogOf(['half', 3000, 16 * Gi, 58, 0.27], ['same', 4000, 16 * Gi, 58, 0.36], ['big', 4000, 16 * Gi, 58, 0.4]);
    const out = pass(keptWithHoles(1000, { n: FULL_NODE }), [nodePool()], catalog);
    expect(out.decisions.map((d) => [d.action, d.nodes, d.replacements.map((r) => r.instanceTypes[0])])).toEqual([['replace', ['n'], ['same']]]);
    const destinations = Object.values(out.decisions[0]!.podDestinations ?? {});
    expect(destinations).toHaveLength(11);
    expect(new Set(destinations).size).toBe(1);
  });
});

describe('a delete refused for a pod that spreading strands: the node onto one cheaper node that holds every pod', () => {
  // n (a $0.40 4-core `big`) holds 3,900m: a 1300m pod, 900m, 600m, 400m and seven 100m ones. Four kept
  // nodes have holes that hold them all when packed (the 1300m pod in one, 900m + 400m in another, the
  // rest in a third), so single-node plans a delete. Bound smallest first, least-allocated scoring spreads
  // the 100m pods over all four holes and the 1300m pod finds none left big enough: the delete is refused.
  // A `same` ($0.36, 4 cores) planned to hold every pod has room for each in any order: that replacement
  // is taken instead. With holes of 3000m the delete holds in every order and stays.
  const catalog = catalogOf(['same', 4000, 16 * Gi, 58, 0.36], ['big', 4000, 16 * Gi, 58, 0.4]);
  const withHoles = (holeMillis: number): Cluster => keptWithHoles(holeMillis, { n: FULL_NODE });

  it.each([
    ['1300m holes: the delete is refused, n goes onto one same', 1300, [['replace', ['n'], ['same']]]],
    ['3000m holes: the delete holds in any order', 3000, [['delete', ['n'], []]]],
  ] as const)('%s', (_name, holeMillis, expected) => {
    const out = pass(withHoles(holeMillis), [nodePool()], catalog);
    expect(out.decisions.map((d) => [d.action, d.nodes, d.replacements.map((r) => r.instanceTypes[0])])).toEqual(expected);
  });

  it('a merge whose delete is refused the same way: both nodes onto one same', () => {
    // n1 and n2 (two $0.40 `big`) hold 1,900m (the 1300m pod and six 100m ones) and 2,000m; packed, all
    // of it fits the four 1300m holes, and bound smallest first the 100m pods leave the 1300m pod none.
    // Every pod of both on one `same` ($0.36) saves $0.44 in any order.
    const out = pass(keptWithHoles(1300, { n1: [1300, 100, 100, 100, 100, 100, 100], n2: [900, 600, 400, 100] }), [nodePool()], catalog);
    expect(out.decisions.map((d) => [d.action, [...d.nodes].sort(), d.replacements.map((r) => r.instanceTypes[0])])).toEqual([['replace', ['n1', 'n2'], ['same']]]);
    expect(out.decisions[0]!.savingsPerHour).toBeCloseTo(0.44, 6);
  });

  it('says why the delete was not taken when no cheaper node holds every pod', () => {
    const dearer = catalogOf(['big', 4000, 16 * Gi, 58, 0.4]);
    const out = pass(withHoles(1300), [nodePool()], dearer);
    expect(out.decisions).toEqual([]);
    expect(out.notes.get('n')?.join(' ')).toMatch(/would stay Pending/);
  });
});

describe('a move too large for one cheaper node: taken with its new node keeping a largest pod\'s room', () => {
  // c (a $0.80 16-core `t16`) holds a 1300m pod and thirty-four 200m ones (8,100m). Three kept nodes have
  // 1500m holes. No cheaper single node holds all 8,100m, so every pod on one new node saves nothing.
  // Packed, the holes take 4,500m and an 8-core `t8` the rest; bound smallest first, the 200m pods
  // fill the empty t8 while it is the least allocated node and the holes after it, and the 1300m pod
  // finds no room: refused. With the t8 planned to keep 1300m free beside what it holds (more of the
  // pods planned into the holes), whichever pods take the holes first, the 1300m pod finds that room:
  // taken, saving the t16's price less the t8's.
  const catalog = catalogOf(
    ['t2', 2000, 64 * Gi, 110, 0.1],
    ['t4', 4000, 64 * Gi, 110, 0.2],
    ['t8', 8000, 64 * Gi, 110, 0.4],
    ['t16', 16000, 64 * Gi, 110, 0.8],
  );
  const withSmallPods = (count: number): Cluster => {
    const kept = ['k1', 'k2', 'k3'].map((name) => node({ name, instanceType: 't4', allocatable: { cpu: 4000, memory: 64 * Gi, pods: 110 }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }));
    const c = node({ name: 'c', instanceType: 't16', allocatable: { cpu: 16000, memory: 64 * Gi, pods: 110 } });
    return cluster({
      nodes: [...kept, c],
      pods: [
        ...kept.flatMap((k) => on(k.name, pod({ requests: { cpu: 2500, memory: 16 * Mi } }))),
        ...on('c', pod({ name: 'large', requests: { cpu: 1300, memory: 16 * Mi } }), ...Array.from({ length: count }, (_, i) => pod({ name: `small-${i}`, requests: { cpu: 200, memory: 16 * Mi } }))),
      ],
    });
  };

  it('replaces c with a t8 that keeps room for the 1300m pod', () => {
    const out = pass(withSmallPods(34), [nodePool()], catalog);
    expect(out.decisions.map((d) => [d.action, d.nodes, d.replacements.map((r) => r.instanceTypes[0])])).toEqual([['replace', ['c'], ['t8']]]);
    const d = out.decisions[0]!;
    expect(d.savingsPerHour).toBeCloseTo(0.4, 6);
    const onNew = Object.entries(d.podDestinations ?? {}).filter(([, destination]) => !/^k\d$/.test(destination));
    const millis = (key: string) => (key.endsWith('/large') ? 1300 : 200);
    // What the t8 is planned to hold leaves at least 1300m of its 8000m free.
    expect(onNew.reduce((sum, [key]) => sum + millis(key), 0)).toBeLessThanOrEqual(8000 - 1300);
  });
});
