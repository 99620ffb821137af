// Karpenter's `disrupting node(s)` fields, built from a decision.
import { describe, expect, it } from 'vitest';
import { disruptingNodesFields } from '../../src/app/observability/disruptionLog.ts';
import type { Decision, PlannedReplacement } from '../../src/core/plan.ts';
import { node } from '../builders.ts';

const replacement = (instanceTypes: string[]): PlannedReplacement => ({
  instanceTypes,
  capacityType: 'spot',
  zones: ['us-east-1a'],
  pricePerHour: 0.05,
  nodePool: 'default',
  worstPricePerHour: 0.06,
});

const decision = (extra: Partial<Decision>): Decision => ({
  method: 'single-node',
  reason: 'Underutilized',
  action: 'replace',
  nodes: ['n1'],
  replacements: [replacement(['m5.large'])],
  currentPricePerHour: 0.2,
  replacementPricePerHour: 0.05,
  savingsPerHour: 0.15,
  disruptionCost: 1,
  evictedPods: ['a/p1', 'a/p2'],
  ...extra,
});

describe('disrupting node(s)', () => {
  it('carries the counts, the disrupted nodes with type and capacity, and the replacement', () => {
    const n1 = node({ name: 'n1', instanceType: 'm5.xlarge', capacityType: 'on-demand' });
    expect(disruptingNodesFields('cmd-1', decision({}), [n1])).toEqual({
      'command-id': 'cmd-1',
      reason: 'underutilized',
      decision: 'replace',
      'disrupted-node-count': 1,
      'replacement-node-count': 1,
      'pod-count': 2,
      'disrupted-nodes': [{ Node: { name: 'n1' }, 'instance-type': 'm5.xlarge', 'capacity-type': 'on-demand' }],
      'replacement-nodes': [{ 'capacity-type': 'spot', 'instance-types': 'm5.large' }],
    });
  });

  it.each([
    [['a', 'b', 'c'], 'a, b, c'],
    [['a', 'b', 'c', 'd', 'e'], 'a, b, c, d, e'],
    [['a', 'b', 'c', 'd', 'e', 'f', 'g'], 'a, b, c, d, e and 2 other(s)'],
  ])('lists instance types %j as Karpenter does: %s', (types, text) => {
    const fields = disruptingNodesFields('c', decision({ replacements: [replacement(types)] }), [undefined]);
    expect(fields['replacement-nodes']).toEqual([{ 'capacity-type': 'spot', 'instance-types': text }]);
  });

  it('several replacements: no type list; an unknown node: its name only', () => {
    const fields = disruptingNodesFields('c', decision({ nodes: ['n1', 'n2'], replacements: [replacement(['x']), replacement(['y'])] }), [undefined, undefined]);
    expect(fields['replacement-nodes']).toEqual([{ 'capacity-type': 'spot' }, { 'capacity-type': 'spot' }]);
    expect(fields['disrupted-nodes']).toEqual([{ Node: { name: 'n1' } }, { Node: { name: 'n2' } }]);
  });

  it('an empty-node delete says reason empty and has no replacement', () => {
    const fields = disruptingNodesFields('c', decision({ method: 'emptiness', reason: 'Empty', action: 'delete', replacements: [], evictedPods: [] }), [undefined]);
    expect(fields).toMatchObject({ reason: 'empty', decision: 'delete', 'replacement-node-count': 0, 'pod-count': 0, 'replacement-nodes': [] });
  });
});
