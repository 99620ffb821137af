// Which pods on a node being disrupted must leave before its instance may be terminated, and which do
// not count. The rule the whole executor rests on: a node's instance is terminated only when no pod
// that counts is left on it.
import { hasControllerOwner } from '../../core/disruption/pods.ts';
import { Annotations, type Pod } from '../../core/model/types.ts';

/**
 * - `ignore`: does not need to leave — finished (Succeeded/Failed), a DaemonSet pod (its controller
 *   runs one on every node, and it dies with the node), a mirror pod (the kubelet's own; the API
 *   cannot evict it);
 * - `evict`: ask the Eviction API to move it;
 * - `leaving`: already being deleted: wait until it is gone, do not evict again;
 * - `protected`: carries `karpenter.sh/do-not-disrupt` (it arrived after the plan, which excludes such
 *   nodes): not evicted, and it keeps the node alive, as Karpenter's drain does; or it has no controller
 *   (a bare pod someone started on the node after the plan, which refuses nodes with such pods): nothing
 *   would recreate it, so it is not evicted either, and the drain timeout gives the node back.
 */
export type PodDisposition = 'ignore' | 'evict' | 'leaving' | 'protected';

export function podDisposition(pod: Pod): PodDisposition {
  if (pod.phase === 'Succeeded' || pod.phase === 'Failed') return 'ignore';
  if (pod.isDaemonSetPod || pod.isMirrorPod) return 'ignore';
  if (pod.terminating) return 'leaving';
  if (pod.annotations[Annotations.doNotDisrupt] === 'true') return 'protected';
  if (!hasControllerOwner(pod)) return 'protected';
  return 'evict';
}

/** How long past its grace period a pod on a node that is not Ready may stay terminating before it is written off. */
export const STUCK_TERMINATING_AFTER_MS = 60_000;

/**
 * Set when the node is not Ready: its kubelet cannot confirm that evicted pods have stopped, so a pod
 * already evicted (through the Eviction API) and terminating for longer than its grace period plus a
 * minute no longer holds the node (Karpenter's drain makes the same exception).
 */
export interface NotReadyNode {
  readonly nowMs: number;
}

/** Pods that still keep the node alive (everything but `ignore`). */
export function podsThatCount(pods: readonly Pod[], notReady?: NotReadyNode): Pod[] {
  return pods.filter((p) => podDisposition(p) !== 'ignore' && !(notReady !== undefined && stuckTerminating(p, notReady.nowMs)));
}

function stuckTerminating(pod: Pod, nowMs: number): boolean {
  if (!pod.terminating || pod.deletingSince === undefined) return false;
  // deletionTimestamp is already "asked at + grace period"; the default grace period is 30 s.
  return nowMs - pod.deletingSince > STUCK_TERMINATING_AFTER_MS;
}

export function podKey(pod: Pod): string {
  return `${pod.namespace}/${pod.name}`;
}
