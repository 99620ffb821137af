import { describe, expect, it } from 'vitest';
import type { CommandReport } from '../../src/app/act/types.ts';
import { actionMetrics, MAX_NODEPOOL_SERIES, passMetrics } from '../../src/app/observability/metrics.ts';
import type { PassResult } from '../../src/app/runPass.ts';
import { nodePool } from '../builders.ts';

function command(step: CommandReport['step'], method: CommandReport['method'] = 'single-node'): CommandReport {
  return { id: `c-${step}`, nodes: ['n'], method, action: 'delete', from: 'evicting', step, evicted: 0, blocked: 0, remainingPods: 0, terminatedInstances: [], errors: [] };
}

describe('actionMetrics', () => {
  it('counts commands that ended, by method and outcome, and removed taints', () => {
    const data = actionMetrics({
      commands: [command('done'), command('done'), command('abandoned'), command('rolledBack', 'multi-node'), command('evicting')],
      skipped: [],
      errors: [],
      cleanedTaints: ['a', 'b'],
    });
    expect(data).toEqual([
      { name: 'eks_consolidator_disruption_commands_ended_total', unit: 'Count', value: 2, dimensions: { method: 'single-node', outcome: 'done' } },
      { name: 'eks_consolidator_disruption_commands_ended_total', unit: 'Count', value: 1, dimensions: { method: 'single-node', outcome: 'abandoned' } },
      { name: 'eks_consolidator_disruption_commands_ended_total', unit: 'Count', value: 1, dimensions: { method: 'multi-node', outcome: 'rolled_back' } },
      { name: 'eks_consolidator_orphaned_taints_removed_total', unit: 'Count', value: 2, dimensions: {} },
    ]);
  });

  it('says nothing for a dry run', () => {
    expect(actionMetrics(undefined)).toEqual([]);
  });
});

describe('passMetrics cardinality', () => {
  it.each([
    ['3 pools', 3, 3],
    ['exactly the cap', MAX_NODEPOOL_SERIES, MAX_NODEPOOL_SERIES],
    ['more pools than the cap', MAX_NODEPOOL_SERIES + 12, MAX_NODEPOOL_SERIES],
  ])('%s: one nodepool series each, at most MAX_NODEPOOL_SERIES, the first by name', (_name, pools, series) => {
    const nodePools = Array.from({ length: pools }, (_, i) => nodePool({ name: `pool-${String(pools - i).padStart(3, '0')}` }));
    const result = { leaseAcquired: true, plan: { dryRun: true, evaluatedAt: '', decisions: [], nodes: [] }, state: { nodes: {}, cluster: { version: 0 }, commands: [] }, nodePools } as unknown as PassResult;
    const blocked = passMetrics(result, 'all', 0).filter((d) => d.name === 'karpenter_consolidation_threshold_blocked_total');
    expect(blocked).toHaveLength(series);
    const names = blocked.map((d) => d.dimensions['nodepool']);
    expect(names).toEqual([...names].sort());
    expect(names[0]).toBe('pool-001');
  });
});
