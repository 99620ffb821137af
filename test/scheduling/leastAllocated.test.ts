// kube-scheduler's placement (least allocated) against a brute-force reference: the simulation keeps
// nodes of one shape in score order and looks at the first feasible node of each shape only
// (leastAllocated.ts); each pod must still land where examining every node would put it.
import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/core/model/types.ts';
import type { ExistingNode } from '../../src/core/scheduling/existingNodes.ts';
import { integerScore, LeastAllocatedOrder, scoreAfter, tieDraw } from '../../src/core/scheduling/leastAllocated.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import { cluster, Gi, m5Catalog, Mi, node, nodePool, pod } from '../builders.ts';
import { placedBy, random, referencePlacement, type Choose } from './reference.ts';

const SHAPES = [
  { cpu: 1930, memory: 7 * Gi, pods: 5 },
  { cpu: 3920, memory: 15 * Gi, pods: 9 },
  { cpu: 3920, memory: 30 * Gi, pods: 7 },
  { cpu: 7910, memory: 30 * Gi, pods: 12 },
];

/** kube-scheduler's LeastAllocated: the best mean free share after the pod; ties by name (the first). */
const leastAllocated: Choose = (pod, fits) => {
  let best: (typeof fits)[number] | undefined;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (const f of fits) {
    const score = ((f.room.cpu - pod.requests['cpu']!) / f.node.allocatable['cpu']! + (f.room.memory - pod.requests['memory']!) / f.node.allocatable['memory']!) / 2;
    if (score > bestScore) {
      best = f;
      bestScore = score;
    }
  }
  return best?.node;
};

describe('least-allocated placement matches examining every node', () => {
  it.each(Array.from({ length: 12 }, (_, k) => ({ seed: k + 1 })))('random cluster, seed $seed', ({ seed }) => {
    const rand = random(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    const nodes = Array.from({ length: 36 }, (_, i) => node({ name: `n${String(i).padStart(2, '0')}`, allocatable: { ...pick(SHAPES) } }));
    const bound: Pod[] = [];
    for (const n of nodes) {
      const count = Math.floor(rand() * n.allocatable['pods']!);
      for (let k = 0; k < count; k++) {
        bound.push({ ...pod({ requests: { cpu: pick([50, 100, 250, 500]), memory: pick([64, 256, 1024]) * Mi } }), nodeName: n.name });
      }
    }
    const excluded = new Set(nodes.filter(() => rand() < 0.3).map((n) => n.name));
    const moving = bound.filter((p) => excluded.has(p.nodeName!) || rand() < 0.1);
    const simulator = createSimulator({ cluster: cluster({ nodes, pods: bound }), nodePools: [nodePool()], catalog: m5Catalog() });
    const result = simulator.simulate({
      excludedNodes: excluded,
      pods: moving,
      maxNewNodes: 0,
      placement: 'least-allocated',
      podOrder: 'as-given',
      stopAtFirstFailure: true,
    });
    expect(moving.length).toBeGreaterThan(0);
    expect(placedBy(result)).toEqual(referencePlacement(nodes, bound, excluded, moving, leastAllocated));
  });
});

// The order itself, with blocks of 2 and 3 nodes (they split and empty as nodes move), against a plain
// scan of every node: after each change, each pod size must get the same node.
describe('least-allocated order kept in blocks', () => {
  const SIZES = [
    [100, 64 * Mi],
    [500, Gi],
    [1500, 512 * Mi],
    [250, 6 * Gi],
    [3000, 8 * Gi],
  ] as const;

  it.each([
    { seed: 1, blockSize: 2 },
    { seed: 2, blockSize: 3 },
    { seed: 3, blockSize: 2 },
    { seed: 4, blockSize: 32 },
  ])('random rooms and moves, seed $seed, blocks of $blockSize', ({ seed, blockSize }) => {
    const rand = random(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    const nodes = Array.from({ length: 40 }, (_, i) => {
      const shape = pick(SHAPES);
      return { index: i, name: `n${String(i).padStart(2, '0')}`, node: node({ name: `n${i}`, allocatable: { ...shape } }) } as unknown as ExistingNode;
    });
    // Packed: most nodes lack the cpu or the memory of the larger sizes.
    const rooms = nodes.map((n) => ({
      cpu: Math.floor(rand() * (n.node.allocatable['cpu']! + 1)),
      memory: Math.floor(rand() * (n.node.allocatable['memory']! + 1)),
      pods: Math.floor(rand() * 4),
    }));
    const order = new LeastAllocatedOrder(nodes, nodes.map((n) => n.index), (i) => rooms[i]!, blockSize);
    const listed = new Set(nodes.filter((n) => rooms[n.index]!.pods >= 1).map((n) => n.index));
    const blocked = new Set(nodes.filter(() => rand() < 0.15).map((n) => n.index));
    const scan = (cpu: number, memory: number): number | undefined => {
      let best: number | undefined;
      let bestScore = Number.NEGATIVE_INFINITY;
      for (const i of [...listed].sort((a, b) => nodes[a]!.name.localeCompare(nodes[b]!.name))) {
        const room = rooms[i]!;
        if (room.cpu < cpu || room.memory < memory || blocked.has(i)) continue;
        const score = scoreAfter({ cpuAllocatable: nodes[i]!.node.allocatable['cpu']!, memoryAllocatable: nodes[i]!.node.allocatable['memory']! }, room, cpu, memory);
        if (score > bestScore + 1e-12) {
          best = i;
          bestScore = score;
        }
      }
      return best;
    };
    let placedSomewhere = 0;
    for (let step = 0; step < 300; step++) {
      const [cpu, memory] = pick(SIZES);
      const expected = scan(cpu, memory);
      const feasible = (i: number) => rooms[i]!.cpu >= cpu && rooms[i]!.memory >= memory && !blocked.has(i);
      expect(order.best(cpu, memory, feasible)).toBe(expected);
      // Move a node: a pod lands on the chosen one, or another node frees or takes room.
      const i = expected !== undefined && rand() < 0.7 ? expected : pick(nodes).index;
      if (!listed.has(i)) continue;
      const room = rooms[i]!;
      rooms[i] =
        i === expected
          ? { cpu: room.cpu - cpu, memory: room.memory - memory, pods: room.pods - 1 }
          : { cpu: room.cpu + pick([-200, 300, 700]), memory: room.memory + pick([-Gi, Gi]), pods: room.pods };
      if (i === expected) placedSomewhere++;
      order.update(i, rooms[i]!);
      if (rooms[i]!.pods < 1) listed.delete(i);
    }
    expect(placedSomewhere).toBeGreaterThan(20);
  });
});

// Each simulation derives its order from the simulator's order of the cluster as indexed (its excluded
// nodes out, the nodes it changed at their room now): it must choose as an order built for it does.
describe('least-allocated order derived for a simulation', () => {
  it.each([1, 2, 3, 4, 5, 6].map((seed) => ({ seed })))('seed $seed: the same choices as one built for it, before and after pods land', ({ seed }) => {
    const rand = random(100 + seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    const nodes = Array.from({ length: 60 }, (_, i) => {
      const shape = pick(SHAPES);
      const n = node({ name: `n${String(59 - i).padStart(2, '0')}`, allocatable: { ...shape } });
      return {
        index: i,
        name: n.name,
        node: n,
        receives: rand() < 0.9,
        freeCpu: Math.floor(rand() * (shape.cpu + 1)),
        freeMemory: Math.floor(rand() * (shape.memory + 1)),
        freePods: Math.floor(rand() * 3),
      } as unknown as ExistingNode;
    });
    const base = LeastAllocatedOrder.of(nodes);
    // This simulation: some nodes excluded (a whole shape, sometimes), some with pods moved off or on.
    const goneShape = rand() < 0.5 ? pick(SHAPES) : undefined;
    const excluded = new Set(nodes.filter((n) => rand() < 0.2 || (goneShape && n.node.allocatable['cpu'] === goneShape.cpu && n.node.allocatable['memory'] === goneShape.memory)).map((n) => n.index));
    const rooms = new Map(nodes.map((n) => [n.index, { cpu: n.freeCpu, memory: n.freeMemory, pods: n.freePods }] as const));
    const changed: [number, { cpu: number; memory: number; pods: number }][] = [];
    for (const n of nodes) {
      if (excluded.has(n.index) || !n.receives || rand() < 0.6) continue;
      const room = { cpu: n.freeCpu + pick([-300, 200, 900]), memory: n.freeMemory + pick([-Gi, Gi]), pods: n.freePods + pick([-1, 1, 2]) };
      rooms.set(n.index, room);
      changed.push([n.index, room]);
    }
    const derived = base.derive(excluded, changed);
    const built = new LeastAllocatedOrder(nodes, nodes.filter((n) => n.receives && !excluded.has(n.index)).map((n) => n.index), (i) => rooms.get(i)!);
    let landed = 0;
    for (let step = 0; step < 200; step++) {
      const [cpu, memory] = pick([[100, 64 * Mi], [500, Gi], [1500, 512 * Mi], [250, 6 * Gi]] as const);
      const feasible = (i: number) => rooms.get(i)!.cpu >= cpu && rooms.get(i)!.memory >= memory;
      const choice = built.best(cpu, memory, feasible);
      expect(derived.best(cpu, memory, feasible)).toBe(choice);
      if (choice === undefined) continue;
      const room = rooms.get(choice)!;
      const after = { cpu: room.cpu - cpu, memory: room.memory - memory, pods: room.pods - 1 };
      rooms.set(choice, after);
      built.update(choice, after);
      derived.update(choice, after);
      landed++;
    }
    expect(landed).toBeGreaterThan(10);
    // The simulator's own order is left as it was: a second simulation derives from the same.
    expect(LeastAllocatedOrder.of(nodes)).toBe(base);
    expect(base.derive([], []).best(1, 1, () => true)).toBe(new LeastAllocatedOrder(nodes, nodes.filter((n) => n.receives).map((n) => n.index), (i) => ({ cpu: nodes[i]!.freeCpu, memory: nodes[i]!.freeMemory, pods: nodes[i]!.freePods })).best(1, 1, () => true));
  });
});

// kube-scheduler's own arithmetic (NodeResourcesFit, LeastAllocated): whole points per resource, rounded
// down, their mean rounded down, a random pick among the top; the further shuffles of the checks bind
// in it (SimulationRequest.integerScoreTies).
describe('least-allocated in whole points, ties drawn by a seed', () => {
  const m5_2xlarge = { cpuAllocatable: 7910, memoryAllocatable: 29317 * Mi };
  it.each([
    ['700m free, 19,536Mi free, a 700m/2Gi pod: (0 + 59) / 2', 7910, 29317 * Mi, 700 - 700, (19536 - 2048) * Mi, 29],
    ['1150m free, 17,743Mi free, the same pod: (5 + 53) / 2, a tie with the row above', 7910, 29317 * Mi, 1150 - 700, (17743 - 2048) * Mi, 29],
    ['an odd sum rounds down: (99 + 100) / 2', 1000, Gi, 999, Gi, 99],
    ['each resource rounds down before the mean: 99.9 and 99.9 make 99', 1000, 1000, 999, 999, 99],
    ['a node with no memory to speak of scores on cpu alone', 1000, 0, 500, 0, 50],
    ['a node with no cpu scores on memory alone', 0, Gi, 0, Gi / 4, 25],
    ['a node with neither scores 0', 0, 0, 0, 0, 0],
    ['nothing left: 0', 3920, 14162 * Mi, 0, 0, 0],
  ] as const)('%s', (_name, cpuAllocatable, memoryAllocatable, freeCpu, freeMemory, points) => {
    expect(integerScore({ cpuAllocatable, memoryAllocatable }, freeCpu, freeMemory)).toBe(points);
  });

  it('the exact shares tell those two nodes apart; whole points do not', () => {
    const left = scoreAfter(m5_2xlarge, { cpu: 700, memory: 19536 * Mi, pods: 1 }, 700, 2 * Gi);
    const right = scoreAfter(m5_2xlarge, { cpu: 1150, memory: 17743 * Mi, pods: 1 }, 700, 2 * Gi);
    expect(left).toBeGreaterThan(right);
    expect(integerScore(m5_2xlarge, 0, (19536 - 2048) * Mi)).toBe(integerScore(m5_2xlarge, 450, (17743 - 2048) * Mi));
  });

  it('a seed draws each node its own number, the same every time', () => {
    const draws = Array.from({ length: 50 }, (_, i) => tieDraw(7, i));
    expect(new Set(draws).size).toBe(50);
    expect(Array.from({ length: 50 }, (_, i) => tieDraw(7, i))).toEqual(draws);
    expect(Array.from({ length: 50 }, (_, i) => tieDraw(8, i))).not.toEqual(draws);
  });

  /** The reference: every fitting node scored in whole points, the tie going to the lowest draw. */
  const wholePoints = (nodes: readonly Node[], seed: number): Choose => (pod, fits) => {
    let best: (typeof fits)[number] | undefined;
    let bestScore = -1;
    for (const f of fits) {
      const shape = { cpuAllocatable: f.node.allocatable['cpu']!, memoryAllocatable: f.node.allocatable['memory']! };
      const score = integerScore(shape, f.room.cpu - pod.requests['cpu']!, f.room.memory - pod.requests['memory']!);
      const draw = tieDraw(seed, nodes.indexOf(f.node));
      if (score > bestScore || (score === bestScore && draw < tieDraw(seed, nodes.indexOf(best!.node)))) {
        best = f;
        bestScore = score;
      }
    }
    return best?.node;
  };

  it.each(Array.from({ length: 8 }, (_, k) => ({ seed: k + 1, ties: 11 * k + 3 })))('random cluster, seed $seed, ties drawn with $ties: where examining every node puts each pod', ({ seed, ties }) => {
    const rand = random(500 + seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    // Few sizes, so that many nodes tie in whole points.
    const nodes = Array.from({ length: 36 }, (_, i) => node({ name: `n${String(i).padStart(2, '0')}`, allocatable: { ...pick(SHAPES) } }));
    const bound: Pod[] = [];
    for (const n of nodes) {
      const count = Math.floor(rand() * n.allocatable['pods']!);
      for (let k = 0; k < count; k++) bound.push({ ...pod({ requests: { cpu: pick([100, 500]), memory: pick([256, 1024]) * Mi } }), nodeName: n.name });
    }
    const excluded = new Set(nodes.filter(() => rand() < 0.3).map((n) => n.name));
    const moving = bound.filter((p) => excluded.has(p.nodeName!) || rand() < 0.1);
    const simulator = createSimulator({ cluster: cluster({ nodes, pods: bound }), nodePools: [nodePool()], catalog: m5Catalog() });
    const request = { excludedNodes: excluded, pods: moving, maxNewNodes: 0, placement: 'least-allocated', podOrder: 'as-given', stopAtFirstFailure: true } as const;
    const result = simulator.simulate({ ...request, integerScoreTies: ties });
    expect(moving.length).toBeGreaterThan(0);
    expect(placedBy(result)).toEqual(referencePlacement(nodes, bound, excluded, moving, wholePoints(nodes, ties)));
    // And not where exact shares put them: the ties were drawn.
    expect(placedBy(result)).not.toEqual(placedBy(simulator.simulate(request)));
  });

  /**
   * Two nodes of one shape, named `names`, holding a pod of `used[0]` and `used[1]`: where a pod asking
   * `requests` goes, in exact shares (no `ties`) or in whole points with that draw.
   */
  function twoNodes(shape: { cpu: number; memory: number; pods: number }, names: readonly [string, string], used: readonly [{ cpu: number; memory: number }, { cpu: number; memory: number }]) {
    const nodes = names.map((name) => node({ name, allocatable: shape }));
    const bound = names.map((name, i) => ({ ...pod({ requests: used[i]! }), nodeName: name }));
    const simulator = createSimulator({ cluster: cluster({ nodes, pods: bound }), nodePools: [nodePool()], catalog: m5Catalog() });
    return (requests: { cpu: number; memory: number }, ties?: number) =>
      simulator.simulate({ excludedNodes: new Set<string>(), pods: [pod({ requests })], maxNewNodes: 0, placement: 'least-allocated', podOrder: 'as-given', ...(ties === undefined ? {} : { integerScoreTies: ties }) }).placements[0]?.nodeName;
  }
  const drawn = (place: ReturnType<typeof twoNodes>, requests: { cpu: number; memory: number }) => new Set(Array.from({ length: 20 }, (_, k) => place(requests, k + 1)));

  it("a node further down its shape's order than the first that fits may score more whole points, and is found", () => {
    // One shape (1000m, 1000Mi). After a 1m/1Mi pod, a keeps 998m and 509Mi free (exact mean 0.7535,
    // whole points (99 + 50) / 2 = 74), b keeps 990m and 510Mi (exact 0.75, (99 + 51) / 2 = 75).
    const place = twoNodes({ cpu: 1000, memory: 1000 * Mi, pods: 10 }, ['a', 'b'], [{ cpu: 1, memory: 490 * Mi }, { cpu: 9, memory: 489 * Mi }]);
    const requests = { cpu: 1, memory: Mi };
    expect(place(requests)).toBe('a');
    for (const ties of [1, 2, 3]) expect(place(requests, ties)).toBe('b');
  });

  it('two nodes alike tie on the dot (free shares in whole points): either may be drawn', () => {
    const place = twoNodes({ cpu: 1000, memory: 1000 * Mi, pods: 10 }, ['a', 'b'], [{ cpu: 400, memory: 400 * Mi }, { cpu: 400, memory: 400 * Mi }]);
    expect(drawn(place, { cpu: 100, memory: 100 * Mi })).toEqual(new Set(['a', 'b']));
  });

  it('a pod tied in whole points goes to either node as the seed draws, never by name alone', () => {
    const place = twoNodes({ cpu: 7910, memory: 29317 * Mi, pods: 58 }, ['k0', 'k1'], [{ cpu: 7210, memory: 9781 * Mi }, { cpu: 6760, memory: 11574 * Mi }]);
    const requests = { cpu: 700, memory: 2 * Gi };
    expect(place(requests)).toBe('k0');
    expect(drawn(place, requests)).toEqual(new Set(['k0', 'k1']));
  });
});
