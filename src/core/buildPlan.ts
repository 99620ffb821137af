// Turns a pass's outcome into the plan (docs/file-formats.md, "The plan").
import type { PassOutcome } from './disruption/pass.ts';
import { nodePricePerHour, roundCost, roundMoney, type PriceIndex } from './disruption/prices.ts';
import { formatTime } from './disruption/text.ts';
import { planEfficiency } from './efficiency/efficiency.ts';
import type { LowerBound } from './efficiency/lowerBound.ts';
import { withExpectedDestinations, type WaveProjection } from './disruption/laterWaves.ts';
import type { Node, Pod } from './model/types.ts';
import { HOURS_PER_MONTH, type Decision, type NodeUsage, type Plan, type PlanNode, type PlanProjection, type PoolActuator } from './plan.ts';
import { CPU, MEMORY, PODS } from './scheduling/resources.ts';

export interface PlanContext {
  readonly nowMs: number;
  readonly dryRun: boolean;
  readonly prices: PriceIndex;
  readonly notes?: readonly string[];
  /** Extra reasons per node from pass-level rules (stabilization, skipped search). */
  readonly nodeReasons?: ReadonlyMap<string, readonly string[]>;
  /** The lower bound for this cluster (efficiency/lowerBound.ts); the plan gets `efficiency` with it. */
  readonly lowerBound?: LowerBound;
  /** The cluster's pods, for each node's requested/allocatable figures (omitted: no `usage`). */
  readonly pods?: readonly Pod[];
  /** The later waves projected after this pass (disruption/laterWaves.ts); the plan gets `projection`. */
  readonly projection?: WaveProjection;
  /** Which actuator acts on each pool in scope (disruption/actuatorChoice.ts); the plan gets `actuators`. */
  readonly actuators?: ReadonlyMap<string, PoolActuator>;
}

/** Sums the requests of the pods still holding resources on each node. */
function usageByNode(pods: readonly Pod[]): Map<string, { cpu: number; memory: number; pods: number }> {
  const byNode = new Map<string, { cpu: number; memory: number; pods: number }>();
  for (const pod of pods) {
    if (pod.nodeName === undefined || pod.phase === 'Succeeded' || pod.phase === 'Failed') continue;
    const sum = byNode.get(pod.nodeName) ?? { cpu: 0, memory: 0, pods: 0 };
    sum.cpu += pod.requests[CPU] ?? 0;
    sum.memory += pod.requests[MEMORY] ?? 0;
    sum.pods += 1;
    byNode.set(pod.nodeName, sum);
  }
  return byNode;
}

function nodeUsage(node: Node, used: { cpu: number; memory: number; pods: number } | undefined): NodeUsage {
  return {
    cpuRequestedMillis: Math.round(used?.cpu ?? 0),
    cpuAllocatableMillis: Math.round(node.allocatable[CPU] ?? 0),
    memoryRequestedBytes: Math.round(used?.memory ?? 0),
    memoryAllocatableBytes: Math.round(node.allocatable[MEMORY] ?? 0),
    pods: used?.pods ?? 0,
    podsAllocatable: node.allocatable[PODS] ?? 0,
  };
}

const NOTHING_FOUND = 'considered, but no deletion, replacement or merge that saves money was found';

export function buildPlan(outcome: PassOutcome, ctx: PlanContext): Plan {
  const nodes: PlanNode[] = [];
  const nodePrices = new Map<string, number>();
  const used = ctx.pods === undefined ? undefined : usageByNode(ctx.pods);
  for (const verdict of outcome.verdicts) {
    if (verdict.poolName === undefined) {
      // Not in `nodes` (one entry per node of a NodePool), but its price counts in `efficiency`.
      const price = nodePricePerHour(verdict.node, ctx.prices);
      if (price !== undefined) nodePrices.set(verdict.node.name, price);
      continue;
    }
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
      ...(used !== undefined ? { usage: nodeUsage(verdict.node, used.get(name)) } : {}),
    });
  }
  // A decision of unknown savings makes the total no figure (never $0); what the others save is kept apart.
  const knownSavings = roundMoney(actedSavings(outcome.decisions));
  const unpricedDecisions = outcome.decisions.filter((d) => d.savingsPerHour === null).length;
  const savingsPerHour = unpricedDecisions > 0 ? null : knownSavings;
  const firstDestinations = ctx.projection?.firstDestinations;
  return {
    dryRun: ctx.dryRun,
    evaluatedAt: formatTime(ctx.nowMs),
    decisions: firstDestinations === undefined ? outcome.decisions : withExpectedDestinations(outcome.decisions, firstDestinations),
    nodes,
    ...(outcome.rejectedMoves.length > 0 ? { rejectedMoves: outcome.rejectedMoves } : {}),
    notes: ctx.notes ?? [],
    summary: {
      savingsPerHour,
      savingsPerMonth: savingsPerHour === null ? null : Math.round(savingsPerHour * HOURS_PER_MONTH * 100) / 100,
      ...(unpricedDecisions > 0 ? { knownSavingsPerHour: knownSavings, unpricedDecisions } : {}),
      nodesDisrupted: outcome.disruptedBy.size,
      podsEvicted: outcome.decisions.reduce((sum, d) => sum + d.evictedPods.length, 0),
      nodesOutsideNodePools: outcome.verdicts.filter((v) => v.poolName === undefined).length,
    },
    ...(ctx.lowerBound ? { efficiency: planEfficiency(outcome, outcome.decisions, ctx.lowerBound, nodePrices) } : {}),
    ...(ctx.projection ? { projection: planProjection(outcome.decisions, ctx.projection, ctx.lowerBound) } : {}),
    ...(ctx.actuators ? { actuators: Object.fromEntries([...ctx.actuators].map(([pool, a]) => [pool, { actuator: a.actuator, why: a.why }])) } : {}),
  };
}

/** Savings of the decisions (a move of unknown savings counts as nothing). */
const actedSavings = (decisions: readonly Decision[]): number => decisions.reduce((sum, d) => sum + (d.savingsPerHour ?? 0), 0);

/** Decisions whose savings are unknown (a node of unknown price). */
const unpriced = (decisions: readonly Decision[]): number => decisions.filter((d) => d.savingsPerHour === null).length;

function planProjection(decisions: readonly Decision[], projection: WaveProjection, bound: LowerBound | undefined): PlanProjection {
  const waveSavings = projection.waves.map((w) => actedSavings(w.decisions));
  // Later waves only carry out moves a pass would take, each saving money: they never end above the
  // pass's own end (a wave of negative savings would be a defect; it is not counted against the pass).
  const savings = waveSavings.reduce((sum, s) => sum + Math.max(0, s), 0);
  const acted = projection.waves.flatMap((w) => w.decisions);
  const unknown = unpriced(acted) + unpriced(decisions);
  const priceless = unknown > 0 || (bound?.unpricedNodes?.length ?? 0) > 0;
  const start = bound?.startCostPerHour;
  const end = start === undefined || priceless ? undefined : start - actedSavings(decisions) - savings;
  const lower = bound?.lowerBoundPerHour;
  return {
    waves: projection.waves.map((w, i) => ({
      wave: w.wave,
      evaluatedAt: formatTime(w.atMs),
      savingsPerHour: unpriced(w.decisions) > 0 ? null : roundMoney(waveSavings[i]!),
      decisions: w.decisions,
      ...(w.waitedFor !== undefined ? { waitedFor: w.waitedFor } : {}),
      ...(w.relaunched && w.relaunched.length > 0 ? { relaunched: w.relaunched.map((r) => ({ node: r.node, launchedAt: formatTime(r.launchedAtMs) })) } : {}),
      ...(w.evictedAgain && w.evictedAgain.length > 0 ? { evictedAgain: w.evictedAgain } : {}),
    })),
    stoppedBecause: projection.stoppedBecause,
    savingsPerHour: unpriced(acted) > 0 ? null : roundMoney(savings),
    ...(unpriced(acted) > 0 ? { unpricedDecisions: unpriced(acted) } : {}),
    endCostPerHour: end === undefined ? null : roundMoney(end),
    ratio: end === undefined || lower === undefined || lower <= 0 ? null : Math.round((end / lower) * 1000) / 1000,
    nodesDisrupted: acted.reduce((n, d) => n + d.nodes.length, 0),
    podsEvicted: acted.reduce((n, d) => n + d.evictedPods.length, 0),
  };
}
