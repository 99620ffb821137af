// The lower bound against the exact answer: on small clusters, every way of packing the movable pods
// (kept candidates, the locked nodes' free room, new nodes of every type and zone the pool offers) is
// tried, and the cheapest is never below the bound. The bound must also keep each pod to capacity
// that can hold it: a type too small for a pod, or in a zone its node selector rules out, never lowers it.
import { describe, expect, it } from 'vitest';
import { runConsolidationPass } from '../../src/core/disruption/pass.ts';
import { indexCatalog, nodePricePerHour } from '../../src/core/disruption/prices.ts';
import { clusterLowerBound } from '../../src/core/efficiency/lowerBound.ts';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import type { Catalog, Cluster, Node, Pod } from '../../src/core/model/types.ts';
import { mulberry32 } from '../../src/core/random.ts';
import { cluster, Gi, instanceType, Mi, node, nodePool, on, pod, T0 } from '../builders.ts';

const ZONES = ['us-east-1a', 'us-east-1b'];
// `n` is by far the cheapest per core but holds only small pods; `b` is cheap cores with little memory.
const TYPES = [
  { name: 'n', cpu: 500, memory: 512 * Mi, price: 0.004 },
  { name: 'a', cpu: 2000, memory: 8 * Gi, price: 0.1 },
  { name: 'b', cpu: 4000, memory: 4 * Gi, price: 0.16 },
];
const catalog: Catalog = {
  region: 'us-east-1',
  instanceTypes: TYPES.map((t) => instanceType(t.name, { cpu: t.cpu, memory: t.memory, pods: 10 }, t.price, { zones: ZONES })),
};
const typeOf = (name: string) => TYPES.find((t) => t.name === name)!;

/** A small deterministic generator, so every case is the same on every run. */
const random = mulberry32;

function randomCluster(seed: number): Cluster {
  const next = random(seed);
  const pick = <T,>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const nodes: Node[] = [];
  const pods: Pod[] = [];
  const nodeCount = 2 + Math.floor(next() * 2);
  for (let i = 0; i < nodeCount; i++) {
    const type = typeOf(pick(['a', 'b']));
    const locked = i === 0 && next() < 0.5;
    const name = `node-${i}`;
    nodes.push(
      node({
        name,
        instanceType: type.name,
        zone: pick(ZONES),
        allocatable: { cpu: type.cpu, memory: type.memory, pods: 10 },
        annotations: locked ? { 'karpenter.sh/do-not-disrupt': 'true' } : {},
      }),
    );
    const podCount = 1 + Math.floor(next() * 2);
    for (let j = 0; j < podCount; j++) {
      const zoned = next() < 0.3;
      pods.push(
        ...on(
          name,
          pod({
            name: `pod-${i}-${j}`,
            requests: { cpu: pick([200, 400, 900, 1500]), memory: pick([256 * Mi, 1 * Gi, 3 * Gi]) },
            ...(zoned ? { nodeSelector: { 'topology.kubernetes.io/zone': pick(ZONES) } } : {}),
          }),
        ),
      );
    }
  }
  return cluster({ nodes, pods });
}

interface Bin {
  cpu: number;
  memory: number;
  pods: number;
  readonly zone: string;
  readonly cost: number;
}

/** The cheapest packing of the movable pods, by trying every one (pods are few). */
function exactOptimum(c: Cluster, candidates: ReadonlySet<string>): number {
  const prices = indexCatalog(catalog);
  let locked = 0;
  const existing: Bin[] = [];
  const movable: Pod[] = [];
  for (const n of c.nodes) {
    const own = c.pods.filter((p) => p.nodeName === n.name);
    const price = nodePricePerHour(n, prices)!;
    const used = (key: 'cpu' | 'memory') => own.reduce((s, p) => s + (p.requests[key] ?? 0), 0);
    if (candidates.has(n.name)) {
      movable.push(...own);
      existing.push({ cpu: n.allocatable['cpu']!, memory: n.allocatable['memory']!, pods: n.allocatable['pods']!, zone: n.zone!, cost: price });
    } else {
      locked += price;
      existing.push({ cpu: n.allocatable['cpu']! - used('cpu'), memory: n.allocatable['memory']! - used('memory'), pods: n.allocatable['pods']! - own.length, zone: n.zone!, cost: 0 });
    }
  }
  const fitsIn = (p: Pod, b: Bin) =>
    b.cpu >= (p.requests['cpu'] ?? 0) && b.memory >= (p.requests['memory'] ?? 0) && b.pods >= 1 && (p.nodeSelector['topology.kubernetes.io/zone'] ?? b.zone) === b.zone;
  let best = Number.POSITIVE_INFINITY;
  const bins: Bin[] = existing.map((b) => ({ ...b }));
  const opened = new Set<Bin>();
  const place = (i: number, cost: number): void => {
    if (cost >= best) return;
    if (i === movable.length) {
      best = cost;
      return;
    }
    const p = movable[i]!;
    const put = (b: Bin, extra: number) => {
      b.cpu -= p.requests['cpu'] ?? 0;
      b.memory -= p.requests['memory'] ?? 0;
      b.pods -= 1;
      place(i + 1, cost + extra);
      b.cpu += p.requests['cpu'] ?? 0;
      b.memory += p.requests['memory'] ?? 0;
      b.pods += 1;
    };
    for (const b of bins) {
      if (!fitsIn(p, b)) continue;
      const first = !opened.has(b);
      if (first) opened.add(b);
      put(b, first ? b.cost : 0);
      if (first) opened.delete(b);
    }
    for (const t of TYPES) {
      for (const zone of ZONES) {
        const b: Bin = { cpu: t.cpu, memory: t.memory, pods: 10, zone, cost: t.price };
        if (!fitsIn(p, b)) continue;
        bins.push(b);
        opened.add(b);
        put(b, t.price);
        opened.delete(b);
        bins.pop();
      }
    }
  };
  place(0, 0);
  return locked + best;
}

function bound(c: Cluster) {
  const pools = [nodePool()];
  const outcome = runConsolidationPass({ cluster: c, nodePools: pools, catalog, nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull });
  const candidates = new Set(outcome.verdicts.filter((v) => v.candidate !== undefined).map((v) => v.node.name));
  return { lower: clusterLowerBound({ cluster: c, nodePools: pools, catalog, verdicts: outcome.verdicts }).lowerBoundPerHour!, candidates };
}

describe('lower bound against the exact packing', () => {
  it.each(Array.from({ length: 30 }, (_, i) => [`random cluster ${i + 1}`, i + 1] as const))('%s: the bound is never above the cheapest packing', (_name, seed) => {
    const c = randomCluster(seed);
    const { lower, candidates } = bound(c);
    expect(candidates.size).toBeGreaterThan(0);
    const exact = exactOptimum(c, candidates);
    expect(lower).toBeLessThanOrEqual(exact + 1e-9);
    expect(lower).toBeGreaterThan(0);
  });

  it.each([
    // [name, pod cpu, pod memory, zone selector]: one pod on an `a` node in us-east-1a.
    ['a pod too large for the cheapest type cannot use it', 1500, 1 * Gi, undefined],
    ['a pod whose memory rules out b pays for a', 900, 5 * Gi, undefined],
  ] as const)('%s: bound and exact answer agree', (_name, cpu, memory, zone) => {
    const c = cluster({
      nodes: [node({ name: 'x', instanceType: 'a', zone: 'us-east-1a', allocatable: { cpu: 2000, memory: 8 * Gi, pods: 10 } })],
      pods: on('x', pod({ requests: { cpu, memory }, ...(zone ? { nodeSelector: { 'topology.kubernetes.io/zone': zone } } : {}) })),
    });
    const { lower, candidates } = bound(c);
    const exact = exactOptimum(c, candidates);
    // The single pod pays the larger of its shares of the type it uses; fractional, so below the exact.
    const fluid = Math.min(
      ...TYPES.filter((t) => t.cpu >= cpu && t.memory >= memory).map((t) => t.price * Math.max(cpu / t.cpu, memory / t.memory)),
    );
    expect(lower).toBeCloseTo(fluid, 9);
    expect(lower).toBeLessThanOrEqual(exact);
    // The tiny type would have put the bound at a few tenths of a cent.
    expect(lower).toBeGreaterThan(typeOf('n').price * (cpu / typeOf('n').cpu));
  });

  it('a pod pinned to a zone cannot use a cheaper offering elsewhere', () => {
    const zonal: Catalog = {
      region: 'us-east-1',
      instanceTypes: [
        { ...instanceType('a', { cpu: 2000, memory: 8 * Gi, pods: 10 }, 0.1, { zones: ['us-east-1a'] }) },
        {
          ...instanceType('a2', { cpu: 2000, memory: 8 * Gi, pods: 10 }, 0.02, { zones: ['us-east-1b'] }),
        },
      ],
    };
    const c = cluster({
      nodes: [node({ name: 'x', instanceType: 'a', zone: 'us-east-1a', allocatable: { cpu: 2000, memory: 8 * Gi, pods: 10 } })],
      pods: on('x', pod({ requests: { cpu: 1000, memory: Gi }, nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1a' } })),
    });
    const pools = [nodePool()];
    const outcome = runConsolidationPass({ cluster: c, nodePools: pools, catalog: zonal, nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull });
    const lower = clusterLowerBound({ cluster: c, nodePools: pools, catalog: zonal, verdicts: outcome.verdicts }).lowerBoundPerHour!;
    expect(lower).toBeCloseTo(0.1 * 0.5, 9);
  });
});
