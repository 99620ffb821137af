// NodePools as sources of new nodes, computed once per simulator: the requirement set a new node of
// the pool starts from, the instance types it may launch (with their allowed offerings, daemonset
// overhead and the room left for pods), and the capacity its existing nodes already use for limits.
import type { DaemonSet, NodePool, Offering, Resources, Taint } from '../model/types.ts';
import { LabelKeys } from '../model/types.ts';
import { daemonSetOverhead, prepareDaemonSets, type PreparedDaemonSet } from './daemonSetOverhead.ts';
import type { ExistingNode } from './existingNodes.ts';
import type { PortUse } from './hostPorts.ts';
import { TypeCatalog, type TypeInfo } from './instanceTypes.ts';
import { carriesLabel } from './launchedLabels.ts';
import {
  ABSENT,
  allowsValue,
  finiteValues,
  intersectKey,
  intersectSets,
  isSatisfiable,
  requirementSetOf,
  requirementSetOfLabels,
  valuesIn,
  type KeyRequirement,
  type RequirementSet,
} from './requirements.ts';
import { CPU, MEMORY, PODS } from './resources.ts';

/** One instance type a pool may launch. */
export interface PoolType {
  readonly info: TypeInfo;
  /** Available offerings the pool's zone / capacity-type requirements allow, cheapest first. */
  readonly offerings: readonly Offering[];
  readonly overhead: Readonly<Record<string, number>>;
  readonly overheadPods: number;
  /** Allocatable minus daemonset overhead: what the pods placed on the node may use. */
  readonly roomCpu: number;
  readonly roomMemory: number;
  readonly roomPods: number;
  readonly roomOther: Readonly<Record<string, number>>;
}

export interface PoolInfo {
  readonly pool: NodePool;
  readonly name: string;
  readonly taints: readonly Taint[];
  /** Pool requirements AND template labels AND its own nodepool label (on-demand when capacity type is unset). */
  readonly requirements: RequirementSet;
  /** Types the pool may launch, cheapest first. */
  readonly types: readonly PoolType[];
  /** Host ports its daemonsets hold on every node of the pool. */
  readonly daemonPorts: readonly PortUse[];
  /** Capacity of each existing node of the pool, for limits. */
  readonly nodeCapacities: readonly { readonly nodeIndex: number; readonly capacity: Resources }[];
  readonly existingCapacity: Readonly<Record<string, number>>;
  /** Domain values a node of the pool could take for `key` (zones, ...); undefined when open-ended. */
  domainValues(key: string): readonly string[] | undefined;
  /** Why the pool can launch no type at all (then `types` is empty), for a truthful failure reason. */
  readonly noTypesReason?: string;
}

export function poolRequirements(pool: NodePool): Map<string, KeyRequirement> {
  const requirements = intersectSets(requirementSetOf(pool.requirements), requirementSetOfLabels(pool.templateLabels));
  const ownLabel = requirements.get(LabelKeys.nodePool);
  requirements.set(LabelKeys.nodePool, ownLabel ? intersectKey(ownLabel, valuesIn([pool.name])) : valuesIn([pool.name]));
  // Karpenter launches on-demand capacity unless the pool asks for a capacity type.
  if (!requirements.has(LabelKeys.capacityType)) requirements.set(LabelKeys.capacityType, valuesIn(['on-demand']));
  return requirements;
}

export function buildPools(
  pools: readonly NodePool[],
  catalog: TypeCatalog,
  daemonSets: readonly DaemonSet[],
  nodes: readonly ExistingNode[],
): PoolInfo[] {
  // A static pool (spec.replicas) keeps its node count: Karpenter launches no node from it for pods.
  const ordered = pools.filter((pool) => pool.replicas === undefined).sort((a, b) => b.weight - a.weight || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const launches = launchesOf(pools, catalog, daemonSets);
  return ordered.map((pool) => {
    let launch = launches.get(pool);
    if (!launch) {
      launch = poolLaunches(pool, catalog, prepareDaemonSets(daemonSets));
      launches.set(pool, launch);
    }
    return withExistingNodes(launch, nodes);
  });
}

/** What a pool may launch: everything of PoolInfo except its existing nodes. */
type PoolLaunches = Omit<PoolInfo, 'nodeCapacities' | 'existingCapacity'>;

// What a pool may launch depends on the pool, the catalog and the daemonsets only, and a pass rebuilds
// the simulation about 50 times with the same three: worked out once per such triple.
const launchCache = new WeakMap<readonly NodePool[], WeakMap<TypeCatalog, WeakMap<readonly DaemonSet[], Map<NodePool, PoolLaunches>>>>();

function launchesOf(pools: readonly NodePool[], catalog: TypeCatalog, daemonSets: readonly DaemonSet[]): Map<NodePool, PoolLaunches> {
  let byCatalog = launchCache.get(pools);
  if (!byCatalog) launchCache.set(pools, (byCatalog = new WeakMap()));
  let byDaemonSets = byCatalog.get(catalog);
  if (!byDaemonSets) byCatalog.set(catalog, (byDaemonSets = new WeakMap()));
  let launches = byDaemonSets.get(daemonSets);
  if (!launches) byDaemonSets.set(daemonSets, (launches = new Map()));
  return launches;
}

/** A pool's launches with the capacity its existing nodes hold (for its limits). */
function withExistingNodes(launch: PoolLaunches, nodes: readonly ExistingNode[]): PoolInfo {
  const nodeCapacities = nodes
    .filter((n) => n.node.nodePool === launch.name)
    .map((n) => ({ nodeIndex: n.index, capacity: n.node.capacity }));
  const existingCapacity: Record<string, number> = {};
  for (const { capacity } of nodeCapacities) {
    for (const key in capacity) existingCapacity[key] = (existingCapacity[key] ?? 0) + capacity[key]!;
  }
  return { ...launch, nodeCapacities, existingCapacity };
}

function poolLaunches(pool: NodePool, catalog: TypeCatalog, daemonSets: readonly PreparedDaemonSet[]): PoolLaunches {
  const requirements = poolRequirements(pool);
  const taints = pool.templateTaints;
  const zones = requirements.get(LabelKeys.zone);
  const capacityTypes = requirements.get(LabelKeys.capacityType);
  const types: PoolType[] = [];
  let compatibleTypes = 0;
  for (const info of catalog.types) {
    const keyAt = (key: string): KeyRequirement => intersectKey(catalog.openKey(requirements, key), catalog.typeKey(info, key));
    let compatible = true;
    // Whether only where it is offered (zone, capacity type) rules the type out: for the reason given
    // when the pool can launch nothing.
    let offeringOnly = true;
    for (const key of requirements.keys()) {
      if (!isSatisfiable(keyAt(key))) {
        compatible = false;
        if (key !== LabelKeys.zone && key !== LabelKeys.capacityType) {
          offeringOnly = false;
          break;
        }
      }
    }
    if (offeringOnly) compatibleTypes++;
    if (!compatible) continue;
    const offerings = info.offerings.filter(
      (o) => (!zones || allowsValue(zones, o.zone)) && (!capacityTypes || allowsValue(capacityTypes, o.capacityType)),
    );
    if (offerings.length === 0) continue;
    // A daemonset runs where the node's labels let it: on a node launched from a launch template, the
    // labels it lacks are absent, not whatever the type would carry (launchedLabels.ts).
    const overhead = daemonSetOverhead(daemonSets, taints, (key) => (carriesLabel(pool, key) ? keyAt(key) : ABSENT));
    const allocatable = info.type.allocatable;
    const roomOther: Record<string, number> = {};
    for (const [key, value] of Object.entries(allocatable)) {
      if (key !== CPU && key !== MEMORY && key !== PODS) roomOther[key] = value - (overhead.requests[key] ?? 0);
    }
    for (const [key, value] of Object.entries(overhead.requests)) {
      if (!(key in allocatable) && key !== CPU && key !== MEMORY) roomOther[key] = -value;
    }
    types.push({
      info,
      offerings,
      overhead: overhead.requests,
      overheadPods: overhead.pods,
      roomCpu: (allocatable[CPU] ?? 0) - (overhead.requests[CPU] ?? 0),
      roomMemory: (allocatable[MEMORY] ?? 0) - (overhead.requests[MEMORY] ?? 0),
      roomPods: (allocatable[PODS] ?? Number.POSITIVE_INFINITY) - overhead.pods,
      roomOther,
    });
  }
  types.sort((a, b) => a.offerings[0]!.pricePerHour - b.offerings[0]!.pricePerHour || compareNames(a.info.type.name, b.info.type.name));

  // Ports are taken per pool (not per type): a daemonset that could land on some of its types counts.
  const poolLevel = daemonSetOverhead(daemonSets, taints, (key) => (carriesLabel(pool, key) ? catalog.openKey(requirements, key) : ABSENT));

  const domainCache = new Map<string, readonly string[] | undefined>();
  const domainValues = (key: string): readonly string[] | undefined => {
    if (domainCache.has(key)) return domainCache.get(key);
    let values: Set<string> | undefined = new Set<string>();
    if (key === LabelKeys.zone) for (const t of types) for (const o of t.offerings) values.add(o.zone);
    else if (key === LabelKeys.capacityType) for (const t of types) for (const o of t.offerings) values.add(o.capacityType);
    else if (key === LabelKeys.hostname) values = undefined;
    else {
      for (const t of types) {
        const finite = finiteValues(intersectKey(catalog.openKey(requirements, key), catalog.typeKey(t.info, key)));
        if (finite === undefined) {
          values = undefined;
          break;
        }
        for (const value of finite) values.add(value);
      }
    }
    const result = values ? [...values].sort() : undefined;
    domainCache.set(key, result);
    return result;
  };

  const noTypesReason = types.length > 0 ? undefined : describeNoTypes(pool.name, compatibleTypes, zones, capacityTypes, catalog.region);
  return {
    pool,
    name: pool.name,
    ...(noTypesReason ? { noTypesReason } : {}),
    taints,
    requirements,
    types,
    daemonPorts: poolLevel.ports,
    domainValues,
  };
}

const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Why a pool has no launchable type: its requirements match none, or its zones / capacity types are not offered. */
function describeNoTypes(pool: string, compatibleTypes: number, zones: KeyRequirement | undefined, capacityTypes: KeyRequirement | undefined, region: string): string {
  if (compatibleTypes === 0) return `NodePool ${pool} can launch nothing: no instance type in the catalog matches its requirements`;
  const zoneList = zones ? finiteValues(zones) : undefined;
  const typeList = capacityTypes ? finiteValues(capacityTypes) : undefined;
  const where = [zoneList ? `zone(s) ${zoneList.join(', ')}` : '', typeList ? `capacity type(s) ${typeList.join(', ')}` : ''].filter((x) => x !== '').join(' as ');
  return `NodePool ${pool} can launch nothing: none of the ${compatibleTypes} instance type(s) its requirements allow is offered in its ${where || 'zones and capacity types'} in the catalog${region ? ` (region ${region})` : ''}`;
}
