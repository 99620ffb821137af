import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../src/core/disruption/candidates.ts';
import { nodeDisruptionCost } from '../../src/core/disruption/disruptionCost.ts';
import { chooseReplacement } from '../../src/core/disruption/replacement.ts';
import { restrictCapacityType } from '../../src/core/disruption/prices.ts';
import type { CapacityType, InstanceType } from '../../src/core/model/types.ts';
import type { NewNodeOption, NewNodePlan } from '../../src/core/scheduling/types.ts';
import { instanceType, node, nodePool, pod, T0 } from '../builders.ts';

const off = { spotToSpotConsolidation: false };
const on = { spotToSpotConsolidation: true };

function candidate(name: string, pricePerHour: number | undefined, capacityType: CapacityType = 'on-demand', threshold = 0, pods = 3): Candidate {
  const n = node({ name, capacityType, instanceType: 'm5.2xlarge' });
  const pool = nodePool({ savingsThresholdCents: threshold });
  const list = Array.from({ length: pods }, () => pod());
  return { node: n, pool, pricePerHour, pods: list, disruptionCost: nodeDisruptionCost(n, list, pool, T0), methods: new Set(['single-node']) };
}

function option(type: InstanceType): NewNodeOption {
  const offerings = [...type.offerings].sort((a, b) => a.pricePerHour - b.pricePerHour);
  return { instanceType: type, offerings, cheapestPricePerHour: offerings[0]!.pricePerHour };
}

function plan(types: InstanceType[]): NewNodePlan {
  return { nodePool: 'default', pods: [], options: types.map(option).sort((a, b) => a.cheapestPricePerHour - b.cheapestPricePerHour), requirements: [] };
}

const mk = (name: string, od: number, spot?: number, zones?: string[]) =>
  instanceType(name, { cpu: 4000, memory: 16 * 2 ** 30, pods: 58 }, od, { spotPricePerHour: spot, zones });

describe('choosing a replacement', () => {
  it('saves nothing when the new node costs what the nodes cost together, whatever float sums say', () => {
    // 0.1 + 0.1 + 0.4 is 0.6000000000000001 in floating point: a $0.6 node is not cheaper.
    const nodes = [candidate('a', 0.1), candidate('b', 0.1), candidate('c', 0.4)];
    const choice = chooseReplacement(nodes, plan([mk('same-price', 0.6)]), off);
    expect(choice.ok).toBe(false);
    if (choice.ok) return;
    expect(choice.reason).toMatch(/^no cheaper replacement/);
    expect(chooseReplacement(nodes, plan([mk('a-cent-less', 0.59)]), off).ok).toBe(true);
  });

  it('keeps only types cheaper than the node, cheapest first, priced by the cheapest allowed offering', () => {
    const choice = chooseReplacement([candidate('a', 0.384)], plan([mk('m5.4xlarge', 0.768), mk('m5.xlarge', 0.192), mk('m5.large', 0.096)]), off);
    expect(choice.ok).toBe(true);
    if (!choice.ok) return;
    expect(choice.replacement.instanceTypes).toEqual(['m5.large', 'm5.xlarge']);
    expect(choice.replacement.pricePerHour).toBe(0.096);
    expect(choice.replacement.capacityType).toBe('on-demand');
    expect(choice.replacement.zones).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c']);
  });

  it('never replaces with something that costs the same', () => {
    const choice = chooseReplacement([candidate('a', 0.192)], plan([mk('m5.xlarge', 0.192)]), off);
    expect(choice.ok).toBe(false);
    if (!choice.ok) expect(choice.reason).toMatch(/no cheaper replacement/);
  });

  it('judges a type by its dearest allowed offering, not its cheapest', () => {
    // a zone where the type costs more than the node means the launch could end up dearer
    const uneven: InstanceType = { ...mk('x', 0.1), offerings: [
      { zone: 'us-east-1a', capacityType: 'on-demand', pricePerHour: 0.1, available: true },
      { zone: 'us-east-1b', capacityType: 'on-demand', pricePerHour: 0.3, available: true },
    ] };
    expect(chooseReplacement([candidate('a', 0.2)], plan([uneven]), off).ok).toBe(false);
    expect(chooseReplacement([candidate('a', 0.31)], plan([uneven]), off).ok).toBe(true);
  });

  it('a node of unknown price is never replaced', () => {
    const choice = chooseReplacement([candidate('a', undefined)], plan([mk('m5.large', 0.096)]), off);
    expect(choice).toMatchObject({ ok: false });
    if (!choice.ok) expect(choice.reason).toMatch(/unknown/);
  });

  it('an on-demand node is replaced by spot when the pool allows spot (pinned to spot)', () => {
    const choice = chooseReplacement([candidate('a', 0.384)], plan([mk('m5.xlarge', 0.192, 0.07)]), off);
    expect(choice.ok && choice.replacement.capacityType).toBe('spot');
    expect(choice.ok && choice.replacement.pricePerHour).toBe(0.07);
  });

  it.each([
    // [name, node price, on-demand price, spot price, expected ok, expected worst price]
    ['an on-demand node becomes the same type on spot (priced by its spot offerings only)', 0.192, 0.192, 0.07, true, 0.07],
    ['a spot-capable type is not judged by its dearer on-demand price', 0.1, 0.192, 0.07, true, 0.07],
    ['without spot offerings, the dearest on-demand offering is the price', 0.1, 0.192, undefined, false, undefined],
  ] as const)('launch price: %s', (_name, nodePrice, od, spot, ok, worst) => {
    const choice = chooseReplacement([candidate('a', nodePrice)], plan([mk('m5.xlarge', od, spot)]), off);
    expect(choice.ok).toBe(ok);
    if (choice.ok) {
      expect(choice.replacement.capacityType).toBe('spot');
      expect(choice.replacement.worstPricePerHour).toBe(worst);
    }
  });

  it('the spot price that is compared is the dearest spot zone, not the cheapest', () => {
    const uneven: InstanceType = { ...mk('x', 0.5), offerings: [
      { zone: 'us-east-1a', capacityType: 'on-demand', pricePerHour: 0.5, available: true },
      { zone: 'us-east-1a', capacityType: 'spot', pricePerHour: 0.05, available: true },
      { zone: 'us-east-1b', capacityType: 'spot', pricePerHour: 0.25, available: true },
    ] };
    expect(chooseReplacement([candidate('a', 0.2)], plan([uneven]), off).ok).toBe(false);
    const choice = chooseReplacement([candidate('a', 0.3)], plan([uneven]), off);
    expect(choice.ok && choice.replacement.worstPricePerHour).toBe(0.25);
  });

  it('threshold: blocked with the figures, or allowed when savings reach it', () => {
    const blocked = chooseReplacement([candidate('a', 0.086, 'on-demand', 1, 5)], plan([mk('m7i-flex.large', 0.08)]), off);
    expect(blocked).toMatchObject({ ok: false, thresholdBlocked: true });
    if (!blocked.ok) expect(blocked.reason).toBe('savings 0.6 cents/hr below required 6.0 cents/hr (disruption cost 6.0, threshold 1)');
    const allowed = chooseReplacement([candidate('a', 0.086, 'on-demand', 1, 5)], plan([mk('cheap', 0.026), mk('m7i-flex.large', 0.08)]), off);
    expect(allowed.ok && allowed.replacement.instanceTypes).toEqual(['cheap']);
  });
});

describe('spot-to-spot (Karpenter rules)', () => {
  const manySpot = (n: number) => Array.from({ length: n }, (_, i) => mk(`t${String(i).padStart(2, '0')}`, 0.5, 0.01 + i * 0.001));

  it.each([
    ['gate off: never', off, 20, 1, false, /SpotToSpotConsolidation/],
    ['gate on, 14 cheaper types: not enough', on, 14, 1, false, /at least 15/],
    ['gate on, 20 cheaper types: sends the 15 cheapest', on, 20, 1, true, null],
    ['gate on, two nodes merged: allowed without the 15-type rule', on, 3, 2, true, null],
    ['gate off, two nodes merged: never', off, 20, 2, false, /SpotToSpotConsolidation/],
  ] as const)('%s', (_name, gates, types, nodes, ok, reason) => {
    const candidates = Array.from({ length: nodes }, (_, i) => candidate(`s${i}`, 0.05, 'spot'));
    const choice = chooseReplacement(candidates, plan(manySpot(types)), gates);
    expect(choice.ok).toBe(ok);
    if (choice.ok) {
      expect(choice.replacement.instanceTypes).toHaveLength(Math.min(15, types));
      expect(choice.replacement.instanceTypes[0]).toBe('t00');
      expect(choice.replacement.capacityType).toBe('spot');
    } else if (reason) {
      expect(choice.reason).toMatch(reason);
    }
  });

  it('a spot node is never replaced by on-demand', () => {
    const choice = chooseReplacement([candidate('s', 0.05, 'spot')], plan([mk('od-only', 0.01)]), on);
    expect(choice.ok).toBe(false);
  });

  it('restrictCapacityType drops types without that capacity type', () => {
    expect(restrictCapacityType([option(mk('a', 0.1)), option(mk('b', 0.2, 0.05))], 'spot').map((o) => o.instanceType.name)).toEqual(['b']);
  });
});

describe('multi-node same-type guard', () => {
  it('merging into the type a candidate already is only counts when cheaper than that candidate', () => {
    const a = candidate('a', 0.384);
    const b = candidate('b', 0.384);
    const same = mk('m5.2xlarge', 0.384);
    expect(chooseReplacement([a, b], plan([same]), off, { sameTypeGuard: true }).ok).toBe(false);
    expect(chooseReplacement([a, b], plan([same]), off).ok).toBe(true);
  });
});
