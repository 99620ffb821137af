// Which receiving nodes a simulation has not changed yet, in the untouched best-fit order (CpuOrder,
// existingNodes.ts). Best fit scans that order from the first node with enough cpu and skips excluded
// and changed nodes; in a large multi-node simulation most nodes become changed, and skipping them one
// by one made every pod pay for all the pods placed before it (quadratic: too slow at 5,000 nodes). A
// node only ever leaves this list within a simulation, so each gone position points past itself, and
// lookups shorten the chains they follow (union-find's "next free slot"): amortized near constant.
import type { CpuOrder } from './existingNodes.ts';

export class UntouchedNodes {
  /** Per position: 0 while the node there may take a pod untouched, else 1 + a later position to continue from. */
  private readonly next: Int32Array;

  constructor(private readonly order: CpuOrder) {
    this.next = order.untouchedStart.slice();
  }

  /** The node at `nodeIndex` is excluded or changed: best fit no longer takes it as untouched. */
  remove(nodeIndex: number): void {
    const position = this.order.positionOf[nodeIndex]!;
    if (position >= 0 && this.next[position] === 0) this.next[position] = position + 2;
  }

  /** The first position at or after `position` whose node is still untouched (the length when none is). */
  firstFrom(position: number): number {
    const { next } = this;
    const end = next.length;
    let found = position;
    while (found < end && next[found] !== 0) found = next[found]! - 1;
    // Point every position passed on the way straight at the answer.
    let at = position;
    while (at < found) {
      const following = next[at]! - 1;
      next[at] = found + 1;
      at = following;
    }
    return found;
  }
}
