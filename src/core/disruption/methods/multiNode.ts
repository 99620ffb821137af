// Multi-node consolidation (Karpenter's consolidation-policies design): remove several nodes at once,
// their pods going to the rest of the cluster plus at most one new node cheaper than all of them
// together.
//
// Karpenter binary-searches the longest prefix of its candidates (cheapest to disrupt first, capped at
// 100, under a timeout) and takes what it finds. Here there is no timeout, and the cap is
// MAX_NODES_PER_COMMAND (default Karpenter's 100): no prefix longer than it is tried, so one command
// never disrupts more nodes than that. For each of several orderings, prefixes of many sizes are tried
// (not only a binary search, which misses a merge of three when two do not pay) and the set that saves
// the most wins:
//   1. cheapest to disrupt first (the order of Karpenter's consolidation design),
//   2. most money per unit of disruption first (price / disruption cost),
//   3. least requested CPU first (emptiest nodes pack best).
// Each ordering costs about 8 + log1.5(n) simulations, so the search stays affordable at thousands of nodes.
import type { Candidate } from '../candidates.ts';
import { budgetNoteKey, explainLimit } from '../budgets.ts';
import { evaluateRemoval } from './evaluateRemoval.ts';
import { RoomBound } from './roomBound.ts';
import { movesToCheck } from './costEfficient.ts';
import type { ConsolidationMethod, PassView, Proposal } from './types.ts';

/** A candidate's sort key in one ordering (smaller first; ties by name). */
type OrderingKey = (c: Candidate) => number;

const requestedCpuMillis = (c: Candidate) => c.pods.reduce((sum, p) => sum + (p.requests['cpu'] ?? 0), 0);

export const ORDERINGS: readonly OrderingKey[] = [
  (c) => c.disruptionCost,
  (c) => -((c.pricePerHour ?? 0) / c.disruptionCost),
  (c) => requestedCpuMillis(c) / Math.max(1, c.node.allocatable['cpu'] ?? 1),
];

/**
 * The candidates sorted by `key`, ties by node name. Each key is worked out once per candidate, not once
 * per comparison (summing a node's pods for every comparison was a second per round at 2,000 nodes).
 */
function sortedBy(candidates: readonly Candidate[], key: OrderingKey): Candidate[] {
  const keyed = candidates.map((c) => ({ c, k: key(c) }));
  keyed.sort((a, b) => a.k - b.k || a.c.node.name.localeCompare(b.c.node.name));
  return keyed.map((e) => e.c);
}

/**
 * Candidates in each ordering, within the budgets and cut to `maxNodes` (MAX_NODES_PER_COMMAND), and how
 * many there were before the cut (the same for every ordering: per pool, as many as its budget allows).
 */
export function cappedOrderings(view: PassView, eligible: readonly Candidate[]): { readonly orderings: Candidate[][]; readonly available: number } {
  const full = ORDERINGS.map((key) => withinBudget(view, sortedBy(eligible, key)));
  return { orderings: full.map((o) => o.slice(0, view.maxNodesPerCommand)), available: full[0]?.length ?? 0 };
}

/** The proposal, marked as cut when it takes as many nodes as the cap allows and more were available. */
export function markCapped(proposal: Proposal | undefined, maxNodes: number, available: number): Proposal | undefined {
  if (!proposal || proposal.candidates.length < maxNodes || available <= maxNodes) return proposal;
  return { ...proposal, cappedAt: { maxNodes, eligible: available } };
}

/** How many of the best moves found are checked against kube-scheduler's placement before giving up. */
const MAX_SCHEDULER_TRIES = 6;

/** Candidates in order, keeping per pool only as many as its Underutilized budget still allows. */
export function withinBudget(view: PassView, ordered: readonly Candidate[]): Candidate[] {
  const taken = new Map<string, number>();
  const out: Candidate[] = [];
  for (const c of ordered) {
    const pool = c.pool.name;
    const count = taken.get(pool) ?? 0;
    if (count >= view.ledger.remaining(pool, 'Underutilized')) continue;
    taken.set(pool, count + 1);
    out.push(c);
  }
  return out;
}

/**
 * Prefix sizes to try: every size up to 8 (small merges are where feasibility is least monotone: two
 * nodes may not pay where three do), then sizes growing by half again up to all of them.
 */
export function prefixSizes(count: number): number[] {
  const sizes = new Set<number>();
  for (let k = 2; k <= Math.min(8, count); k++) sizes.add(k);
  for (let k = 8; k < count; k = Math.ceil(k * 1.5)) sizes.add(k);
  if (count >= 2) sizes.add(count);
  return [...sizes].sort((a, b) => a - b);
}

/** One ordering's search: its candidates in order, their running prices, and what `prefixSizes` found. */
interface OrderingSearch {
  readonly ordered: readonly Candidate[];
  /** Running sums of the candidates' prices: `pricePrefix[k]` is the price of the first k. */
  readonly pricePrefix: readonly number[];
  /** The largest size found feasible (0: none), and the next size tried above it, which was not. */
  readonly largestOk: number;
  readonly nextTried: number;
}

/**
 * Collects into `found` the feasible prefixes of several orderings, in two steps:
 *  1. each ordering tries every size of `prefixSizes` (a few more nodes than the largest feasible size
 *     may still fit, and those sizes are not monotone for small merges), largest first, leaving out a
 *     size below the largest feasible one whose nodes cost less than each of the best moves found;
 *  2. the gap above each ordering's largest feasible size is narrowed by binary search, the ordering
 *     with the best move first, and a gap is left as soon as nothing in it could still be among the
 *     moves the scheduler check may try (the best MAX_SCHEDULER_TRIES found so far): a prefix saves at
 *     most the price of its nodes, even deleted outright. So the move taken is the one the full search
 *     would take, whichever of those moves kube-scheduler's placement refuses.
 * Step 2's bound is what keeps a pass on thousands of nodes affordable (at 5,000 nodes each
 * narrowing simulation places tens of thousands of pods, and only one ordering's move is taken).
 */
function searchOrderings(
  view: PassView,
  orderings: readonly (readonly Candidate[])[],
  found: Proposal[],
  room: RoomBound,
  savingsBound: boolean,
): void {
  const seen = new Map<string, Proposal | null>();
  // Savings of the best distinct moves found so far, at most MAX_SCHEDULER_TRIES of them, descending.
  const topSavings: number[] = [];
  const counted = new Set<string>();
  const tryPrefix = (ordered: readonly Candidate[], size: number, into: Proposal[] = found): Proposal | null => {
    const prefix = ordered.slice(0, size);
    const key = prefix.map((c) => c.node.name).sort().join(',');
    let proposal = seen.get(key);
    // (Not with Balanced pools: their score is weighed before the simulation, and a refusal it records
    // must not depend on this shortcut.)
    if (proposal === undefined && !view.balancedTotals && !room.mayFit(prefix, view.replacementBound, 1)) {
      // Weighed and found too large for the room left: the simulation would say the same.
      view.examine(prefix.map((c) => c.node.name));
      proposal = null;
      seen.set(key, proposal);
    }
    if (proposal === undefined) {
      const verdict = evaluateRemoval(view, prefix, 'multi-node');
      proposal = verdict.ok ? verdict.proposal : null;
      seen.set(key, proposal);
    }
    if (proposal) {
      into.push(proposal);
      if (!counted.has(key)) {
        counted.add(key);
        topSavings.push(proposal.savingsPerHour);
        topSavings.sort((a, b) => b - a);
        if (topSavings.length > MAX_SCHEDULER_TRIES) topSavings.pop();
      }
    }
    return proposal;
  };

  const searches: (OrderingSearch & { bestSavings: number })[] = [];
  for (const ordered of orderings) {
    const pricePrefix = [0];
    for (const c of ordered) pricePrefix.push(pricePrefix[pricePrefix.length - 1]! + (c.pricePerHour ?? 0));
    const sizes = prefixSizes(ordered.length);
    let largestOk = 0;
    let bestSavings = Number.NEGATIVE_INFINITY;
    // Largest first: once the largest feasible size is known, a smaller prefix matters only if it could
    // be among the moves the check may try, and it saves at most its nodes' price (the bound of step 2).
    // What is found goes into `found` smallest first all the same: among moves that save alike and
    // disrupt alike, the one found first is checked first.
    const mine: Proposal[] = [];
    for (const size of [...sizes].reverse()) {
      const last = topSavings[MAX_SCHEDULER_TRIES - 1];
      // (Its nodes are examined already: they are all in the larger prefix tried before it.)
      if (largestOk > 0 && savingsBound && !view.balancedTotals && last !== undefined && pricePrefix[size]! < last - 1e-9) continue;
      const proposal = tryPrefix(ordered, size, mine);
      if (!proposal) continue;
      if (largestOk === 0) largestOk = size;
      bestSavings = Math.max(bestSavings, proposal.savingsPerHour);
    }
    found.push(...mine.reverse());
    const nextTried = sizes.find((size) => size > largestOk) ?? largestOk + 1;
    if (largestOk > 0) searches.push({ ordered, pricePrefix, largestOk, nextTried, bestSavings });
  }

  searches.sort((a, b) => b.bestSavings - a.bestSavings);
  for (const { ordered, pricePrefix, largestOk, nextTried } of searches) {
    let lo = largestOk + 1;
    let hi = nextTried - 1;
    while (lo <= hi) {
      // Nothing in the gap can save more than its largest prefix's whole price: when that is less than
      // each of the best moves the scheduler check may try, no move in the gap is ever tried.
      const last = topSavings[MAX_SCHEDULER_TRIES - 1];
      if (savingsBound && last !== undefined && pricePrefix[hi]! < last - 1e-9) break;
      const mid = Math.floor((lo + hi) / 2);
      if (tryPrefix(ordered, mid)) lo = mid + 1;
      else hi = mid - 1;
    }
  }
}

export function better(a: Proposal, b: Proposal | undefined): boolean {
  if (!b) return true;
  if (Math.abs(a.savingsPerHour - b.savingsPerHour) > 1e-9) return a.savingsPerHour > b.savingsPerHour;
  const cost = (p: Proposal) => p.candidates.reduce((s, c) => s + c.disruptionCost, 0);
  return cost(a) < cost(b);
}

export interface MultiNodeOptions {
  /** Leave a gap that cannot hold a move the check would try (default true; false: narrow every gap, for tests). */
  readonly savingsBound?: boolean;
}

export function createMultiNode(options: MultiNodeOptions = {}): ConsolidationMethod {
  const savingsBound = options.savingsBound ?? true;
  return {
    name: 'multi-node',
    next(view: PassView): Proposal | undefined {
      const eligible = view.candidates.filter((c) => c.methods.has('multi-node') && c.pods.length > 0);
      // A cap of one node per command leaves no merge to make (single-node still runs).
      if (eligible.length < 2 || view.maxNodesPerCommand < 2) return undefined;
      const found: Proposal[] = [];
      const room = new RoomBound(view.cluster, view.catalog);
      const capped = cappedOrderings(view, eligible);
      const orderings = capped.orderings.filter((o) => o.length >= 2);
      const tried = orderings.length > 0;
      if (tried) searchOrderings(view, orderings, found, room, savingsBound);
      // Budgets that round down to one node (10% of 10 or fewer) leave a merge no room; say so.
      if (!tried) for (const c of eligible) view.note(c.node.name, budgetTooSmallForMerge(view, c.pool.name), budgetNoteKey(c.pool.name));
      return markCapped(firstAccepted(view, found), view.maxNodesPerCommand, capped.available);
    },
  };
}

/**
 * The best of the found proposals that also survives kube-scheduler's placement (PassView.schedulerCheck);
 * a rejected one is noted on its nodes and the next best is tried.
 */

export function firstAccepted(view: PassView, found: readonly Proposal[]): Proposal | undefined {
  const unique = new Map<string, Proposal>();
  for (const p of found) unique.set(p.candidates.map((c) => c.node.name).sort().join(','), p);
  const ranked = [...unique.values()].sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
  // Each check builds a simulation of the whole cluster: a few tries, then the method gives up this round.
  for (const move of ranked.slice(0, MAX_SCHEDULER_TRIES)) {
    for (const proposal of movesToCheck(view, move)) {
      const rejected = view.schedulerCheck(proposal);
      if (rejected === undefined) return proposal;
      for (const c of proposal.candidates) view.note(c.node.name, rejected);
    }
  }
  return undefined;
}

/**
 * Why no merge was tried: the budget leaves fewer than 2 nodes. With none left at all, the same sentence
 * single-node gives (it says why none is left, and that a merge would need 2).
 */
function budgetTooSmallForMerge(view: PassView, pool: string): string {
  const a = view.ledger.allowance(pool, 'Underutilized');
  if (a.allowed === 0) return view.ledger.describe(pool, 'Underutilized');
  return `multi-node consolidation needs at least 2 nodes at once, but the disruption budget of NodePool "${pool}" allows ${a.allowed} more now (limit ${a.limit}: ${explainLimit(a)})`;
}
