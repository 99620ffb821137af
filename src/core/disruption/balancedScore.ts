// `consolidationPolicy: Balanced` (Karpenter v1.14; RFC kubernetes-sigs/karpenter#2942, built in #2962).
//
// A consolidation move is worth taking when the share of its pool's cost it saves is large enough next
// to the share of its pool's disruption it causes:
//
//   savings fraction    = net savings of the move ($/hr)   / price of every node of the pool ($/hr)
//   disruption fraction = disruption of the moved nodes    / disruption of every node of the pool
//   score               = savings fraction / disruption fraction;   approved when score >= 1/k
//
// Both fractions are relative to the pool, so the same move scores the same in a pool of 10 nodes or
// 1000 (the RFC's scale invariance). k is the tolerance: Karpenter fixes it at 2, the smallest value at
// which a one-size-down replacement in a pool of equal nodes (saving exactly half) still passes.
//
// Disruption here is not the cost of Karpenter's savings-threshold design: each node counts 1 (draining
// it at all) plus, per pod that would move, its eviction cost (1 + priority/2^25 +
// pod-deletion-cost/2^27, clamped to [-10, 10]) with negatives counted as 0 (a pod that declared itself
// free to evict adds nothing, and cannot make a move look cheaper than an empty node). Unlike that cost,
// there is no lifetime-remaining factor. Pool totals include every node of the pool, candidate or not
// (non-candidates still weigh in the denominators), and are taken once per pass: later moves of the same
// pass are scored against the pass's starting totals, as Karpenter scores each cycle against one
// snapshot.
//
// A move that takes nodes from several pools is scored once per Balanced source pool, each against its
// own totals, with the net savings shared out by each pool's part of the removed nodes' price; every
// Balanced pool must approve. Nodes of other pools are not scored.
import type { Cluster, NodePool, Pod } from '../model/types.ts';
import type { ConsolidationScore } from '../plan.ts';
import { NODE_BASE_COST, podDisruptionCost } from './disruptionCost.ts';
import { isReschedulable } from './pods.ts';
import { nodePricePerHour, type PriceIndex } from './prices.ts';

/** Karpenter v1.14's tolerance for `Balanced`: approve when score >= 1/2. */
export const DEFAULT_BALANCED_K = 2;

// Float noise must not flip a move that is exactly on the boundary (the RFC's uniform-pool replace
// scores exactly 0.5 and passes).
const EPSILON = 1e-9;

export interface PoolTotals {
  /** Sum of the known prices of every node of the pool, $/hr. */
  readonly costPerHour: number;
  /** Sum of every node's scored disruption (1 per node plus its pods). */
  readonly disruptionCost: number;
}

/** One source pool's verdict on a move (the plan's shape). */
export type PoolScore = ConsolidationScore;

export interface MoveScore {
  /** True when every Balanced source pool approves (and when none is Balanced). */
  readonly approved: boolean;
  /** One entry per Balanced source pool; empty when no source pool is Balanced. */
  readonly scores: readonly PoolScore[];
}

/** What scoring needs to know about a node the move removes. */
export interface ScoredSource {
  readonly pool: NodePool;
  /** Undefined when the catalog has no price: it then saves nothing (Karpenter prices it at 0). */
  readonly pricePerHour: number | undefined;
  /** The pods that would be evicted. */
  readonly pods: readonly Pod[];
}

export const isBalanced = (pool: NodePool): boolean => pool.consolidationPolicy === 'Balanced';
export const balancedK = (pool: NodePool): number => pool.balancedK ?? DEFAULT_BALANCED_K;

/** A pod's weight in the score: its eviction cost, negatives counted as nothing. */
export function scoredPodDisruption(pod: Pod): number {
  return Math.max(0, podDisruptionCost(pod));
}

// A candidate's pod list is one array for the whole pass, and multi-node scores prefixes of thousands of
// candidates several times: each list's sum is computed once.
const nodeDisruptionCache = new WeakMap<readonly Pod[], number>();

/** A node's weight in the score: 1 for the node itself plus its pods that would move. */
export function scoredNodeDisruption(pods: readonly Pod[]): number {
  let cost = nodeDisruptionCache.get(pods);
  if (cost === undefined) {
    cost = pods.reduce((sum, pod) => sum + scoredPodDisruption(pod), NODE_BASE_COST);
    nodeDisruptionCache.set(pods, cost);
  }
  return cost;
}

/**
 * Totals of every Balanced pool, over all of its nodes (Ready or not, candidate or not). Other pools
 * are left out: nothing scores them, and a large cluster should not pay for sums no one reads.
 */
export function balancedPoolTotals(cluster: Cluster, pools: ReadonlyMap<string, NodePool>, prices: PriceIndex): Map<string, PoolTotals> {
  const totals = new Map<string, { costPerHour: number; disruptionCost: number }>();
  const nodeOf = new Map<string, string>();
  for (const node of cluster.nodes) {
    const pool = node.nodePool === undefined ? undefined : pools.get(node.nodePool);
    if (pool === undefined || !isBalanced(pool)) continue;
    const entry = totals.get(pool.name) ?? { costPerHour: 0, disruptionCost: 0 };
    entry.costPerHour += nodePricePerHour(node, prices) ?? 0;
    entry.disruptionCost += NODE_BASE_COST;
    totals.set(pool.name, entry);
    nodeOf.set(node.name, pool.name);
  }
  if (totals.size === 0) return totals;
  for (const pod of cluster.pods) {
    const poolName = pod.nodeName === undefined ? undefined : nodeOf.get(pod.nodeName);
    if (poolName === undefined || !isReschedulable(pod)) continue;
    totals.get(poolName)!.disruptionCost += scoredPodDisruption(pod);
  }
  return totals;
}

/** Scores one pool's part of a move (the RFC's formula; zero or negative savings score 0). */
export function scorePool(nodePool: string, savingsPerHour: number, disruptionCost: number, totals: PoolTotals, k: number): PoolScore {
  const threshold = 1 / k;
  // Nothing to compare against (a pool whose prices are all unknown): no move can be shown to pay.
  const comparable = totals.costPerHour > 0 && totals.disruptionCost > 0;
  const savingsFraction = comparable ? savingsPerHour / totals.costPerHour : 0;
  const disruptionFraction = comparable ? disruptionCost / totals.disruptionCost : 0;
  const score = savingsFraction <= 0 || disruptionFraction <= 0 ? 0 : savingsFraction / disruptionFraction;
  return {
    nodePool,
    k,
    threshold,
    savingsPerHour,
    disruptionCost,
    poolCostPerHour: totals.costPerHour,
    poolDisruptionCost: totals.disruptionCost,
    savingsFraction,
    disruptionFraction,
    score,
    approved: score > 0 && score + EPSILON >= threshold,
  };
}

/**
 * Scores a move that removes `sources` and saves `netSavingsPerHour` (their prices minus what is
 * launched in their place). Pools absent from `totals` are scored against empty totals (rejected).
 */
export function scoreMove(sources: readonly ScoredSource[], netSavingsPerHour: number, totals: ReadonlyMap<string, PoolTotals>): MoveScore {
  const byPool = new Map<string, ScoredSource[]>();
  for (const source of sources) {
    const list = byPool.get(source.pool.name);
    if (list) list.push(source);
    else byPool.set(source.pool.name, [source]);
  }
  const sourceCost = sources.reduce((sum, s) => sum + (s.pricePerHour ?? 0), 0);
  const scores: PoolScore[] = [];
  for (const [poolName, members] of byPool) {
    const pool = members[0]!.pool;
    if (!isBalanced(pool)) continue;
    const poolSourceCost = members.reduce((sum, s) => sum + (s.pricePerHour ?? 0), 0);
    // The net benefit is shared by what each pool gives up; with one pool it is all of it.
    const share = byPool.size > 1 && sourceCost > 0 ? poolSourceCost / sourceCost : 1;
    const disruption = members.reduce((sum, s) => sum + scoredNodeDisruption(s.pods), 0);
    scores.push(scorePool(poolName, netSavingsPerHour * share, disruption, totals.get(poolName) ?? { costPerHour: 0, disruptionCost: 0 }, balancedK(pool)));
  }
  return { approved: scores.every((s) => s.approved), scores };
}

/** Karpenter's ranking key: money per unit of disruption (an unknown price counts 0). */
export function savingsRatio(source: ScoredSource): number {
  return (source.pricePerHour ?? 0) / scoredNodeDisruption(source.pods);
}

/**
 * Karpenter v1.14 tries candidates by savings ratio, highest first, so that when budgets allow only a
 * few moves they are the ones with the most savings per unit of disruption (the RFC's "score as a
 * ranking"). Here the seed order (cheapest to disrupt first) stays for every other pool: the Balanced
 * pools' candidates are re-ranked among the places they already hold, so no other pool's candidate
 * moves. Ties keep their order.
 */
export function rankBalanced<T extends ScoredSource>(ordered: readonly T[]): T[] {
  const slots: number[] = [];
  ordered.forEach((c, i) => {
    if (isBalanced(c.pool)) slots.push(i);
  });
  if (slots.length < 2) return [...ordered];
  const ratio = new Map(slots.map((i) => [i, savingsRatio(ordered[i]!)]));
  const ranked = [...slots].sort((a, b) => ratio.get(b)! - ratio.get(a)! || a - b);
  const out = [...ordered];
  slots.forEach((slot, k) => {
    out[slot] = ordered[ranked[k]!]!;
  });
  return out;
}

const pct = (fraction: number): string => `${(fraction * 100).toFixed(1)}%`;

/**
 * The sentence for a plan: e.g. `Balanced: score 0.42 < 0.50 (k 2): saves 4.2% of NodePool "default"'s
 * cost ($0.101/hr of $2.42/hr) for 10.0% of its disruption (9 of 90)`. `bound` marks the best case
 * (an outright delete), checked before simulating: if even that fails, no move of these nodes can pass.
 */
export function describeScore(s: PoolScore, bound = false): string {
  const verdict = `${s.score.toFixed(2)} ${s.approved ? '>=' : '<'} ${s.threshold.toFixed(2)} (k ${s.k})`;
  const head = bound ? `Balanced: even deleting outright would score ${verdict}` : `Balanced: score ${verdict}`;
  if (s.poolCostPerHour <= 0) return `${head}: NodePool "${s.nodePool}" has no node of known price to compare savings with`;
  const saves = s.savingsPerHour <= 0 ? `saves nothing of NodePool "${s.nodePool}"'s cost` : `saves ${pct(s.savingsFraction)} of NodePool "${s.nodePool}"'s cost`;
  return (
    `${head}: ${saves} ($${round(s.savingsPerHour, 4)}/hr of $${round(s.poolCostPerHour, 4)}/hr) ` +
    `for ${pct(s.disruptionFraction)} of its disruption (${round(s.disruptionCost, 2)} of ${round(s.poolDisruptionCost, 2)})`
  );
}

/** Karpenter's event wording: `score 0.42 < threshold 0.50 (k: 2, savings 4.2%, disruption 10.0%)`. */
export function eventMessage(s: PoolScore): string {
  return `score ${s.score.toFixed(2)} ${s.approved ? '>=' : '<'} threshold ${s.threshold.toFixed(2)} (k: ${s.k}, savings ${(s.savingsFraction * 100).toFixed(1)}%, disruption ${(s.disruptionFraction * 100).toFixed(1)}%)`;
}

/** True for the plan sentences this module writes (so observability can tell them apart). */
export const isScoreSentence = (reason: string): boolean => reason.startsWith('Balanced: ');

/** The score as the plan shows it: money to 6 decimals, fractions and scores to 6 significant places. */
export function roundScore(s: PoolScore): PoolScore {
  return {
    ...s,
    threshold: round(s.threshold, 6),
    savingsPerHour: round(s.savingsPerHour, 6),
    disruptionCost: round(s.disruptionCost, 4),
    poolCostPerHour: round(s.poolCostPerHour, 6),
    poolDisruptionCost: round(s.poolDisruptionCost, 4),
    savingsFraction: round(s.savingsFraction, 6),
    disruptionFraction: round(s.disruptionFraction, 6),
    score: round(s.score, 4),
  };
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
