// What a pass learns by comparing the cluster it sees now with the state the previous pass stored
// (docs/how-a-pass-decides.md, "Time and state between passes"). Pure: the pass time comes in as
// `nowMs`; nothing here reads a clock.

import type { Cluster, Node, Pod } from '../model/types.ts';
import { podSetFingerprint } from './fingerprint.ts';
import { NODE_STATE_TTL_MS, type NodeState, type PassState } from './types.ts';

export { clusterFingerprint, podSetFingerprint, EMPTY_POD_SET_FINGERPRINT } from './fingerprint.ts';
export {
  minimumLifetimeOk,
  noChangeSkip,
  recordAction,
  recordSearch,
  stabilizationHold,
  MINIMUM_NODE_LIFETIME_MS,
  NO_CHANGE_SKIP_MAX_MS,
  STABILIZATION_WINDOW_MS,
} from './windows.ts';

/**
 * Which pods make pod events on their node: the ones that would have to move if the node went away.
 * - DaemonSet pods are recreated on every node by their controller, and mirror pods belong to the node
 *   itself: they arrive with every new node, so counting them would make every node look busy.
 * - Terminal pods (Succeeded / Failed) and pods being deleted are leaving: they drop out of the set,
 *   which changes the fingerprint, and that change is the event (Karpenter's consolidationGracePeriod
 *   design counts a pod going terminal as one).
 * The same set decides emptiness, so "empty" means "no pod that needs a new home".
 */
export function countsForPodEvents(pod: Pod): boolean {
  return (
    pod.nodeName !== undefined &&
    !pod.isDaemonSetPod &&
    !pod.isMirrorPod &&
    pod.phase !== 'Succeeded' &&
    pod.phase !== 'Failed' &&
    !pod.terminating
  );
}

export interface ObserveOptions {
  /** Lifetime of a node record that no pass refreshes (default `NODE_STATE_TTL_MS`). */
  readonly nodeTtlMs?: number;
}

/**
 * The node records for this pass: one per node in `cluster`; records of nodes that are gone are dropped.
 *
 * Last pod event = latest of
 * - the creation and start times of the node's counted pods;
 * - `nowMs` when the pod set's fingerprint differs from the previous record's (a pod arrived or left
 *   between passes; a departure leaves no timestamp behind, so the pass time is the best we know);
 * - the previous record's value (a departure seen by an earlier pass is still the latest event);
 * - when the node has no counted pod, the time it became Ready (`readySince`, else `createdAt`). For a
 *   node that had pods this never wins: its pods arrived after it was Ready.
 * A node seen for the first time (no record, a record that expired, or a record of an earlier node
 * with the same name) has nothing to compare against: only the times apply, no fingerprint event.
 *
 * Any pod event (the value moves forward) ends grace protection and resets `consolidatableSince`
 * (Karpenter's consolidationGracePeriod design: new pods on the node reset its last pod event).
 *
 * `emptySince`: kept while the node stays empty; set to the last pod event when it is (or is first
 * seen) empty, which is the pass at which it emptied or, for a node never seen with a pod, when it
 * became Ready: empty since then by the same rule (the emptiness TTL).
 */
export function observeNodes(
  cluster: Cluster,
  previous: PassState,
  nowMs: number,
  options: ObserveOptions = {},
): Record<string, NodeState> {
  const ttlMs = options.nodeTtlMs ?? NODE_STATE_TTL_MS;
  const podsByNode = new Map<string, Pod[]>();
  for (const pod of cluster.pods) {
    if (!countsForPodEvents(pod)) continue;
    const list = podsByNode.get(pod.nodeName!);
    if (list) list.push(pod);
    else podsByNode.set(pod.nodeName!, [pod]);
  }

  const out: Record<string, NodeState> = {};
  for (const node of cluster.nodes) {
    const stored = previous.nodes[node.name];
    // A record written for an earlier node of the same name says nothing about this one, but its
    // version is still what the store expects us to overwrite.
    const prev = stored && sameNode(stored, node) ? stored : undefined;
    out[node.name] = observeNode(node, podsByNode.get(node.name) ?? [], prev, stored?.version ?? 0, nowMs, ttlMs);
  }
  return out;
}

function observeNode(
  node: Node,
  pods: readonly Pod[],
  prev: NodeState | undefined,
  version: number,
  nowMs: number,
  ttlMs: number,
): NodeState {
  const uids = pods.map((p) => p.uid).sort();
  const fingerprint = podSetFingerprint(uids);
  // A pod that left is an event at this pass's time; an arrival is dated by the pod's own times. Records
  // written before uids were kept only have the fingerprint: any change then counts as a departure.
  let podLeft = false;
  if (prev !== undefined && prev.podSetFingerprint !== fingerprint) {
    const present = new Set(uids);
    podLeft = prev.podUids === undefined || prev.podUids.some((uid) => !present.has(uid));
  }
  const times: (number | undefined)[] = [prev?.lastPodEventAt, podLeft ? nowMs : undefined];
  for (const pod of pods) times.push(pod.createdAt, pod.startedAt);
  if (pods.length === 0) times.push(readyAt(node));
  // Pods without any timestamp and no record: the node's readiness is the only time left.
  const lastPodEventAt = latest(times) ?? readyAt(node);

  const podEvent = prev !== undefined && (prev.lastPodEventAt === undefined || lastPodEventAt > prev.lastPodEventAt);
  const carried = prev !== undefined && !podEvent;

  return compact({
    name: node.name,
    nodeCreatedAt: node.createdAt,
    podSetFingerprint: fingerprint,
    podCount: pods.length,
    podUids: uids,
    lastPodEventAt,
    emptySince: pods.length === 0 ? (prev?.emptySince ?? lastPodEventAt) : undefined,
    consolidatableSince: carried ? prev.consolidatableSince : undefined,
    graceProtectedUntil: carried ? prev.graceProtectedUntil : undefined,
    lastEvaluatedAt: prev?.lastEvaluatedAt,
    version,
    // Refresh the expiry only when half of it is used up, so that an unchanged node is not rewritten
    // on every pass just to push its TTL forward.
    expiresAt: prev !== undefined && prev.expiresAt - nowMs > ttlMs / 2 ? prev.expiresAt : nowMs + ttlMs,
  });
}

function sameNode(record: NodeState, node: Node): boolean {
  return record.nodeCreatedAt === undefined || record.nodeCreatedAt === node.createdAt;
}

function readyAt(node: Node): number {
  return node.readySince ?? node.createdAt;
}

function latest(times: readonly (number | undefined)[]): number | undefined {
  let max: number | undefined;
  for (const t of times) if (t !== undefined && Number.isFinite(t) && (max === undefined || t > max)) max = t;
  return max;
}

/** Drops members that are undefined, so records compare and serialize the same however they were built. */
export function compact<T extends object>(record: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) if (v !== undefined) out[k] = v;
  return out as T;
}

/**
 * Consolidatable when `now - lastPodEvent >= consolidateAfter`. `null` is `Never`. A record
 * without a last pod event (not written by `observeNodes`) is not consolidatable: we do not know.
 */
export function isConsolidatable(node: NodeState, consolidateAfterMs: number | null, nowMs: number): boolean {
  if (consolidateAfterMs === null || node.lastPodEventAt === undefined) return false;
  return nowMs - node.lastPodEventAt >= consolidateAfterMs;
}

/** When the node becomes (or became) consolidatable; undefined for `Never` or an unknown last event. */
export function consolidatableAt(node: NodeState, consolidateAfterMs: number | null): number | undefined {
  if (consolidateAfterMs === null || node.lastPodEventAt === undefined) return undefined;
  return node.lastPodEventAt + consolidateAfterMs;
}

/**
 * Karpenter's consolidationGracePeriod design: a node evaluated with nothing worth doing is not
 * evaluated again until the grace period has passed since that evaluation. `null` (unset or `Never`)
 * disables it. The protection is measured against the pool's current grace period, so shortening or
 * removing it takes effect at once.
 */
export function graceProtection(
  node: NodeState,
  gracePeriodMs: number | null,
  nowMs: number,
): { protected: boolean; until?: number } {
  if (gracePeriodMs === null || node.graceProtectedUntil === undefined) return { protected: false };
  let until = node.graceProtectedUntil;
  if (node.lastEvaluatedAt !== undefined) until = Math.min(until, node.lastEvaluatedAt + gracePeriodMs);
  return nowMs < until ? { protected: true, until } : { protected: false };
}

/**
 * Records that the pass evaluated this (consolidatable) node. Evaluated with nothing worth doing:
 * protected until `now + gracePeriod` (this product counts from the evaluation; Karpenter's
 * consolidationGracePeriod design counts from when the node first became consolidatable, the same
 * moment for a pass that evaluates a node as soon as it qualifies). Acted on: no protection (the node is
 * on its way out; if the action is not carried out, as with the CLI's plans, the next pass may choose it
 * again). A move worth making found but not taken this pass (a better one was, or a budget or
 * kube-scheduler's placement stopped it): no protection either, since the design protects only nodes
 * for which consolidation finds no cheaper configuration.
 */
export function recordEvaluation(
  node: NodeState,
  outcome: { readonly actedOn: boolean; readonly moveFound?: boolean },
  gracePeriodMs: number | null,
  nowMs: number,
): NodeState {
  return compact({
    ...node,
    lastEvaluatedAt: nowMs,
    consolidatableSince: node.consolidatableSince ?? nowMs,
    graceProtectedUntil: !outcome.actedOn && outcome.moveFound !== true && gracePeriodMs !== null ? nowMs + gracePeriodMs : undefined,
  });
}

/** How long the node has been empty (the emptiness TTL); undefined when it is not empty. */
export function emptyFor(node: NodeState, nowMs: number): number | undefined {
  return node.emptySince === undefined ? undefined : Math.max(0, nowMs - node.emptySince);
}

/** Emptiness TTL (`WhenEmpty` pools): empty for at least `consolidateAfter`. `null` (Never): never. */
export function emptyLongEnough(node: NodeState, consolidateAfterMs: number | null, nowMs: number): boolean {
  const empty = emptyFor(node, nowMs);
  return consolidateAfterMs !== null && empty !== undefined && empty >= consolidateAfterMs;
}
