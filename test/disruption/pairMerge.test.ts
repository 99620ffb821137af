// Two nodes merged onto one new node, the pass's last resort (methods/pairMerge.ts): two full nodes of a
// type dear per core that no ordering of the multi-node search puts side by side, merged onto one larger
// node cheaper per core, only when the pass decided nothing else.
import { describe, expect, it } from 'vitest';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import { cheapestHolding } from '../../src/core/disruption/methods/pairMerge.ts';
import { runConsolidationPass } from '../../src/core/disruption/pass.ts';
import type { Cluster, Node, Pod } from '../../src/core/model/types.ts';
import { catalogOf, cluster, Gi, Mi, node, nodePool, on, pod, T0 } from '../builders.ts';

const pass = (c: Cluster, options: { methods?: ('emptiness' | 'multi-node' | 'single-node' | 'm-to-n')[] } = {}) =>
  runConsolidationPass({ cluster: c, nodePools: [nodePool()], catalog, nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull, ...options });

// `dear8` is the only 8-core type ($0.40); `big16` holds two of them for $0.60. The 2- and 4-core types
// cost the same per core as `dear8`, so nothing smaller saves.
const catalog = catalogOf(
  ['small2', 2000, 16 * Gi, 110, 0.1],
  ['mid4', 4000, 16 * Gi, 110, 0.2],
  ['dear8', 8000, 32 * Gi, 110, 0.4],
  ['big16', 16000, 64 * Gi, 110, 0.6],
);
const sized = (name: string, type: 'small2' | 'dear8', cpu: number): Node => node({ name, instanceType: type, allocatable: { cpu, memory: (cpu / 1000) * 4 * Gi, pods: 110 } });
const pods = (name: string, count: number, cpu: number): Pod[] => on(name, ...Array.from({ length: count }, (_, i) => pod({ name: `${name}-${i}`, requests: { cpu, memory: 64 * Mi } })));

/**
 * a and b: two full dear8 (eight 975m pods each). c: a small2 holding one 1500m pod that selects a
 * label only c carries, so it can move nowhere; c comes first in every ordering of the multi-node search
 * (fewest pods, most money per pod, emptiest), so every prefix (and every m-to-n repack of one) holds c
 * and fails. Alone, neither a nor b has a cheaper type of its size, nor room elsewhere.
 */
function settled(extra: { nodes?: Node[]; pods?: Pod[]; a?: Pod[]; b?: Pod[] } = {}): Cluster {
  const c = node({ ...sized('c', 'small2', 2000), labels: { workload: 'legacy' } });
  return cluster({
    nodes: [sized('a', 'dear8', 8000), sized('b', 'dear8', 8000), c, ...(extra.nodes ?? [])],
    pods: [
      ...(extra.a ?? pods('a', 8, 975)),
      ...(extra.b ?? pods('b', 8, 975)),
      ...on('c', pod({ name: 'pinned', requests: { cpu: 1500, memory: 64 * Mi }, nodeSelector: { workload: 'legacy' } })),
      ...(extra.pods ?? []),
    ],
  });
}

describe('two nodes merged onto one, when the pass decided nothing else', () => {
  // (With the pair merge taken out, the whole pass, multi-node included, decides nothing here: the next
  // case then fails.)
  it('single-node and the m-to-n repack find nothing', () => {
    expect(pass(settled(), { methods: ['emptiness', 'single-node', 'm-to-n'] }).decisions).toEqual([]);
  });

  it('merges a and b onto one big16 holding every pod of both', () => {
    const out = pass(settled());
    expect(out.decisions.map((d) => [d.method, d.action, [...d.nodes].sort(), d.replacements.map((r) => r.instanceTypes[0])])).toEqual([['multi-node', 'replace', ['a', 'b'], ['big16']]]);
    const d = out.decisions[0]!;
    expect(d).not.toHaveProperty('move');
    expect(d.savingsPerHour).toBeCloseTo(0.2, 6);
    const destinations = Object.values(d.podDestinations ?? {});
    expect(destinations).toHaveLength(16);
    expect(new Set(destinations).size).toBe(1);
  });

  it('does not run when the pass decided something else (an empty node deleted)', () => {
    const out = pass(settled({ nodes: [sized('e', 'small2', 2000)] }));
    expect(out.decisions.map((d) => [d.action, d.nodes])).toEqual([['delete', ['e']]]);
  });

  it('does not run when multi-node consolidation is not allowed (the emptiness-TTL function)', () => {
    expect(pass(settled(), { methods: ['emptiness', 'single-node'] }).decisions).toEqual([]);
  });

  it('leaves a pair no one node holds: 120 pods, a big16 takes 110', () => {
    expect(pass(settled({ a: pods('a', 60, 130), b: pods('b', 60, 130) })).decisions).toEqual([]);
  });

  it.each([
    ['a WhenCheaper pool: one-for-one swaps only, no packing', { nodePools: [nodePool({ consolidationPolicy: 'WhenCheaper' })] }],
    ['one node per command (MAX_NODES_PER_COMMAND=1)', { maxNodesPerCommand: 1 }],
  ] as const)('merges nothing for %s', (_name, options) => {
    const out = runConsolidationPass({ cluster: settled(), nodePools: [nodePool()], catalog, nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull, ...options });
    expect(out.decisions).toEqual([]);
  });

  it('respects the budget: a pool that may disrupt one node more takes no pair', () => {
    const out = runConsolidationPass({
      cluster: settled(),
      nodePools: [nodePool({ budgets: [{ nodes: { count: 1 } }] })],
      catalog,
      nowMs: T0,
      gates: { spotToSpotConsolidation: false },
      parseDuration: durationOrNull,
    });
    expect(out.decisions).toEqual([]);
  });
});

describe('cheapestHolding: the least one new node holding a demand may cost', () => {
  const launchable = [
    { cpuMillis: 2000, memoryBytes: 4 * Gi, pods: 29, pricePerHour: 0.1 },
    { cpuMillis: 4000, memoryBytes: 8 * Gi, pods: 58, pricePerHour: 0.2 },
    { cpuMillis: 16000, memoryBytes: 64 * Gi, pods: 110, pricePerHour: 0.6 },
  ];
  it.each([
    ['fits the cheapest', { cpuMillis: 2000, memoryBytes: 4 * Gi, pods: 29 }, 0.1],
    ['one millicore more: the next', { cpuMillis: 2001, memoryBytes: 1 * Gi, pods: 1 }, 0.2],
    ['memory decides', { cpuMillis: 100, memoryBytes: 9 * Gi, pods: 1 }, 0.6],
    ['pod slots decide', { cpuMillis: 100, memoryBytes: 1 * Gi, pods: 59 }, 0.6],
    ['nothing holds it', { cpuMillis: 16001, memoryBytes: 1 * Gi, pods: 1 }, Number.POSITIVE_INFINITY],
  ] as const)('%s', (_name, need, price) => {
    expect(cheapestHolding(launchable, need)).toBe(price);
  });
});
