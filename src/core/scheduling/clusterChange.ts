// A cluster made from another by a few node-level changes: what a committed decision does (its nodes
// go, their pods move or leave, its replacements join with their daemonset pods). A pass makes such a
// cluster after every decision and simulates on it next; indexing it from scratch walks every pod of
// the cluster again (existingNodes.ts indexCluster), so the change is recorded with the new cluster and
// its index is derived from the previous cluster's, touching only the nodes that changed. The derived
// index is the one a fresh build gives (existingNodes.ts deriveIndex says when it cannot be sure and
// builds afresh instead), so nothing a simulation decides depends on which way it was built.
import type { Cluster, Node, Pod } from '../model/types.ts';
import { indexCluster, listedNodesOf, rememberChange, rememberListedNodes, UNBOUND, UNKNOWN_NODE, type IndexedCluster } from './existingNodes.ts';

export interface ClusterChange {
  /** Nodes that leave the cluster; their pods leave with them unless `rebound`. */
  readonly removedNodes: ReadonlySet<string>;
  /** Pods of removed nodes that stay in the pod list at their place, bound to another node (uid -> node name). */
  readonly rebound?: ReadonlyMap<string, string>;
  /** Nodes that join, after the others. */
  readonly addedNodes?: readonly Node[];
  /** Pods that join, after the others. */
  readonly addedPods?: readonly Pod[];
  /**
   * Pods (the objects `from` lists) that leave the cluster from nodes that stay: evicted, their nodes
   * kept (a plan laid out for its carrying out, planCheck.ts layOut).
   */
  readonly removedPods?: readonly Pod[];
}

/**
 * The cluster `from` leaves after `change`: its nodes without the removed ones, then the added ones;
 * its pods in their order without those of removed nodes and the removed pods, except that a rebound
 * pod stays at its place as a copy bound to its new node; then the added pods.
 *
 * The pod list is only made when something reads it: a kube-scheduler check builds a simulation of
 * such a cluster for every move that launches nodes, and the simulation is derived from the previous
 * index without it. The copies of the rebound pods are made now, so both see the same objects.
 */
export function changeCluster(from: Cluster, change: ClusterChange): Cluster {
  const { removedNodes, rebound, addedNodes = [], addedPods = [], removedPods = [] } = change;
  const removed = new Set<Pod>(removedPods);
  // Indexed now (cheaply, when `from` was itself made by a change), so that the new cluster's index can
  // be derived from it whenever the new cluster is simulated.
  const base = indexCluster(from);
  // A cluster whose pod list is not made yet holds on to the one it was made from: make it now, so
  // that a chain of changes never holds more than one earlier cluster.
  let fromPods: readonly Pod[] | undefined = from.pods;
  const nodes: Node[] = from.nodes.filter((n) => !removedNodes.has(n.name));
  for (const node of addedNodes) nodes.push(node);
  const copies = new Map<Pod, Pod>();
  let reboundEntries = 0;
  if (rebound !== undefined && rebound.size > 0) {
    for (const [i, node] of base.nodes.entries()) {
      if (!removedNodes.has(node.name)) continue;
      for (const pod of base.podsByNode[i]!) {
        const to = rebound.get(pod.uid);
        if (to === undefined) continue;
        reboundEntries += 1;
        if (!copies.has(pod)) copies.set(pod, { ...pod, nodeName: to });
      }
    }
  }
  const removedKnown = [...removedNodes].every((name) => base.nodeIndexByName.has(name));
  let pods: Pod[] | undefined;
  let listed = removedKnown ? listedNodesOf(from) : undefined;
  const makePods = (): Pod[] => {
    const made = listed ? makeFromListed(fromPods!, listed, base, nodes, removedNodes, rebound, copies, addedPods, removed) : undefined;
    let out: Pod[];
    if (made) {
      out = made.pods;
      rememberListedNodes(cluster, made.listed);
    } else {
      out = [];
      for (const pod of fromPods!) {
        if (removed.has(pod)) continue;
        if (pod.nodeName !== undefined && removedNodes.has(pod.nodeName)) {
          const to = rebound?.get(pod.uid);
          if (to === undefined) continue;
          // A finished pod is not indexed, so it has no copy yet.
          out.push(copies.get(pod) ?? { ...pod, nodeName: to });
        } else {
          out.push(pod);
        }
      }
      for (const pod of addedPods) out.push(pod);
    }
    fromPods = undefined;
    listed = undefined;
    return out;
  };
  // How many pods the list will hold, known without making it when every pod listed on a removed node
  // is one the index holds (a finished one is not: its copy, if rebound, is only made with the list).
  let count = fromPods.length + reboundEntries + addedPods.length;
  // (Removed pods are counted off only when the list is made.)
  let countKnown = removed.size === 0;
  for (const name of removedNodes) {
    const i = base.nodeIndexByName.get(name);
    if (i === undefined || base.listedOn[i] !== base.podsByNode[i]!.length) countKnown = false;
    else count -= base.listedOn[i]!;
  }
  const cluster = { ...from, nodes } as Cluster;
  if (countKnown) podCounts.set(cluster, count);
  // Unbound pods stay where they are listed (no removed node holds them), and the added ones follow.
  const fromUnbound = removedPods.some((p) => p.nodeName === undefined) ? unboundPods(from).filter((p) => !removed.has(p)) : unboundPods(from);
  const addedUnbound = addedPods.filter((p) => p.nodeName === undefined);
  unboundByCluster.set(cluster, addedUnbound.length > 0 ? [...fromUnbound, ...addedUnbound] : fromUnbound);
  Object.defineProperty(cluster, 'pods', {
    get: () => (pods ??= makePods()),
    enumerable: true,
    configurable: true,
  });
  // A removed node the index does not know (or two of one name) leaves pods the change cannot account
  // for: such a cluster is indexed afresh.
  if (removedKnown) {
    rememberChange(cluster, { base, removedNodes, copies, addedNodes, addedPods, removedPods: removed });
  }
  return cluster;
}

/**
 * The pod list `makePods` makes, read off the node of each entry (listedNodesOf) rather than each pod
 * object's node name, and the node of each of its entries. Undefined when two nodes share a name.
 */
function makeFromListed(
  fromPods: readonly Pod[],
  listed: Int32Array,
  base: IndexedCluster,
  nodes: readonly Node[],
  removedNodes: ReadonlySet<string>,
  rebound: ReadonlyMap<string, string> | undefined,
  copies: ReadonlyMap<Pod, Pod>,
  addedPods: readonly Pod[],
  removed: ReadonlySet<Pod>,
): { pods: Pod[]; listed: Int32Array } | undefined {
  const indexByName = new Map<string, number>();
  nodes.forEach((node, i) => indexByName.set(node.name, i));
  if (indexByName.size !== nodes.length || base.nodeIndexByName.size !== base.nodes.length) return undefined;
  // Base node index -> index in the new cluster (-1: removed).
  const moved = new Int32Array(base.nodes.length);
  for (let i = 0; i < base.nodes.length; i++) moved[i] = removedNodes.has(base.nodes[i]!.name) ? -1 : indexByName.get(base.nodes[i]!.name)!;
  const nodeOf = (name: string | undefined): number => (name === undefined ? UNBOUND : (indexByName.get(name) ?? UNKNOWN_NODE));
  const pods: Pod[] = new Array(fromPods.length + addedPods.length);
  const out = new Int32Array(fromPods.length + addedPods.length);
  let n = 0;
  const removing = removed.size > 0;
  for (let k = 0; k < fromPods.length; k++) {
    const i = listed[k]!;
    const pod = fromPods[k]!;
    if (removing && removed.has(pod)) continue;
    if (i >= 0) {
      const to = moved[i]!;
      if (to >= 0) {
        pods[n] = pod;
        out[n++] = to;
        continue;
      }
      const copy = copies.get(pod);
      if (copy !== undefined) {
        pods[n] = copy;
        out[n++] = nodeOf(copy.nodeName);
        continue;
      }
      const name = rebound?.get(pod.uid);
      if (name === undefined) continue;
      // A finished pod is not indexed, so it has no copy yet.
      pods[n] = { ...pod, nodeName: name };
      out[n++] = nodeOf(name);
    } else {
      // A pod naming a node the base did not have may name one the change adds.
      pods[n] = pod;
      out[n++] = i === UNBOUND ? UNBOUND : nodeOf(pod.nodeName);
    }
  }
  for (const pod of addedPods) {
    pods[n] = pod;
    out[n++] = nodeOf(pod.nodeName);
  }
  pods.length = n;
  return { pods, listed: out.subarray(0, n) };
}

/**
 * Positions in `cluster.pods` of the entries naming each of `names`, ascending: from the node of each
 * entry when known (listedNodesOf), else read off the pods.
 */
export function listedPositionsOn(cluster: Cluster, names: Iterable<string>): Map<string, number[]> {
  const byNode = new Map<string, number[]>();
  for (const name of names) byNode.set(name, []);
  const pods = cluster.pods;
  const listed = listedNodesOf(cluster);
  const index = listed ? indexCluster(cluster) : undefined;
  const wanted = index ? [...byNode.keys()].map((name) => index.nodeIndexByName.get(name)) : [];
  if (listed && index && wanted.every((i) => i !== undefined) && index.nodeIndexByName.size === index.nodes.length) {
    const byIndex = positionsByNode(cluster, listed, index.nodes.length);
    for (const name of byNode.keys()) {
      const i = index.nodeIndexByName.get(name)!;
      byNode.set(name, Array.from(byIndex.positions.subarray(byIndex.start[i]!, byIndex.start[i + 1]!)));
    }
    return byNode;
  }
  for (let at = 0; at < pods.length; at++) {
    const name = pods[at]!.nodeName;
    if (name !== undefined) byNode.get(name)?.push(at);
  }
  return byNode;
}

/** Pod positions grouped by node index (`positions[start[i]..start[i + 1]]`, ascending). */
interface Positions {
  readonly start: Int32Array;
  readonly positions: Int32Array;
}

// Per cluster (never changed once made): a pass's kube-scheduler world asks for the pods of a move's
// nodes at every check, and walking every pod each time was a tenth of a later wave at 5,000 nodes.
const positionsByCluster = new WeakMap<Cluster, Positions>();

function positionsByNode(cluster: Cluster, listed: ArrayLike<number>, nodeCount: number): Positions {
  let known = positionsByCluster.get(cluster);
  if (!known) {
    const start = new Int32Array(nodeCount + 1);
    for (let at = 0; at < listed.length; at++) {
      const i = listed[at]!;
      if (i >= 0) start[i + 1]! += 1;
    }
    for (let i = 0; i < nodeCount; i++) start[i + 1]! += start[i]!;
    const next = start.slice(0, nodeCount);
    const positions = new Int32Array(start[nodeCount]!);
    for (let at = 0; at < listed.length; at++) {
      const i = listed[at]!;
      if (i >= 0) positions[next[i]!++] = at;
    }
    known = { start, positions };
    positionsByCluster.set(cluster, known);
  }
  return known;
}

const podCounts = new WeakMap<Cluster, number>();

// Per cluster, its pods bound to no node, in list order. Known from the change for a changed cluster:
// the pending pods a pass looks for after every decision (disruption/pendingPods.ts) are then found
// without making its pod list and walking every pod.
const unboundByCluster = new WeakMap<Cluster, readonly Pod[]>();

/** The pods of `cluster` bound to no node, in the order it lists them. */
export function unboundPods(cluster: Cluster): readonly Pod[] {
  let unbound = unboundByCluster.get(cluster);
  if (unbound === undefined) {
    unbound = cluster.pods.filter((p) => p.nodeName === undefined);
    unboundByCluster.set(cluster, unbound);
  }
  return unbound;
}

/** `cluster.pods.length`, without making the pod list of a changed cluster that has not made it yet. */
export function podCount(cluster: Cluster): number {
  return podCounts.get(cluster) ?? cluster.pods.length;
}
