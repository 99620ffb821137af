// minValues (docs/nodepools.md, "What the fields do"): distinct values per key across a launch's
// instance types.
import { describe, expect, it } from 'vitest';
import { cheapestMeetingMinValues, minValuesShortfall } from '../../src/core/disruption/minValues.ts';
import type { Requirement } from '../../src/core/model/types.ts';
import type { NewNodeOption } from '../../src/core/scheduling/types.ts';

const option = (name: string, family: string, zones: string[], price: number): NewNodeOption => ({
  instanceType: { name, capacity: {}, allocatable: {}, labels: { 'karpenter.k8s.aws/instance-family': family }, offerings: [] },
  offerings: zones.map((zone) => ({ zone, capacityType: 'on-demand', pricePerHour: price, available: true })),
  cheapestPricePerHour: price,
});
const OPTIONS = [option('c5.large', 'c5', ['a'], 1), option('c5.xlarge', 'c5', ['a', 'b'], 2), option('m5.large', 'm5', ['c'], 3)];
const min = (key: string, minValues: number, operator: Requirement['operator'] = 'Exists'): Requirement => ({ key, operator, values: [], minValues });

describe('minValuesShortfall', () => {
  it.each([
    ['no minValues', [], undefined],
    ['families: 2 of 2 needed', [min('karpenter.k8s.aws/instance-family', 2)], undefined],
    ['families: 2 of 3 needed', [min('karpenter.k8s.aws/instance-family', 3)], { key: 'karpenter.k8s.aws/instance-family', minValues: 3, found: 2 }],
    ['instance types counted by name', [min('node.kubernetes.io/instance-type', 4)], { key: 'node.kubernetes.io/instance-type', minValues: 4, found: 3 }],
    ['zones counted from offerings', [min('topology.kubernetes.io/zone', 3)], undefined],
    ['a repeated key keeps the larger minValues', [min('karpenter.k8s.aws/instance-family', 1), min('karpenter.k8s.aws/instance-family', 3, 'In')], { key: 'karpenter.k8s.aws/instance-family', minValues: 3, found: 2 }],
    ['a key no type carries', [min('example.org/gpu', 1)], { key: 'example.org/gpu', minValues: 1, found: 0 }],
  ])('%s', (_name, requirements, expected) => {
    expect(minValuesShortfall(requirements as Requirement[], OPTIONS)).toEqual(expected);
  });
});

describe('cheapestMeetingMinValues', () => {
  it.each([
    ['none asked: nothing to keep', [], 0],
    ['two families: the cheapest three types (c5, c5, m5)', [min('karpenter.k8s.aws/instance-family', 2)], 3],
    ['two zones: the cheapest two types', [min('topology.kubernetes.io/zone', 2)], 2],
    ['more than there are: none', [min('karpenter.k8s.aws/instance-family', 3)], undefined],
  ])('%s', (_name, requirements, expected) => {
    expect(cheapestMeetingMinValues(requirements as Requirement[], OPTIONS)).toBe(expected);
  });
});
