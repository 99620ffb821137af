// The m-to-n repack (docs/differences-from-karpenter.md, "It adds"): splits of one node into two cheaper
// ones (kubernetes-sigs/karpenter#1442), 3-into-2 repacks, on-demand -> spot swaps of the same size, and
// giant merges cut to a bounded size.
import { describe, expect, it } from 'vitest';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import { runConsolidationPass, type PassInput } from '../../src/core/disruption/pass.ts';
import { parseReplacementBound } from '../../src/core/disruption/sizeBound.ts';
import type { Catalog, Cluster, ConsolidationPolicy, InstanceType, NodePool, Pod, Resources } from '../../src/core/model/types.ts';
import { cluster, Gi, instanceType, m5Catalog, Mi, node, nodePool, on, overflowCatalog, overflowCluster, pod, T0 } from '../builders.ts';

function pass(c: Cluster, pools: NodePool[], catalog: Catalog, extra: Partial<PassInput> = {}) {
  return runConsolidationPass({ cluster: c, nodePools: pools, catalog, nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull, ...extra });
}
const notes = (out: ReturnType<typeof pass>, name: string) => (out.notes.get(name) ?? []).join(' | ');

// A catalog where the large type carries a premium: two `small` cost less than one `big`.
const premiumCatalog = (): Catalog => ({
  region: 'us-east-1',
  instanceTypes: [
    instanceType('small', { cpu: 3900, memory: 15 * Gi, pods: 58 }, 0.2),
    instanceType('big', { cpu: 7900, memory: 31 * Gi, pods: 110 }, 0.5),
  ],
});
const bigNode = (name: string) => node({ name, instanceType: 'big', allocatable: { cpu: 7900, memory: 31 * Gi, pods: 110 }, capacity: { cpu: 8000, memory: 32 * Gi, pods: 110 } });
const smallNode = (name: string) => node({ name, instanceType: 'small', allocatable: { cpu: 3900, memory: 15 * Gi, pods: 58 }, capacity: { cpu: 4000, memory: 16 * Gi, pods: 58 } });
const onlySmall = (policy: ConsolidationPolicy = 'WhenEmptyOrUnderutilized', threshold = 0) =>
  nodePool({
    consolidationPolicy: policy,
    savingsThresholdCents: threshold,
    requirements: [
      { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['small'] },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    ],
  });

describe('1 -> 2 split (kubernetes-sigs/karpenter#1442)', () => {
  // Two 3000m pods: no single cheaper node holds both, two `small` do and cost $0.40 against $0.50.
  const splitCluster = () => cluster({ nodes: [bigNode('b')], pods: on('b', pod({ requests: { cpu: 3000, memory: 2 * Gi } }), pod({ requests: { cpu: 3000, memory: 2 * Gi } })) });

  it.each([
    // [name, policy, threshold cents, expected decisions]
    ['WhenEmptyOrUnderutilized splits the node into two cheaper ones', 'WhenEmptyOrUnderutilized', 0, 1],
    ['WhenUnderutilized splits it too', 'WhenUnderutilized', 0, 1],
    ['WhenEmpty never repacks', 'WhenEmpty', 0, 0],
    ['WhenCheaper (one-for-one only) never repacks', 'WhenCheaper', 0, 0],
    ['a threshold above the $0.10 saved blocks it', 'WhenEmptyOrUnderutilized', 5, 0],
  ] as const)('%s', (_name, policy, threshold, count) => {
    const pool = nodePool({ consolidationPolicy: policy, savingsThresholdCents: threshold });
    const out = pass(splitCluster(), [pool], premiumCatalog());
    expect(out.decisions).toHaveLength(count);
    if (count === 0) return;
    const d = out.decisions[0]!;
    expect(d).toMatchObject({ method: 'single-node', move: 'm-to-n', action: 'replace', nodes: ['b'], currentPricePerHour: 0.5, replacementPricePerHour: 0.4 });
    expect(d.replacements.map((r) => r.instanceTypes)).toEqual([['small'], ['small']]);
    expect(d.savingsPerHour).toBeCloseTo(0.1, 6);
    expect(new Set(Object.values(d.podDestinations ?? {}))).toEqual(new Set(['replacement-1.1', 'replacement-1.2']));
    // Carried out like any decision: the actuator launches both before it evicts anything.
    expect(d).not.toHaveProperty('dryRunOnly');
  });

  it('takes the packed split when kube-scheduler would bind it, though sized for cost it would need three nodes', () => {
    // Two 3000m pods and one of 800m: packed, one `small` holds a 3000m pod and the 800m one (any binding
    // order finds room for each); sized for cost every new node keeps room for a 3000m pod, so three
    // `small` ($0.60) would be needed, which saves nothing.
    const c = cluster({ nodes: [bigNode('b')], pods: on('b', pod({ requests: { cpu: 3000, memory: 2 * Gi } }), pod({ requests: { cpu: 3000, memory: 2 * Gi } }), pod({ requests: { cpu: 800, memory: Gi } })) });
    const out = pass(c, [nodePool()], premiumCatalog());
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]!.replacements.map((r) => r.instanceTypes[0])).toEqual(['small', 'small']);
    expect(out.decisions[0]!.savingsPerHour).toBeCloseTo(0.1, 6);
  });

  it('the threshold case says why in the plan', () => {
    const out = pass(splitCluster(), [nodePool({ savingsThresholdCents: 5 })], premiumCatalog());
    expect(notes(out, 'b')).toMatch(/split into two nodes: savings 10\.0 cents\/hr below required/);
  });

  it('a budget of 0 nodes stops the split', () => {
    const out = pass(splitCluster(), [nodePool({ budgets: [{ nodes: { count: 0 } }] })], premiumCatalog());
    expect(out.decisions).toEqual([]);
  });

  it('a pool limit that leaves room for one small only stops the split', () => {
    const out = pass(splitCluster(), [nodePool({ limits: { cpu: 6000 } })], premiumCatalog());
    expect(out.decisions).toEqual([]);
  });
});

describe('a split onto more than two nodes sized for cost', () => {
  /** The one decision of a pass over a lone `old` node ($1.00/h, of `allocatable`) holding `pods`, `types` beside it. */
  function splitOfLoneNode(types: InstanceType[], allocatable: Resources, pods: Pod[]) {
    const catalog: Catalog = { region: 'us-east-1', instanceTypes: [...types, instanceType('old', allocatable, 1)] };
    const n = node({ name: 'n', instanceType: 'old', allocatable, capacity: allocatable });
    const out = pass(cluster({ nodes: [n], pods: on('n', ...pods) }), [nodePool()], catalog);
    expect(out.decisions).toHaveLength(1);
    const d = out.decisions[0]!;
    expect(d).toMatchObject({ method: 'single-node', move: 'm-to-n', action: 'replace', nodes: ['n'], currentPricePerHour: 1 });
    return { types: d.replacements.map((r) => r.instanceTypes[0]).sort(), savingsPerHour: d.savingsPerHour };
  }

  it('splits the node when kube-scheduler would strand a pod of the packed two', () => {
    // A 16-vCPU node ($1.00): a 1000m pod and 47 of 300m. The packer fills a `dense` node (cheap per
    // vCPU, but 40 pod slots) to its last slot and puts the other 8 pods on a `mini` of 2500m ($0.90
    // in all); bound least allocated first, the small pods fill both and the 1000m pod finds no room.
    // Sized for cost, the 8 go onto a `mid` instead ($0.95), where any of them, the 1000m pod too, fits.
    const split = splitOfLoneNode(
      [
        instanceType('mini', { cpu: 2500, memory: 15 * Gi, pods: 58 }, 0.25),
        instanceType('mid', { cpu: 7900, memory: 31 * Gi, pods: 110 }, 0.3),
        instanceType('dense', { cpu: 15900, memory: 63 * Gi, pods: 40 }, 0.65),
      ],
      { cpu: 15900, memory: 63 * Gi, pods: 234 },
      [pod({ requests: { cpu: 1000, memory: Gi } }), ...Array.from({ length: 47 }, () => pod({ requests: { cpu: 300, memory: 256 * Mi } }))],
    );
    expect(split.types).toEqual(['dense', 'mid']);
    expect(split.savingsPerHour).toBeCloseTo(0.05, 6);
  });

  it('splits the node onto three when no two cheaper nodes save anything', () => {
    // A 12-vCPU `old` ($1.00) holds nine 900m pods. Two cheaper nodes that hold them cost as much
    // (`h7` + `q4`, $1.00), and every single type that holds them is `old` itself; three `q4` ($0.90),
    // each keeping room for one more 900m pod, hold them whatever order kube-scheduler binds them in.
    const split = splitOfLoneNode(
      [instanceType('q4', { cpu: 4000, memory: 16 * Gi, pods: 58 }, 0.3), instanceType('h7', { cpu: 7000, memory: 28 * Gi, pods: 58 }, 0.7)],
      { cpu: 12000, memory: 48 * Gi, pods: 110 },
      Array.from({ length: 9 }, () => pod({ requests: { cpu: 900, memory: Gi } })),
    );
    expect(split.types).toEqual(['q4', 'q4', 'q4']);
    expect(split.savingsPerHour).toBeCloseTo(0.1, 6);
  });
});

describe('a split sized for cost that kube-scheduler would strand too, or that saves nothing', () => {
  // c (a 16-core `huge`) holds six 900m pods and forty of 100m; three kept nodes have 400m holes. The
  // packed split (small pods in the holes, the rest on two new nodes) is refused: bound least allocated
  // first, the small pods go to the emptiest (new) nodes beyond what they were planned to hold, and a
  // 900m pod finds no room. Sized for cost (every new node cheaper than `c`): at $1.20 the split onto
  // two `mid5` is refused the same way; at $0.50 the nodes it needs cost as much as `c`, so it saves
  // nothing. Nothing is taken either way.
  it.each([
    { hugePricePerHour: 1.2, sizedNote: /; split onto 2 nodes sized for cost, also not taken: .*would stay Pending/ },
    { hugePricePerHour: 0.5, sizedNote: undefined },
  ])('at $hugePricePerHour/hr: nothing is taken, and the node says why', ({ hugePricePerHour, sizedNote }) => {
    const out = pass(overflowCluster(400, 6, 40), [nodePool()], overflowCatalog(hugePricePerHour));
    expect(out.decisions).toEqual([]);
    const said = notes(out, 'c');
    expect(said).toMatch(/not taken: placed the way kube-scheduler scores nodes .*would stay Pending/);
    if (sizedNote) expect(said).toMatch(sizedNote);
    else expect(said).not.toMatch(/sized for cost/);
  });
});

describe('repack under Balanced (every method allowed, each move scored)', () => {
  // The split of `b` saves $0.10/hr. Alone in its pool it is all of the pool's disruption: score 0.2.
  // Next to three full `small` nodes holding 20 do-not-disrupt pods each, it is a small share: score ~2.
  const split = () => [pod({ requests: { cpu: 3000, memory: 2 * Gi } }), pod({ requests: { cpu: 3000, memory: 2 * Gi } })];
  const pinned = () => pod({ requests: { cpu: 180, memory: 256 * Mi }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
  const balanced = () => nodePool({ consolidationPolicy: 'Balanced' });

  it('a split that scores enough is taken, with its scores and move m-to-n', () => {
    const fulls = ['f1', 'f2', 'f3'];
    const c = cluster({
      nodes: [bigNode('b'), ...fulls.map(smallNode)],
      pods: [...on('b', ...split()), ...fulls.flatMap((n) => on(n, ...Array.from({ length: 20 }, pinned)))],
    });
    const out = pass(c, [balanced()], premiumCatalog());
    expect(out.decisions).toHaveLength(1);
    const d = out.decisions[0]!;
    expect(d).toMatchObject({ method: 'single-node', move: 'm-to-n', action: 'replace', nodes: ['b'] });
    expect(d.replacements).toHaveLength(2);
    expect(d.scores?.map((sc) => sc.approved)).toEqual([true]);
  });

  it('a split that scores too little is refused and listed with move m-to-n', () => {
    const c = cluster({ nodes: [bigNode('b')], pods: on('b', ...split()) });
    const out = pass(c, [balanced()], premiumCatalog());
    expect(out.decisions).toEqual([]);
    const refused = out.rejectedMoves.filter((m) => m.move === 'm-to-n');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ method: 'single-node', nodes: ['b'], action: 'replace', bound: false });
    expect(refused[0]!.scores[0]!.approved).toBe(false);
    expect(notes(out, 'b')).toMatch(/Balanced: score 0.20 < 0.50/);
    // In its own wording, which the plan and the events tell score sentences apart by.
    expect(out.notes.get('b')).toContainEqual(expect.stringMatching(/^Balanced: score 0.20 < 0.50/));
  });

  it('a node of unknown price is never repacked', () => {
    const unknown = node({ name: 'u', instanceType: 'not-in-catalog', allocatable: { cpu: 7900, memory: 31 * Gi, pods: 110 } });
    const c = cluster({ nodes: [unknown], pods: on('u', ...split()) });
    const out = pass(c, [nodePool({ consolidationPolicy: 'WhenEmptyOrUnderutilized' })], premiumCatalog());
    expect(out.decisions).toEqual([]);
  });
});

describe('3 -> 2 repack', () => {
  // Three small nodes, two 1200m pods each. No node can go alone under WhenUnderutilized (no single-node
  // method), and two into one new small is no cheaper than the small it would replace; three into two is.
  const threeCluster = () => {
    const nodes = ['a', 'b', 'c'].map(smallNode);
    const pods = nodes.flatMap((n) => on(n.name, pod({ requests: { cpu: 1200, memory: Gi } }), pod({ requests: { cpu: 1200, memory: Gi } })));
    return cluster({ nodes, pods });
  };

  it.each([
    ['repacks three nodes into two', onlySmall('WhenUnderutilized'), 1],
    ['a threshold above the $0.20 saved blocks it', onlySmall('WhenUnderutilized', 10), 0],
    ['WhenEmpty never repacks', onlySmall('WhenEmpty'), 0],
  ] as const)('%s', (_name, pool, count) => {
    const out = pass(threeCluster(), [pool], premiumCatalog());
    expect(out.decisions).toHaveLength(count);
    if (count === 0) return;
    expect(out.decisions[0]).toMatchObject({ method: 'multi-node', move: 'm-to-n', action: 'replace', currentPricePerHour: 0.6, replacementPricePerHour: 0.4 });
    expect([...out.decisions[0]!.nodes].sort()).toEqual(['a', 'b', 'c']);
    expect(out.decisions[0]!.replacements).toHaveLength(2);
  });

  it('Karpenter-like methods come first: with single-node allowed, deleting one node saves as much and disrupts less', () => {
    const out = pass(threeCluster(), [onlySmall('WhenEmptyOrUnderutilized')], premiumCatalog());
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]).toMatchObject({ method: 'single-node', action: 'delete' });
    expect(out.decisions[0]!.move).toBeUndefined();
  });
});

describe('on-demand -> spot of the same size', () => {
  it.each([
    ['the pool allows spot: same type, launched as spot', ['on-demand', 'spot'], 'spot'],
    ['the pool allows on-demand only: nothing cheaper', ['on-demand'], undefined],
  ] as const)('%s', (_name, capacityTypes, expected) => {
    const n = node({ name: 'x', instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14162 * Mi, pods: 58 } });
    const pods = on('x', pod({ requests: { cpu: 3000, memory: 4 * Gi } }));
    const pool = nodePool({ requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: [...capacityTypes] }] });
    const out = pass(cluster({ nodes: [n], pods }), [pool], m5Catalog());
    if (expected === undefined) {
      expect(out.decisions).toEqual([]);
      return;
    }
    expect(out.decisions).toHaveLength(1);
    const r = out.decisions[0]!.replacements[0]!;
    // every type whose dearest spot offering is below the node's $0.192 on-demand price may launch
    expect(r).toMatchObject({ capacityType: expected, pricePerHour: 0.07, worstPricePerHour: 0.14 });
    expect(r.instanceTypes).toEqual(['m5.xlarge', 'm5.2xlarge']);
  });
});

describe('giant merges are cut to a bounded size', () => {
  // 120 m5.large with one 1000m pod each, and a catalog offering a huge type that could hold them all
  // and is larger than any 100 of them together (a merge into a node no larger than the nodes it removes
  // together is allowed: mergeBound.test.ts).
  const giant = () => {
    const nodes = Array.from({ length: 120 }, (_, i) => node({ name: `n${String(i).padStart(3, '0')}` }));
    const pods = nodes.flatMap((n) => on(n.name, pod({ requests: { cpu: 1000, memory: Gi } })));
    const catalog: Catalog = { ...m5Catalog(), instanceTypes: [...m5Catalog().instanceTypes, instanceType('x.huge', { cpu: 400_000, memory: 1600 * Gi, pods: 737 }, 5.0)] };
    return { c: cluster({ nodes, pods }), catalog };
  };
  const cpuOf = (catalog: Catalog, name: string) => catalog.instanceTypes.find((t) => t.name === name)!.allocatable['cpu']!;

  it.each([
    ['default bound: 2x the largest removed node', undefined, 2 * 1930 * 1.05],
    ['a bound of 4x', { scale: 4 }, 4 * 1930 * 1.05],
  ] as const)('%s', (_name, bound, maxCpu) => {
    const { c, catalog } = giant();
    const out = pass(c, [nodePool()], catalog, bound === undefined ? {} : { replacementBound: bound });
    const replacements = out.decisions.flatMap((d) => d.replacements);
    expect(replacements.length).toBeGreaterThan(1);
    // Each type is within the scale of the largest removed node, or no larger than the removed nodes
    // together (2000m of capacity each); the huge type is neither.
    for (const d of out.decisions) {
      for (const r of d.replacements) for (const t of r.instanceTypes) expect(cpuOf(catalog, t)).toBeLessThanOrEqual(Math.max(maxCpu, 2000 * d.nodes.length));
    }
    expect(replacements.flatMap((r) => r.instanceTypes)).not.toContain('x.huge');
    // every pod still has a home and most nodes went away
    expect(out.decisions.flatMap((d) => d.nodes).length).toBeGreaterThan(60);
  });

  it('unbounded, the same cluster becomes one giant', () => {
    const { c, catalog } = giant();
    const out = pass(c, [nodePool()], catalog, { replacementBound: null });
    expect(out.decisions[0]!.replacements[0]!.instanceTypes).toEqual(['x.huge']);
  });
});

describe('REPLACEMENT_BOUND', () => {
  it.each([
    ['unset: the default 2x', undefined, { scale: 2 }],
    ['off', 'off', null],
    ['a scale', '3', { scale: 3 }],
    ['a scale and a pod cap', '2, maxPods=110', { scale: 2, maxPods: 110 }],
  ] as const)('%s', (_name, text, expected) => {
    expect(parseReplacementBound(text)).toEqual(expected);
  });

  it.each([
    ['a scale below 1', '0.5', /"0.5" is not a scale of at least 1/],
    ['garbage', 'big', /"big" is not a scale/],
    ['a bad option', '2,pods=3', /"pods=3" is not maxPods=N/],
  ])('rejects %s, naming the variable', (_name, text, message) => {
    expect(() => parseReplacementBound(text)).toThrow(message);
    try {
      parseReplacementBound(text);
    } catch (error) {
      expect(String((error as Error).message)).toMatch(/REPLACEMENT_BOUND/);
    }
  });
});
