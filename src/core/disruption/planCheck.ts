// The whole plan of a pass carried out the way the actuator does it (issue 11 item 4: a plan must not
// create Pending pods). Every command of the pass is started, so every node it disrupts is tainted,
// before any pod is evicted; a delete evicts at once, a replacement's command evicts when its new node
// is Ready. kube-scheduler then places each evicted pod on the least allocated node that takes it.
//
// Each move was checked on its own (schedulerCheck.ts), in the order the pass decided them. When a
// later move took a node onto which an earlier one had sent pods (a node that receives pods stays a
// candidate under consolidateAfter 0s), those pods really go elsewhere, earlier than that check assumed,
// and small differences of order add up over hundreds of moves. So the pass's plan is placed again as a
// whole, in two orders: decision by decision (each replacement there from its own decision on), and
// every delete first (what is evicted at once), then the replacements' pods; strandFreePrefix cuts it
// until no pod is left without a node in either order.
import type { Cluster, Pod } from '../model/types.ts';
import { createSimulator } from '../scheduling/simulator.ts';
import { replacementNodes } from './applyDecision.ts';
import type { Proposal } from './methods/types.ts';
import { isReschedulable, podKey } from './pods.ts';
import { queueOrder, unbound, type SchedulerCheckContext } from './schedulerCheck.ts';

export interface PlannedMove {
  readonly proposal: Proposal;
  /** The names its replacements carry in the plan. */
  readonly names: readonly string[];
}

/** The first decision (index into `moves`) a pod of which would stay Pending, and why; undefined when none. */
export function firstStrandingMove(ctx: SchedulerCheckContext, start: Cluster, moves: readonly PlannedMove[]): { index: number; reason: string } | undefined {
  if (moves.length === 0) return undefined;
  const decidedBy = new Map<string, number>();
  moves.forEach((m, index) => m.proposal.candidates.forEach((c) => decidedBy.set(c.node.name, index)));
  // The pods each decision evicts, as the cluster holds them now (each pod is evicted once), in the
  // decision's eviction order (its candidates' pods as listed; any other found there after them).
  const onDecided = new Map<string, Pod>();
  const kept: Pod[] = [];
  for (const pod of start.pods) {
    const index = pod.nodeName === undefined ? undefined : decidedBy.get(pod.nodeName);
    if (index !== undefined && isReschedulable(pod)) onDecided.set(pod.uid, pod);
    else kept.push(pod);
  }
  const evicted: Pod[][] = moves.map((m) => {
    const pods: Pod[] = [];
    for (const c of m.proposal.candidates) {
      for (const p of c.pods) {
        const here = onDecided.get(p.uid);
        if (here === undefined || here.nodeName !== c.node.name) continue;
        pods.push(unbound(here));
        onDecided.delete(p.uid);
      }
    }
    return pods;
  });
  for (const pod of onDecided.values()) evicted[decidedBy.get(pod.nodeName!)!]!.push(unbound(pod));
  const added = moves.map((m) => replacementNodes(start, m.proposal, ctx.pools, ctx.nowMs, m.names));
  const cluster: Cluster = {
    ...start,
    nodes: [...start.nodes, ...added.flatMap((a) => a.nodes)],
    pods: [...kept, ...added.flatMap((a) => a.pods)],
  };
  const simulator = (ctx.simulatorFactory ?? createSimulator)({ cluster, nodePools: ctx.nodePools, catalog: ctx.catalog });
  const excluded = new Set(decidedBy.keys());
  const decisionOf = new Map<string, number>();
  evicted.forEach((pods, index) => pods.forEach((p) => decisionOf.set(p.uid, index)));

  const byDecision = moves.map((_, index) => index);
  const deletesFirst = [...byDecision.filter((i) => moves[i]!.proposal.replacements.length === 0), ...byDecision.filter((i) => moves[i]!.proposal.replacements.length > 0)];
  let worst: { index: number; reason: string } | undefined;
  for (const order of [byDecision, deletesFirst]) {
    const pods: Pod[] = [];
    const availableFrom = new Map<string, number>();
    for (const index of order) {
      for (const node of added[index]!.nodes) availableFrom.set(node.name, pods.length);
      pods.push(...queueOrder(evicted[index]!));
    }
    if (pods.length === 0) continue;
    const result = simulator.simulate({ excludedNodes: excluded, pods, maxNewNodes: 0, placement: 'least-allocated', podOrder: 'as-given', stopAtFirstFailure: true, availableFrom });
    if (result.allScheduled) continue;
    const miss = result.unschedulable[0]!;
    const index = decisionOf.get(miss.pod.uid)!;
    if (!worst || index < worst.index) {
      worst = { index, reason: `carried out with the rest of the pass's plan (every node tainted first, pods placed the way kube-scheduler scores nodes), pod ${podKey(miss.pod)} would stay Pending (${miss.reason})` };
    }
  }
  return worst;
}

/**
 * How many of the moves, in order, can be carried out together without leaving a pod Pending, and why
 * the rest cannot. A stranded pod's move was checked against the cluster as the moves before it left it;
 * what takes its room is the taint of a later move. So the later moves go first, and the stranded pod's
 * own move only when it is the last one left. Each round cuts the plan shorter, so this ends.
 */
export function strandFreePrefix(ctx: SchedulerCheckContext, start: Cluster, moves: readonly PlannedMove[]): { kept: number; reason: string } {
  let kept = moves.length;
  let reason = '';
  for (;;) {
    const stranding = firstStrandingMove(ctx, start, moves.slice(0, kept));
    if (!stranding) return { kept, reason };
    reason = stranding.reason;
    kept = stranding.index < kept - 1 ? stranding.index + 1 : stranding.index;
  }
}
