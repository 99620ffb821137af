// kube-scheduler's default choice among the feasible existing nodes (NodeResourcesFit, LeastAllocated):
// the node whose cpu and memory stay the least allocated after the pod, the mean of the two free
// shares, ties by name; or in kube-scheduler's own whole points, a seeded draw among the nodes that tie
// (bestInWholePoints). Used only to check chosen plans (disruption/schedulerCheck.ts), but a check of a
// large merge places tens of thousands of pods, and examining every node for each was the largest cost
// of a pass at 5,000 nodes.
//
// Nodes of the same allocatable cpu and memory lose the same share to a given pod, so within such a group
// the order by free share now is the order by score: the first feasible node of each group is that
// group's best, and only one node per group has to win on score. Groups are few (instance types), so a
// pod costs (groups) plus the infeasible nodes it passes over. A node whose pod slots are used up leaves
// its group for the rest of the simulation. Each group's order is kept in blocks that know their most
// free cpu and memory, so the nodes a pod could not fit on anyway are passed over a block at a time.
import type { ExistingNode } from './existingNodes.ts';

interface Group {
  /** Its number in Shapes. */
  readonly shape: number;
  readonly cpuAllocatable: number;
  readonly memoryAllocatable: number;
  /** Node indexes by (free share, descending; name), cut into blocks of about BLOCK_SIZE. */
  readonly blocks: Block[];
}

/**
 * A run of a group's order with the most free cpu and the most free memory of any node in it. In a
 * packed cluster most nodes lack the cpu (or the memory) a pod asks even where their other resource
 * leaves them near the top of the order; at 1,000 nodes a pod passed over about 150 such nodes before
 * these bounds let it pass over whole blocks of them.
 */
interface Block {
  readonly nodes: number[];
  maxCpu: number;
  maxMemory: number;
}

/** Nodes per block of a group's order (a block splits at twice this). */
export const BLOCK_SIZE = 32;

/** A node's free room in this simulation. */
export interface FreeRoom {
  readonly cpu: number;
  readonly memory: number;
  readonly pods: number;
}

export class LeastAllocatedOrder {
  private readonly groups: Group[] = [];
  /** Each listed node's group is its shape's; by node index, whether it is listed. */
  private readonly listed: Uint8Array;
  private readonly groupByShape: (Group | undefined)[] = [];
  private readonly shapes: Shapes;
  /** Free share (cpu + memory) each listed node is sorted by, by node index. */
  private readonly share: Float64Array;
  /** Free cpu and memory of each listed node, by node index. */
  private readonly freeCpu: Float64Array;
  private readonly freeMemory: Float64Array;

  /** `candidates`: the receiving nodes of the simulation that are not excluded. */
  constructor(
    private readonly nodes: readonly ExistingNode[],
    candidates: Iterable<number>,
    free: (nodeIndex: number) => FreeRoom,
    private readonly blockSize = BLOCK_SIZE,
    from?: LeastAllocatedOrder,
  ) {
    this.shapes = shapesOf(nodes);
    if (from) {
      // A copy (see derive).
      this.listed = from.listed.slice();
      this.share = from.share.slice();
      this.freeCpu = from.freeCpu.slice();
      this.freeMemory = from.freeMemory.slice();
      for (const group of from.groups) {
        const copy: Group = { ...group, blocks: group.blocks.map((b) => ({ nodes: b.nodes.slice(), maxCpu: b.maxCpu, maxMemory: b.maxMemory })) };
        this.groups.push(copy);
        this.groupByShape[group.shape] = copy;
      }
      return;
    }
    this.listed = new Uint8Array(nodes.length);
    this.share = new Float64Array(nodes.length);
    this.freeCpu = new Float64Array(nodes.length);
    this.freeMemory = new Float64Array(nodes.length);
    const orders = new Map<Group, number[]>();
    for (const i of candidates) {
      const room = free(i);
      if (room.pods < 1) continue;
      const group = this.groupFor(i);
      let order = orders.get(group);
      if (!order) orders.set(group, (order = []));
      order.push(i);
      this.listed[i] = 1;
      this.note(group, i, room);
    }
    for (const [group, order] of orders) {
      order.sort((a, b) => this.compare(a, b));
      for (let k = 0; k < order.length; k += blockSize) {
        const block: Block = { nodes: order.slice(k, k + blockSize), maxCpu: 0, maxMemory: 0 };
        this.bound(block);
        group.blocks.push(block);
      }
    }
  }

  /**
   * The order of the cluster as its simulator indexed it: every receiving node with a free pod slot, at
   * its own free room. Built once per simulator (its node list never changes); each simulation derives
   * its own from it.
   */
  static of(nodes: readonly ExistingNode[]): LeastAllocatedOrder {
    let base = baseOrders.get(nodes);
    if (!base) {
      const receiving = nodes.filter((n) => n.receives).map((n) => n.index);
      base = new LeastAllocatedOrder(nodes, receiving, (i) => ({ cpu: nodes[i]!.freeCpu, memory: nodes[i]!.freeMemory, pods: nodes[i]!.freePods }));
      baseOrders.set(nodes, base);
    }
    return base;
  }

  /**
   * A copy of this order for one simulation, the same as one built for it (the same nodes in the same
   * order, groups in the same order; only the blocks may be cut elsewhere): `excluded` nodes left out,
   * each of `changed` (receiving and not excluded) at its room now. Copying the order costs a few
   * typed-array copies where building it sorted every node, for every simulation: a single-node check
   * at 5,000 nodes places some 30 pods.
   */
  derive(excluded: Iterable<number>, changed: Iterable<readonly [number, FreeRoom]>): LeastAllocatedOrder {
    const copy = new LeastAllocatedOrder(this.nodes, [], () => ({ cpu: 0, memory: 0, pods: 0 }), this.blockSize, this);
    for (const i of excluded) {
      if (!copy.listed[i]) continue;
      copy.remove(copy.groupFor(i), i);
      copy.listed[i] = 0;
    }
    for (const [i, room] of changed) {
      if (copy.listed[i]) {
        copy.remove(copy.groupFor(i), i);
        copy.listed[i] = 0;
      }
      if (room.pods < 1) continue;
      const group = copy.groupFor(i);
      copy.note(group, i, room);
      copy.insert(group, i);
      copy.listed[i] = 1;
    }
    // A built order has its groups in the order of their first listed node, and no empty one.
    const first = (group: Group): number => Math.min(...group.blocks.map((b) => Math.min(...b.nodes)));
    const kept = copy.groups.filter((g) => g.blocks.length > 0).map((g) => ({ g, at: first(g) }));
    kept.sort((a, b) => a.at - b.at);
    copy.groups.length = 0;
    for (const { g } of kept) copy.groups.push(g);
    return copy;
  }

  /** The node's room changed (a pod was placed there): move it to its new place, or off the list. */
  update(nodeIndex: number, room: FreeRoom): void {
    if (!this.listed[nodeIndex]) return;
    const group = this.groupFor(nodeIndex);
    this.remove(group, nodeIndex);
    if (room.pods < 1) {
      this.listed[nodeIndex] = 0;
      return;
    }
    this.note(group, nodeIndex, room);
    this.insert(group, nodeIndex);
  }

  /** The group of the node's shape, made (last in the order) if it has none yet. */
  private groupFor(nodeIndex: number): Group {
    const shape = this.shapes.id[nodeIndex]!;
    let group = this.groupByShape[shape];
    if (!group) {
      const { cpu, memory } = this.shapes.allocatable[shape]!;
      group = { shape, cpuAllocatable: cpu, memoryAllocatable: memory, blocks: [] };
      this.groupByShape[shape] = group;
      this.groups.push(group);
    }
    return group;
  }

  /**
   * The feasible node with the best score for a pod of `cpu` and `memory`, or undefined when none is.
   * `feasible` says whether the pod may go there (its cpu and memory are checked here first, with the
   * same sums); `skip` leaves a node out for this pod only.
   */
  best(cpu: number, memory: number, feasible: (nodeIndex: number) => boolean, skip?: (nodeIndex: number) => boolean, integerTies?: number): number | undefined {
    if (integerTies !== undefined) return this.bestInWholePoints(cpu, memory, feasible, skip, integerTies);
    let best = -1;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (const group of this.groups) {
      search: for (const block of group.blocks) {
        if (block.maxCpu < cpu || block.maxMemory < memory) continue;
        for (const i of block.nodes) {
          if (this.freeCpu[i]! < cpu || this.freeMemory[i]! < memory) continue;
          if (skip?.(i) || !feasible(i)) continue;
          const score = scoreAfter(group, { cpu: this.freeCpu[i]!, memory: this.freeMemory[i]!, pods: 1 }, cpu, memory);
          if (score > bestScore + 1e-12 || (Math.abs(score - bestScore) <= 1e-12 && this.nodes[i]!.name < this.nodes[best]!.name)) {
            best = i;
            bestScore = score;
          }
          break search;
        }
      }
    }
    return best >= 0 ? best : undefined;
  }

  /**
   * `best` with kube-scheduler's own arithmetic (integerScore): whole points, so nodes a little apart in
   * free share tie, and kube-scheduler picks among the tied nodes at random; here the draw is seeded by
   * `tieSeed` (tieDraw), so a check is the same every time it runs. Within a group a node further down
   * the order may score more points than the first feasible one (rounding each resource down), so each
   * group is followed while its nodes' exact score could still reach the top score: the exact score is
   * never below the whole points.
   */
  private bestInWholePoints(cpu: number, memory: number, feasible: (nodeIndex: number) => boolean, skip: ((nodeIndex: number) => boolean) | undefined, tieSeed: number): number | undefined {
    let best = -1;
    let bestScore = Number.NEGATIVE_INFINITY;
    let bestDraw = 0;
    for (const group of this.groups) {
      const podShare = shareOf(group, { cpu, memory, pods: 0 });
      search: for (const block of group.blocks) {
        if (block.maxCpu < cpu || block.maxMemory < memory) continue;
        for (const i of block.nodes) {
          // 50 x the sum of free shares after the pod: the mean, in points, before any rounding.
          if (50 * (this.share[i]! - podShare) < bestScore - 1e-9) break search;
          if (this.freeCpu[i]! < cpu || this.freeMemory[i]! < memory) continue;
          // Scored and drawn before the (costlier) feasibility check: a node that would not win is not
          // asked. Near-full nodes crowd into a point or two, and a group is followed through all of them.
          const score = integerScore(group, this.freeCpu[i]! - cpu, this.freeMemory[i]! - memory);
          if (score < bestScore) continue;
          const draw = tieDraw(tieSeed, i);
          if (score === bestScore && draw >= bestDraw) continue;
          if (skip?.(i) || !feasible(i)) continue;
          best = i;
          bestScore = score;
          bestDraw = draw;
        }
      }
    }
    return best >= 0 ? best : undefined;
  }

  private note(group: Group, nodeIndex: number, room: FreeRoom): void {
    this.share[nodeIndex] = shareOf(group, room);
    this.freeCpu[nodeIndex] = room.cpu;
    this.freeMemory[nodeIndex] = room.memory;
  }

  private bound(block: Block): void {
    let maxCpu = Number.NEGATIVE_INFINITY;
    let maxMemory = Number.NEGATIVE_INFINITY;
    for (const i of block.nodes) {
      if (this.freeCpu[i]! > maxCpu) maxCpu = this.freeCpu[i]!;
      if (this.freeMemory[i]! > maxMemory) maxMemory = this.freeMemory[i]!;
    }
    block.maxCpu = maxCpu;
    block.maxMemory = maxMemory;
  }

  private compare(a: number, b: number): number {
    const d = this.share[b]! - this.share[a]!;
    if (d !== 0) return d;
    const na = this.nodes[a]!.name;
    const nb = this.nodes[b]!.name;
    return na < nb ? -1 : na > nb ? 1 : 0;
  }

  /** The first block whose last node does not come before `nodeIndex` (by its current share); -1: none. */
  private blockFor(group: Group, nodeIndex: number): number {
    let low = 0;
    let high = group.blocks.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const nodes = group.blocks[mid]!.nodes;
      if (this.compare(nodes[nodes.length - 1]!, nodeIndex) < 0) low = mid + 1;
      else high = mid;
    }
    return low < group.blocks.length ? low : -1;
  }

  /** Where `nodeIndex` is, or would go, in a block (by its current share). */
  private position(nodes: readonly number[], nodeIndex: number): number {
    let low = 0;
    let high = nodes.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.compare(nodes[mid]!, nodeIndex) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private remove(group: Group, nodeIndex: number): void {
    const b = this.blockFor(group, nodeIndex);
    const block = group.blocks[b]!;
    block.nodes.splice(this.position(block.nodes, nodeIndex), 1);
    if (block.nodes.length === 0) group.blocks.splice(b, 1);
    else if (this.freeCpu[nodeIndex] === block.maxCpu || this.freeMemory[nodeIndex] === block.maxMemory) this.bound(block);
  }

  private insert(group: Group, nodeIndex: number): void {
    let b = this.blockFor(group, nodeIndex);
    if (b < 0) b = group.blocks.length - 1;
    if (b < 0) {
      group.blocks.push({ nodes: [nodeIndex], maxCpu: this.freeCpu[nodeIndex]!, maxMemory: this.freeMemory[nodeIndex]! });
      return;
    }
    const block = group.blocks[b]!;
    block.nodes.splice(this.position(block.nodes, nodeIndex), 0, nodeIndex);
    if (block.nodes.length > 2 * this.blockSize) {
      const tail: Block = { nodes: block.nodes.splice(this.blockSize), maxCpu: 0, maxMemory: 0 };
      this.bound(block);
      this.bound(tail);
      group.blocks.splice(b + 1, 0, tail);
    } else {
      block.maxCpu = Math.max(block.maxCpu, this.freeCpu[nodeIndex]!);
      block.maxMemory = Math.max(block.maxMemory, this.freeMemory[nodeIndex]!);
    }
  }
}

function allocatable(node: ExistingNode): { cpu: number; memory: number } {
  return { cpu: node.node.allocatable['cpu'] ?? 0, memory: node.node.allocatable['memory'] ?? 0 };
}

/** Each node's shape (allocatable cpu and memory) as a number, and the shapes; by node index. */
interface Shapes {
  readonly id: Int32Array;
  readonly allocatable: readonly { readonly cpu: number; readonly memory: number }[];
}

// Per simulator (its node list never changes): every least-allocated simulation groups the same nodes.
const baseOrders = new WeakMap<readonly ExistingNode[], LeastAllocatedOrder>();
const shapesByNodes = new WeakMap<readonly ExistingNode[], Shapes>();

function shapesOf(nodes: readonly ExistingNode[]): Shapes {
  let shapes = shapesByNodes.get(nodes);
  if (!shapes) {
    const id = new Int32Array(nodes.length);
    const list: { cpu: number; memory: number }[] = [];
    const byKey = new Map<string, number>();
    for (const [i, node] of nodes.entries()) {
      const room = allocatable(node);
      const key = `${room.cpu}/${room.memory}`;
      let n = byKey.get(key);
      if (n === undefined) {
        n = list.push(room) - 1;
        byKey.set(key, n);
      }
      id[i] = n;
    }
    shapes = { id, allocatable: list };
    shapesByNodes.set(nodes, shapes);
  }
  return shapes;
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

/**
 * kube-scheduler's LeastAllocated score as it computes it (NodeResourcesFit, equal weights for cpu and
 * memory): per resource (allocatable - requested) x 100 / allocatable in integer arithmetic, then the
 * mean of the two, again rounded down; a resource the node has none of is left out of the mean.
 * `freeCpu` and `freeMemory`: the node's room once the pod is there.
 */
export function integerScore(shape: { readonly cpuAllocatable: number; readonly memoryAllocatable: number }, freeCpu: number, freeMemory: number): number {
  let sum = 0;
  let weights = 0;
  if (shape.cpuAllocatable > 0) {
    sum += Math.floor((freeCpu * 100) / shape.cpuAllocatable);
    weights += 1;
  }
  if (shape.memoryAllocatable > 0) {
    sum += Math.floor((freeMemory * 100) / shape.memoryAllocatable);
    weights += 1;
  }
  return weights > 0 ? Math.floor(sum / weights) : 0;
}

/** A node's draw among tied nodes: a hash of the seed and the node (kube-scheduler draws at random). */
export function tieDraw(seed: number, nodeIndex: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(nodeIndex + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}
