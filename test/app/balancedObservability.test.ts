// Balanced scores in the metrics (karpenter_consolidation_score, karpenter_consolidation_moves_total)
// and in the node events (ConsolidationApproved / ConsolidationRejected), from a real pass's plan.
import { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { scoreEvents, scoreMetrics } from '../../src/app/observability/balanced.ts';
import { nodeEventsFor } from '../../src/app/observability/events.ts';
import { publishMetrics, METRICS_NAMESPACE, passMetrics } from '../../src/app/observability/metrics.ts';
import type { PassResult } from '../../src/app/runPass.ts';
import { buildPlan } from '../../src/core/buildPlan.ts';
import { runConsolidationPass } from '../../src/core/disruption/pass.ts';
import { indexCatalog } from '../../src/core/disruption/prices.ts';
import { goDurationOrNull } from '../../src/core/input/duration.ts';
import type { NodePool, Pod } from '../../src/core/model/types.ts';
import { cluster, m5Catalog, Mi, node, nodePool, on, pod, T0 } from '../builders.ts';
import { captureStdout } from '../support/stdout.ts';

const xlarge = (name: string, pool: string) => node({ name, nodePool: pool, instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14162 * Mi, pods: 58 } });
/** Pods that may only run in `pool` (so neither pool's pods spill into the other). */
const pods = (n: number, cpu: number, pool: string): Pod[] =>
  Array.from({ length: n }, () => pod({ requests: { cpu, memory: 256 * Mi }, nodeSelector: { 'karpenter.sh/nodepool': pool } }));
const pinned = (): Pod => pod({ requests: { cpu: 1750, memory: 256 * Mi }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });

/**
 * Two Balanced pools shaped alike: in `go`, node g1 moves 1 pod for 16.7% of the pool's cost (score
 * 0.67, approved); in `stay`, node s1 moves 3 pods for the same (score 0.42, rejected).
 */
function result(dryRun: boolean): PassResult {
  const pools: NodePool[] = ['go', 'stay'].map((name) => nodePool({ name, consolidationPolicy: 'Balanced' }));
  const c = cluster({
    nodes: ['go', 'stay'].flatMap((p) => [1, 2, 3].map((i) => xlarge(`${p[0]}${i}`, p))),
    pods: [
      ...on('g1', ...pods(1, 1500, 'go')),
      ...on('s1', ...pods(3, 500, 'stay')),
      ...['g2', 'g3', 's2', 's3'].flatMap((n) => on(n, pinned(), pinned())),
    ],
  });
  const catalog = m5Catalog();
  const outcome = runConsolidationPass({ cluster: c, nodePools: pools, catalog, nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: goDurationOrNull });
  const plan = buildPlan(outcome, { nowMs: T0, dryRun, prices: indexCatalog(catalog) });
  return { plan, leaseAcquired: true, outcome, state: { nodes: {}, cluster: { version: 0 }, commands: [] } as never, cluster: c, nodePools: pools, catalog };
}

describe('karpenter_consolidation_score and karpenter_consolidation_moves_total', () => {
  it('one data point per scored pool of a move, labelled approved or rejected', () => {
    const data = scoreMetrics(result(true).plan);
    const scores = data.filter((d) => d.name === 'karpenter_consolidation_score');
    expect(scores.map((d) => [d.dimensions['nodepool'], d.dimensions['decision'], d.value, d.distribution])).toEqual([
      ['go', 'approved', 0.6667, true],
      ['stay', 'rejected', 0.4167, true],
    ]);
    expect(scores.every((d) => d.dimensions['policy'] === 'Balanced' && d.dimensions['dry_run'] === 'true')).toBe(true);
    const moves = data.filter((d) => d.name === 'karpenter_consolidation_moves_total');
    expect(moves.map((d) => [d.dimensions['nodepool'], d.dimensions['decision'], d.value])).toEqual([
      ['go', 'approved', 1],
      ['stay', 'rejected', 1],
    ]);
  });

  it('are part of the pass metrics', () => {
    const names = new Set(passMetrics(result(false), 'consolidation', T0).map((d) => d.name));
    expect(names).toContain('karpenter_consolidation_score');
    expect(names).toContain('karpenter_consolidation_moves_total');
  });

  /** What publishMetrics prints through Powertools, as parsed EMF documents. */
  function published(data: Parameters<typeof publishMetrics>[1]): Record<string, unknown>[] {
    const lines: string[] = [];
    const release = captureStdout(lines);
    try {
      const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'eks-consolidator', defaultDimensions: { cluster: 'c' } });
      publishMetrics(metrics, data);
      metrics.publishStoredMetrics();
    } finally {
      release();
    }
    // Powertools also warns when nothing is left for the final flush: only EMF documents count.
    return lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>).filter((d) => '_aws' in d);
  }

  it('each score is its own data point in EMF, never summed; counts still add up', () => {
    const dims = { nodepool: 'p', decision: 'rejected' };
    const docs = published([
      { name: 'karpenter_consolidation_score', unit: 'None', value: 0.25, dimensions: dims, distribution: true },
      { name: 'karpenter_consolidation_score', unit: 'None', value: 0.4, dimensions: dims, distribution: true },
      { name: 'karpenter_consolidation_moves_total', unit: 'Count', value: 1, dimensions: dims },
      { name: 'karpenter_consolidation_moves_total', unit: 'Count', value: 1, dimensions: dims },
    ]);
    const scores = docs.filter((d) => 'karpenter_consolidation_score' in d);
    expect(scores.map((d) => d['karpenter_consolidation_score'])).toEqual([0.25, 0.4]);
    expect(scores[0]).toMatchObject({ nodepool: 'p', decision: 'rejected', cluster: 'c' });
    expect(docs.filter((d) => 'karpenter_consolidation_moves_total' in d).map((d) => d['karpenter_consolidation_moves_total'])).toEqual([2]);
  });

  it('many scores of one series all reach CloudWatch (one document each, none dropped)', () => {
    const data = Array.from({ length: 250 }, (_, i) => ({ name: 's', unit: 'None' as const, value: i, dimensions: { nodepool: 'p' }, distribution: true }));
    const docs = published(data);
    expect(docs.map((d) => d['s'])).toEqual(data.map((d) => d.value));
  });
});

describe('ConsolidationApproved / ConsolidationRejected events', () => {
  it("carry Karpenter's message: the score, the threshold, k and both fractions", () => {
    const events = scoreEvents(result(false).plan, () => true);
    expect(events).toEqual([
      { nodeName: 'g1', reason: 'ConsolidationApproved', type: 'Normal', message: 'score 0.67 >= threshold 0.50 (k: 2, savings 16.7%, disruption 25.0%)' },
      { nodeName: 's1', reason: 'ConsolidationRejected', type: 'Normal', message: 'score 0.42 < threshold 0.50 (k: 2, savings 16.7%, disruption 40.0%)' },
    ]);
  });

  it('come first among the node events, and the refused node gets no second Unconsolidatable saying the same', () => {
    const events = nodeEventsFor(result(false), 'consolidation');
    expect(events.slice(0, 2).map((e) => [e.nodeName, e.reason])).toEqual([
      ['g1', 'ConsolidationApproved'],
      ['s1', 'ConsolidationRejected'],
    ]);
    expect(events.filter((e) => e.nodeName === 's1').map((e) => e.reason)).toEqual(['ConsolidationRejected']);
  });

  it('the emptiness function, which does not own Balanced pools, sends none', () => {
    expect(nodeEventsFor(result(false), 'emptiness').filter((e) => e.reason.startsWith('Consolidation'))).toEqual([]);
  });
});
