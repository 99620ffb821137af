import { describe, expect, it } from 'vitest';
import { lifetimeRemaining, nodeDisruptionCost, podDisruptionCost } from '../../src/core/disruption/disruptionCost.ts';
import type { Candidate } from '../../src/core/disruption/candidates.ts';
import { checkSavings, requiredSavingsCents } from '../../src/core/disruption/savingsThreshold.ts';
import { hours, node, nodePool, pod, T0 } from '../builders.ts';

function candidate(opts: { pods: number; pricePerHour: number; threshold: number; name?: string }): Candidate {
  const n = node({ name: opts.name ?? 'n' });
  const pool = nodePool({ savingsThresholdCents: opts.threshold });
  const pods = Array.from({ length: opts.pods }, () => pod());
  return {
    node: n,
    pool,
    pricePerHour: opts.pricePerHour,
    pods,
    disruptionCost: nodeDisruptionCost(n, pods, pool, T0),
    methods: new Set(['single-node', 'multi-node']),
  };
}

describe('per-pod disruption cost', () => {
  it.each([
    ['default pod', 0, undefined, 1],
    ['priority 2^25 adds one', 2 ** 25, undefined, 2],
    ['deletion cost 2^27 adds one', 0, String(2 ** 27), 2],
    ['negative deletion cost lowers it', 0, String(-(2 ** 27)), 0],
    ['system-cluster-critical is clamped to 10', 2_000_000_000, undefined, 10],
    ['very negative priority is clamped to -10', -2_000_000_000, undefined, -10],
    ['unparsable deletion cost counts as 0', 0, 'lots', 1],
  ])('%s', (_name, priority, deletionCost, expected) => {
    const annotations: Record<string, string> = deletionCost === undefined ? {} : { 'controller.kubernetes.io/pod-deletion-cost': deletionCost };
    expect(podDisruptionCost(pod({ priority, annotations }))).toBeCloseTo(expected, 10);
  });
});

describe('lifetime remaining (node age)', () => {
  it.each([
    ['no expireAfter', null, 0, 1],
    ['brand new', hours(100), 0, 1],
    ['half way', hours(100), hours(50), 0.5],
    ['expired long ago', hours(100), hours(500), 0],
  ])('%s', (_name, expireAfterMs, ageMs, expected) => {
    const n = node({ createdAt: T0 - ageMs });
    expect(lifetimeRemaining(n, expireAfterMs, T0)).toBeCloseTo(expected, 10);
  });

  it('scales the whole node cost, base cost included', () => {
    const n = node({ createdAt: T0 - hours(50) });
    const pool = nodePool({ expireAfterMs: hours(100) });
    expect(nodeDisruptionCost(n, [pod(), pod(), pod()], pool, T0)).toBeCloseTo(2, 10); // (1 + 3) * 0.5
  });
});

describe('savings threshold (worked examples)', () => {
  it('issue #7146: m6a.large $0.086 with 5 pods to m7i-flex.large $0.080 at threshold 1 is blocked', () => {
    const c = candidate({ pods: 5, pricePerHour: 0.086, threshold: 1 });
    expect(c.disruptionCost).toBeCloseTo(6, 10);
    const verdict = checkSavings([c], 0.086 - 0.08);
    expect(verdict.ok).toBe(false);
    expect(verdict.reason).toBe('savings 0.6 cents/hr below required 6.0 cents/hr (disruption cost 6.0, threshold 1)');
  });

  it.each([
    ['m5.large at $0.038 saves 4.8 cents: still blocked', 0.038, false],
    ['a $0.026 node saves exactly 6.0 cents: on the boundary, acts', 0.026, true],
    ['threshold 0 only needs any savings', 0.0859, true],
  ])('%s', (name, replacementPricePerHour, ok) => {
    const threshold = name.startsWith('threshold 0') ? 0 : 1;
    const c = candidate({ pods: 5, pricePerHour: 0.086, threshold });
    expect(checkSavings([c], 0.086 - replacementPricePerHour).ok).toBe(ok);
  });

  it('never acts without savings, even at threshold 0', () => {
    const c = candidate({ pods: 5, pricePerHour: 0.086, threshold: 0 });
    expect(checkSavings([c], 0).ok).toBe(false);
    expect(checkSavings([c], -0.01).ok).toBe(false);
  });

  it('multi-node sum of products: 15 + 11 = 26 cents required, 10 saved, blocked', () => {
    const a = candidate({ name: 'a', pods: 2, pricePerHour: 0.5, threshold: 5 });
    const b = candidate({ name: 'b', pods: 10, pricePerHour: 0.5, threshold: 1 });
    expect(requiredSavingsCents([a, b])).toBeCloseTo(26, 10);
    const verdict = checkSavings([a, b], 1.0 - 0.9);
    expect(verdict.ok).toBe(false);
    expect(verdict.requiredCents).toBeCloseTo(26, 10);
  });

  it('multi-node with the batch pool at threshold 0 still needs 15 cents', () => {
    const a = candidate({ name: 'a', pods: 2, pricePerHour: 0.5, threshold: 5 });
    const b = candidate({ name: 'b', pods: 10, pricePerHour: 0.5, threshold: 0 });
    expect(requiredSavingsCents([a, b])).toBeCloseTo(15, 10);
    expect(checkSavings([a, b], 0.1).ok).toBe(false);
    expect(checkSavings([a, b], 0.15).ok).toBe(true);
  });
});
