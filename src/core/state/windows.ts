// Cluster-wide timing rules of Karpenter's consolidation design (stabilization window, minimum node
// lifetime, polling with a no-change pause). Pure: time comes in as `nowMs`.

import type { Cluster, Node } from '../model/types.ts';
import type { ClusterState, PassState } from './types.ts';

/**
 * Karpenter's consolidation design: 5 minutes while pods are pending or workload controllers are not
 * ready.
 */
export const STABILIZATION_WINDOW_MS = 5 * 60_000;
/** Karpenter's consolidation design: a node younger than this is not considered. */
export const MINIMUM_NODE_LIFETIME_MS = 5 * 60_000;
/**
 * Karpenter's consolidation design pauses examination while nothing changes. Time alone also changes
 * answers (a node passing `consolidateAfter`, a grace period ending, a budget schedule opening), so the
 * pause is capped.
 */
export const NO_CHANGE_SKIP_MAX_MS = 5 * 60_000;

export interface Hold {
  readonly hold: boolean;
  /** When the hold ends at the latest. */
  readonly until?: number;
  readonly why?: string;
}

/**
 * Stabilization window (Karpenter's consolidation design): after an action, controllers need time to
 * recreate evicted pods and bind them; the capacity picture is wrong until they have. So no new decision
 * while, within 5 minutes of the last action, any pod is pending (unbound, not terminal, not being
 * deleted) or any workload controller has fewer ready replicas than desired. Settled: no wait at all.
 */
export function stabilizationHold(cluster: Cluster, state: Pick<PassState, 'cluster'>, nowMs: number): Hold {
  const lastActionAt = state.cluster.lastActionAt;
  if (lastActionAt === undefined) return { hold: false };
  const until = lastActionAt + STABILIZATION_WINDOW_MS;
  if (nowMs >= until) return { hold: false };

  const pending = cluster.pods.filter(
    (p) => p.nodeName === undefined && p.phase !== 'Succeeded' && p.phase !== 'Failed' && !p.terminating,
  );
  const unready = cluster.workloads.filter((w) => w.readyReplicas < w.desiredReplicas);
  if (pending.length === 0 && unready.length === 0) return { hold: false };

  const reasons: string[] = [];
  if (pending.length > 0) {
    const names = pending.slice(0, 3).map((p) => `${p.namespace}/${p.name}`);
    reasons.push(`${pending.length} pending pod(s) (${names.join(', ')}${pending.length > 3 ? ', ...' : ''})`);
  }
  if (unready.length > 0) {
    const names = unready.slice(0, 3).map((w) => `${w.kind} ${w.namespace}/${w.name} ${w.readyReplicas}/${w.desiredReplicas} ready`);
    reasons.push(`${unready.length} workload(s) not ready (${names.join(', ')}${unready.length > 3 ? ', ...' : ''})`);
  }
  return { hold: true, until, why: `stabilizing after the last action: ${reasons.join('; ')}` };
}

/**
 * Minimum node lifetime (Karpenter's consolidation design): a node Ready for less than 5 minutes is not
 * considered (dynamic PVCs may still be binding). A node that is not Ready is not considered either.
 * Without a Ready transition time, its creation time stands in.
 */
export function minimumLifetimeOk(node: Node, nowMs: number): boolean {
  if (!node.ready) return false;
  return nowMs - (node.readySince ?? node.createdAt) >= MINIMUM_NODE_LIFETIME_MS;
}

/**
 * Polling (Karpenter's consolidation design): skip the search when the cluster is exactly as the last
 * search saw it and that search found nothing, but search again at least every `NO_CHANGE_SKIP_MAX_MS`.
 */
export function noChangeSkip(
  fingerprint: string,
  state: Pick<PassState, 'cluster'>,
  nowMs: number,
): { skip: boolean; until?: number; why?: string } {
  const { lastFingerprint, lastPassFoundNothing, lastSearchAt } = state.cluster;
  if (lastFingerprint !== fingerprint || lastPassFoundNothing !== true || lastSearchAt === undefined) {
    return { skip: false };
  }
  const until = lastSearchAt + NO_CHANGE_SKIP_MAX_MS;
  if (nowMs >= until || nowMs < lastSearchAt) return { skip: false };
  return { skip: true, until, why: 'cluster unchanged since the last search, which found nothing to do' };
}

/** The cluster record after a real search on the cluster with `fingerprint`. */
export function recordSearch(cluster: ClusterState, fingerprint: string, foundNothing: boolean, nowMs: number): ClusterState {
  return { ...cluster, lastFingerprint: fingerprint, lastPassFoundNothing: foundNothing, lastSearchAt: nowMs };
}

/** The cluster record after the pass took (or, dry run, planned) an action: starts the stabilization window. */
export function recordAction(cluster: ClusterState, nowMs: number): ClusterState {
  return { ...cluster, lastActionAt: nowMs };
}
