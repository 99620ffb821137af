// The cluster's nodes as the simulation sees them, computed once per simulator: effective labels,
// whether a node may receive pods at all, its free capacity after the pods already bound to it, the
// host ports in use, and a list of receiving nodes sorted by free cpu for best-fit search.
import type { Cluster, Labels, Node, Pod, Taint } from '../model/types.ts';
import { DisruptedTaint, DisruptingTaint, InterruptedTaint, LabelKeys } from '../model/types.ts';
import { normalizeHostPorts, type PortUse } from './hostPorts.ts';
import { CPU, MEMORY, PODS } from './resources.ts';
import { blocksScheduling, UnschedulableTaint } from './taints.ts';

export interface PortOnNode extends PortUse {
  /** The pod holding the port (so moving that pod frees it). */
  readonly podUid: string;
}

export interface ExistingNode {
  readonly index: number;
  readonly node: Node;
  readonly name: string;
  /** Node labels completed with zone, hostname, instance type and capacity type from the model fields. */
  readonly labels: Labels;
  /** Ready, not cordoned, not deleting, not being disrupted: may receive pods (unless excluded). */
  readonly receives: boolean;
  /** Not deleting: its pods still count for affinity and spread, and it is a topology domain. */
  readonly alive: boolean;
  /** NoSchedule / NoExecute taints a pod must tolerate. */
  readonly blockingTaints: readonly Taint[];
  /** Taints as topology spread's nodeTaintsPolicy Honor sees them (a cordoned node is tainted). */
  readonly spreadTaints: readonly Taint[];
  readonly freeCpu: number;
  readonly freeMemory: number;
  readonly freePods: number;
  /** Free amount of every other resource the node lists or its pods use. */
  readonly freeOther: Readonly<Record<string, number>>;
  readonly ports: readonly PortOnNode[];
}

export function isTerminal(pod: Pod): boolean {
  return pod.phase === 'Succeeded' || pod.phase === 'Failed';
}

// Node objects are immutable and a pass rebuilds the simulation after every decision from a cluster that
// keeps the untouched nodes' objects: their effective labels are worked out once.
const labelsOfNode = new WeakMap<Node, Labels>();

function effectiveLabels(node: Node): Labels {
  let labels = labelsOfNode.get(node);
  if (!labels) {
    labels = completeLabels(node);
    labelsOfNode.set(node, labels);
  }
  return labels;
}

function completeLabels(node: Node): Labels {
  const labels: Record<string, string> = { ...node.labels };
  const fill = (key: string, value: string | undefined): void => {
    if (value !== undefined && !Object.hasOwn(labels, key)) labels[key] = value;
  };
  fill(LabelKeys.hostname, node.name);
  fill(LabelKeys.zone, node.zone);
  fill(LabelKeys.instanceType, node.instanceType);
  fill(LabelKeys.capacityType, node.capacityType);
  fill(LabelKeys.nodePool, node.nodePool);
  return labels;
}

// Karpenter's taint on the nodes it disrupts, ours on the nodes we drain, and ours on nodes whose
// instance has an interruption notice: none takes new pods, even from a pod that tolerates every taint
// or once something uncordons the node.
const isDisruptedTaint = (taint: Taint): boolean =>
  taint.key === DisruptedTaint.key || taint.key === DisruptingTaint.key || taint.key === InterruptedTaint.key;

/**
 * Being deleted by anyone: a deletion timestamp, or Karpenter's disruption taint (Karpenter, or this
 * product acting through Karpenter, has chosen it and will delete it). Its pods need a place whatever
 * a consolidation pass decides, as Karpenter treats the pods of nodes marked for deletion.
 */
export function isBeingDeleted(node: Node): boolean {
  return node.deleting || node.taints.some((t) => t.key === DisruptedTaint.key);
}

/** Ready, not cordoned, not deleting, not being disrupted: the node may receive pods. */
export function receivesPods(node: Node): boolean {
  return node.ready && !node.unschedulable && !node.deleting && !node.taints.some(isDisruptedTaint);
}

export function buildExistingNodes(cluster: Cluster): ExistingNode[] {
  return indexCluster(cluster).nodes;
}

/**
 * The pods bound to each node (not finished), by uid: tells whether a pod of a simulation request
 * really is on a node, so that moving it frees room there. Kept per node rather than in one map of
 * every pod: a lookup starts from the node the pod names, and a pass rebuilds this after each decision.
 */
export class BoundPods {
  private byUid: Map<string, number> | undefined;

  constructor(
    private readonly podsByNode: readonly Pod[][],
    private readonly nodeIndexByName: ReadonlyMap<string, number>,
  ) {}

  /**
   * The index of the node the cluster has `pod` (by uid) bound to, if any. A pod that names no node is
   * one to be bound (pending, or evicted and removed from the cluster): bound nowhere (SimulationRequest).
   */
  nodeIndexOf(pod: Pod): number | undefined {
    if (pod.nodeName === undefined) return undefined;
    const i = this.nodeIndexByName.get(pod.nodeName);
    if (i !== undefined) {
      const here = this.podsByNode[i]!;
      // Usually the very object the cluster holds; a copy is recognised by its uid.
      if (here.includes(pod)) return i;
      for (const p of here) if (p.uid === pod.uid) return i;
    }
    // A copy of the pod that names another node: look the uid up among all of them.
    if (!this.byUid) {
      this.byUid = new Map();
      this.podsByNode.forEach((pods, i) => pods.forEach((p) => this.byUid!.set(p.uid, i)));
    }
    return this.byUid.get(pod.uid);
  }
}

/** What a simulator needs of the cluster's nodes and bound pods, from one pass over the pods. */
export interface IndexedCluster {
  readonly nodes: ExistingNode[];
  readonly nodeIndexByName: Map<string, number>;
  /** Pods that count for affinity and spread: bound to a node that is not deleting, not terminating. */
  readonly counted: readonly Pod[];
  /** The node index of each counted pod. */
  readonly countedNodes: Int32Array;
  readonly bound: BoundPods;
}

export function indexCluster(cluster: Cluster): IndexedCluster {
  const count = cluster.nodes.length;
  const indexByName = new Map<string, number>();
  cluster.nodes.forEach((node, i) => indexByName.set(node.name, i));
  // Per node: cpu, memory and pods used in typed arrays, any other resource and host ports only when a
  // pod asks for them (this loop runs over every pod on every rebuild of the simulation).
  const usedCpu = new Float64Array(count);
  const usedMemory = new Float64Array(count);
  const usedPods = new Int32Array(count);
  const usedOther: (Record<string, number> | undefined)[] = new Array(count);
  const ports: (PortOnNode[] | undefined)[] = new Array(count);
  const podsByNode: Pod[][] = cluster.nodes.map(() => []);
  const deleting = cluster.nodes.map((node) => node.deleting);
  const counted: Pod[] = [];
  const countedNodes = new Int32Array(cluster.pods.length);
  // An indexed loop: this runs about 50 times a pass over every pod, and the array iterator's result
  // objects were a sizeable share of a pass's garbage.
  const pods = cluster.pods;
  for (let k = 0; k < pods.length; k++) {
    const pod = pods[k]!;
    if (pod.nodeName === undefined || isTerminal(pod)) continue;
    const i = indexByName.get(pod.nodeName);
    if (i === undefined) continue;
    podsByNode[i]!.push(pod);
    // Pods of deleting nodes are on their way out: they no longer count for affinity or spread.
    if (!pod.terminating && !deleting[i]) {
      countedNodes[counted.length] = i;
      counted.push(pod);
    }
    // Terminating pods still hold their resources and ports until they are gone.
    usedPods[i]! += 1;
    const requests = pod.requests;
    for (const key in requests) {
      const value = requests[key]!;
      if (key === CPU) usedCpu[i]! += value;
      else if (key === MEMORY) usedMemory[i]! += value;
      else if (key !== PODS) {
        const other = (usedOther[i] ??= {});
        other[key] = (other[key] ?? 0) + value;
      }
    }
    if (pod.hostPorts.length > 0) {
      const list = (ports[i] ??= []);
      for (const port of normalizeHostPorts(pod.hostPorts)) list.push({ ...port, podUid: pod.uid });
    }
  }
  const nodes = cluster.nodes.map((node, index): ExistingNode => {
    const freeOther: Record<string, number> = {};
    for (const key in node.allocatable) {
      if (key !== CPU && key !== MEMORY && key !== PODS) freeOther[key] = node.allocatable[key]!;
    }
    const other = usedOther[index];
    if (other) for (const key in other) freeOther[key] = (freeOther[key] ?? 0) - other[key]!;
    const blockingTaints = node.taints.length > 0 ? node.taints.filter(blocksScheduling) : NO_TAINTS;
    return {
      index,
      node,
      name: node.name,
      labels: effectiveLabels(node),
      receives: receivesPods(node),
      alive: !node.deleting,
      blockingTaints,
      spreadTaints: node.unschedulable ? [...blockingTaints, UnschedulableTaint] : blockingTaints,
      freeCpu: (node.allocatable[CPU] ?? 0) - usedCpu[index]!,
      freeMemory: (node.allocatable[MEMORY] ?? 0) - usedMemory[index]!,
      // A node that does not state a pod limit is not limited by pod count.
      freePods: (node.allocatable[PODS] ?? Number.POSITIVE_INFINITY) - usedPods[index]!,
      freeOther,
      ports: ports[index] ?? NO_PORTS,
    };
  });
  return {
    nodes,
    nodeIndexByName: indexByName,
    counted,
    countedNodes: countedNodes.subarray(0, counted.length),
    bound: new BoundPods(podsByNode, indexByName),
  };
}

const NO_TAINTS: readonly Taint[] = [];
const NO_PORTS: readonly PortOnNode[] = [];

/** Receiving nodes ordered by (free cpu, name): best fit is the first feasible one at or above a request. */
export interface CpuOrder {
  readonly nodeIndexes: Int32Array;
  readonly freeCpu: Float64Array;
  /** Node index -> its position in `nodeIndexes` (-1: the node does not receive pods). */
  readonly positionOf: Int32Array;
  /**
   * The starting state of a simulation's UntouchedNodes (untouchedNodes.ts): nodes without a free pod
   * slot are already skipped, since no pod fits there unless a pod leaves (and then the node is changed).
   */
  readonly untouchedStart: Int32Array;
}

export function buildCpuOrder(nodes: readonly ExistingNode[]): CpuOrder {
  const receiving = nodes.filter((n) => n.receives);
  receiving.sort((a, b) => a.freeCpu - b.freeCpu || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const positionOf = new Int32Array(nodes.length).fill(-1);
  const untouchedStart = new Int32Array(receiving.length);
  receiving.forEach((n, position) => {
    positionOf[n.index] = position;
    if (n.freePods < 1) untouchedStart[position] = position + 2;
  });
  return {
    nodeIndexes: Int32Array.from(receiving.map((n) => n.index)),
    freeCpu: Float64Array.from(receiving.map((n) => n.freeCpu)),
    positionOf,
    untouchedStart,
  };
}

/** First position whose free cpu is at least `cpu`. */
export function firstWithCpu(order: CpuOrder, cpu: number): number {
  let low = 0;
  let high = order.freeCpu.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (order.freeCpu[mid]! < cpu) low = mid + 1;
    else high = mid;
  }
  return low;
}
