// CloudWatch metrics, published by Powertools for AWS Lambda (`@aws-lambda-powertools/metrics`) in the
// Embedded Metric Format: JSON lines on stdout that CloudWatch Logs turns into metrics, so a pass makes
// no CloudWatch API call (and needs no cloudwatch:PutMetricData right). This module only decides WHAT
// is counted; Powertools writes the documents.
//
// Names follow Karpenter's where the meaning is the same, so dashboards and alerts carry over:
//   karpenter_voluntary_disruption_decisions_total{decision,reason,consolidation_type,dry_run}
//   karpenter_voluntary_disruption_eligible_nodes{reason}
//   karpenter_nodepools_allowed_disruptions{nodepool,reason}
//   karpenter_consolidation_threshold_blocked_total{nodepool}
//   karpenter_consolidation_score{decision,nodepool,policy}, karpenter_consolidation_moves_total{...}
//       (Balanced pools, see balanced.ts)
// and ours:
//   eks_consolidator_pass_duration_seconds{function}
//   eks_consolidator_pass_skipped_total{function,reason}     (lease held by another pass)
//   eks_consolidator_pass_errors_total{function}
//   eks_consolidator_disruption_commands_ended_total{method,outcome}
//   eks_consolidator_orphaned_taints_removed_total
// Every metric also carries Powertools' `service` dimension (`eks-consolidator`) and `cluster`.
// Decisions carry `dry_run`: a dry run's decisions were planned, not carried out, and must not be
// summed with real ones.
//
// Cardinality is bounded: every dimension is an enumeration except `nodepool` (one series per pool,
// at most MAX_NODEPOOL_SERIES pools per pass) and `cluster` (one per deployment). Pod, node and
// instance names never become dimensions.
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { budgetAllowance } from '../../core/disruption/budgets.ts';
import type { DisruptionReason, NodePool } from '../../core/model/types.ts';
import type { ExecutionReport } from '../act/types.ts';
import { scoreMetrics } from './balanced.ts';
import type { PassResult, PassScope } from '../runPass.ts';

export const METRICS_NAMESPACE = 'EksConsolidator';
/** Powertools' `service` dimension and log field. */
export const SERVICE_NAME = 'eks-consolidator';
/** Pools with a series of their own per pass; a cluster with more reports the first ones by name. */
export const MAX_NODEPOOL_SERIES = 50;

export type MetricUnitName = 'Count' | 'Seconds' | 'None';

export interface MetricDatum {
  readonly name: string;
  readonly unit: MetricUnitName;
  readonly value: number;
  readonly dimensions: Readonly<Record<string, string>>;
  /** Each value is kept (an EMF value list, CloudWatch statistics over them) instead of summed. */
  readonly distribution?: boolean;
}

const UNITS: Record<MetricUnitName, (typeof MetricUnit)[keyof typeof MetricUnit]> = {
  Count: MetricUnit.Count,
  Seconds: MetricUnit.Seconds,
  None: MetricUnit.NoUnit,
};

/**
 * Publishes data points through Powertools: values of the same metric and dimensions are added up
 * first (distributions are not: each value is its own data point, so CloudWatch's statistics see
 * them all), then each (metric, dimensions) goes out as one single-metric EMF document with the
 * instance's default dimensions (`service`, `cluster`) plus its own. Data without dimensions of its
 * own is stored on `metrics` and leaves with the `logMetrics` middleware's flush.
 */
export function publishMetrics(metrics: Metrics, data: readonly MetricDatum[]): void {
  const sums = new Map<string, MetricDatum>();
  const distributions: MetricDatum[] = [];
  for (const datum of data) {
    if (datum.distribution) {
      distributions.push(datum);
      continue;
    }
    const keys = Object.keys(datum.dimensions).sort();
    const key = JSON.stringify([datum.name, keys.map((k) => [k, datum.dimensions[k]])]);
    const previous = sums.get(key);
    sums.set(key, previous === undefined ? datum : { ...previous, value: previous.value + datum.value });
  }
  for (const datum of [...sums.values(), ...distributions]) {
    if (Object.keys(datum.dimensions).length === 0 && !datum.distribution) {
      metrics.addMetric(datum.name, UNITS[datum.unit], datum.value);
      continue;
    }
    // A single-metric instance publishes its document at once, so values never add up.
    const single = metrics.singleMetric();
    single.addDimensions({ ...datum.dimensions });
    single.addMetric(datum.name, UNITS[datum.unit], datum.value);
  }
}

/** The pools a scope owns (the same rule as runPass: the emptiness function owns `WhenEmpty` pools). */
export function poolInScope(scope: PassScope, pool: NodePool): boolean {
  return scope === 'all' || (scope === 'emptiness') === (pool.consolidationPolicy === 'WhenEmpty');
}

const CONSOLIDATION_TYPE = { emptiness: 'empty', 'single-node': 'single', 'multi-node': 'multi' } as const;
const BUDGET_REASONS: readonly DisruptionReason[] = ['Empty', 'Underutilized'];
const THRESHOLD_BLOCKED = /below required [\d.]+ cents\/hr/;

/** Karpenter's label values are lower case (`underutilized`, `empty`, `drifted`). */
const reasonLabel = (reason: string): string => reason.toLowerCase();

/**
 * Whether a plan reason says the savings threshold (Karpenter's savings-threshold design) blocked the
 * node's consolidation.
 */
export function isThresholdBlocked(reason: string): boolean {
  return THRESHOLD_BLOCKED.test(reason);
}

/** The Karpenter-named metrics of one pass that took the lease (or was a dry run). */
export function passMetrics(result: PassResult, scope: PassScope, nowMs: number): MetricDatum[] {
  const data: MetricDatum[] = [];
  const dryRun = String(result.plan.dryRun);

  for (const decision of result.plan.decisions) {
    data.push({
      name: 'karpenter_voluntary_disruption_decisions_total',
      unit: 'Count',
      value: 1,
      dimensions: {
        decision: decision.action,
        reason: reasonLabel(decision.reason),
        consolidation_type: CONSOLIDATION_TYPE[decision.method],
        dry_run: dryRun,
      },
    });
  }

  const outcome = result.outcome;
  if (outcome !== undefined) {
    let empty = 0;
    let underutilized = 0;
    for (const verdict of outcome.verdicts) {
      const candidate = verdict.candidate;
      if (candidate === undefined || !outcome.evaluated.has(verdict.node.name)) continue;
      if (candidate.methods.has('emptiness') && candidate.pods.length === 0) empty += 1;
      if (candidate.methods.has('single-node') || candidate.methods.has('multi-node')) underutilized += 1;
    }
    const eligible = (reason: string, value: number): MetricDatum => ({
      name: 'karpenter_voluntary_disruption_eligible_nodes',
      unit: 'Count',
      value,
      dimensions: { reason },
    });
    data.push(eligible('empty', empty));
    if (scope !== 'emptiness') data.push(eligible('underutilized', underutilized));
  }

  const pools = (result.nodePools ?? [])
    .filter((pool) => poolInScope(scope, pool))
    .sort((a, b) => a.name.localeCompare(b.name))
    .slice(0, MAX_NODEPOOL_SERIES);
  const cluster = result.cluster;
  const inFlight = new Set(
    result.state.commands.filter((c) => c.step !== 'done' && c.step !== 'rolledBack').flatMap((c) => c.nodes),
  );
  for (const pool of pools) {
    if (cluster !== undefined) {
      const poolNodes = cluster.nodes.filter((n) => n.nodePool === pool.name);
      for (const reason of BUDGET_REASONS) {
        if (scope === 'emptiness' && reason !== 'Empty') continue;
        data.push({
          name: 'karpenter_nodepools_allowed_disruptions',
          unit: 'Count',
          value: budgetAllowance(pool, poolNodes, reason, nowMs, inFlight).allowed,
          dimensions: { nodepool: pool.name, reason: reasonLabel(reason) },
        });
      }
    }
    const blocked = result.plan.nodes.filter((n) => n.nodePool === pool.name && n.reasons.some(isThresholdBlocked)).length;
    data.push({ name: 'karpenter_consolidation_threshold_blocked_total', unit: 'Count', value: blocked, dimensions: { nodepool: pool.name } });
  }
  data.push(...scoreMetrics(result.plan));
  return data;
}

/**
 * What the actuator's commands came to in this invocation, by outcome: `done`, `rolled_back` (the
 * replacement could not be used), `abandoned` (a drain without progress was given up after
 * DRAIN_TIMEOUT_SECONDS), plus taints removed because no command owned them any more. Bounded
 * cardinality: one series per outcome and method.
 */
export function actionMetrics(report: ExecutionReport | undefined): MetricDatum[] {
  // An injected actuator (tests, a custom one) may report something else: nothing to count then.
  if (report === undefined || !Array.isArray(report.commands)) return [];
  const data: MetricDatum[] = [];
  const outcome = { done: 'done', rolledBack: 'rolled_back', abandoned: 'abandoned' } as const;
  const counts = new Map<string, { method: string; outcome: string; n: number }>();
  for (const command of report.commands) {
    const o = outcome[command.step as keyof typeof outcome];
    if (o === undefined || command.from === command.step) continue;
    const key = `${command.method}/${o}`;
    const entry = counts.get(key) ?? { method: command.method, outcome: o, n: 0 };
    entry.n += 1;
    counts.set(key, entry);
  }
  for (const { method, outcome: o, n } of counts.values()) {
    data.push({ name: 'eks_consolidator_disruption_commands_ended_total', unit: 'Count', value: n, dimensions: { method, outcome: o } });
  }
  const cleaned = report.cleanedTaints?.length ?? 0;
  if (cleaned > 0) data.push({ name: 'eks_consolidator_orphaned_taints_removed_total', unit: 'Count', value: cleaned, dimensions: {} });
  return data;
}
