// How a replacement node is chosen once the simulation says one new node would hold the pods
// (Karpenter's consolidation design: node replacement; Karpenter's savings-threshold design; Karpenter's
// spot rules).
import type { FeatureGates } from '../featureGates.ts';
import type { PlannedReplacement } from '../plan.ts';
import type { NewNodeOption, NewNodePlan } from '../scheduling/types.ts';
import type { Candidate } from './candidates.ts';
import { cheapestMeetingMinValues, describeShortfall, minValuesShortfall } from './minValues.ts';
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
  const minValues = newNode.minValues ?? [];
  const allShort = minValuesShortfall(minValues, pool);
  if (allShort) return { ok: false, reason: `no replacement: ${describeShortfall(allShort, 'the instance types that can hold the pods')}` };

  // Cheaper by more than float noise: three nodes at $0.1 + $0.1 + $0.4 sum to 0.6000000000000001,
  // and a $0.6 node in their place saves nothing (Karpenter's rule: savings above zero).
  const cheaper = priced(pool).filter((p) => p.worstPricePerHour < currentPricePerHour - 1e-9);
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
  if (allSpot && candidates.length === 1) {
    if (chosen.length < SPOT_TO_SPOT_MIN_TYPES) {
      return {
        ok: false,
        reason: `spot-to-spot consolidation needs at least ${SPOT_TO_SPOT_MIN_TYPES} cheaper instance types, found ${chosen.length}`,
      };
    }
    // The launch list is cut to the cheapest 15, or to as many as minValues needs if that is more.
    const keep = Math.max(SPOT_TO_SPOT_MIN_TYPES, cheapestMeetingMinValues(minValues, [...chosen].sort(byCheapest)) ?? 0);
    chosen = [...chosen].sort(byCheapest).slice(0, keep);
  }
  if (chosen.some((o) => launchCapacityType(o.offerings) === 'spot')) {
    // The types were judged by their spot price; if spot capacity runs out the launch must fail rather
    // than fall back to a dearer on-demand node, so a replacement that may be spot is pinned to spot.
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
    worstPricePerHour: roundMoney(Math.max(...chosen.map((o) => launchPricePerHour(o.offerings)))),
  };
  return { ok: true, replacement, options: chosen };
}

function byCheapest(a: NewNodeOption, b: NewNodeOption): number {
  return a.cheapestPricePerHour - b.cheapestPricePerHour || a.instanceType.name.localeCompare(b.instanceType.name);
}

export type ReplacementsChoice =
  | { readonly ok: true; readonly replacements: readonly PlannedReplacement[] }
  | { readonly ok: false; readonly reason: string; readonly thresholdBlocked?: boolean };

/**
 * Instance types for several replacements launched by one move (an m-to-n repack or a split), or why
 * none will do. The move pays when the candidates' price minus the sum of the replacements' worst
 * launch prices reaches the threshold of the removed nodes (Karpenter's savings-threshold design, summed
 * as for any move). Each replacement starts from its cheapest type; what the threshold leaves over is
 * shared out evenly, and a replacement may launch as any type whose worst launch price stays within its
 * share, so that whichever types the launches land on, the move still pays. The capacity-type rules are
 * those of one replacement: spot nodes only become spot behind the gate, and a replacement priced by
 * spot is pinned to spot.
 */
export function chooseReplacements(candidates: readonly Candidate[], newNodes: readonly NewNodePlan[], gates: FeatureGates): ReplacementsChoice {
  if (newNodes.length === 1) {
    const one = chooseReplacement(candidates, newNodes[0]!, gates, { sameTypeGuard: candidates.length > 1 });
    return one.ok ? { ok: true, replacements: [one.replacement] } : one;
  }
  const unknown = candidates.find((c) => c.pricePerHour === undefined);
  if (unknown) return { ok: false, reason: `price of node ${unknown.node.name} is unknown, so it is never replaced` };
  const currentPricePerHour = candidates.reduce((sum, c) => sum + (c.pricePerHour ?? 0), 0);
  const allSpot = candidates.every((c) => c.node.capacityType === 'spot');
  if (allSpot && !gates.spotToSpotConsolidation) {
    return { ok: false, reason: 'replacing spot nodes with cheaper spot nodes needs the SpotToSpotConsolidation feature gate' };
  }

  const pools = newNodes.map((plan) => {
    const options = allSpot ? restrictCapacityType(plan.options, 'spot') : [...plan.options];
    return priced(options).sort((a, b) => a.worstPricePerHour - b.worstPricePerHour || a.option.instanceType.name.localeCompare(b.option.instanceType.name));
  });
  const empty = pools.findIndex((p) => p.length === 0);
  if (empty >= 0) return { ok: false, reason: `no instance type the NodePools allow can hold the pods of replacement ${empty + 1}` };
  for (const [i, pool] of pools.entries()) {
    const short = minValuesShortfall(newNodes[i]!.minValues ?? [], pool.map((p) => p.option));
    if (short) return { ok: false, reason: `no replacement: ${describeShortfall(short, `the instance types that can hold the pods of replacement ${i + 1}`)}` };
  }

  const cheapestTotal = pools.reduce((sum, p) => sum + p[0]!.worstPricePerHour, 0);
  if (cheapestTotal >= currentPricePerHour - 1e-12) {
    return {
      ok: false,
      reason: `no cheaper repack: ${newNodes.length} replacements may cost ${dollars(cheapestTotal)} against ${dollars(currentPricePerHour)} now`,
    };
  }
  const requiredCents = requiredSavingsCents(candidates);
  const slackCents = (currentPricePerHour - cheapestTotal) * 100 - requiredCents;
  if (slackCents < -1e-9) {
    return { ok: false, thresholdBlocked: true, reason: describeBlocked(candidates, (currentPricePerHour - cheapestTotal) * 100, requiredCents) };
  }
  const sharePerHour = Math.max(0, slackCents) / 100 / newNodes.length;

  const replacements: PlannedReplacement[] = [];
  for (const [i, pool] of pools.entries()) {
    const capPerHour = pool[0]!.worstPricePerHour + sharePerHour + 1e-12;
    const minValues = newNodes[i]!.minValues ?? [];
    let chosen = pool.filter((p) => p.worstPricePerHour <= capPerHour).map((p) => p.option);
    // As for one replacement: the types left within the price share must still span minValues.
    const cheaperShort = minValuesShortfall(minValues, chosen);
    if (cheaperShort) {
      return { ok: false, reason: `no replacement: ${describeShortfall(cheaperShort, `the instance types within the price share of replacement ${i + 1}`)}` };
    }
    if (allSpot && candidates.length === 1 && chosen.length < SPOT_TO_SPOT_MIN_TYPES) {
      return {
        ok: false,
        reason: `spot-to-spot consolidation needs at least ${SPOT_TO_SPOT_MIN_TYPES} cheaper instance types, found ${chosen.length} for replacement ${i + 1}`,
      };
    }
    if (chosen.some((o) => launchCapacityType(o.offerings) === 'spot')) {
      chosen = restrictCapacityType(chosen, 'spot');
      const spotShort = minValuesShortfall(minValues, chosen);
      if (spotShort) {
        return { ok: false, reason: `no replacement: ${describeShortfall(spotShort, `the instance types offered as spot for replacement ${i + 1}`)}` };
      }
    }
    chosen = [...chosen].sort(byCheapest);
    if (allSpot && candidates.length === 1) {
      chosen = chosen.slice(0, Math.max(SPOT_TO_SPOT_MIN_TYPES, cheapestMeetingMinValues(minValues, chosen) ?? 0));
    }
    const offerings = chosen.flatMap((o) => o.offerings);
    replacements.push({
      instanceTypes: chosen.map((o) => o.instanceType.name),
      capacityType: offerings.every((o) => o.capacityType === 'spot') ? 'spot' : 'on-demand',
      zones: [...new Set(offerings.map((o) => o.zone))].sort(),
      pricePerHour: roundMoney(cheapestPricePerHour(offerings)),
      nodePool: newNodes[i]!.nodePool,
      worstPricePerHour: roundMoney(Math.max(...chosen.map((o) => launchPricePerHour(o.offerings)))),
    });
  }
  return { ok: true, replacements };
}
