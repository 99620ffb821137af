// Taints and tolerations. Only NoSchedule and NoExecute keep a pod off a node; PreferNoSchedule is a
// wish of the node that the scheduler may ignore, so it never blocks a placement.
import type { Taint, Toleration } from '../model/types.ts';

/** What a cordoned node effectively carries (the node lifecycle controller adds it). */
export const UnschedulableTaint: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

/**
 * Taints a fresh node carries until it can take pods (the kubelet's and the cloud provider's, and
 * Karpenter's until the kubelet registered): a replacement with one of these is not ready yet.
 */
export const NOT_INITIALIZED_TAINT_KEYS: ReadonlySet<string> = new Set([
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.cloudprovider.kubernetes.io/uninitialized',
  'karpenter.sh/unregistered',
]);

export function blocksScheduling(taint: Taint): boolean {
  return taint.effect === 'NoSchedule' || taint.effect === 'NoExecute';
}

/** Kubernetes' toleration matching: effect (if set), key (empty key with Exists matches every key), value. */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect !== undefined && toleration.effect !== taint.effect) return false;
  if (toleration.key !== undefined && toleration.key !== '' && toleration.key !== taint.key) return false;
  if (toleration.operator === 'Exists') return true;
  return (toleration.value ?? '') === (taint.value ?? '');
}

/** The first blocking taint none of the tolerations tolerates, or undefined when the pod may go there. */
export function firstUntoleratedTaint(tolerations: readonly Toleration[], taints: readonly Taint[]): Taint | undefined {
  for (const taint of taints) {
    if (!blocksScheduling(taint)) continue;
    if (!tolerations.some((toleration) => toleratesTaint(toleration, taint))) return taint;
  }
  return undefined;
}

export function formatTaint(taint: Taint): string {
  return `${taint.key}${taint.value !== undefined && taint.value !== '' ? `=${taint.value}` : ''}:${taint.effect}`;
}
