// The multi-node search's shortcut (methods/roomBound.ts): a prefix whose pods certainly cannot fit is not simulated.
import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../src/core/disruption/candidates.ts';
import { RoomBound } from '../../src/core/disruption/methods/roomBound.ts';
import { DEFAULT_REPLACEMENT_BOUND } from '../../src/core/disruption/sizeBound.ts';
import type { Node, Pod } from '../../src/core/model/types.ts';
import { cluster, Gi, m5Catalog, node, nodePool, on, pod } from '../builders.ts';

const large = (name: string, overrides: Partial<Node> = {}) => node({ name, allocatable: { cpu: 1930, memory: 7 * Gi, pods: 29 }, ...overrides });
const candidate = (n: Node, pods: readonly Pod[]): Candidate => ({
  node: n,
  pool: nodePool(),
  pricePerHour: 0.096,
  pods,
  disruptionCost: 1,
  methods: new Set(['multi-node']),
});

describe('room bound of a removal', () => {
  // `keep` has 930m, 5Gi and 19 pod slots free; the largest replacement of an m5.large is about 2x it.
  const keep = large('keep');
  const keepPods = on('keep', ...Array.from({ length: 10 }, () => pod({ requests: { cpu: 100, memory: 200 * 1024 ** 2 } })));

  it.each([
    ['pods that fit in the room left plus one replacement', 3000, 1 * Gi, 5, true],
    ['more cpu than the room left and the largest replacement', 6000, 1 * Gi, 5, false],
    ['more memory than the room left and the largest replacement', 100, 25 * Gi, 5, false],
    ['more pods than the free slots and the largest replacement', 10, 1 * Gi, 80, false],
  ] as const)('%s', (_name, cpu, memory, count, expected) => {
    const gone = large('gone');
    const each = Array.from({ length: count }, () => pod({ requests: { cpu: cpu / count, memory: memory / count } }));
    const c = cluster({ nodes: [keep, gone], pods: [...keepPods, ...on('gone', ...each)] });
    const room = new RoomBound(c, m5Catalog());
    expect(room.mayFit([candidate(gone, on('gone', ...each))], DEFAULT_REPLACEMENT_BOUND, 1)).toBe(expected);
  });

  it('a cordoned node lends no room, an unbounded replacement always may', () => {
    const gone = large('gone');
    const moved = on('gone', pod({ requests: { cpu: 1500, memory: Gi } }), pod({ requests: { cpu: 1500, memory: Gi } }));
    const c = cluster({ nodes: [large('cordoned', { unschedulable: true }), gone], pods: moved });
    const room = new RoomBound(c, m5Catalog());
    expect(room.mayFit([candidate(gone, moved)], { scale: 1 }, 1)).toBe(false);
    expect(room.mayFit([candidate(gone, moved)], { scale: 2 }, 1)).toBe(true);
    expect(room.mayFit([candidate(gone, moved)], null, 0)).toBe(true);
  });
});
