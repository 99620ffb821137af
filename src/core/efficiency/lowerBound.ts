// A cost no plan can beat, to judge a plan against: a linear relaxation of the packing problem, solved
// exactly (simplex.ts). It is a relaxation of what every plan must respect, so it stays a true lower
// bound; and it keeps each pod to the capacity that could really hold it, so it is not a figure no
// packing could come near:
//   - the nodes no plan may touch (not candidates: PDBs, do-not-disrupt, consolidateAfter, unmanaged,
//     in flight ...) are kept at their price; their free room may take a moved pod that fits in it,
//     tolerates their taints and matches its node selector / required node affinity / volume zones;
//   - every candidate node may be kept (fractionally, at its price) with its room, for its own pods and
//     for other pods it could take under the same rules;
//   - new nodes: any number (fractional) of every offering a NodePool may launch (instance type, zone,
//     capacity type: each at its own price), with the pool's daemonset overhead taken off its room; a
//     pod may use one only when it fits in one whole node of that type and the pool's taints, labels,
//     zone and capacity type suit it.
// Pods are grouped by what they may run on and their size; each group's pods are spread (fractionally)
// over the node kinds open to it, and each kind's cpu, memory and pod slots must hold what it gets.
// What the relaxation leaves out (pods are indivisible, pod (anti-)affinity, topology spread, host
// ports, pool limits, budgets, the savings threshold) can only raise the real optimum.
import type { Catalog, Cluster, NodePool, Pod } from '../model/types.ts';
import { LabelKeys } from '../model/types.ts';
import type { NodeVerdict } from '../disruption/candidates.ts';
import { indexCatalog, nodePricePerHour } from '../disruption/prices.ts';
import { indexCluster, type ExistingNode } from '../scheduling/existingNodes.ts';
import { typeCatalogOf, type TypeCatalog } from '../scheduling/instanceTypes.ts';
import { alternativeSets, labelsMatchAlternatives, nodeConstraintAlternatives } from '../scheduling/nodeAffinity.ts';
import { buildPools, type PoolInfo, type PoolType } from '../scheduling/nodePools.ts';
import { intersectKey, isSatisfiable, valuesIn, type RequirementSet } from '../scheduling/requirements.ts';
import { CPU, MEMORY, PODS } from '../scheduling/resources.ts';
import { firstUntoleratedTaint } from '../scheduling/taints.ts';
import { solveLinearProgram, type LinearRow } from './simplex.ts';

export interface LowerBoundInput {
  readonly cluster: Cluster;
  readonly nodePools: readonly NodePool[];
  readonly catalog: Catalog;
  readonly verdicts: readonly NodeVerdict[];
  /** Candidates the pass may act on (default: every candidate). */
  readonly inScope?: ReadonlySet<string>;
  /** At most this many LP entries (rows x columns) before pod sizes are grouped more coarsely. */
  readonly maxEntries?: number;
}

export interface LowerBound {
  /** The cost per hour of the cluster's priced nodes now. */
  readonly startCostPerHour: number;
  /** The cost per hour of the nodes no plan may touch (part of the bound). */
  readonly lockedCostPerHour: number;
  /** No plan ends below this, $/hour; undefined when the candidates' pods cannot be covered at all. */
  readonly lowerBoundPerHour: number | undefined;
  /** Nodes whose price is unknown: start, end and bound then leave them out, so no ratio is a figure. */
  readonly unpricedNodes?: readonly string[];
}

const CORES = 1000;
const GIB = 1024 ** 3;
const DEFAULT_MAX_ENTRIES = 1_500_000;

/** A kind of node the relaxation may use: a kept existing node (or a group of alike ones), or a launchable offering. */
interface Kind {
  readonly price: number;
  readonly cpu: number;
  readonly memory: number;
  readonly pods: number;
  readonly other: Readonly<Record<string, number>>;
  /** How many there are (existing nodes); undefined: as many as wanted (launches). */
  readonly count: number | undefined;
}

/** The kinds open to a pod spec: a number per distinct list, the list, the same as a set. */
interface Compatible {
  readonly id: number;
  readonly list: readonly number[];
  readonly members: ReadonlySet<number>;
}

interface PodShape {
  readonly cpu: number;
  readonly memory: number;
  readonly other: readonly (readonly [string, number])[];
}

export function clusterLowerBound(input: LowerBoundInput): LowerBound {
  const prices = indexCatalog(input.catalog);
  const optional = new Map(
    input.verdicts.filter((v) => v.candidate !== undefined && (input.inScope?.has(v.node.name) ?? true)).map((v) => [v.node.name, v.candidate!]),
  );
  let startCost = 0;
  let lockedCost = 0;
  const unpricedNodes: string[] = [];
  for (const node of input.cluster.nodes) {
    const price = nodePricePerHour(node, prices);
    if (price === undefined) unpricedNodes.push(node.name);
    startCost += price ?? 0;
    if (!optional.has(node.name)) lockedCost += price ?? 0;
  }
  const result = (lower: number | undefined): LowerBound => ({ startCostPerHour: startCost, lockedCostPerHour: lockedCost, lowerBoundPerHour: lower, unpricedNodes });

  // The pass's own index of this cluster (kept per cluster), read only.
  const existing = indexCluster(input.cluster).nodes;
  const movable: { pod: Pod; origin: number }[] = [];
  const kinds: Kind[] = [];
  const existingKinds: { kind: number; node: ExistingNode }[] = [];
  for (const n of existing) {
    const c = optional.get(n.name);
    if (c) {
      // A kept candidate holds its own pods and may take others; a node of unknown price costs nothing
      // here, as it counts nowhere else.
      let cpu = n.freeCpu;
      let memory = n.freeMemory;
      let pods = n.freePods;
      const other: Record<string, number> = { ...n.freeOther };
      for (const pod of c.pods) {
        cpu += pod.requests[CPU] ?? 0;
        memory += pod.requests[MEMORY] ?? 0;
        pods += 1;
        for (const [key, value] of otherRequests(pod)) other[key] = (other[key] ?? 0) + value;
      }
      const kind = kinds.push({ price: c.pricePerHour ?? 0, cpu, memory, pods, other, count: 1 }) - 1;
      existingKinds.push({ kind, node: n });
      for (const pod of c.pods) movable.push({ pod, origin: kind });
    } else if (n.receives) {
      const kind = kinds.push({ price: 0, cpu: n.freeCpu, memory: n.freeMemory, pods: n.freePods, other: n.freeOther, count: 1 }) - 1;
      existingKinds.push({ kind, node: n });
    }
  }
  if (movable.length === 0) return result(lockedCost);

  // The same TypeCatalog the pass's simulators built for this catalog (it is never changed once made).
  const typeCatalog = typeCatalogOf(input.catalog);
  const pools = buildPools(input.nodePools, typeCatalog, input.cluster.daemonSets, existing);
  const launchKinds: { kind: number; pool: PoolInfo; type: PoolType; zone: string; capacityType: string }[] = [];
  for (const pool of pools) {
    for (const type of pool.types) {
      if (type.roomPods <= 0) continue;
      for (const o of type.offerings) {
        const kind = kinds.push({ price: o.pricePerHour, cpu: type.roomCpu, memory: type.roomMemory, pods: type.roomPods, other: type.roomOther, count: undefined }) - 1;
        launchKinds.push({ kind, pool, type, zone: o.zone, capacityType: o.capacityType });
      }
    }
  }

  // Which kinds each pod may use, worked out once per pod spec (a workload's replicas share it). Each
  // distinct list gets a number, so that a class's key never spells out a list of a thousand kinds.
  const bySpec = new Map<string, Compatible>();
  const byList = new Map<string, Compatible>();
  const compatibleKinds = (pod: Pod): Compatible => {
    const shape = shapeOf(pod);
    const spec = JSON.stringify([pod.tolerations, nodeConstraintAlternatives(pod), pod.volumeZones ?? null, shape]);
    let known = bySpec.get(spec);
    if (!known) {
      const list: number[] = [];
      const alternatives = nodeConstraintAlternatives(pod);
      const sets = alternativeSets(alternatives);
      const zones = pod.volumeZones ? new Set(pod.volumeZones) : undefined;
      for (const { kind, node } of existingKinds) {
        if (!node.receives || !fits(shape, kinds[kind]!)) continue;
        if (firstUntoleratedTaint(pod.tolerations, node.blockingTaints) !== undefined) continue;
        if (!labelsMatchAlternatives(node.labels, alternatives)) continue;
        if (zones && (node.node.zone === undefined || !zones.has(node.node.zone))) continue;
        list.push(kind);
      }
      for (const l of launchKinds) {
        if (!fits(shape, kinds[l.kind]!)) continue;
        if (firstUntoleratedTaint(pod.tolerations, l.pool.taints) !== undefined) continue;
        if (zones && !zones.has(l.zone)) continue;
        if (!sets.some((set) => offeringMatches(set, typeCatalog, l))) continue;
        list.push(l.kind);
      }
      const listKey = list.join(',');
      known = byList.get(listKey) ?? { id: byList.size, list, members: new Set(list) };
      byList.set(listKey, known);
      bySpec.set(spec, known);
    }
    return known;
  };

  // Classes: pods with the same kinds open to them (their own node included) and, for the capacity
  // rows, the same size. Sizes are rounded down to a grid (a smaller pod never makes the bound higher)
  // only when the exact problem would be too large to solve.
  const maxEntries = input.maxEntries ?? DEFAULT_MAX_ENTRIES;
  for (const grid of [1, 1.05, 1.15, 1.4, 2, 4]) {
    const classes = new Map<string, { kinds: readonly number[]; cpu: number; memory: number; count: number }>();
    for (const { pod, origin } of movable) {
      const open = compatibleKinds(pod);
      // Its own node comes first when no rule above lets it back there (its pods are there already).
      const home = open.members.has(origin);
      const cpu = roundDown(pod.requests[CPU] ?? 0, grid);
      const memory = roundDown(pod.requests[MEMORY] ?? 0, grid);
      const key = `${open.id}|${home ? '' : origin}|${cpu}|${memory}`;
      const known = classes.get(key);
      if (known) known.count += 1;
      else classes.set(key, { kinds: home ? open.list : [origin, ...open.list], cpu, memory, count: 1 });
    }
    const lp = buildProgram([...classes.values()], kinds);
    if (grid < 4 && lp.rows.length * lp.costs.length > maxEntries) continue;
    const solution = solveLinearProgram(lp);
    if (solution.status !== 'optimal') return result(undefined);
    return result(lockedCost + solution.objective);
  }
  return result(undefined); // not reached: the last grid is always solved
}

/**
 * The LP over the classes and the kinds any class may use. A launch kind is left out when another one
 * open to at least its classes does its work for no more: `a` times its room in every resource for at
 * most `a` times its price (in a fluid relaxation, 1/a of that node replaces one of these). So of a
 * family priced by size only its largest type stays, and of a type offered in several zones, the
 * cheapest zone open to the same pods.
 */
function buildProgram(classes: readonly { kinds: readonly number[]; cpu: number; memory: number; count: number }[], kinds: readonly Kind[]): { costs: number[]; rows: LinearRow[] } {
  const classesOf = new Map<number, Set<number>>();
  classes.forEach((c, i) => c.kinds.forEach((k) => (classesOf.get(k) ?? classesOf.set(k, new Set()).get(k)!).add(i)));
  const covers = (a: number, b: number): boolean => {
    const ca = classesOf.get(a)!;
    for (const c of classesOf.get(b)!) if (!ca.has(c)) return false;
    return true;
  };
  const dominates = (a: Kind, b: Kind): boolean => {
    const scale = Math.min(a.cpu / b.cpu, a.memory / b.memory, Number.isFinite(a.pods) && Number.isFinite(b.pods) ? a.pods / b.pods : Number.POSITIVE_INFINITY);
    return a.price <= scale * b.price + 1e-12;
  };
  const perCore = (k: number): number => kinds[k]!.price / Math.max(kinds[k]!.cpu, 1);
  const launch = [...classesOf.keys()].filter((k) => kinds[k]!.count === undefined).sort((a, b) => perCore(a) - perCore(b) || a - b);
  let front: number[] = [];
  for (const k of launch) {
    if (front.some((f) => covers(f, k) && dominates(kinds[f]!, kinds[k]!))) continue;
    front = front.filter((f) => !(covers(k, f) && dominates(kinds[k]!, kinds[f]!)));
    front.push(k);
  }
  // Existing nodes alike for every class (the same classes, price and room) are one kind with their count.
  const counts = new Map<number, number>();
  const alike = new Map<string, number>();
  for (const k of classesOf.keys()) {
    const kind = kinds[k]!;
    if (kind.count === undefined) continue;
    const key = `${[...classesOf.get(k)!].sort((a, b) => a - b).join(',')}|${kind.price}/${kind.cpu}/${kind.memory}/${kind.pods}`;
    const first = alike.get(key);
    if (first === undefined) {
      alike.set(key, k);
      counts.set(k, kind.count);
    } else counts.set(first, counts.get(first)! + kind.count);
  }
  const kept = [...front, ...counts.keys()].sort((a, b) => a - b);

  // Columns: one count per kind (y), then one per (class, kind) pair (x: pods of the class there).
  const costs: number[] = kept.map((k) => kinds[k]!.price);
  const byClass: number[][] = classes.map(() => []);
  const byKind: { j: number; cls: number }[][] = kept.map(() => []);
  kept.forEach((k, column) => {
    for (const cls of classesOf.get(k)!) {
      const j = costs.push(0) - 1;
      byClass[cls]!.push(j);
      byKind[column]!.push({ j, cls });
    }
  });
  const width = costs.length;
  const rows: LinearRow[] = [];
  const row = (entries: readonly (readonly [number, number])[], sense: LinearRow['sense'], rhs: number): void => {
    const coefficients = new Array<number>(width).fill(0);
    for (const [j, v] of entries) coefficients[j] = v;
    rows.push({ coefficients, sense, rhs });
  };
  classes.forEach((c, i) => row(byClass[i]!.map((j) => [j, 1] as const), '>=', c.count));
  kept.forEach((k, column) => {
    const kind = kinds[k]!;
    const mine = byKind[column]!;
    // Room in cores, GiB and pod slots (a node that states no pod limit has none).
    const resources: [number, (c: { cpu: number; memory: number }) => number][] = [
      [kind.cpu / CORES, (c) => c.cpu / CORES],
      [kind.memory / GIB, (c) => c.memory / GIB],
      [Number.isFinite(kind.pods) ? kind.pods : Number.NaN, () => 1],
    ];
    for (const [room, size] of resources) {
      if (!Number.isNaN(room)) row([[column, Math.max(0, room)], ...mine.map((m) => [m.j, -size(classes[m.cls]!)] as const)], '>=', 0);
    }
    const count = counts.get(k);
    if (count !== undefined) row([[column, 1]], '<=', count);
  });
  return { costs, rows };
}

function shapeOf(pod: Pod): PodShape {
  return { cpu: pod.requests[CPU] ?? 0, memory: pod.requests[MEMORY] ?? 0, other: otherRequests(pod) };
}

function otherRequests(pod: Pod): [string, number][] {
  return Object.entries(pod.requests).filter(([key, value]) => key !== CPU && key !== MEMORY && key !== PODS && value > 0);
}

/** Whether the pod fits in one whole node of the kind (its cpu, memory, a pod slot, any other resource). */
function fits(shape: PodShape, kind: Kind): boolean {
  if (shape.cpu > kind.cpu || shape.memory > kind.memory || kind.pods < 1) return false;
  return shape.other.every(([key, value]) => (kind.other[key] ?? 0) >= value);
}

/** Whether a node of this pool, type, zone and capacity type could satisfy one node-constraint alternative. */
function offeringMatches(set: RequirementSet, catalog: TypeCatalog, l: { pool: PoolInfo; type: PoolType; zone: string; capacityType: string }): boolean {
  for (const [key, requirement] of set) {
    const here =
      key === LabelKeys.zone
        ? valuesIn([l.zone])
        : key === LabelKeys.capacityType
          ? valuesIn([l.capacityType])
          : intersectKey(catalog.openKey(l.pool.requirements, key), catalog.typeKey(l.type.info, key));
    if (!isSatisfiable(intersectKey(here, requirement))) return false;
  }
  return true;
}

/** `value` rounded down to a geometric grid of ratio `grid` (1: unchanged). */
function roundDown(value: number, grid: number): number {
  if (grid === 1 || value <= 0) return value;
  return Math.pow(grid, Math.floor(Math.log(value) / Math.log(grid)));
}

