// The cluster's nodes as the simulation sees them, computed once per simulator: effective labels,
// whether a node may receive pods at all, its free capacity after the pods already bound to it, the
// host ports in use, and a list of receiving nodes sorted by free cpu for best-fit search.
import type { Cluster, Labels, Node, Pod, Taint } from '../model/types.ts';
import { DisruptedTaint, DisruptingTaint, InterruptedTaint, LabelKeys } from '../model/types.ts';
import { normalizeHostPorts, type PortUse } from './hostPorts.ts';
import { CPU, MEMORY, PODS } from './resources.ts';
import { blocksScheduling, UnschedulableTaint } from './taints.ts';
import { builtPodIndex, type PodIndexSeed } from './podIndex.ts';

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

/**
 * The labels kube-scheduler matches a pod's node selector and affinity against: the node's own, with the
 * well-known ones every node carries (the kubelet's hostname, the cloud provider's zone and instance
 * type) filled in when a hand-written dump leaves them out. Karpenter's `karpenter.sh/capacity-type` and
 * `karpenter.sh/nodepool` are never filled in: only the nodes Karpenter made carry them, and a pod that
 * selects `karpenter.sh/capacity-type: on-demand` stays Pending on an on-demand managed node group node
 * (its capacity type is known here from `eks.amazonaws.com/capacityType`, a label that pod does not select).
 */
function completeLabels(node: Node): Labels {
  const labels: Record<string, string> = { ...node.labels };
  const fill = (key: string, value: string | undefined): void => {
    if (value !== undefined && !Object.hasOwn(labels, key)) labels[key] = value;
  };
  fill(LabelKeys.hostname, node.name);
  fill(LabelKeys.zone, node.zone);
  fill(LabelKeys.instanceType, node.instanceType);
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

/** The cluster's nodes as a simulation sees them, built afresh (the caller may keep or change them). */
export function buildExistingNodes(cluster: Cluster): ExistingNode[] {
  return indexFresh(cluster).nodes;
}

/**
 * The pods bound to each node (not finished), by uid: tells whether a pod of a simulation request
 * really is on a node, so that moving it frees room there. Kept per node rather than in one map of
 * every pod: a lookup starts from the node the pod names, and a pass rebuilds this after each decision.
 */
export class BoundPods {
  private byUid: Map<string, number> | undefined;

  constructor(
    private readonly podsByNode: readonly (readonly Pod[])[],
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
  /** Per node, its pods that are not finished (what `bound` looks pods up in; a derived index reuses them). */
  readonly podsByNode: readonly (readonly Pod[])[];
  /** For a derived index: what the base's pod index had worked out, moved to this one's positions. */
  readonly seed?: PodIndexSeed;
  /** Per node, the entries of the cluster's pod list that name it (finished pods too). */
  readonly listedOn: Int32Array;
}

/** A cluster made by clusterChange.ts changeCluster: the index it was made from and what changed. */
export interface RecordedChange {
  readonly base: IndexedCluster;
  readonly removedNodes: ReadonlySet<string>;
  /** Each rebound pod of the base cluster -> its copy in the new cluster, in the pod list's order. */
  readonly copies: ReadonlyMap<Pod, Pod>;
  readonly addedNodes: readonly Node[];
  readonly addedPods: readonly Pod[];
  /** Pods that leave from nodes that stay (ClusterChange.removedPods). */
  readonly removedPods?: ReadonlySet<Pod>;
}

// Clusters are immutable, so an index is kept per cluster object (a pass and its kube-scheduler check
// simulate the same cluster more than once), and a cluster made by a change keeps that change until it
// is indexed (then the record, and the base index it holds, are let go).
const indexes = new WeakMap<Cluster, IndexedCluster>();
const changes = new WeakMap<Cluster, RecordedChange>();
// Per cluster, the index (into its nodes) of the node each entry of its pod list names: UNBOUND when it
// names none, UNKNOWN_NODE when it names a node the cluster does not have. Lets a change make the next
// pod list, and a check find the pods on a few nodes, without reading every pod object again.
const listedNodes = new WeakMap<Cluster, Int32Array>();
export const UNBOUND = -1;
export const UNKNOWN_NODE = -2;

/** The node of each entry of `cluster.pods`, when known (a cluster indexed afresh, or made by a change). */
export function listedNodesOf(cluster: Cluster): Int32Array | undefined {
  return listedNodes.get(cluster);
}

export function rememberListedNodes(cluster: Cluster, nodes: Int32Array): void {
  listedNodes.set(cluster, nodes);
}

/** Records how `cluster` was made from an indexed cluster (clusterChange.ts). */
export function rememberChange(cluster: Cluster, change: RecordedChange): void {
  changes.set(cluster, change);
}

export function indexCluster(cluster: Cluster): IndexedCluster {
  let indexed = indexes.get(cluster);
  if (indexed) return indexed;
  const change = changes.get(cluster);
  changes.delete(cluster);
  indexed = (change && deriveIndex(cluster, change)) ?? indexFresh(cluster);
  indexes.set(cluster, indexed);
  return indexed;
}

/** What one node's pods use, summed in the order given. */
interface NodeUse {
  cpu: number;
  memory: number;
  pods: number;
  other: Record<string, number> | undefined;
  ports: PortOnNode[] | undefined;
}

const newUse = (): NodeUse => ({ cpu: 0, memory: 0, pods: 0, other: undefined, ports: undefined });

function addUse(use: NodeUse, pod: Pod): void {
  // Terminating pods still hold their resources and ports until they are gone.
  use.pods += 1;
  const requests = pod.requests;
  for (const key in requests) {
    const value = requests[key]!;
    if (key === CPU) use.cpu += value;
    else if (key === MEMORY) use.memory += value;
    else if (key !== PODS) {
      const other = (use.other ??= {});
      other[key] = (other[key] ?? 0) + value;
    }
  }
  if (pod.hostPorts.length > 0) {
    const list = (use.ports ??= []);
    for (const port of normalizeHostPorts(pod.hostPorts)) list.push({ ...port, podUid: pod.uid });
  }
}

function existingNode(node: Node, index: number, use: NodeUse | undefined): ExistingNode {
  const freeOther: Record<string, number> = {};
  for (const key in node.allocatable) {
    if (key !== CPU && key !== MEMORY && key !== PODS) freeOther[key] = node.allocatable[key]!;
  }
  const other = use?.other;
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
    freeCpu: (node.allocatable[CPU] ?? 0) - (use?.cpu ?? 0),
    freeMemory: (node.allocatable[MEMORY] ?? 0) - (use?.memory ?? 0),
    // A node that does not state a pod limit is not limited by pod count.
    freePods: (node.allocatable[PODS] ?? Number.POSITIVE_INFINITY) - (use?.pods ?? 0),
    freeOther,
    ports: use?.ports ?? NO_PORTS,
  };
}

function indexFresh(cluster: Cluster): IndexedCluster {
  const count = cluster.nodes.length;
  const indexByName = new Map<string, number>();
  cluster.nodes.forEach((node, i) => indexByName.set(node.name, i));
  // Per node: cpu, memory and pods used in typed arrays, any other resource and host ports only when a
  // pod asks for them (this loop runs over every pod on every fresh build of the simulation).
  const usedCpu = new Float64Array(count);
  const usedMemory = new Float64Array(count);
  const usedPods = new Int32Array(count);
  const usedOther: (Record<string, number> | undefined)[] = new Array(count);
  const ports: (PortOnNode[] | undefined)[] = new Array(count);
  const podsByNode: Pod[][] = cluster.nodes.map(() => []);
  const deleting = cluster.nodes.map((node) => node.deleting);
  const counted: Pod[] = [];
  const countedNodes = new Int32Array(cluster.pods.length);
  // An indexed loop: this runs over every pod on each fresh build, and the array iterator's result
  // objects were a sizeable share of a pass's garbage.
  const pods = cluster.pods;
  const listedOn = new Int32Array(count);
  const listed = new Int32Array(pods.length).fill(UNBOUND);
  for (let k = 0; k < pods.length; k++) {
    const pod = pods[k]!;
    if (pod.nodeName === undefined) continue;
    const i = indexByName.get(pod.nodeName);
    if (i === undefined) {
      listed[k] = UNKNOWN_NODE;
      continue;
    }
    listed[k] = i;
    listedOn[i]! += 1;
    if (isTerminal(pod)) continue;
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
  if (indexByName.size === count) listedNodes.set(cluster, listed);
  const nodes = cluster.nodes.map((node, index): ExistingNode =>
    existingNode(node, index, { cpu: usedCpu[index]!, memory: usedMemory[index]!, pods: usedPods[index]!, other: usedOther[index], ports: ports[index] }),
  );
  return {
    nodes,
    nodeIndexByName: indexByName,
    counted,
    countedNodes: countedNodes.subarray(0, counted.length),
    bound: new BoundPods(podsByNode, indexByName),
    podsByNode,
    listedOn,
  };
}

/**
 * The index of a cluster made by a change (clusterChange.ts) from the base cluster's index: the
 * nodes nothing happened to keep what they had (at their new position), the counted pods keep their
 * order, and only the nodes that lost or gained pods (and the added ones) are summed again. Undefined
 * when the result could differ from a fresh build in any way, and then the caller builds afresh:
 *   - a rebound pod the base did not count (terminating, or on a deleting node): its place among the
 *     counted pods is not known here;
 *   - a rebound pod with host ports: its ports' place in the receiving node's list is not known here;
 *   - a sum that is not exact in any order (a request that is not a safe integer): the fresh build
 *     sums in the pod list's order, this one in the node's;
 *   - two nodes of one name.
 */
function deriveIndex(cluster: Cluster, change: RecordedChange): IndexedCluster | undefined {
  const { base, copies, addedPods } = change;
  const removedPods = change.removedPods ?? new Set<Pod>();
  const count = cluster.nodes.length;
  const indexByName = new Map<string, number>();
  cluster.nodes.forEach((node, i) => indexByName.set(node.name, i));
  if (indexByName.size !== count || base.nodeIndexByName.size !== base.nodes.length) return undefined;
  const oldCount = base.nodes.length;
  const remap = new Int32Array(oldCount);
  for (let o = 0; o < oldCount; o++) remap[o] = indexByName.get(base.nodes[o]!.name) ?? -1;
  const deleting = cluster.nodes.map((node) => node.deleting);
  // Pods removed from nodes that stay, per base node. Each must be one the base holds on a node that
  // stays (a finished pod is not held: its place in the list is not known here, so such a change is
  // indexed afresh).
  const removedOn = new Int32Array(oldCount);
  for (const pod of removedPods) {
    const o = pod.nodeName === undefined ? undefined : base.nodeIndexByName.get(pod.nodeName);
    if (o === undefined || remap[o]! < 0 || !base.podsByNode[o]!.includes(pod)) return undefined;
    removedOn[o]! += 1;
  }
  const removing = removedPods.size > 0;
  // Nodes whose pods change (summed again), and the pods they gain.
  const touched = new Uint8Array(count);
  const gained = new Map<number, Pod[]>();
  const gain = (i: number, pod: Pod): void => {
    touched[i] = 1;
    const list = gained.get(i);
    if (list) list.push(pod);
    else gained.set(i, [pod]);
  };

  // Filled by position (at most every counted pod of the base and every added pod), then cut to size.
  const counted: Pod[] = new Array(base.counted.length + addedPods.length);
  let c = 0;
  const countedNodes = new Int32Array(base.counted.length + addedPods.length);
  const oldCounted = base.counted;
  const oldNodes = base.countedNodes;
  // Where each counted pod of the base is counted here (-1: not), for the pod index's seed.
  const positions = new Int32Array(oldCounted.length).fill(-1);
  let copiesSeen = 0;
  for (let k = 0; k < oldCounted.length; k++) {
    const pod = oldCounted[k]!;
    const i = remap[oldNodes[k]!]!;
    if (i >= 0) {
      if (removing && removedPods.has(pod)) continue;
      positions[k] = c;
      countedNodes[c] = i;
      counted[c++] = pod;
      continue;
    }
    const copy = copies.get(pod);
    if (copy === undefined) continue;
    copiesSeen += 1;
    if (copy.hostPorts.length > 0) return undefined;
    const to = indexByName.get(copy.nodeName!);
    if (to === undefined) continue;
    gain(to, copy);
    if (!copy.terminating && !deleting[to]) {
      positions[k] = c;
      countedNodes[c] = to;
      counted[c++] = copy;
    }
  }
  if (copiesSeen !== copies.size) return undefined;
  const firstNew = c;
  // What the base's pod index worked out, or (a base never simulated, itself derived) the seed it was
  // given, carried through this change too (PodIndexSeed.composedWith).
  const basePodIndex = builtPodIndex(base);
  const listedAdded = new Int32Array(count);
  for (const pod of addedPods) {
    if (pod.nodeName === undefined) continue;
    const i = indexByName.get(pod.nodeName);
    if (i === undefined) continue;
    listedAdded[i]! += 1;
    if (isTerminal(pod)) continue;
    gain(i, pod);
    if (!pod.terminating && !deleting[i]) {
      countedNodes[c] = i;
      counted[c++] = pod;
    }
  }

  const oldIndex = new Int32Array(count).fill(-1);
  for (let o = 0; o < oldCount; o++) if (remap[o]! >= 0) oldIndex[remap[o]!] = o;
  const podsByNode: (readonly Pod[])[] = new Array(count);
  const nodes: ExistingNode[] = new Array(count);
  // Copies of rebound pods are listed where they were; the added pods after them.
  const listedOn = new Int32Array(count);
  for (const copy of copies.values()) {
    const i = indexByName.get(copy.nodeName!);
    if (i !== undefined) listedOn[i]! += 1;
  }
  for (let i = 0; i < count; i++) {
    const o = oldIndex[i]!;
    listedOn[i]! += listedAdded[i]! + (o >= 0 ? base.listedOn[o]! - removedOn[o]! : 0);
    if (o >= 0 && !touched[i] && removedOn[o] === 0) {
      const before = base.nodes[o]!;
      podsByNode[i] = base.podsByNode[o]!;
      nodes[i] = before.index === i ? before : { ...before, index: i };
      continue;
    }
    const kept = o < 0 ? [] : removedOn[o]! > 0 ? base.podsByNode[o]!.filter((p) => !removedPods.has(p)) : base.podsByNode[o]!;
    const joined = gained.get(i);
    const pods = joined ? kept.concat(joined) : kept;
    const use = newUse();
    for (const pod of pods) if (!exactRequests(pod)) return undefined;
    for (const pod of pods) addUse(use, pod);
    if (!Number.isSafeInteger(use.cpu) || !Number.isSafeInteger(use.memory)) return undefined;
    if (use.other) for (const key in use.other) if (!Number.isSafeInteger(use.other[key]!)) return undefined;
    podsByNode[i] = pods;
    nodes[i] = existingNode(cluster.nodes[i]!, i, use);
  }
  counted.length = c;
  return {
    nodes,
    nodeIndexByName: indexByName,
    counted,
    countedNodes: countedNodes.subarray(0, c),
    bound: new BoundPods(podsByNode, indexByName),
    podsByNode,
    listedOn,
    ...(basePodIndex ? { seed: basePodIndex.seedFor(positions, firstNew) } : base.seed ? { seed: base.seed.composedWith(positions, firstNew) } : {}),
  };
}

/** Every request a safe integer: their sum is then the same in any order. */
function exactRequests(pod: Pod): boolean {
  for (const key in pod.requests) if (!Number.isSafeInteger(pod.requests[key]!)) return false;
  return true;
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
