// The plan's `efficiency`: where the plan ends against the lower bound no plan can
// beat, and what holds the rest back, so an operator sees how much is left and why.
import type { PassOutcome } from '../disruption/pass.ts';
import { roundMoney } from '../disruption/prices.ts';
import type { Decision, PlanEfficiency } from '../plan.ts';
import type { LowerBound } from './lowerBound.ts';

/** What keeps a node where it is, by the first matching sentence of its reasons. */
const CAUSES: readonly (readonly [key: string, pattern: RegExp])[] = [
  ['pdb', /PodDisruptionBudget/],
  ['doNotDisrupt', /do-not-disrupt|do-not-evict|do-not-consolidate/],
  ['budget', /disruption budget|budget/i],
  ['threshold', /below required/],
  ['balancedScore', /Balanced: /],
  ['pendingPods', /pending pod/],
  ['kubeScheduler', /kube-scheduler/],
  ['consolidateAfter', /consolidateAfter|consolidationGracePeriod|minimum node lifetime/],
  ['notManaged', /not managed by a NodePool|not configured/],
  ['noOwner', /no controller owner/],
  ['inFlight', /unfinished command|being disrupted|being deleted/],
  ['policy', /consolidationPolicy|consolidation is disabled/],
  ['notReady', /not Ready/],
];

export function planEfficiency(outcome: PassOutcome, decisions: readonly Decision[], bound: LowerBound, prices: ReadonlyMap<string, number>): PlanEfficiency {
  // A decision of unknown savings (a node of unknown price deleted) counts as nothing: that node is not
  // in the start cost either.
  const savings = decisions.reduce((sum, d) => sum + (d.savingsPerHour ?? 0), 0);
  const endCost = bound.startCostPerHour - savings;
  const heldBack: Record<string, { nodes: number; pricePerHour: number }> = {};
  for (const verdict of outcome.verdicts) {
    const name = verdict.node.name;
    if (outcome.disruptedBy.has(name)) continue;
    const reasons = [...verdict.reasons, ...(outcome.notes.get(name) ?? [])];
    if (verdict.candidate !== undefined && reasons.length === 0) continue;
    const cause = CAUSES.find(([, pattern]) => reasons.some((r) => pattern.test(r)))?.[0] ?? (verdict.candidate ? 'noCheaperMove' : 'other');
    const entry = (heldBack[cause] ??= { nodes: 0, pricePerHour: 0 });
    entry.nodes += 1;
    entry.pricePerHour = roundMoney(entry.pricePerHour + (prices.get(name) ?? 0));
  }
  // A node of unknown price is in neither the start, the end nor the bound: no ratio compares them then.
  const unpricedNodes = bound.unpricedNodes?.length ?? 0;
  const lower = unpricedNodes > 0 ? undefined : bound.lowerBoundPerHour;
  return {
    startCostPerHour: roundMoney(bound.startCostPerHour),
    endCostPerHour: roundMoney(endCost),
    lowerBoundPerHour: lower === undefined ? null : roundMoney(lower),
    ratio: lower === undefined || lower <= 0 ? null : Math.round((endCost / lower) * 1000) / 1000,
    leftPerHour: lower === undefined ? null : roundMoney(Math.max(0, endCost - lower)),
    lockedCostPerHour: roundMoney(bound.lockedCostPerHour),
    heldBack,
    ...(unpricedNodes > 0 ? { unpricedNodes } : {}),
  };
}

/** The plan's efficiency as one line for a person. */
export function describeEfficiency(e: PlanEfficiency): string {
  const money = (n: number) => `$${n.toFixed(4)}/hr`;
  if (e.unpricedNodes !== undefined) return `Efficiency: no figure: ${e.unpricedNodes} node(s) have no price in the catalog.`;
  if (e.lowerBoundPerHour === null) return `Efficiency: end cost ${money(e.endCostPerHour)} (from ${money(e.startCostPerHour)}); no lower bound (the pods cannot be covered by any allowed capacity).`;
  const held = Object.entries(e.heldBack)
    .sort((a, b) => b[1].pricePerHour - a[1].pricePerHour)
    .map(([cause, v]) => `${cause} ${v.nodes} node(s) ${money(v.pricePerHour)}`)
    .join(', ');
  return (
    `Efficiency: end cost ${money(e.endCostPerHour)} (from ${money(e.startCostPerHour)}) against a lower bound of ${money(e.lowerBoundPerHour)}` +
    `${e.ratio === null ? '' : ` (${e.ratio.toFixed(3)}x)`}; a better packing could save at most ${money(e.leftPerHour ?? 0)} more` +
    `${held ? `; nodes kept: ${held}` : ''}.`
  );
}
