// The existing nodes a simulation has changed (pods placed on them or moved away) that can receive
// pods, kept sorted by (free cpu, name) as their free cpu changes, so that the best fit among them is
// the first feasible one at or above a pod's request, as for the untouched nodes (existingNodes.ts
// CpuOrder). Without it every pod looked at every changed node: in a multi-node simulation that is
// most of the cluster.
import type { ExistingNode } from './existingNodes.ts';

export class TouchedOrder {
  /** Node indexes, sorted by (free, name). */
  private readonly order: number[] = [];
  /** Free cpu each listed node is sorted by. */
  private readonly free = new Map<number, number>();

  constructor(private readonly nodes: readonly ExistingNode[]) {}

  get length(): number {
    return this.order.length;
  }

  at(position: number): number {
    return this.order[position]!;
  }

  /** Lists the node with this free cpu, or moves it to where that free cpu puts it. */
  set(nodeIndex: number, freeCpu: number): void {
    const previous = this.free.get(nodeIndex);
    if (previous !== undefined) {
      if (previous === freeCpu) return;
      this.order.splice(this.position(previous, this.nodes[nodeIndex]!.name), 1);
    }
    this.free.set(nodeIndex, freeCpu);
    this.order.splice(this.position(freeCpu, this.nodes[nodeIndex]!.name), 0, nodeIndex);
  }

  /** Takes the node off the list (it has no pod slot left: no pod can go there). */
  delete(nodeIndex: number): void {
    const previous = this.free.get(nodeIndex);
    if (previous === undefined) return;
    this.order.splice(this.position(previous, this.nodes[nodeIndex]!.name), 1);
    this.free.delete(nodeIndex);
  }

  /** First position whose free cpu is at least `cpu`. */
  firstWithCpu(cpu: number): number {
    let low = 0;
    let high = this.order.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.free.get(this.order[mid]!)! < cpu) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** First position not before (free, name). */
  private position(freeCpu: number, name: string): number {
    let low = 0;
    let high = this.order.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const i = this.order[mid]!;
      const f = this.free.get(i)!;
      const before = f < freeCpu || (f === freeCpu && this.nodes[i]!.name < name);
      if (before) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
