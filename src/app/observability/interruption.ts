// The interruption function's metrics (EMF through metrics.ts's publishMetrics, with the `service`
// and `cluster` dimensions like every other):
//   eks_consolidator_interruption_messages_total{kind,outcome}   one per instance a notice names
//   eks_consolidator_interruption_nodes_tainted_total{kind}      nodes newly tainted and cordoned
//   eks_consolidator_interruption_pods_evicted_total{kind}       pods evicted through the Eviction API
//   eks_consolidator_interruption_pods_blocked_total{kind}       pods still refused at the deadline
// `kind` and `outcome` are enumerations (below), so cardinality stays bounded; instance, node and pod
// names only go to the logs.
import type { NoticeKind } from '../../core/interruption/notice.ts';
import type { InstanceOutcome, InterruptionReport } from '../interruption/respond.ts';
import type { MetricDatum } from './metrics.ts';

const KIND: Record<NoticeKind, string> = {
  spotInterruption: 'spot_interruption',
  rebalanceRecommendation: 'rebalance_recommendation',
  scheduledChange: 'scheduled_change',
  stateChange: 'state_change',
};

const OUTCOME: Record<InstanceOutcome, string> = {
  acted: 'acted',
  dryRun: 'dry_run',
  notOurs: 'not_ours',
  unknownInstance: 'unknown_instance',
  instanceGone: 'instance_gone',
  noNode: 'no_node',
  noAction: 'no_action',
};

/** Outcomes that never reached an instance: an event this function cannot read, or a deployment with nothing to do. */
export type SkippedOutcome = 'unrecognised' | 'karpenter_actuator';

export function interruptionMetrics(report: InterruptionReport): MetricDatum[] {
  const kind = KIND[report.notice.kind];
  const data: MetricDatum[] = [];
  for (const instance of report.instances) {
    const outcome = instance.error === undefined ? OUTCOME[instance.outcome] : 'error';
    data.push({ name: 'eks_consolidator_interruption_messages_total', unit: 'Count', value: 1, dimensions: { kind, outcome } });
    if (instance.taint === 'tainted') data.push({ name: 'eks_consolidator_interruption_nodes_tainted_total', unit: 'Count', value: 1, dimensions: { kind } });
    if (instance.evicted > 0) data.push({ name: 'eks_consolidator_interruption_pods_evicted_total', unit: 'Count', value: instance.evicted, dimensions: { kind } });
    if (instance.blocked.length > 0) {
      data.push({ name: 'eks_consolidator_interruption_pods_blocked_total', unit: 'Count', value: instance.blocked.length, dimensions: { kind } });
    }
  }
  return data;
}

export function skippedInterruptionMetrics(outcome: SkippedOutcome, kind?: NoticeKind): MetricDatum[] {
  return [{ name: 'eks_consolidator_interruption_messages_total', unit: 'Count', value: 1, dimensions: { kind: kind === undefined ? 'unknown' : KIND[kind], outcome } }];
}
