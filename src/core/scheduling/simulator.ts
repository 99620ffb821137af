// The scheduling simulation: can these pods run on the existing nodes (minus the excluded ones) plus
// at most K new nodes from the NodePools? Karpenter-like and deterministic:
// - pods are placed largest first (cpu, then memory; ties by namespace/name);
// - each pod goes to the existing node it fits most tightly (least free cpu left, ties by name), else
//   to an already planned new node, else to a new node of the first NodePool (by weight, then name)
//   that can take it;
// - pods placed earlier count for the affinity, anti-affinity, spread and host ports of later pods.
//
// `createSimulator` precomputes everything that does not depend on the request (see the modules it
// imports); `simulate` only adds a small overlay (callState.ts), so it costs about
// (pods to place) x (candidate nodes examined), and the best-fit scan usually stops early because the
// receiving nodes are kept sorted by free cpu.
import type { Pod } from '../model/types.ts';
import { buildAttempt, checkTopologyOnExisting, type ExplainContext, type TopologyAttempt } from './attempt.ts';
import { CallState, type NodeDelta } from './callState.ts';
import { buildCpuOrder, firstWithCpu, indexCluster, isBeingDeleted, type BoundPods, type ExistingNode } from './existingNodes.ts';
import { firstPortConflict, formatPort } from './hostPorts.ts';
import { typeCatalogOf, type TypeCatalog } from './instanceTypes.ts';
import { labelsMatchAlternatives } from './nodeAffinity.ts';
import { buildPools, type PoolInfo } from './nodePools.ts';
import { NewNode, type NodeOption } from './newNode.ts';
import { costEfficientOptions, demandMix, type DemandMix } from './costEfficientTypes.ts';
import { Namespaces, PodIndex, podIndexOf } from './podIndex.ts';
import { preparePod, type PrepareContext, type PreparedPod } from './podConstraints.ts';
import { sortedLazily } from './podQueue.ts';
import { Stage, volumeHostsSentence } from './reasons.ts';
import { originalPod, preferenceLadder } from './preferences.ts';
import { labelValue } from './labelSelector.ts';
import { LabelKeys } from '../model/types.ts';
import { CPU, formatRequests, maxResources, MEMORY } from './resources.ts';
import { firstUntoleratedTaint, formatTaint } from './taints.ts';
import { AntiGroupIndex, buildAntiGroups, type SpreadBase, type SpreadNodes } from './topology.ts';
import type {
  NewNodePlan,
  Placement,
  SimulationRequest,
  SimulationResult,
  Simulator,
  SimulatorInput,
  UnschedulablePod,
} from './types.ts';

export function createSimulator(input: SimulatorInput): Simulator {
  const { cluster } = input;
  const indexed = indexCluster(cluster);
  const { nodes, nodeIndexByName, counted, countedNodes, bound } = indexed;
  const nodeLabels = nodes.map((n) => n.labels);
  const index = podIndexOf(indexed, () => new PodIndex(counted, countedNodes, nodeLabels, indexed.seed));
  const namespaces = new Namespaces(cluster.namespaces);
  const catalog = typeCatalogOf(input.catalog);
  const pools = buildPools(input.nodePools, catalog, cluster.daemonSets, nodes);
  const groups = buildAntiGroups(index, namespaces);
  const cpuOrder = buildCpuOrder(nodes);
  const prepareContext: PrepareContext = {
    nodes,
    index,
    bound,
    namespaces,
    catalog,
    pools,
    antiGroups: new AntiGroupIndex(groups),
    spreadBases: new Map<string, SpreadBase>(),
    spreadNodes: new Map<string, SpreadNodes>(),
    staticVerdicts: new Map<string, Int8Array>(),
  };
  // A Map, not a WeakMap: a simulator lives only while its cluster state does, and a WeakMap's
  // entries cost more to insert and more for the collector to trace.
  const preparedPods = new Map<Pod, PreparedPod>();
  const prepare = (pod: Pod): PreparedPod => {
    let prepared = preparedPods.get(pod);
    if (!prepared) {
      prepared = preparePod(pod, prepareContext);
      preparedPods.set(pod, prepared);
    }
    return prepared;
  };
  const shared: Shared = { nodes, nodeIndexByName, bound, nodeLabels, index, catalog, pools, cpuOrder, prepare };
  return { simulate: (request) => simulate(shared, request) };
}

interface Shared {
  readonly nodes: readonly ExistingNode[];
  readonly nodeIndexByName: ReadonlyMap<string, number>;
  readonly bound: BoundPods;
  readonly nodeLabels: readonly Record<string, string>[];
  readonly index: PodIndex;
  readonly catalog: TypeCatalog;
  readonly pools: readonly PoolInfo[];
  readonly cpuOrder: ReturnType<typeof buildCpuOrder>;
  readonly prepare: (pod: Pod) => PreparedPod;
}

/** Largest first: cpu, then memory, descending; ties by namespace, name, uid (`podOrder: 'largest-first'`, and callers that order pods themselves). */
export function largestFirst(a: Pod, b: Pod): number {
  return (b.requests[CPU] ?? 0) - (a.requests[CPU] ?? 0) || (b.requests[MEMORY] ?? 0) - (a.requests[MEMORY] ?? 0) || compareNames(a, b);
}

const compareNames = (a: Pod, b: Pod): number => compare(a.namespace, b.namespace) || compare(a.name, b.name) || compare(a.uid, b.uid);

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function simulate(shared: Shared, request: SimulationRequest): SimulationResult {
  const state = new CallState(shared.nodes, shared.nodeIndexByName, shared.bound, shared.index, request.excludedNodes, request.pods, shared.cpuOrder, request.placement !== 'least-allocated');
  const allowed = request.newNodePools ? new Set(request.newNodePools) : undefined;
  const pools = allowed ? shared.pools.filter((p) => allowed.has(p.name)) : shared.pools;
  const maxNewNodes = Math.max(0, Math.floor(request.maxNewNodes));
  const domainPools = maxNewNodes > 0 ? pools.map((p) => p.name) : [];
  const explainContext: ExplainContext = {
    view: state,
    index: shared.index,
    nodeLabels: shared.nodeLabels,
    excluded: state.excluded,
    removedUids: state.removedUids,
  };

  const placements: Placement[] = [];
  const unschedulable: UnschedulablePod[] = [];
  const sizing = request.costEfficientNewNodes && maxNewNodes > 0 ? { efficiency: request.costEfficientNewNodes, mix: demandMix(request.pods) } : undefined;
  // Each pod is prepared when its turn comes: a simulation that stops at its first failure never
  // prepares (or sorts) the pods after it.
  const ordered = request.podOrder === 'as-given' ? request.pods : sortedLazily(request.pods, largestFirst);
  let joining: Int32Array | undefined;
  if (request.availableFrom && request.availableFrom.size > 0) {
    joining = new Int32Array(shared.nodes.length);
    for (const [name, at] of request.availableFrom) {
      const i = shared.nodeIndexByName.get(name);
      if (i !== undefined) joining[i] = at;
    }
  }
  let position = -1;
  // Nodes closed to pods moved off a node that stays (consolidateAfter windows), by node index.
  let closed: Uint8Array | undefined;
  if (request.closedToMovedPods && request.closedToMovedPods.size > 0) {
    closed = new Uint8Array(shared.nodes.length);
    for (const name of request.closedToMovedPods) {
      const i = shared.nodeIndexByName.get(name);
      if (i !== undefined) closed[i] = 1;
    }
  }
  // Karpenter's preference policy Respect: a pod's preferences count as required until nothing fits
  // with them (preferences.ts). Only where Karpenter's simulation is modelled: kube-scheduler's
  // placement (least-allocated) only scores preferences.
  const respect = request.preferences === 'Respect' && request.placement !== 'least-allocated';
  /**
   * Places one step of a pod's preference ladder, if it fits anywhere; nothing is explained. (Made only
   * when preferences are respected: a bundle built with keepNames names each closure as it is made.)
   */
  const placeStep = !respect ? undefined : (step: PreparedPod, original: Pod): boolean => {
    const attempt = buildAttempt(step, { view: state, counts: state.counts, newNodes: state.newNodes, domainPools });
    const existing = bestExistingNode(shared, state, step, attempt);
    if (existing !== undefined) {
      const node = shared.nodes[existing]!;
      state.placeOnExisting(step, node.index, node.labels);
      placements.push({ pod: original, nodeName: node.name });
      return true;
    }
    for (const node of state.newNodes) {
      const evaluation = node.evaluate(step, attempt, state);
      if (!evaluation.ok) continue;
      node.commit(step, evaluation.draft);
      state.placeOnNew(step, node);
      placements.push({ pod: original, nodeName: node.hostname });
      return true;
    }
    if (state.newNodes.length >= maxNewNodes) return false;
    const opened = openNewNode(shared, state, pools, step, attempt, request.newNodeTypes, sizing);
    if (!opened.node) return false;
    state.newNodes.push(opened.node);
    state.placeOnNew(step, opened.node);
    placements.push({ pod: original, nodeName: opened.node.hostname });
    return true;
  };
  // The same for every pod: state.newNodes is the list new nodes are added to.
  const attemptContext = { view: state, counts: state.counts, newNodes: state.newNodes, domainPools };
  for (const pod of ordered) {
    const p = shared.prepare(pod);
    position += 1;
    state.closedForPod = closed && movedOffStayingNode(shared, p.pod) ? closed : undefined;
    if (placeStep && preferenceLadder(p.pod).some((step) => placeStep(shared.prepare(step), p.pod))) continue;
    const attempt = buildAttempt(p, attemptContext);

    const leastAllocated = request.placement === 'least-allocated';
    const existing = leastAllocated ? leastAllocatedExistingNode(shared, state, p, attempt, joining, position, request.integerScoreTies) : bestExistingNode(shared, state, p, attempt);
    if (existing !== undefined) {
      const node = shared.nodes[existing]!;
      state.placeOnExisting(p, node.index, node.labels);
      placements.push({ pod: p.pod, nodeName: node.name });
      continue;
    }

    // Closest miss among planned new nodes, to explain a failure: the first to get furthest. The
    // existing nodes' closest miss is only worked out if the pod cannot be placed at all.
    let closestNew: { stage: Stage; reason: () => string } | undefined;
    let placedOnNew = false;
    for (const node of state.newNodes) {
      const evaluation = node.evaluate(p, attempt, state);
      if (evaluation.ok) {
        node.commit(p, evaluation.draft);
        state.placeOnNew(p, node);
        placements.push({ pod: p.pod, nodeName: node.hostname });
        placedOnNew = true;
        break;
      }
      if (!closestNew || evaluation.stage > closestNew.stage) closestNew = { stage: evaluation.stage, reason: () => evaluation.reason };
    }
    if (placedOnNew) continue;

    let newNodeReason: string | undefined;
    if (maxNewNodes > 0) {
      if (state.newNodes.length >= maxNewNodes) {
        newNodeReason = `no further new node may be planned (at most ${maxNewNodes})`;
      } else {
        const opened = openNewNode(shared, state, pools, p, attempt, request.newNodeTypes, sizing);
        if (opened.node) {
          state.newNodes.push(opened.node);
          state.placeOnNew(p, opened.node);
          placements.push({ pod: p.pod, nodeName: opened.node.hostname });
          continue;
        }
        newNodeReason = opened.reason;
      }
    }
    // Existing nodes come first: a new node explains the failure only when it got strictly further.
    // (kube-scheduler's placement is explained by its own search: nodes not Ready yet count as such.)
    const missed = leastAllocated ? explainLeastAllocated(shared, state, p, attempt, joining, position) : searchExisting(shared, state, p, attempt);
    const closest =
      closestNew && closestNew.stage > missed.stage
        ? closestNew
        : { stage: missed.stage, reason: () => explainExisting(shared, state, p, attempt, missed, explainContext) };
    const reason = [closest.reason(), newNodeReason].filter((r) => r !== undefined).join('; ');
    unschedulable.push({ pod: p.pod, reason });
    if (request.stopAtFirstFailure) break;
  }

  const newNodes: NewNodePlan[] = state.newNodes.map((node) => {
    const planned = node.planned();
    return {
      nodePool: node.pool.name,
      pods: node.pods.map((p) => originalPod(p.pod)),
      options: planned.options.map((o) => ({
        instanceType: o.poolType.info.type,
        offerings: o.offerings,
        cheapestPricePerHour: o.offerings[0]!.pricePerHour,
      })),
      requirements: planned.requirements,
      minValues: node.pool.pool.requirements.filter((r) => r.minValues !== undefined),
    };
  });
  return { allScheduled: unschedulable.length === 0, placements, newNodes, unschedulable };
}

/**
 * A pod the cluster has bound to a node that is not being deleted: what Karpenter's consolidation
 * simulation keeps off nodes inside their consolidateAfter window. Pending pods (bound nowhere) and the
 * pods of a node being deleted are exempt: they need a place whatever consolidation decides.
 */
function movedOffStayingNode(shared: Shared, pod: Pod): boolean {
  const from = shared.bound.nodeIndexOf(pod);
  return from !== undefined && !isBeingDeleted(shared.nodes[from]!.node);
}

interface ExistingSearch {
  readonly nodeIndex: number | undefined;
  /** When nothing fits: the furthest stage any node reached, and that node (-1: none could receive). */
  readonly stage: Stage;
  readonly closestNode: number;
}

/**
 * Best fit over existing nodes: the feasible node with the least free cpu left, ties by name. Both the
 * nodes this simulation has not touched and those it has are scanned in (free cpu, name) order from
 * the first with enough cpu, so the first feasible one of each list is the best of that list.
 */
function bestExistingNode(shared: Shared, state: CallState, p: PreparedPod, attempt: TopologyAttempt | undefined): number | undefined {
  const { nodes, cpuOrder } = shared;
  let best = -1;
  const count = cpuOrder.nodeIndexes.length;
  const { untouched } = state;
  for (let k = untouched.firstFrom(firstWithCpu(cpuOrder, p.cpu)); k < count; k = untouched.firstFrom(k + 1)) {
    const i = cpuOrder.nodeIndexes[k]!;
    if (checkExisting(nodes[i]!, undefined, p, attempt, state.closedForPod) === Stage.Ok) {
      best = i;
      break;
    }
  }
  const bestFree = best >= 0 ? nodes[best]!.freeCpu - p.cpu : Number.POSITIVE_INFINITY;
  const { touched } = state;
  for (let k = touched.firstWithCpu(p.cpu); k < touched.length; k++) {
    const i = touched.at(k);
    const node = nodes[i]!;
    const delta = state.deltas.get(i)!;
    const free = node.freeCpu + delta.cpu - p.cpu;
    // Sorted by (free, name): nothing further on can beat the untouched node found.
    if (free > bestFree || (free === bestFree && compare(node.name, nodes[best]!.name) >= 0)) break;
    if (checkExisting(node, delta, p, attempt, state.closedForPod) === Stage.Ok) return i;
  }
  return best >= 0 ? best : undefined;
}

/**
 * The same search as bestExistingNode, every node examined, recording how far the nodes got: used
 * only to explain a pod that could not be placed (the closest node and the stage it reached).
 */
function searchExisting(shared: Shared, state: CallState, p: PreparedPod, attempt: TopologyAttempt | undefined): ExistingSearch {
  const { nodes, cpuOrder } = shared;
  let stage: Stage = Stage.Ok;
  let closestNode = -1;
  const note = (verdict: Stage, nodeIndex: number): void => {
    if (verdict > stage) {
      stage = verdict;
      closestNode = nodeIndex;
    }
  };
  let best = -1;
  const count = cpuOrder.nodeIndexes.length;
  const start = firstWithCpu(cpuOrder, p.cpu);
  for (let k = start; k < count; k++) {
    const i = cpuOrder.nodeIndexes[k]!;
    if (state.excluded[i] || state.deltas.has(i)) continue;
    const verdict = checkExisting(nodes[i]!, undefined, p, attempt, state.closedForPod);
    if (verdict === Stage.Ok) {
      best = i;
      break;
    }
    note(verdict, i);
  }
  let bestFree = best >= 0 ? nodes[best]!.freeCpu - p.cpu : Number.POSITIVE_INFINITY;
  for (const [i, delta] of state.deltas) {
    const node = nodes[i]!;
    if (state.excluded[i] || !node.receives) continue;
    const verdict = checkExisting(node, delta, p, attempt, state.closedForPod);
    if (verdict !== Stage.Ok) {
      note(verdict, i);
      continue;
    }
    const free = node.freeCpu + delta.cpu - p.cpu;
    if (free < bestFree || (free === bestFree && compare(node.name, nodes[best]!.name) < 0)) {
      best = i;
      bestFree = free;
    }
  }
  if (best >= 0) return { nodeIndex: best, stage: Stage.Ok, closestNode: -1 };
  if (stage === Stage.Ok) {
    // Nothing examined past the cpu cut: every receiving node left lacks room (or there is none).
    for (let k = 0; k < start; k++) {
      const i = cpuOrder.nodeIndexes[k]!;
      if (!state.excluded[i] && !state.deltas.has(i)) return { nodeIndex: undefined, stage: Stage.Resources, closestNode: i };
    }
  }
  return { nodeIndex: undefined, stage, closestNode };
}

/**
 * kube-scheduler's default choice among feasible existing nodes: the one whose cpu and memory stay the
 * least allocated after the pod (mean of the free shares; NodeResourcesFit LeastAllocated), ties by
 * name (leastAllocated.ts keeps the nodes in that order), or in whole points with seeded ties
 * (SimulationRequest.integerScoreTies). Only a pod that fits nowhere has every node
 * examined, to explain why.
 */
function leastAllocatedExistingNode(
  shared: Shared,
  state: CallState,
  p: PreparedPod,
  attempt: TopologyAttempt | undefined,
  joining?: Int32Array,
  position = 0,
  integerScoreTies?: number,
): number | undefined {
  const { nodes } = shared;
  return state.leastAllocated().best(
    p.cpu,
    p.memory,
    (i) => checkExisting(nodes[i]!, state.deltas.get(i), p, attempt, state.closedForPod) === Stage.Ok,
    joining ? (i) => joining[i]! > position : undefined,
    integerScoreTies,
  );
}

/** Every receiving node examined for a pod that fits on none: how far the closest one got. */
function explainLeastAllocated(
  shared: Shared,
  state: CallState,
  p: PreparedPod,
  attempt: TopologyAttempt | undefined,
  joining: Int32Array | undefined,
  position: number,
): ExistingSearch {
  const { nodes } = shared;
  let stage: Stage = Stage.Ok;
  let closestNode = -1;
  for (const node of nodes) {
    const i = node.index;
    if (state.excluded[i] || !node.receives) continue;
    let verdict = checkExisting(node, state.deltas.get(i), p, attempt, state.closedForPod);
    // A node that would take the pod but is not Ready yet came closest of all.
    if (verdict === Stage.Ok && joining !== undefined && joining[i]! > position) verdict = Stage.NotReadyYet;
    if (verdict !== Stage.Ok && verdict > stage) {
      stage = verdict;
      closestNode = i;
    }
  }
  if (closestNode < 0) closestNode = nodes.findIndex((n) => !state.excluded[n.index] && n.receives);
  return { nodeIndex: undefined, stage: stage === Stage.Ok ? Stage.Resources : stage, closestNode };
}

/**
 * The checks of one existing node, cheapest first. `closed`: by node index, nodes this pod may not be
 * moved to (SimulationRequest.closedToMovedPods), checked last so that such a node, when it is the one
 * that came closest, explains the failure.
 */
function checkExisting(
  node: ExistingNode,
  delta: NodeDelta | undefined,
  p: PreparedPod,
  attempt: TopologyAttempt | undefined,
  closed: Uint8Array | undefined,
): Stage {
  if (delta === undefined) {
    if (node.freeCpu < p.cpu || node.freeMemory < p.memory || node.freePods < 1) return Stage.Resources;
    for (const [key, value] of p.other) if ((node.freeOther[key] ?? 0) < value) return Stage.Resources;
  } else {
    if (node.freeCpu + delta.cpu < p.cpu || node.freeMemory + delta.memory < p.memory || node.freePods + delta.pods < 1) {
      return Stage.Resources;
    }
    for (const [key, value] of p.other) if ((node.freeOther[key] ?? 0) + (delta.other.get(key) ?? 0) < value) return Stage.Resources;
  }
  let verdict = p.staticVerdicts[node.index]!;
  if (verdict === 0) {
    verdict = 1 + staticCheck(node, p);
    p.staticVerdicts[node.index] = verdict;
  }
  if (verdict !== 1) return (verdict - 1) as Stage;
  if (p.ports.length > 0 && portConflict(node, delta, p)) return Stage.HostPort;
  const topology = attempt ? checkTopologyOnExisting(attempt, node.labels) : Stage.Ok;
  if (topology === Stage.Ok && closed !== undefined && closed[node.index]) return Stage.ConsolidateAfter;
  return topology;
}

/** Checks that depend only on the pod and the node, never on the simulation. */
function staticCheck(node: ExistingNode, p: PreparedPod): Stage {
  if (node.blockingTaints.length > 0 && firstUntoleratedTaint(p.pod.tolerations, node.blockingTaints)) return Stage.Taint;
  if (!p.unconstrained && !labelsMatchAlternatives(node.labels, p.alternatives)) return Stage.NodeAffinity;
  if (p.volumeZones) {
    const zone = labelValue(node.labels, LabelKeys.zone);
    if (zone === undefined || !p.volumeZones.has(zone)) return Stage.VolumeZone;
  }
  if (p.volumeHosts && !p.volumeHosts.has(labelValue(node.labels, LabelKeys.hostname) ?? node.name)) return Stage.VolumeZone;
  return Stage.Ok;
}

function portConflict(node: ExistingNode, delta: NodeDelta | undefined, p: PreparedPod): ReturnType<typeof firstPortConflict> {
  const inUse = delta ? node.ports.filter((port) => !delta.freedPorts.has(port.podUid)) : node.ports;
  return firstPortConflict(p.ports, inUse) ?? (delta ? firstPortConflict(p.ports, delta.addedPorts) : undefined);
}

/** A sentence for the existing node that came closest. */
function explainExisting(
  shared: Shared,
  state: CallState,
  p: PreparedPod,
  attempt: TopologyAttempt | undefined,
  search: ExistingSearch,
  explainContext: ExplainContext,
): string {
  if (search.closestNode < 0) return 'no existing node can receive pods';
  const node = shared.nodes[search.closestNode]!;
  switch (search.stage) {
    case Stage.Resources:
      return `no node has room for ${formatRequests(p.pod.requests)}`;
    case Stage.Taint: {
      const taint = firstUntoleratedTaint(p.pod.tolerations, node.blockingTaints)!;
      return `no node with room tolerates its taints (node ${node.name} has ${formatTaint(taint)})`;
    }
    case Stage.NodeAffinity:
      return 'no node with room matches its node selector / affinity';
    case Stage.VolumeZone:
      if (p.volumeHosts && !p.volumeHosts.has(labelValue(node.labels, LabelKeys.hostname) ?? node.name)) return volumeHostsSentence(p.volumeHosts);
      return `no node with room is in its volume zone(s) ${[...(p.volumeZones ?? [])].join(', ')}`;
    case Stage.HostPort: {
      const port = portConflict(node, state.deltas.get(node.index), p);
      return `host port ${port ? formatPort(port) : ''} is taken on node ${node.name}`;
    }
    case Stage.ConsolidateAfter:
      return `node ${node.name} has room but is inside its NodePool's consolidateAfter window, so it takes no pod moved by consolidation (Karpenter's rule)`;
    case Stage.NotReadyYet:
      return `node ${node.name} has room for it but is not Ready yet when it is bound`;
    default: {
      const out: string[] = [];
      if (attempt) checkTopologyOnExisting(attempt, node.labels, { ctx: explainContext, out });
      return out[0] ?? `node ${node.name} does not satisfy its topology constraints`;
    }
  }
}

/** What the pool's limits leave for one more node; undefined when the pool has no limits. */
function remainingLimits(pool: PoolInfo, state: CallState): Record<string, number> | undefined {
  const limits = pool.pool.limits;
  const keys = Object.keys(limits);
  if (keys.length === 0) return undefined;
  const used: Record<string, number> = { ...pool.existingCapacity };
  for (const { nodeIndex, capacity } of pool.nodeCapacities) {
    if (!state.excluded[nodeIndex]) continue;
    for (const [key, value] of Object.entries(capacity)) used[key] = (used[key] ?? 0) - value;
  }
  for (const node of state.newNodes) {
    if (node.pool !== pool) continue;
    // Which type a planned node becomes is open: reserve the largest, as Karpenter does.
    const largest = maxResources(node.options.map((o) => o.poolType.info.type.capacity));
    for (const [key, value] of Object.entries(largest)) used[key] = (used[key] ?? 0) + value;
  }
  const remaining: Record<string, number> = {};
  for (const key of keys) remaining[key] = (limits[key] ?? 0) - (used[key] ?? 0);
  return remaining;
}

function withinLimits(capacity: Readonly<Record<string, number>>, remaining: Readonly<Record<string, number>>): boolean {
  for (const [key, value] of Object.entries(remaining)) if ((capacity[key] ?? 0) > value) return false;
  return true;
}

/** Opens a new node for `p` from the first pool that can take it, or says why none can. */
function openNewNode(
  shared: Shared,
  state: CallState,
  pools: readonly PoolInfo[],
  p: PreparedPod,
  attempt: TopologyAttempt | undefined,
  typeFilter: SimulationRequest['newNodeTypes'],
  sizing: { readonly efficiency: NonNullable<SimulationRequest['costEfficientNewNodes']>; readonly mix: DemandMix } | undefined,
): { node?: NewNode; reason: string } {
  if (pools.length === 0) return { reason: 'no NodePool may launch new nodes' };
  const failures: { stage: Stage; reason: string }[] = [];
  for (const pool of pools) {
    if (pool.noTypesReason) {
      failures.push({ stage: Stage.Resources, reason: pool.noTypesReason });
      continue;
    }
    const remaining = remainingLimits(pool, state);
    const options: NodeOption[] = [];
    const overLimit: NodeOption[] = [];
    for (const poolType of pool.types) {
      if (typeFilter && !typeFilter(poolType.info.type, poolType.offerings)) continue;
      const option = { poolType, offerings: poolType.offerings };
      if (!remaining || withinLimits(poolType.info.type.capacity, remaining)) options.push(option);
      else overLimit.push(option);
    }
    const node = new NewNode(state.newNodes.length, pool, shared.catalog, options);
    const keepRoom = () =>
      sizing &&
      node.keepRoomFor(
        Math.max(sizing.mix.largestCpuMillis, sizing.efficiency.roomAtLeast?.cpuMillis ?? 0),
        Math.max(sizing.mix.largestMemoryBytes, sizing.efficiency.roomAtLeast?.memoryBytes ?? 0),
      );
    if (sizing?.efficiency.roomFromFirstPod) keepRoom();
    const evaluation = node.evaluate(p, attempt, state);
    if (evaluation.ok) {
      // Sized for cost: of the types that can take this first pod, only the cheapest per unit stay.
      if (sizing) evaluation.draft.options = costEfficientOptions(evaluation.draft.options, sizing.mix, sizing.efficiency);
      node.commit(p, evaluation.draft);
      keepRoom();
      return { node, reason: '' };
    }
    if (evaluation.stage <= Stage.Resources && overLimit.length > 0) {
      // Would a type the limits rule out have fitted? Then the limits are the reason.
      const unlimited = new NewNode(state.newNodes.length, pool, shared.catalog, [...options, ...overLimit]);
      if (unlimited.evaluate(p, attempt, state).ok) {
        failures.push({ stage: Stage.Limits, reason: `NodePool ${pool.name} would exceed its limits` });
        continue;
      }
    }
    failures.push(evaluation);
  }
  if (pools.length > 0 && failures.every((f) => f.stage === Stage.Taint)) {
    return { reason: 'no NodePool can launch a node it tolerates' };
  }
  return { reason: [...new Set(failures.map((f) => f.reason))].join('; ') };
}
