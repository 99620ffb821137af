import { describe, expect, it } from 'vitest';
import type { CommandReport } from '../../src/app/act/types.ts';
import { actionMetrics } from '../../src/app/observability/metrics.ts';

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
