// CloudWatch metrics in the Embedded Metric Format: JSON lines on stdout that CloudWatch Logs turns into
// metrics, so a pass makes no CloudWatch API call (and needs no cloudwatch:PutMetricData right).
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
//
// Names follow Karpenter's where the meaning is the same, so dashboards and alerts carry over:
//   karpenter_voluntary_disruption_decisions_total{decision,reason,consolidation_type}
//   karpenter_voluntary_disruption_eligible_nodes{reason}
//   karpenter_nodepools_allowed_disruptions{nodepool,reason}
//   karpenter_consolidation_threshold_blocked_total{nodepool}
//   karpenter_consolidation_score{decision,nodepool,policy}, karpenter_consolidation_moves_total{...}
//       (Balanced pools, see balanced.ts)
// and ours:
//   eks_consolidator_pass_duration_seconds{function}
//   eks_consolidator_pass_skipped_total{function,reason}     (lease held by another pass)
//   eks_consolidator_pass_errors_total{function}
// Every metric also carries the `cluster` dimension. Decisions carry `dry_run` too: a dry run's decisions
// were planned, not carried out, and must not be summed with real ones.
import { budgetAllowance } from '../../core/disruption/budgets.ts';
import type { DisruptionReason, NodePool } from '../../core/model/types.ts';
import type { ExecutionReport } from '../act/types.ts';
import { scoreMetrics } from './balanced.ts';
import type { PassResult, PassScope } from '../runPass.ts';
import type { LineSink } from './logger.ts';

export const METRICS_NAMESPACE = 'EksConsolidator';

export type MetricUnit = 'Count' | 'Seconds' | 'None';

export interface MetricDatum {
  readonly name: string;
  readonly unit: MetricUnit;
  readonly value: number;
  readonly dimensions: Readonly<Record<string, string>>;
  /** Each value is kept (an EMF value list, CloudWatch statistics over them) instead of summed. */
  readonly distribution?: boolean;
}

/** EMF takes at most 100 values for one metric in one document. */
const MAX_EMF_VALUES = 100;

/**
 * EMF documents for the data: one line per distinct set of dimension values, holding every metric that
 * shares it (values of the same metric and dimensions are added up).
 */
export function emfLines(data: readonly MetricDatum[], timestampMs: number, namespace: string = METRICS_NAMESPACE): string[] {
  const groups = new Map<string, { dimensions: Record<string, string>; metrics: Map<string, { unit: MetricUnit; value: number }> }>();
  const distributions: MetricDatum[] = [];
  for (const datum of data) {
    if (datum.distribution) {
      distributions.push(datum);
      continue;
    }
    const keys = Object.keys(datum.dimensions).sort();
    const groupKey = JSON.stringify(keys.map((k) => [k, datum.dimensions[k]]));
    let group = groups.get(groupKey);
    if (group === undefined) {
      group = { dimensions: Object.fromEntries(keys.map((k) => [k, datum.dimensions[k]!])), metrics: new Map() };
      groups.set(groupKey, group);
    }
    const existing = group.metrics.get(datum.name);
    group.metrics.set(datum.name, { unit: datum.unit, value: (existing?.value ?? 0) + datum.value });
  }
  const lines: string[] = [];
  for (const { dimensions, metrics } of groups.values()) {
    const names = [...metrics.keys()];
    // EMF allows at most 100 metrics per document.
    for (let i = 0; i < names.length; i += 100) {
      const chunk = names.slice(i, i + 100);
      const document: Record<string, unknown> = {
        _aws: {
          Timestamp: timestampMs,
          CloudWatchMetrics: [
            {
              Namespace: namespace,
              Dimensions: [Object.keys(dimensions)],
              Metrics: chunk.map((name) => ({ Name: name, Unit: metrics.get(name)!.unit })),
            },
          ],
        },
        ...dimensions,
      };
      for (const name of chunk) document[name] = metrics.get(name)!.value;
      lines.push(JSON.stringify(document));
    }
  }
  return [...lines, ...distributionLines(distributions, timestampMs, namespace)];
}

/** One document per metric and set of dimension values, holding its values (split by 100). */
function distributionLines(data: readonly MetricDatum[], timestampMs: number, namespace: string): string[] {
  const series = new Map<string, { datum: MetricDatum; values: number[] }>();
  for (const datum of data) {
    const keys = Object.keys(datum.dimensions).sort();
    const key = JSON.stringify([datum.name, ...keys.map((k) => [k, datum.dimensions[k]])]);
    const entry = series.get(key) ?? { datum, values: [] };
    entry.values.push(datum.value);
    series.set(key, entry);
  }
  const lines: string[] = [];
  for (const { datum, values } of series.values()) {
    const keys = Object.keys(datum.dimensions).sort();
    const dimensions = Object.fromEntries(keys.map((k) => [k, datum.dimensions[k]!]));
    for (let i = 0; i < values.length; i += MAX_EMF_VALUES) {
      lines.push(
        JSON.stringify({
          _aws: { Timestamp: timestampMs, CloudWatchMetrics: [{ Namespace: namespace, Dimensions: [keys], Metrics: [{ Name: datum.name, Unit: datum.unit }] }] },
          ...dimensions,
          [datum.name]: values.slice(i, i + MAX_EMF_VALUES),
        }),
      );
    }
  }
  return lines;
}

/** Collects data points during an invocation and prints them as EMF lines at the end. */
export class MetricsRecorder {
  private readonly data: MetricDatum[] = [];

  constructor(
    private readonly sink: LineSink,
    /** Added to every datum, e.g. `{ cluster }`. */
    private readonly baseDimensions: Readonly<Record<string, string>> = {},
  ) {}

  add(name: string, unit: MetricUnit, value: number, dimensions: Readonly<Record<string, string>> = {}, distribution = false): void {
    this.data.push({ name, unit, value, dimensions: { ...this.baseDimensions, ...dimensions }, ...(distribution ? { distribution } : {}) });
  }

  addAll(data: readonly MetricDatum[]): void {
    for (const d of data) this.add(d.name, d.unit, d.value, d.dimensions, d.distribution ?? false);
  }

  /** Prints everything recorded so far and forgets it. */
  flush(timestampMs: number): void {
    const lines = emfLines(this.data.splice(0), timestampMs);
    for (const line of lines) this.sink(line);
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

/** Whether a plan reason says the savings threshold (seed 003) blocked the node's consolidation. */
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

  const pools = (result.nodePools ?? []).filter((pool) => poolInScope(scope, pool));
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
 * replacement could not be used), `abandoned` (a drain without progress was given up, issue "Safe to
 * act" item 6), plus taints removed because no command owned them any more. Bounded cardinality: one
 * series per outcome and method.
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
