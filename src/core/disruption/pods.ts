// Which pods matter to a disruption, and which of them forbid it (Karpenter's consolidation design: pods
// that block consolidation; the annotations of docs/file-formats.md, "The cluster").
import { Annotations, type Pod } from '../model/types.ts';

export const podKey = (pod: Pod): string => `${pod.namespace}/${pod.name}`;

/** Succeeded or Failed: the pod has finished and holds nothing. */
export const isTerminal = (pod: Pod): boolean => pod.phase === 'Succeeded' || pod.phase === 'Failed';

/**
 * Pods that would have to run somewhere else if the node went away. Daemonset pods are recreated by
 * their controller on whatever node exists, mirror pods belong to the node itself, finished and
 * terminating pods are leaving anyway, except a StatefulSet's: its replacement is created only once
 * the old pod is gone, under the same name, so it needs a place as much as a running pod does
 * (Karpenter's reschedulable rule).
 */
export function isReschedulable(pod: Pod): boolean {
  if (pod.isDaemonSetPod || pod.isMirrorPod || isTerminal(pod)) return false;
  return !pod.terminating || isOwnedByStatefulSet(pod);
}

export function isOwnedByStatefulSet(pod: Pod): boolean {
  return pod.ownerReferences.some((owner) => owner.kind === 'StatefulSet' && (owner.apiVersion === undefined || owner.apiVersion === 'apps/v1'));
}

/**
 * Pending pods: not bound to a node, not finished, not being deleted; daemonset and mirror pods are
 * left out, they are created per node. Karpenter puts them into every disruption simulation.
 */
export function isPending(pod: Pod): boolean {
  return pod.nodeName === undefined && !isTerminal(pod) && !pod.terminating && !pod.isDaemonSetPod && !pod.isMirrorPod;
}

export type DurationParser = (text: string) => number | null;

/**
 * Whether a pod's do-not-disrupt annotation (or the older do-not-evict) still protects it at `nowMs`.
 * `"true"` protects for as long as it is set; a duration (e.g. `"2h"`) protects until that long after
 * the pod started. Finished pods never protect their node.
 */
export function doNotDisruptProtection(
  pod: Pod,
  nowMs: number,
  parseDuration: DurationParser,
): { protects: boolean; annotation?: string; until?: number } {
  if (isTerminal(pod)) return { protects: false };
  for (const annotation of [Annotations.doNotDisrupt, Annotations.doNotEvictLegacy]) {
    const value = pod.annotations[annotation];
    if (value === undefined) continue;
    if (value.trim().toLowerCase() === 'true') return { protects: true, annotation };
    const durationMs = parseDuration(value.trim());
    if (durationMs === null) continue; // "false" or unparsable: Karpenter treats it as not set
    const since = pod.startedAt ?? pod.createdAt;
    if (since === undefined) return { protects: true, annotation };
    const until = since + durationMs;
    if (nowMs < until) return { protects: true, annotation, until };
  }
  return { protects: false };
}

/**
 * A controller owner recreates the pod after eviction; without one, eviction loses it (Karpenter's
 * consolidation design).
 */
export function hasControllerOwner(pod: Pod): boolean {
  return pod.ownerReferences.some((owner) => owner.controller);
}
