// Issue 11 item 4: a plan must survive the real scheduler. The search places moved pods best-fit (as
// Karpenter's simulation does), but kube-scheduler's default scoring puts each pod on the feasible node
// left least allocated, spreading pods out; a move that only works with tight packing then leaves pods
// Pending. So before a method takes a move, the moved pods are placed again on the cluster as the move
// leaves it (its replacements already there, as they are when the drain starts), the kube-scheduler way,
// in two orders (largest first, and the scheduler queue's order: priority, then eviction order). The pods
// moved by the pass's earlier decisions are placed again too, first: the real scheduler does not put them
// where the tight packing did, so the room this move counts on may be gone. If a pod finds no node in
// either order, the move is refused with the reason.
import type { Catalog, Cluster, NodePool, Pod } from '../model/types.ts';
import { createSimulator } from '../scheduling/simulator.ts';
import type { Simulator, SimulatorInput } from '../scheduling/types.ts';
import { applyProposal, replacementNames } from './applyDecision.ts';
import type { Proposal } from './methods/types.ts';
import { podKey } from './pods.ts';

export interface SchedulerCheckInput {
  readonly cluster: Cluster;
  readonly nodePools: readonly NodePool[];
  readonly pools: ReadonlyMap<string, NodePool>;
  readonly catalog: Catalog;
  readonly nowMs: number;
  readonly simulatorFactory?: (input: SimulatorInput) => Simulator;
  /** Uids of the pods the pass's earlier decisions moved (bound in `cluster` where the search put them). */
  readonly movedEarlier?: readonly string[];
  /** The pass's simulator of `cluster` as it is: a move without replacements is checked on it, unbuilt. */
  readonly current?: Simulator;
}

/** Undefined when every moved pod also finds a node under least-allocated scoring; else why not. */
export function kubeSchedulerCheck(input: SchedulerCheckInput, proposal: Proposal): string | undefined {
  const moved = proposal.candidates.flatMap((c) => c.pods);
  if (moved.length === 0) return undefined;
  const earlierUids = new Set(input.movedEarlier ?? []);
  if (proposal.replacements.length === 0 && input.current) {
    // Nothing is added: the simulator of the cluster as it is answers, with the move's nodes excluded;
    // pods of earlier decisions, bound where the search put them, give their room back when re-placed.
    const earlier = input.cluster.pods.filter((p) => earlierUids.has(p.uid));
    return placeAll(input.current, new Set(proposal.candidates.map((c) => c.node.name)), [...earlier, ...moved]);
  }
  const names = replacementNames(0, proposal.replacements.length).map((n) => `${n}-check`);
  const applied = applyProposal(input.cluster, proposal, input.pools, input.nowMs, names);
  const earlier = applied.cluster.pods.filter((p) => earlierUids.has(p.uid));
  const movedUids = new Set([...moved.map((p) => p.uid), ...earlierUids]);
  const cluster: Cluster = { ...applied.cluster, pods: applied.cluster.pods.filter((p) => !movedUids.has(p.uid)) };
  const build = (c: Cluster) => (input.simulatorFactory ?? createSimulator)({ cluster: c, nodePools: input.nodePools, catalog: input.catalog });
  const unbind = (pods: readonly Pod[]): Pod[] => pods.map(({ nodeName: _bound, ...pod }) => pod);
  if (earlier.length === 0) return placeAll(build(cluster), new Set(), unbind(moved));
  // The earlier decisions' pods are rescheduled before this move's replacements exist: place them first
  // without those nodes (in queue order), then this move's pods on the cluster as that leaves it.
  const first = build(cluster).simulate({
    excludedNodes: new Set(names),
    pods: queueOrder(unbind(earlier)),
    maxNewNodes: 0,
    placement: 'least-allocated',
    podOrder: 'as-given',
    stopAtFirstFailure: true,
  });
  if (!first.allScheduled) return pendingReason(first.unschedulable[0]!.pod, first.unschedulable[0]!.reason);
  const placed = new Map(first.placements.map((p) => [p.pod.uid, p.nodeName]));
  const rebound = earlier.map((p) => ({ ...p, nodeName: placed.get(p.uid)! }));
  return placeAll(build({ ...cluster, pods: [...cluster.pods, ...rebound] }), new Set(), unbind(moved));
}

const queueOrder = (pods: readonly Pod[]): Pod[] =>
  pods.map((pod, i) => ({ pod, i })).sort((a, b) => b.pod.priority - a.pod.priority || a.i - b.i).map((e) => e.pod);

const pendingReason = (pod: Pod, reason: string): string =>
  `not taken: placed the way kube-scheduler scores nodes (least allocated first), pod ${podKey(pod)} would stay Pending (${reason})`;

function placeAll(simulator: Simulator, excludedNodes: ReadonlySet<string>, unbound: readonly Pod[]): string | undefined {
  for (const [pods, podOrder] of [[unbound, 'largest-first'], [queueOrder(unbound), 'as-given']] as const) {
    const result = simulator.simulate({ excludedNodes, pods, maxNewNodes: 0, placement: 'least-allocated', podOrder, stopAtFirstFailure: true });
    if (!result.allScheduled) {
      const first = result.unschedulable[0]!;
      return pendingReason(first.pod, first.reason);
    }
  }
  return undefined;
}
