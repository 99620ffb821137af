// How a replacement node is chosen once the simulation says one new node would hold the pods
// (seed 000 "Node Replacement"; seed 003 threshold; Karpenter's spot rules, CONTRACT section 1).
import type { FeatureGates } from '../featureGates.ts';
import type { PlannedReplacement } from '../plan.ts';
import type { NewNodeOption, NewNodePlan } from '../scheduling/types.ts';
import type { Candidate } from './candidates.ts';
import { cheapestPricePerHour, launchCapacityType, launchPricePerHour, restrictCapacityType, roundMoney } from './prices.ts';
import { describeBlocked, requiredSavingsCents } from './savingsThreshold.ts';
import { dollars } from './text.ts';

/** Karpenter sends at least (and at most) this many types on a spot-to-spot swap so the launch can pick. */
export const SPOT_TO_SPOT_MIN_TYPES = 15;

export type ReplacementChoice =
  | { readonly ok: true; readonly replacement: PlannedReplacement; readonly options: readonly NewNodeOption[] }
  | { readonly ok: false; readonly reason: string; readonly thresholdBlocked?: boolean };

interface PricedOption {
  readonly option: NewNodeOption;
  /** The worst price of the capacity type the launch would use (prices.ts `launchPricePerHour`). */
  readonly worstPricePerHour: number;
}

const priced = (options: readonly NewNodeOption[]): PricedOption[] =>
  options.map((option) => ({ option, worstPricePerHour: launchPricePerHour(option.offerings) }));

/**
 * Picks the instance types a replacement may launch as, or says why none will do.
 * `sameTypeGuard`: for multi-node merges, types that some candidate already is are only kept when
 * cheaper than that candidate, so "merge two m5.large into one m5.large" becomes a plain delete instead.
 */
export function chooseReplacement(
  candidates: readonly Candidate[],
  newNode: NewNodePlan,
  gates: FeatureGates,
  options: { sameTypeGuard?: boolean } = {},
): ReplacementChoice {
  const unknown = candidates.find((c) => c.pricePerHour === undefined);
  if (unknown) return { ok: false, reason: `price of node ${unknown.node.name} is unknown, so it is never replaced` };
  const currentPricePerHour = candidates.reduce((sum, c) => sum + (c.pricePerHour ?? 0), 0);

  let pool = [...newNode.options];
  const allSpot = candidates.every((c) => c.node.capacityType === 'spot');
  if (allSpot) {
    // Spot nodes are only ever swapped for spot, behind the gate (Karpenter's rules). A merge of several
    // spot nodes may go spot-to-spot too; only the single-node swap needs the type flexibility below.
    if (!gates.spotToSpotConsolidation) {
      return { ok: false, reason: 'replacing a spot node with a cheaper spot node needs the SpotToSpotConsolidation feature gate' };
    }
    pool = restrictCapacityType(pool, 'spot');
  }

  if (options.sameTypeGuard) {
    for (const c of candidates) {
      const sameType = (o: NewNodeOption) => o.instanceType.name === c.node.instanceType;
      pool = pool.filter((o) => !sameType(o) || launchPricePerHour(o.offerings) < (c.pricePerHour ?? 0));
    }
  }

  if (pool.length === 0) return { ok: false, reason: 'no instance type the NodePools allow can hold the pods' };

  const cheaper = priced(pool).filter((p) => p.worstPricePerHour < currentPricePerHour);
  if (cheaper.length === 0) {
    const best = priced(pool).sort((a, b) => a.worstPricePerHour - b.worstPricePerHour)[0]!;
    return {
      ok: false,
      reason: `no cheaper replacement: the cheapest type that holds the pods, ${best.option.instanceType.name}, may cost ${dollars(best.worstPricePerHour)} against ${dollars(currentPricePerHour)} now`,
    };
  }

  const requiredCents = requiredSavingsCents(candidates);
  const worthIt = cheaper.filter((p) => (currentPricePerHour - p.worstPricePerHour) * 100 + 1e-9 >= requiredCents);
  if (worthIt.length === 0) {
    const best = Math.min(...cheaper.map((p) => p.worstPricePerHour));
    return { ok: false, thresholdBlocked: true, reason: describeBlocked(candidates, (currentPricePerHour - best) * 100, requiredCents) };
  }

  let chosen = worthIt.map((p) => p.option);
  if (allSpot && candidates.length === 1) {
    if (chosen.length < SPOT_TO_SPOT_MIN_TYPES) {
      return {
        ok: false,
        reason: `spot-to-spot consolidation needs at least ${SPOT_TO_SPOT_MIN_TYPES} cheaper instance types, found ${chosen.length}`,
      };
    }
    chosen = [...chosen].sort(byCheapest).slice(0, SPOT_TO_SPOT_MIN_TYPES);
  }
  if (chosen.some((o) => launchCapacityType(o.offerings) === 'spot')) {
    // The types were judged by their spot price; if spot capacity runs out the launch must fail rather
    // than fall back to a dearer on-demand node, so a replacement that may be spot is pinned to spot.
    chosen = restrictCapacityType(chosen, 'spot');
  }
  chosen = [...chosen].sort(byCheapest);

  const offerings = chosen.flatMap((o) => o.offerings);
  const capacityType = offerings.every((o) => o.capacityType === 'spot') ? 'spot' : 'on-demand';
  const replacement: PlannedReplacement = {
    instanceTypes: chosen.map((o) => o.instanceType.name),
    capacityType,
    zones: [...new Set(offerings.map((o) => o.zone))].sort(),
    pricePerHour: roundMoney(cheapestPricePerHour(offerings)),
    nodePool: newNode.nodePool,
    worstPricePerHour: roundMoney(Math.max(...chosen.map((o) => launchPricePerHour(o.offerings)))),
  };
  return { ok: true, replacement, options: chosen };
}

function byCheapest(a: NewNodeOption, b: NewNodeOption): number {
  return a.cheapestPricePerHour - b.cheapestPricePerHour || a.instanceType.name.localeCompare(b.instanceType.name);
}
