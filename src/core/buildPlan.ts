// Turns a pass's outcome into the plan of CONTRACT section 5.
import type { PassOutcome } from './disruption/pass.ts';
import { nodePricePerHour, roundCost, roundMoney, type PriceIndex } from './disruption/prices.ts';
import { formatTime } from './disruption/text.ts';
import { planEfficiency } from './efficiency/efficiency.ts';
import type { LowerBound } from './efficiency/lowerBound.ts';
import { HOURS_PER_MONTH, type Plan, type PlanNode } from './plan.ts';

export interface PlanContext {
  readonly nowMs: number;
  readonly dryRun: boolean;
  readonly prices: PriceIndex;
  readonly notes?: readonly string[];
  /** Extra reasons per node from pass-level rules (stabilization, skipped search). */
  readonly nodeReasons?: ReadonlyMap<string, readonly string[]>;
  /** The lower bound for this cluster (efficiency/lowerBound.ts); the plan gets `efficiency` with it. */
  readonly lowerBound?: LowerBound;
}

const NOTHING_FOUND = 'considered, but no deletion, replacement or merge that saves money was found';

export function buildPlan(outcome: PassOutcome, ctx: PlanContext): Plan {
  const nodes: PlanNode[] = [];
  const nodePrices = new Map<string, number>();
  for (const verdict of outcome.verdicts) {
    if (verdict.poolName === undefined) continue; // CONTRACT: one entry per node of a NodePool
    const name = verdict.node.name;
    const decision = outcome.disruptedBy.get(name);
    const candidate = verdict.candidate !== undefined && outcome.evaluated.has(name);
    let reasons: string[] = [...verdict.reasons, ...(ctx.nodeReasons?.get(name) ?? [])];
    if (verdict.candidate !== undefined && !outcome.evaluated.has(name)) {
      reasons.push(`NodePool "${verdict.poolName}" is handled by the other function of this deployment (emptiness TTL owns WhenEmpty pools, consolidation the rest)`);
    }
    if (candidate && decision === undefined) {
      const notes = outcome.notes.get(name) ?? [];
      reasons = [...reasons, ...(notes.length > 0 ? notes : reasons.length > 0 ? [] : [NOTHING_FOUND])];
    }
    const price = nodePricePerHour(verdict.node, ctx.prices);
    if (price !== undefined) nodePrices.set(name, price);
    nodes.push({
      name,
      nodePool: verdict.poolName,
      candidate,
      reasons,
      ...(decision !== undefined ? { decision } : {}),
      ...(price !== undefined ? { pricePerHour: price } : {}),
      ...(verdict.candidate ? { disruptionCost: roundCost(verdict.candidate.disruptionCost) } : {}),
      ...(verdict.node.instanceType ? { instanceType: verdict.node.instanceType } : {}),
      ...(verdict.node.capacityType ? { capacityType: verdict.node.capacityType } : {}),
      ...(verdict.node.zone ? { zone: verdict.node.zone } : {}),
    });
  }
  const savingsPerHour = roundMoney(outcome.decisions.reduce((sum, d) => sum + d.savingsPerHour, 0));
  return {
    dryRun: ctx.dryRun,
    evaluatedAt: formatTime(ctx.nowMs),
    decisions: outcome.decisions,
    nodes,
    notes: ctx.notes ?? [],
    summary: {
      savingsPerHour,
      savingsPerMonth: Math.round(savingsPerHour * HOURS_PER_MONTH * 100) / 100,
      nodesDisrupted: outcome.disruptedBy.size,
      podsEvicted: outcome.decisions.reduce((sum, d) => sum + d.evictedPods.length, 0),
    },
    ...(ctx.lowerBound ? { efficiency: planEfficiency(outcome, outcome.decisions, ctx.lowerBound, nodePrices) } : {}),
  };
}
