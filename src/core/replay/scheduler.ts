// A model of kube-scheduler binding pending pods to Ready nodes. Filters: the node is Ready, not
// cordoned or deleting, the pod tolerates its NoSchedule/NoExecute taints, matches its node selector and
// required node affinity and its volume zones, and the node has room for its requests (and a pod slot).
// Score (NodeResourcesFit): `least-allocated` (kube-scheduler's default) prefers the node with the most
// room left after the pod, averaged over cpu and memory; `most-allocated` the fullest. Ties are broken at
// random, as kube-scheduler does, from the replay's seeded source.
//
// Required pod anti-affinity is honoured (a pod does not land in a topology domain, such as a hostname or
// a zone, that holds a pod its terms select). Not modelled: required pod affinity, topology spread,
// host ports, namespace selectors (the consolidation pass itself honours them all; this only decides
// where recreated and new pods land in the replay).
import { LabelKeys, type Node, type Pod } from '../model/types.ts';
import { matchesSelector } from '../scheduling/labelSelector.ts';
import { labelsMatchAlternatives, nodeConstraintAlternatives } from '../scheduling/nodeAffinity.ts';
import { firstUntoleratedTaint } from '../scheduling/taints.ts';
import type { Random } from './random.ts';

export type SchedulerScoring = 'least-allocated' | 'most-allocated';

export const SCHEDULER_SCORINGS: readonly SchedulerScoring[] = ['least-allocated', 'most-allocated'];

interface NodeRoom {
  readonly node: Node;
  cpu: number;
  memory: number;
  pods: number;
  /** The active pods bound to the node (for anti-affinity). */
  readonly bound: Pod[];
}

const labelsOf = (node: Node): Record<string, string> => ({
  ...node.labels,
  [LabelKeys.hostname]: node.labels[LabelKeys.hostname] ?? node.name,
  ...(node.zone !== undefined && node.labels[LabelKeys.zone] === undefined ? { [LabelKeys.zone]: node.zone } : {}),
});

/** True when placing `pod` on `room`'s node breaks one of its required anti-affinity terms. */
function antiAffinityViolated(pod: Pod, room: NodeRoom, rooms: ReadonlyMap<string, NodeRoom>): boolean {
  for (const term of pod.podAntiAffinity) {
    if (term.namespaceSelector !== undefined) continue;
    const domain = labelsOf(room.node)[term.topologyKey];
    if (domain === undefined) continue;
    const namespaces = term.namespaces.length > 0 ? term.namespaces : [pod.namespace];
    for (const other of rooms.values()) {
      if (labelsOf(other.node)[term.topologyKey] !== domain) continue;
      if (other.bound.some((p) => namespaces.includes(p.namespace) && term.labelSelector !== undefined && matchesSelector(term.labelSelector, p.labels))) return true;
    }
  }
  return false;
}

const isActive = (pod: Pod): boolean => pod.phase !== 'Succeeded' && pod.phase !== 'Failed';

/** Pods waiting for a node: unbound, not finished, not being deleted. */
export function isPending(pod: Pod): boolean {
  return pod.nodeName === undefined && isActive(pod) && !pod.terminating;
}

function receives(node: Node): boolean {
  return node.ready && !node.unschedulable && !node.deleting;
}

/** Free room of every node that may receive pods, after the pods bound to it. */
function roomOf(nodes: readonly Node[], pods: readonly Pod[]): Map<string, NodeRoom> {
  const rooms = new Map<string, NodeRoom>();
  for (const node of nodes) {
    if (!receives(node)) continue;
    rooms.set(node.name, {
      node,
      cpu: node.allocatable['cpu'] ?? 0,
      memory: node.allocatable['memory'] ?? 0,
      pods: node.allocatable['pods'] ?? 110,
      bound: [],
    });
  }
  for (const pod of pods) {
    if (pod.nodeName === undefined || !isActive(pod)) continue;
    const room = rooms.get(pod.nodeName);
    if (!room) continue;
    room.cpu -= pod.requests['cpu'] ?? 0;
    room.memory -= pod.requests['memory'] ?? 0;
    room.pods -= 1;
    room.bound.push(pod);
  }
  return rooms;
}

function feasible(pod: Pod, room: NodeRoom, rooms: ReadonlyMap<string, NodeRoom>): boolean {
  const cpu = pod.requests['cpu'] ?? 0;
  const memory = pod.requests['memory'] ?? 0;
  if (room.cpu < cpu || room.memory < memory || room.pods < 1) return false;
  const node = room.node;
  if (firstUntoleratedTaint(pod.tolerations, node.taints) !== undefined) return false;
  const labels = { ...node.labels, [LabelKeys.hostname]: node.labels[LabelKeys.hostname] ?? node.name };
  if (!labelsMatchAlternatives(labels, nodeConstraintAlternatives(pod))) return false;
  if (pod.volumeZones && (node.zone === undefined || !pod.volumeZones.includes(node.zone))) return false;
  if (pod.volumeHosts && !pod.volumeHosts.includes(labels[LabelKeys.hostname]!)) return false;
  return pod.podAntiAffinity.length === 0 || !antiAffinityViolated(pod, room, rooms);
}

/** NodeResourcesFit's score (0..100) of a node for a pod, after placing it. */
function score(pod: Pod, room: NodeRoom, scoring: SchedulerScoring): number {
  const fraction = (free: number, request: number, total: number): number => (total > 0 ? (free - request) / total : 0);
  const freeCpu = fraction(room.cpu, pod.requests['cpu'] ?? 0, room.node.allocatable['cpu'] ?? 0);
  const freeMemory = fraction(room.memory, pod.requests['memory'] ?? 0, room.node.allocatable['memory'] ?? 0);
  const free = (freeCpu + freeMemory) / 2;
  return Math.round(100 * (scoring === 'least-allocated' ? free : 1 - free));
}

export interface Binding {
  readonly podUid: string;
  readonly nodeName: string;
}

/**
 * Binds what it can of the pending pods, highest priority first, then oldest (kube-scheduler's queue
 * order), each seeing the room the earlier ones took. Returns the bindings; pods not bound stay pending.
 */
export function schedulePending(nodes: readonly Node[], pods: readonly Pod[], scoring: SchedulerScoring, random: Random): Binding[] {
  const pending = pods.filter(isPending);
  if (pending.length === 0) return [];
  const rooms = roomOf(nodes, pods);
  const ordered = [...pending].sort(
    (a, b) => b.priority - a.priority || (a.createdAt ?? 0) - (b.createdAt ?? 0) || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0),
  );
  const bindings: Binding[] = [];
  for (const pod of ordered) {
    let best: NodeRoom[] = [];
    let bestScore = Number.NEGATIVE_INFINITY;
    for (const room of rooms.values()) {
      if (!feasible(pod, room, rooms)) continue;
      const s = score(pod, room, scoring);
      if (s > bestScore) {
        best = [room];
        bestScore = s;
      } else if (s === bestScore) best.push(room);
    }
    if (best.length === 0) continue;
    const chosen = best.length === 1 ? best[0]! : best[random.int(best.length)]!;
    chosen.cpu -= pod.requests['cpu'] ?? 0;
    chosen.memory -= pod.requests['memory'] ?? 0;
    chosen.pods -= 1;
    chosen.bound.push(pod);
    bindings.push({ podUid: pod.uid, nodeName: chosen.node.name });
  }
  return bindings;
}
