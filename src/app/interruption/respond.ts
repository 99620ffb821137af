// What the interruption function does with one notice (core/interruption/notice.ts), instance by
// instance, as the queue mode of aws-node-termination-handler does for the nodes it serves, but only for
// instances this product launched: Karpenter's interruption controller acts only on instances with a
// NodeClaim, so our EC2 replacements would otherwise get no cordon and drain before a spot reclaim.
//
// For each instance named:
// 1. EC2 DescribeInstances by id: unknown, or not carrying our managed tag and this cluster's tag, is
//    left alone with a log line (no Kubernetes call at all); shutting-down or terminated has nothing
//    left to protect.
// 2. Its Node, by spec.providerID (`aws:///<zone>/<instance-id>`); none registered: nothing to do.
// 3. By the notice's action: `cordon` puts our interrupted taint on the node and cordons it, in one
//    write guarded by the node's uid; `cordonAndDrain` then evicts its pods through the Eviction API,
//    round after round, until none is left to evict or the deadline: a spot instance's reclaim time
//    (the warning's time plus two minutes) less a margin, and never past the invocation's own time.
//    The drain's rules are the consolidation drain's (act/drain.ts): DaemonSet, mirror and finished pods
//    stay, and so do bare pods (nothing would recreate them) and `karpenter.sh/do-not-disrupt` ones (as
//    Karpenter's drain leaves them); a PodDisruptionBudget's 429 is retried, never forced.
//    `none` (a state change) only logs.
// Everything is idempotent: a taint already there is not written again, a pod already leaving is not
// evicted again, so a redelivered or late notice does nothing the first one did not. A dry run reads
// and reports what it would do, and writes nothing.
//
// The taint carries no command annotation: the consolidation pass's cleanup of orphaned taints only
// removes its own disrupting taint from nodes marked by one of its commands, so it never lifts this one.
import type { Logger } from '@aws-lambda-powertools/logger';
import { formatTaint } from '../../core/scheduling/taints.ts';
import type { InterruptionNotice, NoticeKind } from '../../core/interruption/notice.ts';
import { InterruptedTaint, type Node } from '../../core/model/types.ts';
import type { NodeEvent, NodeOperations, TaintResult } from '../../core/ports/actuator.ts';
import type { InstanceDirectory } from '../../core/ports/instances.ts';
import { podDisposition, podKey } from '../act/drain.ts';

/** Evictions stop this long before a spot instance is reclaimed: the last pods need their grace period. */
export const RECLAIM_MARGIN_MS = 15_000;
/** Between two eviction rounds while a PodDisruptionBudget refuses. */
export const EVICTION_POLL_MS = 5_000;

export interface InterruptionDeps {
  readonly instances: InstanceDirectory;
  readonly nodes: NodeOperations;
  /** Epoch ms. */
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly log: Logger;
}

export interface InterruptionOptions {
  readonly dryRun: boolean;
  /** Epoch ms by which this invocation must have stopped evicting (its remaining time less a margin). */
  readonly invocationDeadlineMs: number;
  readonly reclaimMarginMs?: number;
  readonly pollIntervalMs?: number;
}

/**
 * - `acted`: the node was tainted and cordoned (and drained, for a drain notice), or already was;
 * - `dryRun`: what would have been done is in the report, nothing was written;
 * - `notOurs` / `unknownInstance`: left alone, no Kubernetes call;
 * - `instanceGone`: shutting down or terminated already, nothing left to protect;
 * - `noNode`: no Node (or it vanished while we looked);
 * - `noAction`: a notice that only calls for a log line (a state change).
 */
export type InstanceOutcome = 'acted' | 'dryRun' | 'notOurs' | 'unknownInstance' | 'instanceGone' | 'noNode' | 'noAction';

/** How the drain of a `cordonAndDrain` notice ended. */
export type DrainEnd = 'done' | 'deadline' | 'late';

export interface InstanceReport {
  readonly instanceId: string;
  readonly outcome: InstanceOutcome;
  readonly node?: string;
  readonly why?: string;
  readonly instanceState?: string;
  readonly taint?: TaintResult;
  readonly drain?: DrainEnd;
  /** Epoch ms: when evictions stop. */
  readonly evictUntil?: number;
  readonly evicted: number;
  /** Pods a PodDisruptionBudget (429) or another refusal kept on the node at the end. */
  readonly blocked: readonly string[];
  /** Pods never evicted: bare pods and `karpenter.sh/do-not-disrupt` ones. */
  readonly kept: readonly string[];
  /** A dry run: pods that would be evicted. */
  readonly wouldEvict?: readonly string[];
  readonly error?: string;
}

export interface InterruptionReport {
  readonly notice: InterruptionNotice;
  readonly dryRun: boolean;
  readonly instances: readonly InstanceReport[];
}

const EVENT_REASON: Record<Exclude<NoticeKind, 'stateChange'>, { reason: string; type: NodeEvent['type']; what: string }> = {
  // Karpenter's interruption controller's reasons for the same notices.
  spotInterruption: { reason: 'SpotInterrupted', type: 'Warning', what: 'Spot interruption warning' },
  rebalanceRecommendation: { reason: 'SpotRebalanceRecommendation', type: 'Normal', what: 'Spot rebalance recommendation' },
  scheduledChange: { reason: 'InstanceUnhealthy', type: 'Warning', what: 'Scheduled change' },
};

export async function respondToNotice(notice: InterruptionNotice, deps: InterruptionDeps, options: InterruptionOptions): Promise<InterruptionReport> {
  const instances: InstanceReport[] = [];
  for (const instanceId of notice.instanceIds) {
    try {
      instances.push(await respondForInstance(notice, instanceId, deps, options));
    } catch (error) {
      // The next instance still gets its turn; the handler fails the invocation afterwards, so that
      // Lambda delivers the notice again (every step is idempotent).
      deps.log.error('interruption: handling the instance failed', { instanceId, error });
      instances.push({ instanceId, outcome: 'noAction', evicted: 0, blocked: [], kept: [], error: message(error) });
    }
  }
  return { notice, dryRun: options.dryRun, instances };
}

async function respondForInstance(notice: InterruptionNotice, instanceId: string, deps: InterruptionDeps, options: InterruptionOptions): Promise<InstanceReport> {
  const { log } = deps;
  const empty = { instanceId, evicted: 0, blocked: [], kept: [] };
  const ownership = await deps.instances.ownership(instanceId);
  if (!ownership.found) {
    log.info('interruption: instance unknown to EC2, ignored', { instanceId, kind: notice.kind });
    return { ...empty, outcome: 'unknownInstance' };
  }
  if (!ownership.ours) {
    log.info('interruption: not an instance this product launched, ignored', { instanceId, kind: notice.kind, why: ownership.why });
    return { ...empty, outcome: 'notOurs', ...(ownership.why === undefined ? {} : { why: ownership.why }), instanceState: ownership.state };
  }
  if (notice.action === 'none') {
    log.info('interruption: our instance changed state; nothing to drain', { instanceId, kind: notice.kind, state: notice.state ?? ownership.state });
    return { ...empty, outcome: 'noAction', instanceState: ownership.state };
  }
  if (ownership.state === 'shutting-down' || ownership.state === 'terminated') {
    log.info('interruption: our instance is already going; nothing left to protect', { instanceId, kind: notice.kind, state: ownership.state });
    return { ...empty, outcome: 'instanceGone', instanceState: ownership.state };
  }
  const lookup = await deps.nodes.findNodeByInstanceId(instanceId);
  if (!lookup.exists) {
    log.info('interruption: no node registered for our instance', { instanceId, kind: notice.kind });
    return { ...empty, outcome: 'noNode', instanceState: ownership.state };
  }
  const node = lookup.node;
  const drains = notice.action === 'cordonAndDrain';
  const evictUntil = drains ? evictionDeadline(notice, options) : undefined;
  const at = { instanceId, node: node.name, instanceState: ownership.state, ...(evictUntil === undefined ? {} : { evictUntil }) };

  if (options.dryRun) {
    const pods = await deps.nodes.listPodsOnNode(node.name);
    const wouldEvict = drains ? pods.filter((p) => podDisposition(p) === 'evict').map(podKey).sort() : [];
    const kept = pods.filter((p) => podDisposition(p) === 'protected').map(podKey).sort();
    log.info('interruption: dry run, nothing written', { ...at, kind: notice.kind, wouldTaint: !hasOurTaint(node), wouldEvict, kept });
    return { ...at, outcome: 'dryRun', evicted: 0, blocked: [], kept: drains ? kept : [], wouldEvict };
  }

  const taint = await deps.nodes.taintAndCordon(node.name, InterruptedTaint, node.uid === undefined ? {} : { uid: node.uid });
  if (taint === 'gone') {
    log.info('interruption: the node vanished before it could be tainted', { ...at, kind: notice.kind });
    return { ...empty, ...at, outcome: 'noNode', taint };
  }
  let drain: DrainEnd | undefined;
  let result: DrainResult = { evicted: 0, blocked: [], kept: [] };
  if (drains) {
    if (deps.now() >= evictUntil!) drain = 'late';
    else ({ drain, result } = await drainNode(node, evictUntil!, deps, options));
  }
  const report: InstanceReport = { ...at, outcome: 'acted', taint, ...(drain === undefined ? {} : { drain }), ...result };
  log.info('interruption: node handled', { ...report, kind: notice.kind, ...(evictUntil === undefined ? {} : { evictUntil: new Date(evictUntil).toISOString() }) });
  // An event when something changed or still stands in the way; a redelivery that finds everything
  // done writes nothing at all.
  if (taint === 'tainted' || result.evicted > 0 || result.blocked.length > 0) await recordEvent(notice, node, report, deps);
  return report;
}

/** A spot instance's reclaim time less the margin, and never past the invocation's own deadline. */
function evictionDeadline(notice: InterruptionNotice, options: InterruptionOptions): number {
  const margin = options.reclaimMarginMs ?? RECLAIM_MARGIN_MS;
  return Math.min(options.invocationDeadlineMs, notice.reclaimAt === undefined ? Number.POSITIVE_INFINITY : notice.reclaimAt - margin);
}

interface DrainResult {
  readonly evicted: number;
  readonly blocked: readonly string[];
  readonly kept: readonly string[];
}

/** Eviction rounds until nothing is left to evict or the deadline; refusals are tried again each round. */
async function drainNode(node: Node, until: number, deps: InterruptionDeps, options: InterruptionOptions): Promise<{ drain: DrainEnd; result: DrainResult }> {
  const poll = options.pollIntervalMs ?? EVICTION_POLL_MS;
  let evicted = 0;
  for (;;) {
    const pods = await deps.nodes.listPodsOnNode(node.name);
    const blocked: string[] = [];
    const kept: string[] = [];
    let outOfTime = false;
    for (const pod of pods) {
      const disposition = podDisposition(pod);
      if (disposition === 'protected') kept.push(podKey(pod));
      if (disposition !== 'evict') continue;
      if (outOfTime || deps.now() >= until) {
        outOfTime = true;
        blocked.push(podKey(pod));
        continue;
      }
      let answer;
      try {
        answer = await deps.nodes.evictPod(pod.namespace, pod.name, { podUid: pod.uid });
      } catch (error) {
        // Any refusal (two PDBs' 500, a webhook's 403) is retried like a PDB's 429, until the deadline.
        deps.log.warn('interruption: eviction refused', { node: node.name, pod: podKey(pod), error: message(error) });
        blocked.push(podKey(pod));
        continue;
      }
      if (answer === 'evicted') evicted += 1;
      else if (answer === 'blockedByPdb') blocked.push(podKey(pod));
    }
    const result = { evicted, blocked: blocked.sort(), kept: kept.sort() };
    if (blocked.length === 0) return { drain: 'done', result };
    if (outOfTime || deps.now() + poll >= until) return { drain: 'deadline', result };
    await deps.sleep(poll);
  }
}

async function recordEvent(notice: InterruptionNotice, node: Node, report: InstanceReport, deps: InterruptionDeps): Promise<void> {
  if (notice.kind === 'stateChange') return;
  const { reason, type, what } = EVENT_REASON[notice.kind];
  const parts = [
    `${what} for instance ${report.instanceId}${notice.reclaimAt === undefined ? '' : `, reclaimed at ${iso(notice.reclaimAt)}`}${notice.eventTypeCode === undefined ? '' : ` (${notice.eventTypeCode})`}`,
    `${report.taint === 'tainted' ? 'tainted' : 'already tainted'} ${formatTaint(InterruptedTaint)} and cordoned`,
  ];
  if (notice.action === 'cordonAndDrain') {
    parts.push(report.drain === 'late' ? `too late to evict (after ${iso(report.evictUntil!)})` : `evicted ${report.evicted} pod(s)`);
    if (report.blocked.length > 0) parts.push(`still refused at ${iso(report.evictUntil!)}: ${list(report.blocked)}`);
    if (report.kept.length > 0) parts.push(`not evicted (no controller, or karpenter.sh/do-not-disrupt): ${list(report.kept)}`);
  } else {
    parts.push('pods left running until an interruption warning');
  }
  try {
    await deps.nodes.createEvent({ nodeName: node.name, reason, type, message: parts.join('; ') });
  } catch (error) {
    deps.log.warn('interruption: could not record a Kubernetes event', { node: node.name, reason, error: message(error) });
  }
}

function hasOurTaint(node: Node): boolean {
  return node.unschedulable && node.taints.some((t) => t.key === InterruptedTaint.key && t.effect === InterruptedTaint.effect);
}

function list(keys: readonly string[]): string {
  return keys.length <= 5 ? keys.join(', ') : `${keys.slice(0, 5).join(', ')} and ${keys.length - 5} more`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
