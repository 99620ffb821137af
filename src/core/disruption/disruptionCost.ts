// Disruption cost (Karpenter's savings-threshold design): how much moving a node's pods hurts, used to
// order candidates (cheapest to disrupt first, Karpenter's consolidation design) and to size the savings
// a move must bring (savings threshold).
import { Annotations, type Node, type NodePool, type Pod } from '../model/types.ts';

/**
 * Karpenter's savings-threshold design: every node costs as much as one default pod to drain, so that an
 * empty node is not free.
 */
export const NODE_BASE_COST = 1.0;

const PRIORITY_SCALE = 2 ** 25;
const DELETION_COST_SCALE = 2 ** 27;

/**
 * Per-pod cost: 1 + priority/2^25 + pod-deletion-cost/2^27, clamped to [-10, 10] (Karpenter's
 * savings-threshold design).
 */
export function podDisruptionCost(pod: Pod): number {
  const deletionCost = Number.parseInt(pod.annotations[Annotations.podDeletionCost] ?? '0', 10);
  const raw = 1 + pod.priority / PRIORITY_SCALE + (Number.isFinite(deletionCost) ? deletionCost : 0) / DELETION_COST_SCALE;
  return Math.min(10, Math.max(-10, raw));
}

/**
 * The share of the node's life still ahead under `expireAfter`: 1 when new, falling linearly to 0 at
 * expiry; always 1 without expiry (node age in Karpenter's consolidation design; lifetime remaining in
 * Karpenter's savings-threshold design).
 */
export function lifetimeRemaining(node: Node, expireAfterMs: number | null, nowMs: number): number {
  if (expireAfterMs === null || expireAfterMs <= 0) return 1;
  const ageMs = Math.max(0, nowMs - node.createdAt);
  return Math.min(1, Math.max(0, (expireAfterMs - ageMs) / expireAfterMs));
}

/**
 * Node disruption cost = (node base cost + sum of per-pod costs) x lifetime remaining (Karpenter's
 * savings-threshold design). `pods` are the pods that would be evicted: Karpenter's consolidation design
 * leaves daemonset and finished pods out of the count of disrupted workloads, as Karpenter's code does,
 * so daemonset pods are left out.
 */
export function nodeDisruptionCost(node: Node, pods: readonly Pod[], pool: NodePool | undefined, nowMs: number): number {
  const podsCost = pods.reduce((sum, pod) => sum + podDisruptionCost(pod), 0);
  return (NODE_BASE_COST + podsCost) * lifetimeRemaining(node, pool?.expireAfterMs ?? null, nowMs);
}
