// How a replacement node is chosen once the simulation says one new node would hold the pods
// (seed 000 "Node Replacement"; seed 003 threshold; Karpenter's spot rules, CONTRACT section 1).
import type { FeatureGates } from '../featureGates.ts';
import type { PlannedReplacement } from '../plan.ts';
import type { NewNodeOption, NewNodePlan } from '../scheduling/types.ts';
import type { Candidate } from './candidates.ts';
import { cheapestMeetingMinValues, describeShortfall, minValuesShortfall } from './minValues.ts';
import { cheapestPricePerHour, restrictCapacityType, roundMoney, worstPricePerHour } from './prices.ts';
import { describeBlocked, requiredSavingsCents } from './savingsThreshold.ts';
import { dollars } from './text.ts';

/** Karpenter sends at least (and at most) this many types on a spot-to-spot swap so the launch can pick. */
export const SPOT_TO_SPOT_MIN_TYPES = 15;

export type ReplacementChoice =
  | { readonly ok: true; readonly replacement: PlannedReplacement; readonly options: readonly NewNodeOption[] }
  | { readonly ok: false; readonly reason: string; readonly thresholdBlocked?: boolean };

interface PricedOption {
  readonly option: NewNodeOption;
  readonly worstPricePerHour: number;
}

const priced = (options: readonly NewNodeOption[]): PricedOption[] =>
  options.map((option) => ({ option, worstPricePerHour: worstPricePerHour(option.offerings) }));

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
    // Spot nodes are only ever swapped for spot, single-node, behind the gate (Karpenter's rules).
    if (!gates.spotToSpotConsolidation) {
      return { ok: false, reason: 'replacing a spot node with a cheaper spot node needs the SpotToSpotConsolidation feature gate' };
    }
    if (candidates.length > 1) return { ok: false, reason: 'spot-to-spot consolidation only replaces one node at a time' };
    pool = restrictCapacityType(pool, 'spot');
  }

  if (options.sameTypeGuard) {
    for (const c of candidates) {
      const sameType = (o: NewNodeOption) => o.instanceType.name === c.node.instanceType;
      pool = pool.filter((o) => !sameType(o) || worstPricePerHour(o.offerings) < (c.pricePerHour ?? 0));
    }
  }

  if (pool.length === 0) return { ok: false, reason: 'no instance type the NodePools allow can hold the pods' };
  const minValues = newNode.minValues ?? [];
  const allShort = minValuesShortfall(minValues, pool);
  if (allShort) return { ok: false, reason: `no replacement: ${describeShortfall(allShort, 'the instance types that can hold the pods')}` };

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
  // Karpenter keeps minValues when it trims the types by price: the cheaper ones must still span them.
  const cheaperShort = minValuesShortfall(minValues, chosen);
  if (cheaperShort) return { ok: false, reason: `no replacement: ${describeShortfall(cheaperShort, 'the instance types cheaper than the node(s) now')}` };
  if (allSpot) {
    if (chosen.length < SPOT_TO_SPOT_MIN_TYPES) {
      return {
        ok: false,
        reason: `spot-to-spot consolidation needs at least ${SPOT_TO_SPOT_MIN_TYPES} cheaper instance types, found ${chosen.length}`,
      };
    }
    // The launch list is cut to the cheapest 15, or to as many as minValues needs if that is more.
    const keep = Math.max(SPOT_TO_SPOT_MIN_TYPES, cheapestMeetingMinValues(minValues, [...chosen].sort(byCheapest)) ?? 0);
    chosen = [...chosen].sort(byCheapest).slice(0, keep);
  } else if (chosen.some((o) => o.offerings.some((f) => f.capacityType === 'spot'))) {
    // The types were judged cheaper assuming spot may be used; if spot capacity runs out the launch must
    // fail rather than fall back to a dearer on-demand node, so a mixed replacement is pinned to spot.
    chosen = restrictCapacityType(chosen, 'spot');
    const spotShort = minValuesShortfall(minValues, chosen);
    if (spotShort) return { ok: false, reason: `no replacement: ${describeShortfall(spotShort, 'the cheaper instance types offered as spot')}` };
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
    worstPricePerHour: roundMoney(Math.max(...chosen.map((o) => worstPricePerHour(o.offerings)))),
  };
  return { ok: true, replacement, options: chosen };
}

function byCheapest(a: NewNodeOption, b: NewNodeOption): number {
  return a.cheapestPricePerHour - b.cheapestPricePerHour || a.instanceType.name.localeCompare(b.instanceType.name);
}
