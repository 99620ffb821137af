// The lazy largest-first order hands pods out exactly as the stable sort orders them, ties included.
import { describe, expect, it } from 'vitest';
import { sortedLazily } from '../../src/core/scheduling/podQueue.ts';
import { largestFirst } from '../../src/core/scheduling/simulator.ts';
import type { Pod } from '../../src/core/model/types.ts';
import { Mi, pod } from '../builders.ts';
import { random } from './reference.ts';

describe('pods handed out largest first, lazily', () => {
  it.each([0, 1, 2, 7, 100, 1000].map((count) => ({ count })))('$count pods: the stable sort, pod for pod', ({ count }) => {
    const rand = random(count + 1);
    const pods: Pod[] = Array.from({ length: count }, (_, i) =>
      // Few sizes and names, so that many compare equal on size and some on everything (the same pod twice).
      pod({ name: `p${Math.floor(rand() * 5)}`, uid: `u${Math.floor(rand() * 3)}`, requests: { cpu: 100 * Math.floor(rand() * 4), memory: 64 * Mi * Math.floor(rand() * 3) } }),
    );
    if (count > 2) pods.push(pods[0]!, { ...pods[1]! });
    expect([...sortedLazily(pods, largestFirst)]).toEqual([...pods].sort(largestFirst));
    // Object for object, not merely equal: a copy of a pod keeps its place.
    const sorted = [...pods].sort(largestFirst);
    [...sortedLazily(pods, largestFirst)].forEach((p, i) => expect(p).toBe(sorted[i]));
  });

  it('stops where the taker stops: the rest is never compared in full', () => {
    const pods = Array.from({ length: 2000 }, (_, i) => pod({ name: `p${i}`, requests: { cpu: i, memory: Mi } }));
    let comparisons = 0;
    const counting = (a: Pod, b: Pod) => (comparisons++, largestFirst(a, b));
    const queue = sortedLazily(pods, counting);
    const first = [queue.next().value, queue.next().value, queue.next().value] as Pod[];
    expect(first.map((p) => p.name)).toEqual(['p1999', 'p1998', 'p1997']);
    // Building the heap and three pops: far fewer than a sort's ~2000 x log2(2000).
    expect(comparisons).toBeLessThan(5000);
  });
});
