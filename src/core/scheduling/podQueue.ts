// The pods of a simulation in the order they are placed, handed out one at a time. Largest first is a
// sort, but a simulation that stops at its first failure (most of the multi-node search's prefixes: a
// zone-spread or a large pod finds no room within the first few dozen pods of thousands) needs only the
// first few: a heap hands them out in the same order as the stable sort without ordering the rest.
import type { Pod } from '../model/types.ts';

/** `pods` in the order `compare` and then their position give them, taken from the front lazily. */
export function* sortedLazily(pods: readonly Pod[], compare: (a: Pod, b: Pod) => number): Generator<Pod> {
  const heap = pods.map((_, i) => i);
  // Position breaks ties: the order is the stable sort's.
  const before = (a: number, b: number): boolean => {
    const c = compare(pods[a]!, pods[b]!);
    return c < 0 || (c === 0 && a < b);
  };
  const down = (from: number, size: number): void => {
    let at = from;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= size) return;
      const right = left + 1;
      const child = right < size && before(heap[right]!, heap[left]!) ? right : left;
      if (!before(heap[child]!, heap[at]!)) return;
      [heap[at], heap[child]] = [heap[child]!, heap[at]!];
      at = child;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i, heap.length);
  let size = heap.length;
  for (let taken = 0; size > 0 && taken < LAZY_PODS; taken++, size--) {
    const top = heap[0]!;
    heap[0] = heap[size - 1]!;
    down(0, size - 1);
    yield pods[top]!;
  }
  // Past the first pods a simulation usually places them all: the rest in one sort.
  const rest = heap.slice(0, size).sort((a, b) => compare(pods[a]!, pods[b]!) || a - b);
  for (const i of rest) yield pods[i]!;
}

/** Pods handed out from the heap before the rest is sorted in one go. */
const LAZY_PODS = 64;
