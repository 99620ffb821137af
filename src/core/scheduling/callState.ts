// The overlay one simulation keeps on top of the precomputed cluster: excluded nodes, pods moved
// away from nodes that stay, capacity and ports used by pods placed so far, and the new nodes opened.
// The precomputed state is never written to, so simulations are independent.
import type { Labels, Pod } from '../model/types.ts';
import type { BoundPods, CpuOrder, ExistingNode } from './existingNodes.ts';
import { normalizeHostPorts, type PortUse } from './hostPorts.ts';
import { labelValue } from './labelSelector.ts';
import type { NewNode } from './newNode.ts';
import type { PodIndex } from './podIndex.ts';
import type { PreparedPod } from './podConstraints.ts';
import { CPU, MEMORY, PODS } from './resources.ts';
import type { CallView, PlacedPod, RemovedPod } from './topology.ts';
import { CallCounts } from './callCounts.ts';
import { TouchedOrder } from './touchedOrder.ts';
import { UntouchedNodes } from './untouchedNodes.ts';
import { LeastAllocatedOrder, type FreeRoom } from './leastAllocated.ts';

/** Change of one existing node's free capacity in this simulation (positive: freed). */
export interface NodeDelta {
  cpu: number;
  memory: number;
  pods: number;
  readonly other: Map<string, number>;
  /** Pods moved away whose host ports are free again. */
  readonly freedPorts: Set<string>;
  readonly addedPorts: PortUse[];
}

export class CallState implements CallView {
  readonly excluded: Uint8Array;
  readonly excludedAlive: number[] = [];
  /** Every excluded node, by index. */
  private readonly excludedIndexes: number[] = [];
  readonly removed: RemovedPod[] = [];
  readonly removedUids = new Set<string>();
  readonly placed: PlacedPod[] = [];
  readonly deltas = new Map<number, NodeDelta>();
  readonly newNodes: NewNode[] = [];
  /** Topology counts kept up to date as pods are placed. */
  readonly counts: CallCounts;
  /** Changed nodes that stay and receive pods, by (free cpu, name); kept only for a best-fit simulation. */
  readonly touched: TouchedOrder;
  /** Receiving nodes neither excluded nor changed, in the untouched best-fit order. */
  readonly untouched: UntouchedNodes;
  /** For the pod being placed: nodes it may not go to (by node index), or undefined when none. */
  closedForPod: Uint8Array | undefined = undefined;
  /** kube-scheduler's order of the nodes, built by the first pod placed least-allocated. */
  private leastAllocatedOrder: LeastAllocatedOrder | undefined;

  constructor(
    private readonly nodes: readonly ExistingNode[],
    nodeIndexByName: ReadonlyMap<string, number>,
    /** The node each pod the cluster has bound (and not finished) is on. */
    bound: Pick<BoundPods, 'nodeIndexOf'>,
    index: PodIndex,
    excludedNodes: ReadonlySet<string>,
    pods: readonly Pod[],
    cpuOrder: CpuOrder,
    /**
     * False when the simulation places pods the kube-scheduler way (least allocated): only the best-fit
     * search reads `touched`, and keeping it sorted as every pod lands was a tenth of such a simulation.
     */
    private readonly bestFit = true,
  ) {
    this.excluded = new Uint8Array(nodes.length);
    this.untouched = new UntouchedNodes(cpuOrder);
    for (const name of excludedNodes) {
      const i = nodeIndexByName.get(name);
      if (i === undefined || this.excluded[i]) continue;
      this.excluded[i] = 1;
      this.excludedIndexes.push(i);
      this.untouched.remove(i);
      if (nodes[i]!.alive) this.excludedAlive.push(i);
    }
    this.excludedAlive.sort((a, b) => a - b);
    for (const pod of pods) {
      // Only a pod the cluster really has on a node that stays frees anything there.
      const i = bound.nodeIndexOf(pod);
      if (i === undefined || this.excluded[i] || this.removedUids.has(pod.uid)) continue;
      // The pod leaves a node that stays: its capacity, ports and topology counts go with it.
      this.removedUids.add(pod.uid);
      this.removed.push({ pod, nodeIndex: i, topologyIndex: index.indexOf(pod, i) });
      const delta = this.delta(i);
      delta.cpu += pod.requests[CPU] ?? 0;
      delta.memory += pod.requests[MEMORY] ?? 0;
      delta.pods += 1;
      for (const [key, value] of Object.entries(pod.requests)) {
        if (key !== CPU && key !== MEMORY && key !== PODS) delta.other.set(key, (delta.other.get(key) ?? 0) + value);
      }
      if (normalizeHostPorts(pod.hostPorts).length > 0) delta.freedPorts.add(pod.uid);
    }
    this.counts = new CallCounts(this, nodes.length);
    this.touched = new TouchedOrder(nodes);
    for (const [i, delta] of this.deltas) this.noteFree(i, delta);
  }

  private noteFree(nodeIndex: number, delta: NodeDelta): void {
    const node = this.nodes[nodeIndex]!;
    if (this.excluded[nodeIndex] || !node.receives) return;
    this.leastAllocatedOrder?.update(nodeIndex, this.room(nodeIndex));
    // A node whose pod slots are used up takes no pod whatever its free cpu: best fit skips it for good
    // (nodes of small types fill their slots with small pods long before their cpu; scanning them for
    // every later pod was quadratic).
    if (!this.bestFit) return;
    if (node.freePods + delta.pods < 1) this.touched.delete(nodeIndex);
    else this.touched.set(nodeIndex, node.freeCpu + delta.cpu);
  }

  /** A node's free cpu, memory and pod slots in this simulation. */
  room(nodeIndex: number): FreeRoom {
    const node = this.nodes[nodeIndex]!;
    const delta = this.deltas.get(nodeIndex);
    return delta
      ? { cpu: node.freeCpu + delta.cpu, memory: node.freeMemory + delta.memory, pods: node.freePods + delta.pods }
      : { cpu: node.freeCpu, memory: node.freeMemory, pods: node.freePods };
  }

  /** The receiving nodes that are not excluded, in kube-scheduler's order (leastAllocated.ts). */
  leastAllocated(): LeastAllocatedOrder {
    if (!this.leastAllocatedOrder) {
      // The simulator's order of its cluster, less this simulation's excluded nodes, with the nodes it
      // changed at their room now (leastAllocated.ts derive: the same as building it here).
      const changed: [number, FreeRoom][] = [];
      for (const i of this.deltas.keys()) if (this.nodes[i]!.receives && !this.excluded[i]) changed.push([i, this.room(i)]);
      this.leastAllocatedOrder = LeastAllocatedOrder.of(this.nodes).derive(this.excludedIndexes, changed);
    }
    return this.leastAllocatedOrder;
  }

  nodeLabel(nodeIndex: number, key: string): string | undefined {
    return labelValue(this.nodes[nodeIndex]!.labels, key);
  }

  delta(nodeIndex: number): NodeDelta {
    let delta = this.deltas.get(nodeIndex);
    if (!delta) {
      delta = { cpu: 0, memory: 0, pods: 0, other: new Map(), freedPorts: new Set(), addedPorts: [] };
      this.deltas.set(nodeIndex, delta);
      this.untouched.remove(nodeIndex);
    }
    return delta;
  }

  placeOnExisting(p: PreparedPod, nodeIndex: number, labels: Labels): void {
    const delta = this.delta(nodeIndex);
    delta.cpu -= p.cpu;
    delta.memory -= p.memory;
    delta.pods -= 1;
    for (const [key, value] of p.other) delta.other.set(key, (delta.other.get(key) ?? 0) - value);
    if (p.ports.length > 0) delta.addedPorts.push(...p.ports);
    this.noteFree(nodeIndex, delta);
    this.place({ pod: p.pod, antiTerms: p.antiAffinity, nodeIndex, nodeLabels: labels, newNode: undefined, labelPairs: p.labelPairs });
  }

  placeOnNew(p: PreparedPod, node: NewNode): void {
    this.place({ pod: p.pod, antiTerms: p.antiAffinity, nodeIndex: undefined, nodeLabels: undefined, newNode: node, labelPairs: p.labelPairs });
  }

  private place(placed: PlacedPod): void {
    this.placed.push(placed);
    this.counts.placed(placed);
  }
}
