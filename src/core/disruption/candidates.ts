// Which nodes may be considered for consolidation at all, and, for every node that may not, each
// reason as a sentence (Karpenter's consolidation design: pods that block consolidation; Karpenter's
// disruption-controls design: consolidateAfter and policy; the plan's `nodes[].reasons`,
// docs/file-formats.md, "The plan").
import { Annotations, DisruptedTaint, DisruptingTaint, InterruptedTaint, type Cluster, type Labels, type Node, type NodePool, type Pod, type PodDisruptionBudget } from '../model/types.ts';
import type { ConsolidationMethodName } from '../plan.ts';
import { matchesSelector } from '../scheduling/labelSelector.ts';
import { nodeDisruptionCost } from './disruptionCost.ts';
import { doNotDisruptProtection, hasControllerOwner, isReschedulable, podKey, type DurationParser } from './pods.ts';
import { nodePricePerHour, type PriceIndex } from './prices.ts';
import { policyAllows, type MethodName } from './policy.ts';
import { formatDuration, formatTime } from './text.ts';

export interface Candidate {
  readonly node: Node;
  readonly pool: NodePool;
  /** Undefined when the catalog has no price for the node's offering. */
  readonly pricePerHour: number | undefined;
  /** Pods that would be evicted and must land elsewhere. */
  readonly pods: readonly Pod[];
  /** Disruption cost (Karpenter's savings-threshold design), base cost included. */
  readonly disruptionCost: number;
  readonly methods: ReadonlySet<MethodName>;
}

export interface NodeVerdict {
  readonly node: Node;
  /** The pool the node names, known or not. */
  readonly poolName: string | undefined;
  readonly candidate: Candidate | undefined;
  readonly reasons: string[];
  /**
   * When the node is still inside its NodePool's consolidateAfter window: the time it leaves it. Such a
   * node takes no pod that consolidation moves (consolidateAfterWindow).
   */
  readonly consolidateAfterUntil?: number;
}

/** What the pass knows about a node's recent history (from state, or derived from the cluster alone). */
export interface NodeTiming {
  readonly lastPodEventAt: number;
  /** Karpenter's consolidationGracePeriod design: the node is not re-evaluated before this time. */
  readonly graceProtectedUntil?: number;
}

export interface CandidateContext {
  readonly cluster: Cluster;
  readonly pools: ReadonlyMap<string, NodePool>;
  readonly nowMs: number;
  readonly prices: PriceIndex;
  readonly parseDuration: DurationParser;
  /** Nodes with an unfinished disruption command. */
  readonly inFlight: ReadonlySet<string>;
  readonly timing: (node: Node, pods: readonly Pod[]) => NodeTiming;
  /** Extra blocking reasons from time-based rules kept elsewhere (minimum lifetime ...). */
  readonly extraReasons?: (node: Node) => readonly string[];
}

/**
 * A node's last pod event seen from one snapshot: the latest creation or start of a pod that would
 * move, or when the node became Ready if it never had one (docs/how-a-pass-decides.md, "Time and state
 * between passes", without the pod
 * departures that only a stored previous pass can reveal).
 */
export function snapshotTiming(node: Node, pods: readonly Pod[]): NodeTiming {
  let last = Number.NEGATIVE_INFINITY;
  for (const pod of pods) {
    if (pod.isDaemonSetPod || pod.isMirrorPod) continue;
    last = Math.max(last, pod.createdAt ?? Number.NEGATIVE_INFINITY, pod.startedAt ?? Number.NEGATIVE_INFINITY);
  }
  if (last === Number.NEGATIVE_INFINITY) last = node.readySince ?? node.createdAt;
  return { lastPodEventAt: last };
}

export function podsByNode(cluster: Cluster): Map<string, Pod[]> {
  const byNode = new Map<string, Pod[]>();
  for (const pod of cluster.pods) {
    if (!pod.nodeName) continue;
    const list = byNode.get(pod.nodeName);
    if (list) list.push(pod);
    else byNode.set(pod.nodeName, [pod]);
  }
  return byNode;
}

// A pod's labels as one sorted string, worked out once per (immutable) labels object: the probe, the
// pass and a plan's later waves all evaluate the same pods.
const labelSetKeys = new WeakMap<Labels, string>();

function labelSetKey(labels: Labels): string {
  let key = labelSetKeys.get(labels);
  if (key === undefined) {
    key = Object.entries(labels)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    labelSetKeys.set(labels, key);
  }
  return key;
}

/**
 * PDBs selecting a pod. Pods of one workload share their labels, so matches are computed once per
 * (namespace, label set) and only against the PDBs of that namespace: at thousands of nodes this is
 * the difference between seconds and milliseconds.
 */
function pdbMatcher(pdbs: readonly PodDisruptionBudget[]): (pod: Pod) => readonly PodDisruptionBudget[] {
  // The same list for a pass and the later waves it projects (they change nodes and pods, not PDBs).
  let matcher = matchers.get(pdbs);
  if (!matcher) {
    matcher = newPdbMatcher(pdbs);
    matchers.set(pdbs, matcher);
  }
  return matcher;
}

const matchers = new WeakMap<readonly PodDisruptionBudget[], (pod: Pod) => readonly PodDisruptionBudget[]>();

function newPdbMatcher(pdbs: readonly PodDisruptionBudget[]): (pod: Pod) => readonly PodDisruptionBudget[] {
  const byNamespace = new Map<string, PodDisruptionBudget[]>();
  for (const pdb of pdbs) {
    const list = byNamespace.get(pdb.namespace);
    if (list) list.push(pdb);
    else byNamespace.set(pdb.namespace, [pdb]);
  }
  const cache = new Map<string, readonly PodDisruptionBudget[]>();
  // And per labels object (a pod and its copies share one): a pass's probe and each later wave evaluate
  // the same pods again, and building the key string for each was most of evaluating a node.
  const byLabels = new WeakMap<Labels, { readonly namespace: string; readonly matched: readonly PodDisruptionBudget[] }>();
  return (pod) => {
    const candidates = byNamespace.get(pod.namespace);
    if (!candidates) return [];
    const known = byLabels.get(pod.labels);
    if (known !== undefined && known.namespace === pod.namespace) return known.matched;
    const key = `${pod.namespace}\u0000${labelSetKey(pod.labels)}`;
    let matched = cache.get(key);
    if (!matched) {
      matched = candidates.filter((pdb) => matchesSelector(pdb.selector, pod.labels));
      cache.set(key, matched);
    }
    byLabels.set(pod.labels, { namespace: pod.namespace, matched });
    return matched;
  };
}

/** Reasons a pod forbids draining its node, if any. */
function podBlockers(pod: Pod, ctx: CandidateContext, matchPdbs: (pod: Pod) => readonly PodDisruptionBudget[]): string[] {
  const reasons: string[] = [];
  const key = podKey(pod);
  const dnd = doNotDisruptProtection(pod, ctx.nowMs, ctx.parseDuration);
  if (dnd.protects) {
    reasons.push(
      dnd.until !== undefined
        ? `pod ${key} has ${dnd.annotation} until ${formatTime(dnd.until)}`
        : `pod ${key} has ${dnd.annotation}`,
    );
  }
  if (!hasControllerOwner(pod)) reasons.push(`pod ${key} has no controller owner, so nothing would recreate it after eviction`);
  const pdbs = matchPdbs(pod);
  if (pdbs.length > 1) {
    const names = pdbs.map((p) => `${p.namespace}/${p.name}`).join(', ');
    reasons.push(`pod ${key} matches more than one PodDisruptionBudget (${names}); the Eviction API refuses to evict it`);
  } else if (pdbs.length === 1 && pdbs[0]!.disruptionsAllowed <= 0) {
    reasons.push(`pod ${key} is protected by PodDisruptionBudget ${pdbs[0]!.namespace}/${pdbs[0]!.name}, which allows no disruptions now`);
  }
  return reasons;
}

function nodeBlockers(node: Node, ctx: CandidateContext): string[] {
  const reasons: string[] = [];
  if (node.deleting) reasons.push('node is being deleted');
  if (!node.ready) reasons.push('node is not Ready');
  if (ctx.inFlight.has(node.name)) reasons.push('node is already being disrupted by an unfinished command');
  else if (node.taints.some((t) => t.key === DisruptedTaint.key)) reasons.push(`node is already being disrupted (${DisruptedTaint.key} taint)`);
  else if (node.taints.some((t) => t.key === DisruptingTaint.key)) reasons.push(`node is already being drained by eks-consolidator (${DisruptingTaint.key} taint)`);
  // Its instance is going away (spot interruption, rebalance, scheduled change): the interruption
  // function cordons and drains it, and a move here would race that drain for nothing.
  if (node.taints.some((t) => t.key === InterruptedTaint.key)) reasons.push(`node's instance has an interruption notice (${InterruptedTaint.key} taint)`);
  for (const annotation of [Annotations.doNotDisrupt, Annotations.doNotConsolidateLegacy]) {
    if (node.annotations[annotation]?.trim().toLowerCase() === 'true') reasons.push(`node has ${annotation}`);
  }
  return reasons;
}

/**
 * The end of the node's consolidateAfter window when `nowMs` is inside it, else undefined. Karpenter
 * v1.14's consolidation simulation sends no pod off a candidate to such a node (test "should not
 * consolidate pods onto a destination node that is under its consolidateAfter window"): the window
 * runs from the node's last pod event (or from when it became Ready), and a pool with no wait (0s) or
 * that never consolidates (Never) has none, so its nodes stay open destinations.
 */
export function consolidateAfterWindow(node: Node, pool: NodePool, timing: NodeTiming, nowMs: number): number | undefined {
  if (pool.consolidateAfterMs === null || pool.consolidateAfterMs <= 0 || !node.ready) return undefined;
  const until = timing.lastPodEventAt + pool.consolidateAfterMs;
  return nowMs < until ? until : undefined;
}

/** Nodes still inside their consolidateAfter window: closed to the pods consolidation moves. */
export function closedToMovedPods(verdicts: readonly NodeVerdict[]): ReadonlySet<string> {
  const closed = new Set<string>();
  for (const v of verdicts) if (v.consolidateAfterUntil !== undefined) closed.add(v.node.name);
  return closed;
}

/** Evaluates every node: candidates with their cost and methods, and the reasons for the rest. */
export function evaluateNodes(ctx: CandidateContext): NodeVerdict[] {
  const byNode = podsByNode(ctx.cluster);
  const matchPdbs = pdbMatcher(ctx.cluster.pdbs);
  return ctx.cluster.nodes.map((node) => evaluateNode(node, byNode.get(node.name) ?? [], ctx, matchPdbs));
}

function evaluateNode(
  node: Node,
  allPods: readonly Pod[],
  ctx: CandidateContext,
  matchPdbs: (pod: Pod) => readonly PodDisruptionBudget[],
): NodeVerdict {
  const poolName = node.nodePool;
  if (poolName === undefined) return { node, poolName, candidate: undefined, reasons: ['node is not managed by a NodePool'] };
  const pool = ctx.pools.get(poolName);
  if (!pool) return { node, poolName, candidate: undefined, reasons: [`node names NodePool "${poolName}", which is not configured`] };

  const timing = pool.consolidateAfterMs === null ? undefined : ctx.timing(node, allPods);
  const windowUntil = timing === undefined ? undefined : consolidateAfterWindow(node, pool, timing, ctx.nowMs);
  const window = windowUntil === undefined ? {} : { consolidateAfterUntil: windowUntil };
  // Karpenter v1.14 static pools (spec.replicas) keep a fixed node count: no method ever disrupts them.
  if (pool.replicas !== undefined) {
    return { node, poolName, candidate: undefined, reasons: [`NodePool "${pool.name}" is static (spec.replicas: ${pool.replicas}), so its nodes are never consolidated`], ...window };
  }
  const pods = allPods.filter(isReschedulable);
  // Pods already terminating need no eviction, so they do not block one (a StatefulSet's still need a place).
  const reasons = [...nodeBlockers(node, ctx), ...pods.filter((pod) => !pod.terminating).flatMap((pod) => podBlockers(pod, ctx, matchPdbs))];
  reasons.push(...(ctx.extraReasons?.(node) ?? []));

  if (pool.consolidateAfterMs === null || timing === undefined) {
    reasons.push(`consolidation is disabled for NodePool "${pool.name}" (consolidateAfter: Never)`);
  } else {
    const readyAt = timing.lastPodEventAt + pool.consolidateAfterMs;
    if (ctx.nowMs < readyAt) {
      reasons.push(
        `last pod event ${formatDuration(ctx.nowMs - timing.lastPodEventAt)} ago; NodePool "${pool.name}" waits consolidateAfter ${formatDuration(pool.consolidateAfterMs)} (until ${formatTime(readyAt)})`,
      );
    } else if (timing.graceProtectedUntil !== undefined && ctx.nowMs < timing.graceProtectedUntil) {
      reasons.push(
        `evaluated recently with nothing worth doing; consolidationGracePeriod protects it until ${formatTime(timing.graceProtectedUntil)}`,
      );
    }
  }

  const methods = new Set<MethodName>();
  for (const method of ['emptiness', 'single-node', 'multi-node', 'm-to-n'] as const) {
    if (!policyAllows(pool.consolidationPolicy, method)) continue;
    if (method === 'emptiness' && pods.length > 0) continue;
    methods.add(method);
  }
  if (pods.length > 0 && methods.size === 0) {
    reasons.push(`NodePool "${pool.name}" only removes empty nodes (consolidationPolicy ${pool.consolidationPolicy}) and this node runs ${pods.length} pod(s)`);
  }

  if (reasons.length > 0) return { node, poolName, candidate: undefined, reasons, ...window };
  const candidate: Candidate = {
    node,
    pool,
    pricePerHour: nodePricePerHour(node, ctx.prices),
    pods,
    disruptionCost: nodeDisruptionCost(node, pods, pool, ctx.nowMs),
    methods,
  };
  return { node, poolName, candidate, reasons, ...window };
}

/** Cheapest to disrupt first (Karpenter's consolidation design), then by name so the order is stable. */
export function byDisruptionCost(a: Candidate, b: Candidate): number {
  return a.disruptionCost - b.disruptionCost || a.node.name.localeCompare(b.node.name);
}
