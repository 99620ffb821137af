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
  const simulator = (input.simulatorFactory ?? createSimulator)({ cluster, nodePools: input.nodePools, catalog: input.catalog });
  const unbound: Pod[] = [...earlier, ...moved].map(({ nodeName: _bound, ...pod }) => pod);
  return placeAll(simulator, new Set(), unbound);
}

function placeAll(simulator: Simulator, excludedNodes: ReadonlySet<string>, unbound: readonly Pod[]): string | undefined {
  const queueOrder = unbound.map((pod, i) => ({ pod, i })).sort((a, b) => b.pod.priority - a.pod.priority || a.i - b.i).map((e) => e.pod);
  for (const [pods, podOrder] of [[unbound, 'largest-first'], [queueOrder, 'as-given']] as const) {
    const result = simulator.simulate({ excludedNodes, pods, maxNewNodes: 0, placement: 'least-allocated', podOrder, stopAtFirstFailure: true });
    if (!result.allScheduled) {
      const first = result.unschedulable[0]!;
      return `not taken: placed the way kube-scheduler scores nodes (least allocated first), pod ${podKey(first.pod)} would stay Pending (${first.reason})`;
    }
  }
  return undefined;
}
