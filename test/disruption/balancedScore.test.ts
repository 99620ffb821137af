// The Balanced score (Karpenter v1.14, RFC kubernetes-sigs/karpenter#2942): the RFC's worked examples,
// the rules around them (per-node base cost, negative pod costs, several pools) and the tolerance k.
import { describe, expect, it } from 'vitest';
import {
  balancedPoolTotals,
  describeScore,
  rankBalanced,
  eventMessage,
  scoredNodeDisruption,
  scoreMove,
  scorePool,
  type ScoredSource,
} from '../../src/core/disruption/balancedScore.ts';
import { indexCatalog } from '../../src/core/disruption/prices.ts';
import type { NodePool } from '../../src/core/model/types.ts';
import { cluster, daemonSetPod, m5Catalog, node, nodePool, on, pod } from '../builders.ts';

const balanced = (overrides: Partial<NodePool> = {}) => nodePool({ consolidationPolicy: 'Balanced', ...overrides });
const pods = (n: number) => Array.from({ length: n }, () => pod());
const withDeletionCost = (cost: number) => pod({ annotations: { 'controller.kubernetes.io/pod-deletion-cost': String(cost) } });

describe('the score of one pool (the RFC examples, $/day as the RFC writes them)', () => {
  // The RFC's example pool: 8 m7i.xlarge ($4.84/day) and 2 m7i.2xlarge ($9.68/day), 80 pods of cost 1.
  const rfcPool = { costPerHour: 58.08, disruptionCost: 80 };
  it.each([
    ['oversized node replaced by a quarter-size one is approved', 7.26, 3, rfcPool, 3.33, true],
    ['spare-capacity delete is approved', 4.84, 4, rfcPool, 1.67, true],
    ['marginal replace of a busy node is rejected', 2.42, 8, rfcPool, 0.42, false],
    ['well-packed node replaced by the same type saves nothing and is rejected', 0, 10, rfcPool, 0, false],
    ['uniform pool: a replace at half price lands exactly on 0.5 and is approved', 2.42, 8, { costPerHour: 48.4, disruptionCost: 80 }, 0.5, true],
    ['same replace in a 100-node pool scores the same (scale invariance)', 7.26, 3, { costPerHour: 580.8, disruptionCost: 800 }, 3.33, true],
    ['node of stateless pods is approved (the RFC rounds it to 2.24)', 4.84, 4, { costPerHour: 58.08, disruptionCost: 107 }, 2.23, true],
    ['same savings, but model-serving pods of cost ~10 are rejected', 4.84, 31, { costPerHour: 58.08, disruptionCost: 107 }, 0.29, false],
    ['a move that loses money is rejected', -1, 2, rfcPool, 0, false],
    ['a pool with no known price cannot show savings and is rejected', 1, 2, { costPerHour: 0, disruptionCost: 10 }, 0, false],
  ])('%s', (_name, savings, disruption, totals, score, approved) => {
    const s = scorePool('default', savings, disruption, totals, 2);
    expect(s.score).toBeCloseTo(score, 2);
    expect(s.approved).toBe(approved);
    expect(s.threshold).toBe(0.5);
  });
});

describe('the tolerance k (approve when score >= 1/k)', () => {
  // Score 0.42: between 1/3 and 1/2.
  it.each([
    ['k 1 (break-even): rejected', 1, false],
    ['k 2 (Karpenter v1.14 Balanced): rejected', 2, false],
    ['k 3 (the RFC escape hatch): approved', 3, true],
  ])('%s', (_name, k, approved) => {
    const s = scorePool('default', 2.42, 8, { costPerHour: 58.08, disruptionCost: 80 }, k);
    expect(s.threshold).toBeCloseTo(1 / k, 10);
    expect(s.approved).toBe(approved);
  });

  it('k 1: a delete in a uniform pool passes, any replace fails (score = 1 - new price / old price)', () => {
    const totals = { costPerHour: 10, disruptionCost: 10 };
    expect(scorePool('p', 1, 1, totals, 1).approved).toBe(true);
    expect(scorePool('p', 0.99, 1, totals, 1).approved).toBe(false);
  });
});

describe('disruption of a move', () => {
  it.each([
    ['an empty node counts 1 (the node itself)', [], 1],
    ['three default pods count 1 each', pods(3), 4],
    ['a pod with a large negative deletion cost counts 0, not below', [withDeletionCost(-(2 ** 31))], 1],
    ['pod-deletion-cost 2^27 makes a pod count 2', [withDeletionCost(2 ** 27)], 3],
    ['a pod of priority 2^25 counts 2', [pod({ priority: 2 ** 25 })], 3],
  ])('%s', (_name, podList, expected) => {
    expect(scoredNodeDisruption(podList)).toBeCloseTo(expected, 10);
  });
});

describe('pool totals', () => {
  it('sum every node of each Balanced pool, candidates or not, with only the pods that would move', () => {
    const pools = new Map([
      ['b', balanced({ name: 'b' })],
      ['w', nodePool({ name: 'w' })],
    ]);
    const c = cluster({
      nodes: [node({ name: 'b1', nodePool: 'b' }), node({ name: 'b2', nodePool: 'b', instanceType: 'm5.xlarge' }), node({ name: 'w1', nodePool: 'w' })],
      pods: [...on('b1', pod(), pod()), daemonSetPod('b1'), ...on('b2', pod({ phase: 'Succeeded' })), ...on('w1', pod())],
    });
    const totals = balancedPoolTotals(c, pools, indexCatalog(m5Catalog()));
    expect([...totals.keys()]).toEqual(['b']); // only Balanced pools are summed
    expect(totals.get('b')!.costPerHour).toBeCloseTo(0.096 + 0.192, 10);
    expect(totals.get('b')!.disruptionCost).toBeCloseTo(2 + 2, 10); // 2 nodes + 2 running pods
  });

  it('a node of unknown price adds nothing to the cost but still weighs in the disruption', () => {
    const pools = new Map([['b', balanced({ name: 'b' })]]);
    const c = cluster({ nodes: [node({ name: 'x', nodePool: 'b', instanceType: 'unknown.type' })], pods: on('x', pod()) });
    expect(balancedPoolTotals(c, pools, indexCatalog(m5Catalog())).get('b')).toEqual({ costPerHour: 0, disruptionCost: 2 });
  });
});

describe('scoring a move', () => {
  const source = (pool: NodePool, pricePerHour: number | undefined, podCount: number): ScoredSource => ({ pool, pricePerHour, pods: pods(podCount) });

  it('counts 1 per removed node on top of its pods, as Karpenter does', () => {
    const pool = balanced();
    const move = scoreMove([source(pool, 1, 3)], 1, new Map([['default', { costPerHour: 4, disruptionCost: 16 }]]));
    expect(move.scores[0]).toMatchObject({ disruptionCost: 4, savingsFraction: 0.25, disruptionFraction: 0.25, score: 1, approved: true });
  });

  it('a move from a pool that is not Balanced is not scored and passes', () => {
    const move = scoreMove([source(nodePool(), 1, 30)], 0.01, new Map());
    expect(move).toEqual({ approved: true, scores: [] });
  });

  it('several pools: net savings shared by source price, each Balanced pool must approve on its own totals', () => {
    const a = balanced({ name: 'a' });
    const b = balanced({ name: 'b' });
    const totals = new Map([
      ['a', { costPerHour: 3, disruptionCost: 10 }],
      ['b', { costPerHour: 1, disruptionCost: 4 }],
    ]);
    // Sources cost 3 (a) and 1 (b); net savings 2 -> 1.5 to a, 0.5 to b.
    const move = scoreMove([source(a, 3, 1), source(b, 1, 3)], 2, totals);
    const byPool = Object.fromEntries(move.scores.map((s) => [s.nodePool, s]));
    expect(byPool['a']).toMatchObject({ savingsPerHour: 1.5, disruptionCost: 2, approved: true }); // 0.5 / 0.2 = 2.5
    expect(byPool['a']!.score).toBeCloseTo(2.5, 10);
    expect(byPool['b']).toMatchObject({ savingsPerHour: 0.5, disruptionCost: 4, approved: true }); // 0.5 / 1 = 0.5
    expect(byPool['b']!.score).toBeCloseTo(0.5, 10);
    expect(move.approved).toBe(true);
    // With less net savings pool b falls below 1/2 and vetoes the whole move.
    const worse = scoreMove([source(a, 3, 1), source(b, 1, 3)], 1.6, totals);
    expect(worse.approved).toBe(false);
    expect(worse.scores.find((s) => s.nodePool === 'a')!.approved).toBe(true);
  });

  it('a Balanced source merged with a non-Balanced one: only the Balanced pool is scored, on its share', () => {
    const a = balanced({ name: 'a' });
    const w = nodePool({ name: 'w' });
    const move = scoreMove([source(a, 1, 1), source(w, 1, 1)], 1, new Map([['a', { costPerHour: 2, disruptionCost: 4 }]]));
    expect(move.scores.map((s) => [s.nodePool, s.savingsPerHour])).toEqual([['a', 0.5]]);
  });

  it('a node of unknown price saves nothing (Karpenter prices it at 0): rejected', () => {
    const move = scoreMove([source(balanced(), undefined, 1)], 0, new Map([['default', { costPerHour: 1, disruptionCost: 4 }]]));
    expect(move.approved).toBe(false);
    expect(move.scores[0]!.score).toBe(0);
  });
});

describe('ranking (Karpenter v1.14 tries the best savings per disruption first)', () => {
  const c = (name: string, pool: NodePool, pricePerHour: number | undefined, podCount: number) => ({ name, pool, pricePerHour, pods: pods(podCount) });
  it('Balanced candidates are re-ranked among their own places; other pools keep theirs', () => {
    const b = balanced({ name: 'b' });
    const w = nodePool({ name: 'w' });
    const ordered = [c('b-low', b, 0.1, 1), c('w-1', w, 0.1, 0), c('b-high', b, 0.4, 1), c('w-2', w, 9, 9), c('b-unknown', b, undefined, 0), c('b-mid', b, 0.2, 1)];
    // ratios: b-low 0.05, b-high 0.2, b-unknown 0, b-mid 0.1
    expect(rankBalanced(ordered).map((x) => x.name)).toEqual(['b-high', 'w-1', 'b-mid', 'w-2', 'b-low', 'b-unknown']);
  });
});

describe('wording', () => {
  const s = scorePool('default', 2.42 / 24, 9, { costPerHour: 48.4 / 24, disruptionCost: 90 }, 2);
  it('the plan sentence gives the score, the threshold, k and both fractions', () => {
    expect(describeScore({ ...s, score: 0.42, approved: false })).toBe(
      'Balanced: score 0.42 < 0.50 (k 2): saves 5.0% of NodePool "default"\'s cost ($0.1008/hr of $2.0167/hr) for 10.0% of its disruption (9 of 90)',
    );
    expect(describeScore({ ...s, score: 0.42, approved: false }, true)).toMatch(/^Balanced: even deleting outright would score 0.42 < 0.50 \(k 2\)/);
  });
  it("the event message follows Karpenter's", () => {
    expect(eventMessage(s)).toBe('score 0.50 >= threshold 0.50 (k: 2, savings 5.0%, disruption 10.0%)');
  });
});
