// The cluster as unfinished disruption commands will leave it, for the next pass to plan on.
//
// A command runs across passes: its old nodes drain for as long as their PodDisruptionBudgets and grace
// periods take, and its replacement waits, empty, for their pods. A pass that planned on the raw
// snapshot would see that replacement as an empty node and delete it, or fill its room with another
// node's pods, and the old node's pods would then have nowhere to go. So, as Karpenter does with the
// pods of nodes it is deleting (it simulates them as pending and nominates their destinations):
// - every node a command targets, drains or launched is in flight: never a candidate, counted against
//   the budgets (the old nodes), until the command ends;
// - the pods still on draining nodes are placed now, on the command's replacement first (a launched
//   but not yet registered replacement is counted as the node it will be), then anywhere they fit; the
//   nodes that receive them are nominated and are not candidates in this pass either;
// - a pod that fits nowhere stays pending, and the pass then decides nothing new: capacity it might
//   need must not be taken away.
// Nodes something else is deleting (a deletion timestamp, Karpenter's karpenter.sh/disrupted taint) are
// treated the same way: Karpenter puts the pods of every node marked for deletion into each
// consolidation simulation before any move, and leaves alone a node launched or needed for them (test
// "Parallelization: should not consolidate a node that is launched for pods on a deleting node").
import type { Catalog, Cluster, Node, NodePool, Pod } from '../model/types.ts';
import type { Simulator, SimulatorInput } from '../scheduling/types.ts';
import { FINAL_COMMAND_STEPS, type DisruptionCommand, type ReplacementSpec } from '../state/types.ts';
import { NOT_INITIALIZED_TAINT_KEYS } from '../scheduling/taints.ts';
import { newNodeLabels } from '../scheduling/launchedLabels.ts';
import { daemonSetPodsFor } from './applyDecision.ts';
import { isBeingDeleted } from '../scheduling/existingNodes.ts';
import { goDurationOrNull as durationOrNull } from '../input/duration.ts';
import { doNotDisruptProtection, isReschedulable } from './pods.ts';


export interface InFlightInput {
  readonly cluster: Cluster;
  readonly commands: readonly DisruptionCommand[];
  readonly nodePools: readonly NodePool[];
  readonly catalog: Catalog;
  readonly nowMs: number;
  /** The NodePool of a command's replacements when the record does not say (older records kept it in the detail). */
  readonly replacementPool: (cmd: DisruptionCommand) => string | undefined;
  readonly simulatorFactory: (input: SimulatorInput) => Simulator;
}

export interface InFlightView {
  /** The cluster to plan on: draining nodes' pods moved to where they will go. */
  readonly cluster: Cluster;
  /** Nodes of unfinished commands (old nodes and replacements): not candidates, use budget. */
  readonly inFlight: ReadonlySet<string>;
  /** Nodes that receive pods of an unfinished command -> that command's id. */
  readonly nominated: ReadonlyMap<string, string>;
  /** Nodes that receive pods of a node something else is deleting -> that node's name. */
  readonly nominatedForDeleting: ReadonlyMap<string, string>;
  /** Pods of unfinished commands, or of nodes being deleted, that fit nowhere yet. */
  readonly unplaced: readonly Pod[];
  /** How many of `unplaced` come off nodes being deleted outside any command. */
  readonly unplacedOffDeleting: number;
}

/** What the drained node's pods are leaving for: one of our commands, or a deletion someone else started. */
type Drain = { readonly cmd: DisruptionCommand } | { readonly deletedNode: string };

const NOTHING: InFlightView['nominated'] = new Map();

export function planAroundInFlight(input: InFlightInput): InFlightView {
  const unfinished = input.commands.filter((c) => !FINAL_COMMAND_STEPS.has(c.step));
  const nothingToPlace = { nominated: NOTHING, nominatedForDeleting: NOTHING, unplaced: [], unplacedOffDeleting: 0 };
  if (unfinished.length === 0 && !input.cluster.nodes.some(isBeingDeleted)) return { cluster: input.cluster, inFlight: new Set(), ...nothingToPlace };

  const byName = new Map(input.cluster.nodes.map((n) => [n.name, n]));
  const byInstance = new Map(input.cluster.nodes.filter((n) => n.instanceId !== undefined).map((n) => [n.instanceId!, n]));
  const inFlight = new Set<string>();
  /** Nodes whose pods must go elsewhere: old nodes being drained, replacements being rolled back, nodes being deleted. */
  const draining = new Map<string, Drain>();
  /** Replacements the pods should go to first, per command. */
  const destinations = new Map<string, string[]>();
  const promised: Node[] = [];
  const readyOverride = new Set<string>();

  for (const cmd of unfinished) {
    for (const name of cmd.nodes) {
      if (!byName.has(name)) continue;
      inFlight.add(name);
      // A rollback gives the old nodes back: they are destinations again, not drained.
      if (cmd.step !== 'rollingBack') draining.set(name, { cmd });
    }
    const own: string[] = [];
    for (const [index, spec] of (cmd.replacements ?? []).entries()) {
      const launched = cmd.launched?.find((l) => l.index === index);
      const registered =
        (launched?.instanceId === undefined ? undefined : byInstance.get(launched.instanceId)) ??
        (launched?.nodeName === undefined ? undefined : byName.get(launched.nodeName));
      if (registered !== undefined) {
        inFlight.add(registered.name);
        if (cmd.step === 'rollingBack') draining.set(registered.name, { cmd });
        else {
          own.push(registered.name);
          readyOverride.add(registered.name);
        }
      } else if (cmd.step !== 'rollingBack') {
        const node = promisedNode(cmd, index, spec, input);
        if (node !== undefined) {
          promised.push(node);
          inFlight.add(node.name);
          own.push(node.name);
        }
      }
    }
    if (own.length > 0) destinations.set(cmd.id, own);
  }
  // Deletions no unfinished command of ours accounts for: their pods need a place just the same.
  for (const node of input.cluster.nodes) {
    if (isBeingDeleted(node) && !inFlight.has(node.name)) draining.set(node.name, { deletedNode: node.name });
  }
  const deletedBy = (name: string): string | undefined => {
    const drain = draining.get(name);
    return drain !== undefined && 'deletedNode' in drain ? drain.deletedNode : undefined;
  };

  // The view before placing: promised capacity present (and Ready), draining nodes closed to new pods.
  const nodes = [
    ...input.cluster.nodes.map((n) =>
      readyOverride.has(n.name) ? asReady(n) : draining.has(n.name) && deletedBy(n.name) === undefined ? { ...n, unschedulable: true } : n,
    ),
    ...promised,
  ];
  const daemonPods = promised.flatMap((n) => daemonSetPodsFor(input.cluster, n));
  let cluster: Cluster = { ...input.cluster, nodes, pods: [...input.cluster.pods, ...daemonPods] };

  const toPlace = cluster.pods.filter(
    (p) => p.nodeName !== undefined && draining.has(p.nodeName) && (deletedBy(p.nodeName) === undefined ? needsPlace(p) : leavesDeletedNode(p, input.nowMs)),
  );
  if (toPlace.length === 0) return { cluster, inFlight, ...nothingToPlace };

  const nominated = new Map<string, string>();
  const nominatedForDeleting = new Map<string, string>();
  const moved = new Map<string, string>();
  // First onto each command's own replacement, then anywhere the pods fit.
  const commandOf = (pod: Pod): DisruptionCommand | undefined => {
    const drain = draining.get(pod.nodeName!)!;
    return 'cmd' in drain ? drain.cmd : undefined;
  };
  const own = toPlace.filter((p) => destinations.has(commandOf(p)?.id ?? ''));
  if (own.length > 0) {
    const allowed = new Set([...destinations.values()].flat());
    const excluded = new Set(cluster.nodes.map((n) => n.name).filter((n) => !allowed.has(n)));
    place(cluster, own, excluded, input, moved);
    cluster = movePods(cluster, moved);
  }
  const rest = toPlace.filter((p) => !moved.has(p.uid));
  if (rest.length > 0) {
    const placedNow = new Map<string, string>();
    place(cluster, rest, new Set(draining.keys()), input, placedNow);
    for (const [uid, to] of placedNow) moved.set(uid, to);
    cluster = movePods(cluster, placedNow);
  }
  for (const pod of toPlace) {
    const to = moved.get(pod.uid);
    if (to === undefined || inFlight.has(to)) continue;
    const cmd = commandOf(pod);
    if (cmd !== undefined) nominated.set(to, cmd.id);
    else if (!nominated.has(to)) nominatedForDeleting.set(to, pod.nodeName!);
  }
  for (const name of nominated.keys()) nominatedForDeleting.delete(name);
  const unplaced = toPlace.filter((p) => !moved.has(p.uid));
  // What fits nowhere is pending: unbound, so that nothing counts it on the node it is leaving.
  if (unplaced.length > 0) {
    const pending = new Set(unplaced.map((p) => p.uid));
    cluster = { ...cluster, pods: cluster.pods.map((p) => (pending.has(p.uid) ? unbind(p) : p)) };
  }
  const unplacedOffDeleting = unplaced.filter((p) => commandOf(p) === undefined).length;
  return { cluster, inFlight, nominated, nominatedForDeleting, unplaced, unplacedOffDeleting };
}

/**
 * A pod of a node something else is deleting that needs a place: one Karpenter counts as currently
 * reschedulable there (a workload pod, not finished, not terminating unless a StatefulSet's, not held on
 * its node by karpenter.sh/do-not-disrupt). A terminating pod's replacement is already pending in the
 * cluster; a do-not-disrupt pod keeps its node until it ends.
 */
function leavesDeletedNode(pod: Pod, nowMs: number): boolean {
  return isReschedulable(pod) && !doNotDisruptProtection(pod, nowMs, durationOrNull).protects;
}

/** The note a pass makes when pods of draining or deleted nodes have no place yet (see `unplaced`). */
export function unplacedNote(view: InFlightView): string | undefined {
  const count = view.unplaced.length;
  if (count === 0) return undefined;
  const names = `${view.unplaced.slice(0, 3).map((p) => `${p.namespace}/${p.name}`).join(', ')}${count > 3 ? ', ...' : ''}`;
  const whose =
    view.unplacedOffDeleting === 0
      ? 'of unfinished disruption commands'
      : view.unplacedOffDeleting === count
        ? 'of nodes being deleted'
        : 'of unfinished disruption commands and of nodes being deleted';
  return `${count} pod(s) ${whose} have no place yet (${names}): nothing new is decided until they do`;
}

/** A pod that must run somewhere when its node goes (daemonset, mirror and finished pods go with it). */
function needsPlace(pod: Pod): boolean {
  return !pod.isDaemonSetPod && !pod.isMirrorPod && pod.phase !== 'Succeeded' && pod.phase !== 'Failed';
}

function place(cluster: Cluster, pods: readonly Pod[], excluded: ReadonlySet<string>, input: InFlightInput, out: Map<string, string>): void {
  const simulator = input.simulatorFactory({ cluster, nodePools: input.nodePools, catalog: input.catalog });
  const result = simulator.simulate({ excludedNodes: excluded, pods, maxNewNodes: 0 });
  for (const placement of result.placements) {
    if (!placement.nodeName.startsWith('new:')) out.set(placement.pod.uid, placement.nodeName);
  }
}

function movePods(cluster: Cluster, moved: ReadonlyMap<string, string>): Cluster {
  if (moved.size === 0) return cluster;
  return { ...cluster, pods: cluster.pods.map((p) => (moved.has(p.uid) ? { ...p, nodeName: moved.get(p.uid)!, terminating: false } : p)) };
}

function unbind(pod: Pod): Pod {
  const { nodeName: _gone, ...rest } = pod;
  return { ...rest, phase: 'Pending' };
}

/** A registered replacement as promised to its command: the taints it carries until ready ignored. */
function asReady(node: Node): Node {
  return { ...node, ready: true, unschedulable: false, taints: node.taints.filter((t) => !NOT_INITIALIZED_TAINT_KEYS.has(t.key)) };
}

/** A replacement a command launched (or is launching) that has not registered yet, as it will be. */
function promisedNode(cmd: DisruptionCommand, index: number, spec: ReplacementSpec, input: InFlightInput): Node | undefined {
  const type = input.catalog.instanceTypes.find((t) => t.name === spec.instanceTypes[0]);
  if (type === undefined) return undefined;
  const poolName = spec.nodePool ?? input.replacementPool(cmd);
  const pool = input.nodePools.find((p) => p.name === poolName);
  const zone = spec.zones[0];
  const name = index === 0 ? `replacement-of-${cmd.id}` : `replacement-${index + 1}-of-${cmd.id}`;
  const labels = newNodeLabels({ name, typeLabels: type.labels, instanceType: type.name, capacityType: spec.capacityType, zone, pool, poolName });
  return {
    name,
    labels,
    annotations: {},
    createdAt: cmd.createdAt,
    taints: pool?.templateTaints ?? [],
    unschedulable: false,
    ...(zone === undefined ? {} : { zone }),
    instanceType: type.name,
    capacityType: spec.capacityType,
    // Not a node of its pool for budgets and candidates: it does not exist yet.
    allocatable: type.allocatable,
    capacity: type.capacity,
    ready: true,
    readySince: input.nowMs,
    deleting: false,
  };
}
