// kube-scheduler's default choice among the feasible existing nodes (NodeResourcesFit, LeastAllocated):
// the node whose cpu and memory stay the least allocated after the pod, the mean of the two free
// shares, ties by name. Used only to check chosen plans (disruption/schedulerCheck.ts), but a check of a
// large merge places tens of thousands of pods, and examining every node for each was the largest cost
// of a pass at 5,000 nodes.
//
// Nodes of the same allocatable cpu and memory lose the same share to a given pod, so within such a group
// the order by free share now is the order by score: the first feasible node of each group is that
// group's best, and only one node per group has to win on score. Groups are few (instance types), so a
// pod costs (groups) plus the infeasible nodes it passes over. A node whose pod slots are used up leaves
// its group for the rest of the simulation.
import type { ExistingNode } from './existingNodes.ts';

interface Group {
  readonly cpuAllocatable: number;
  readonly memoryAllocatable: number;
  /** Node indexes by (free share, descending; name). */
  readonly order: number[];
}

/** A node's free room in this simulation. */
export interface FreeRoom {
  readonly cpu: number;
  readonly memory: number;
  readonly pods: number;
}

export class LeastAllocatedOrder {
  private readonly groups: Group[] = [];
  private readonly groupOf = new Map<number, Group>();
  /** Free share (cpu + memory) each listed node is sorted by, by node index. */
  private readonly share: Float64Array;

  /** `candidates`: the receiving nodes of the simulation that are not excluded. */
  constructor(
    private readonly nodes: readonly ExistingNode[],
    candidates: Iterable<number>,
    free: (nodeIndex: number) => FreeRoom,
  ) {
    this.share = new Float64Array(nodes.length);
    const byShape = new Map<string, Group>();
    for (const i of candidates) {
      const room = free(i);
      if (room.pods < 1) continue;
      const { cpu, memory } = allocatable(nodes[i]!);
      const shape = `${cpu}/${memory}`;
      let group = byShape.get(shape);
      if (!group) {
        group = { cpuAllocatable: cpu, memoryAllocatable: memory, order: [] };
        byShape.set(shape, group);
        this.groups.push(group);
      }
      group.order.push(i);
      this.groupOf.set(i, group);
      this.share[i] = shareOf(group, room);
    }
    for (const group of this.groups) group.order.sort((a, b) => this.compare(a, b));
  }

  /** The node's room changed (a pod was placed there): move it to its new place, or off the list. */
  update(nodeIndex: number, room: FreeRoom): void {
    const group = this.groupOf.get(nodeIndex);
    if (!group) return;
    group.order.splice(this.position(group, nodeIndex), 1);
    if (room.pods < 1) {
      this.groupOf.delete(nodeIndex);
      return;
    }
    this.share[nodeIndex] = shareOf(group, room);
    group.order.splice(this.position(group, nodeIndex), 0, nodeIndex);
  }

  /**
   * The feasible node with the best score for a pod of `cpu` and `memory`, or undefined when none is.
   * `feasible` says whether the pod may go there; `skip` leaves a node out for this pod only.
   */
  best(
    cpu: number,
    memory: number,
    room: (nodeIndex: number) => FreeRoom,
    feasible: (nodeIndex: number) => boolean,
    skip?: (nodeIndex: number) => boolean,
  ): number | undefined {
    let best = -1;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (const group of this.groups) {
      for (const i of group.order) {
        if (skip?.(i) || !feasible(i)) continue;
        const free = room(i);
        const score = scoreAfter(group, free, cpu, memory);
        if (score > bestScore + 1e-12 || (Math.abs(score - bestScore) <= 1e-12 && this.nodes[i]!.name < this.nodes[best]!.name)) {
          best = i;
          bestScore = score;
        }
        break;
      }
    }
    return best >= 0 ? best : undefined;
  }

  private compare(a: number, b: number): number {
    const d = this.share[b]! - this.share[a]!;
    if (d !== 0) return d;
    const na = this.nodes[a]!.name;
    const nb = this.nodes[b]!.name;
    return na < nb ? -1 : na > nb ? 1 : 0;
  }

  /** Where `nodeIndex` is, or would go, in its group's order (by its current share). */
  private position(group: Group, nodeIndex: number): number {
    let low = 0;
    let high = group.order.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.compare(group.order[mid]!, nodeIndex) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

function allocatable(node: ExistingNode): { cpu: number; memory: number } {
  return { cpu: node.node.allocatable['cpu'] ?? 0, memory: node.node.allocatable['memory'] ?? 0 };
}

function shareOf(group: Group, room: FreeRoom): number {
  return (group.cpuAllocatable > 0 ? room.cpu / group.cpuAllocatable : 0) + (group.memoryAllocatable > 0 ? room.memory / group.memoryAllocatable : 0);
}

/** kube-scheduler's LeastAllocated score (as a share, not out of 100) once the pod is there. */
export function scoreAfter(
  shape: { readonly cpuAllocatable: number; readonly memoryAllocatable: number },
  room: FreeRoom,
  cpu: number,
  memory: number,
): number {
  const cpuShare = shape.cpuAllocatable > 0 ? (room.cpu - cpu) / shape.cpuAllocatable : 0;
  const memoryShare = shape.memoryAllocatable > 0 ? (room.memory - memory) / shape.memoryAllocatable : 0;
  return (cpuShare + memoryShare) / 2;
}
