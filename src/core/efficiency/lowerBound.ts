// Issue 11 item 5: a cost no plan can beat, to judge a plan against. A fluid relaxation of the packing
// problem, solved exactly as a linear program (simplex.ts):
//   - nodes that may not be touched (not candidates: PDBs, do-not-disrupt, consolidateAfter, unmanaged,
//     in flight ...) are kept at their price, and their free room may take moved pods;
//   - every candidate node may be kept (fractionally, at its price and with its room) or not;
//   - any number (fractional) of every instance type a NodePool may launch, at its cheapest allowed
//     offering, with the pool's daemonset overhead taken off its room;
//   - the pods of the candidates must be covered: cpu, memory and pod-slot rows.
// Everything a real plan must respect and the relaxation ignores (pods are indivisible, node affinity,
// topology, pool limits, budgets, the savings threshold) can only raise the real optimum, so the
// result is a true lower bound; how far a plan stays above it is what is left, or blocked.
import type { Catalog, Cluster, NodePool } from '../model/types.ts';
import type { NodeVerdict } from '../disruption/candidates.ts';
import { indexCatalog, nodePricePerHour } from '../disruption/prices.ts';
import { buildExistingNodes } from '../scheduling/existingNodes.ts';
import { TypeCatalog } from '../scheduling/instanceTypes.ts';
import { buildPools } from '../scheduling/nodePools.ts';
import { solveLinearProgram, type LinearRow } from './simplex.ts';

export interface LowerBoundInput {
  readonly cluster: Cluster;
  readonly nodePools: readonly NodePool[];
  readonly catalog: Catalog;
  readonly verdicts: readonly NodeVerdict[];
  /** Candidates the pass may act on (default: every candidate). */
  readonly inScope?: ReadonlySet<string>;
}

export interface LowerBound {
  /** The cost per hour of the cluster's priced nodes now. */
  readonly startCostPerHour: number;
  /** The cost per hour of the nodes no plan may touch (part of the bound). */
  readonly lockedCostPerHour: number;
  /** No plan ends below this, $/hour; undefined when the candidates' pods cannot be covered at all. */
  readonly lowerBoundPerHour: number | undefined;
}

const CORES = 1000;
const GIB = 1024 ** 3;

export function clusterLowerBound(input: LowerBoundInput): LowerBound {
  const prices = indexCatalog(input.catalog);
  const optional = new Map(
    input.verdicts.filter((v) => v.candidate !== undefined && (input.inScope?.has(v.node.name) ?? true)).map((v) => [v.node.name, v.candidate!]),
  );
  let startCost = 0;
  let lockedCost = 0;
  for (const node of input.cluster.nodes) {
    const price = nodePricePerHour(node, prices) ?? 0;
    startCost += price;
    if (!optional.has(node.name)) lockedCost += price;
  }

  // Demand: the candidates' movable pods, less what the kept nodes have free.
  const demand = { cpu: 0, memory: 0, pods: 0 };
  const movable = new Set<string>();
  for (const c of optional.values()) {
    for (const pod of c.pods) {
      movable.add(pod.uid);
      demand.cpu += (pod.requests['cpu'] ?? 0) / CORES;
      demand.memory += (pod.requests['memory'] ?? 0) / GIB;
      demand.pods += 1;
    }
  }
  const existing = buildExistingNodes(input.cluster);
  for (const n of existing) {
    if (optional.has(n.name) || !n.receives) continue;
    demand.cpu -= Math.max(0, n.freeCpu) / CORES;
    demand.memory -= Math.max(0, n.freeMemory) / GIB;
    demand.pods -= Math.max(0, n.freePods);
  }

  // Columns: candidate nodes grouped by (price, room for movable pods), capped at their count; then
  // every type each pool may launch.
  const groups = new Map<string, { price: number; cpu: number; memory: number; pods: number; count: number }>();
  for (const n of existing) {
    const c = optional.get(n.name);
    if (!c || c.pricePerHour === undefined) continue; // a node of unknown price is never counted as kept
    let cpu = n.freeCpu;
    let memory = n.freeMemory;
    let pods = n.freePods;
    for (const pod of c.pods) {
      cpu += pod.requests['cpu'] ?? 0;
      memory += pod.requests['memory'] ?? 0;
      pods += 1;
    }
    const room = { price: c.pricePerHour, cpu: cpu / CORES, memory: memory / GIB, pods };
    const key = `${room.price}/${room.cpu}/${room.memory}/${room.pods}`;
    const group = groups.get(key);
    if (group) group.count += 1;
    else groups.set(key, { ...room, count: 1 });
  }
  const launchable = new Map<string, { price: number; cpu: number; memory: number; pods: number }>();
  const pools = buildPools(input.nodePools, new TypeCatalog(input.catalog), input.cluster.daemonSets, existing);
  for (const pool of pools) {
    for (const t of pool.types) {
      if (t.offerings.length === 0 || t.roomPods <= 0) continue;
      const price = Math.min(...t.offerings.map((o) => o.pricePerHour));
      const room = { price, cpu: t.roomCpu / CORES, memory: t.roomMemory / GIB, pods: t.roomPods };
      const key = `${room.cpu}/${room.memory}/${room.pods}`;
      const known = launchable.get(key);
      if (!known || known.price > price) launchable.set(key, room);
    }
  }

  const columns = [...groups.values(), ...launchable.values()];
  if (demand.cpu <= 1e-9 && demand.memory <= 1e-9 && demand.pods <= 1e-9) {
    return { startCostPerHour: startCost, lockedCostPerHour: lockedCost, lowerBoundPerHour: lockedCost };
  }
  const rows: LinearRow[] = [
    { coefficients: columns.map((c) => c.cpu), sense: '>=', rhs: Math.max(0, demand.cpu) },
    { coefficients: columns.map((c) => c.memory), sense: '>=', rhs: Math.max(0, demand.memory) },
    { coefficients: columns.map((c) => c.pods), sense: '>=', rhs: Math.max(0, demand.pods) },
  ];
  [...groups.values()].forEach((g, i) => {
    rows.push({ coefficients: columns.map((_, j) => (j === i ? 1 : 0)), sense: '<=', rhs: g.count });
  });
  const solution = solveLinearProgram({ costs: columns.map((c) => c.price), rows });
  if (solution.status !== 'optimal') return { startCostPerHour: startCost, lockedCostPerHour: lockedCost, lowerBoundPerHour: undefined };
  return { startCostPerHour: startCost, lockedCostPerHour: lockedCost, lowerBoundPerHour: lockedCost + solution.objective };
}
