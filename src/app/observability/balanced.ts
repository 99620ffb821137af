// What `consolidationPolicy: Balanced` adds to observability (Karpenter v1.14's names):
//   karpenter_consolidation_score{decision,nodepool,policy}        every scored move's score, as a
//       distribution (EMF values; Karpenter's is a histogram with buckets 0.1 ... 10)
//   karpenter_consolidation_moves_total{decision,nodepool,policy}  scored moves by decision
//   ConsolidationApproved / ConsolidationRejected                   Kubernetes events on the nodes
// `decision` is approved | rejected; each source pool of a move is one data point. Rejected moves
// include those refused on their best case without simulation (Karpenter skips those silently), so
// that a pool whose nodes are all too busy to pass shows up in the metric. Events are sent on the
// acting path only (never in a dry run), like the other node events; Karpenter puts the event of a
// multi-node move on the NodePool, here it goes on each node of an approved move, and a refused merge
// has no event (its nodes get their own single-node verdict, and the plan lists the merge).
import { eventMessage, isScoreSentence } from '../../core/disruption/balancedScore.ts';
import type { ConsolidationScore, Plan } from '../../core/plan.ts';
import type { MetricDatum } from './metrics.ts';

export interface ScoreEvent {
  readonly nodeName: string;
  readonly reason: 'ConsolidationApproved' | 'ConsolidationRejected';
  readonly message: string;
  readonly type: 'Normal';
}

/** The score distribution and move counts of one pass's plan. */
export function scoreMetrics(plan: Plan): MetricDatum[] {
  const data: MetricDatum[] = [];
  const dryRun = String(plan.dryRun);
  const add = (s: ConsolidationScore) => {
    const dimensions = { decision: s.approved ? 'approved' : 'rejected', nodepool: s.nodePool, policy: 'Balanced', dry_run: dryRun };
    data.push({ name: 'karpenter_consolidation_score', unit: 'None', value: s.score, dimensions, distribution: true });
    data.push({ name: 'karpenter_consolidation_moves_total', unit: 'Count', value: 1, dimensions });
  };
  for (const decision of plan.decisions) for (const s of decision.scores ?? []) add(s);
  for (const move of plan.rejectedMoves ?? []) for (const s of move.scores) add(s);
  return data;
}

/**
 * ConsolidationApproved on every node of a scored decision (with its pool's score), and
 * ConsolidationRejected on every node kept because its own single-node move was refused.
 */
export function scoreEvents(plan: Plan, inScope: (poolName: string) => boolean): ScoreEvent[] {
  const events: ScoreEvent[] = [];
  const poolOf = new Map(plan.nodes.map((n) => [n.name, n.nodePool]));
  for (const decision of plan.decisions) {
    for (const nodeName of decision.nodes) {
      const score = decision.scores?.find((s) => s.nodePool === poolOf.get(nodeName));
      if (score === undefined || !inScope(score.nodePool)) continue;
      events.push({ nodeName, reason: 'ConsolidationApproved', type: 'Normal', message: eventMessage(score) });
    }
  }
  const disrupted = new Set(plan.decisions.flatMap((d) => d.nodes));
  for (const move of plan.rejectedMoves ?? []) {
    if (move.method !== 'single-node' || move.nodes.length !== 1) continue;
    const nodeName = move.nodes[0]!;
    const score = move.scores.find((s) => !s.approved);
    if (score === undefined || disrupted.has(nodeName) || !inScope(score.nodePool)) continue;
    events.push({ nodeName, reason: 'ConsolidationRejected', type: 'Normal', message: eventMessage(score) });
  }
  return events;
}

/** A node's reasons without the score sentences, which ConsolidationRejected carries instead. */
export const withoutScoreSentences = (reasons: readonly string[]): string[] => reasons.filter((r) => !isScoreSentence(r));
