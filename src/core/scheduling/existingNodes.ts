// The cluster's nodes as the simulation sees them, computed once per simulator: effective labels,
// whether a node may receive pods at all, its free capacity after the pods already bound to it, the
// host ports in use, and a list of receiving nodes sorted by free cpu for best-fit search.
import type { Cluster, Labels, Node, Pod, Taint } from '../model/types.ts';
import { DisruptedTaint, LabelKeys } from '../model/types.ts';
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

function effectiveLabels(node: Node): Labels {
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

const isDisruptedTaint = (taint: Taint): boolean => taint.key === DisruptedTaint.key;

/** Ready, not cordoned, not deleting, not being disrupted: the node may receive pods. */
export function receivesPods(node: Node): boolean {
  return node.ready && !node.unschedulable && !node.deleting && !node.taints.some(isDisruptedTaint);
}

export function buildExistingNodes(cluster: Cluster): ExistingNode[] {
  const indexByName = new Map<string, number>();
  cluster.nodes.forEach((node, i) => indexByName.set(node.name, i));
  const used = cluster.nodes.map(() => ({ resources: {} as Record<string, number>, pods: 0, ports: [] as PortOnNode[] }));
  for (const pod of cluster.pods) {
    if (pod.nodeName === undefined || isTerminal(pod)) continue;
    const i = indexByName.get(pod.nodeName);
    if (i === undefined) continue;
    // Terminating pods still hold their resources and ports until they are gone.
    const entry = used[i]!;
    entry.pods += 1;
    // for-in, not Object.entries: this loop runs over every pod on every rebuild of the simulation.
    const requests = pod.requests;
    const resources = entry.resources;
    for (const key in requests) {
      if (key !== PODS) resources[key] = (resources[key] ?? 0) + requests[key]!;
    }
    if (pod.hostPorts.length > 0) {
      for (const port of normalizeHostPorts(pod.hostPorts)) entry.ports.push({ ...port, podUid: pod.uid });
    }
  }
  return cluster.nodes.map((node, index) => {
    const usage = used[index]!;
    const freeOther: Record<string, number> = {};
    for (const [key, value] of Object.entries(node.allocatable)) {
      if (key !== CPU && key !== MEMORY && key !== PODS) freeOther[key] = value;
    }
    for (const [key, value] of Object.entries(usage.resources)) {
      if (key !== CPU && key !== MEMORY) freeOther[key] = (freeOther[key] ?? 0) - value;
    }
    const blockingTaints = node.taints.filter(blocksScheduling);
    return {
      index,
      node,
      name: node.name,
      labels: effectiveLabels(node),
      receives: receivesPods(node),
      alive: !node.deleting,
      blockingTaints,
      spreadTaints: node.unschedulable ? [...blockingTaints, UnschedulableTaint] : blockingTaints,
      freeCpu: (node.allocatable[CPU] ?? 0) - (usage.resources[CPU] ?? 0),
      freeMemory: (node.allocatable[MEMORY] ?? 0) - (usage.resources[MEMORY] ?? 0),
      // A node that does not state a pod limit is not limited by pod count.
      freePods: (node.allocatable[PODS] ?? Number.POSITIVE_INFINITY) - usage.pods,
      freeOther,
      ports: usage.ports,
    };
  });
}

/** Receiving nodes ordered by (free cpu, name): best fit is the first feasible one at or above a request. */
export interface CpuOrder {
  readonly nodeIndexes: Int32Array;
  readonly freeCpu: Float64Array;
}

export function buildCpuOrder(nodes: readonly ExistingNode[]): CpuOrder {
  const receiving = nodes.filter((n) => n.receives);
  receiving.sort((a, b) => a.freeCpu - b.freeCpu || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    nodeIndexes: Int32Array.from(receiving.map((n) => n.index)),
    freeCpu: Float64Array.from(receiving.map((n) => n.freeCpu)),
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
