// The whole plan of a pass carried out the way the actuator does it (a plan must not create
// Pending pods). Every command of the pass is started, so every node it disrupts is tainted,
// before any pod is evicted; a delete evicts at once, a replacement's command evicts when its new node
// is Ready. kube-scheduler then places each evicted pod on the least allocated node that takes it.
//
// Each move was checked on its own (schedulerCheck.ts), in the order the pass decided them. When a
// later move took a node onto which an earlier one had sent pods (a node that receives pods stays a
// candidate under consolidateAfter 0s), those pods really go elsewhere, earlier than that check assumed,
// and small differences of order add up over hundreds of moves. So the pass's plan is placed again as a
// whole, in two orders: decision by decision (each replacement there from its own decision on), and
// every delete first (what is evicted at once), then the replacements' pods; strandFreePrefix cuts it
// until no pod is left without a node in either order. A plan whose delete that moves pods comes after
// a replacement is placed again too, in the actuator's order only: its deletes' pods go first and may
// take the room the checks counted on for the replacement's pods (schedulerCheck.test.ts has a case).
//
// The pass itself now checks its plan under more orders (concurrentCheck.ts: every new node Ready at
// once, pods bound smallest first, shuffled, ...), built on layOut here.
//
// carryOutPlan gives the cluster a plan leaves, for the plan's later waves (laterWaves.ts).
import { changeCluster } from '../scheduling/clusterChange.ts';
import type { Cluster, Node, Pod } from '../model/types.ts';
import { createSimulator } from '../scheduling/simulator.ts';
import { replacementNodes } from './applyDecision.ts';
import { countingFactory, newWork, workUnits } from './work.ts';
import type { Proposal } from './methods/types.ts';
import { isReschedulable, podKey } from './pods.ts';
import { queueOrder, unbound, type SchedulerCheckContext } from './schedulerCheck.ts';

export interface PlannedMove {
  readonly proposal: Proposal;
  /** The names its replacements carry in the plan. */
  readonly names: readonly string[];
}

/** The plan's moves laid out on the start cluster: what each evicts, what each launches, what is kept. */
export interface LaidOut {
  /** The start cluster with every replacement added (and its daemonset pods), the evicted pods taken out. */
  readonly cluster: Cluster;
  /** Every node a move disrupts. */
  readonly excluded: ReadonlySet<string>;
  /** Per move, the pods it evicts (unbound), in its eviction order. */
  readonly evicted: readonly (readonly Pod[])[];
  /** Per move, the nodes it launches. */
  readonly added: readonly { readonly nodes: readonly Node[] }[];
}

export function layOut(ctx: SchedulerCheckContext, start: Cluster, moves: readonly PlannedMove[]): LaidOut {
  const decidedBy = new Map<string, number>();
  moves.forEach((m, index) => m.proposal.candidates.forEach((c) => decidedBy.set(c.node.name, index)));
  // The pods each decision evicts, as the cluster holds them now (each pod is evicted once), in the
  // decision's eviction order (its candidates' pods as listed; any other found there after them).
  const onDecided = new Map<string, Pod>();
  const leaving: Pod[] = [];
  for (const pod of start.pods) {
    const index = pod.nodeName === undefined ? undefined : decidedBy.get(pod.nodeName);
    if (index !== undefined && isReschedulable(pod)) {
      onDecided.set(pod.uid, pod);
      leaving.push(pod);
    }
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
  // The start cluster without the evicted pods, with the replacements and their daemonset pods: made as
  // a change of it, so its simulation is derived from the start's index rather than built afresh (the
  // plan is laid out again at every check of it as a whole).
  const cluster = changeCluster(start, {
    removedNodes: new Set(),
    removedPods: leaving,
    addedNodes: added.flatMap((a) => a.nodes),
    addedPods: added.flatMap((a) => a.pods),
  });
  return { cluster, excluded: new Set(decidedBy.keys()), evicted, added };
}

/** The evicted pods in the order kube-scheduler meets them, and from which pod on each replacement is Ready. */
function queueFor(laidOut: LaidOut, order: readonly number[]): { pods: Pod[]; availableFrom: Map<string, number> } {
  const pods: Pod[] = [];
  const availableFrom = new Map<string, number>();
  for (const index of order) {
    for (const node of laidOut.added[index]!.nodes) availableFrom.set(node.name, pods.length);
    pods.push(...queueOrder(laidOut.evicted[index]!));
  }
  return { pods, availableFrom };
}

/**
 * Which orders a plan is placed in: `both` (decision by decision, and the actuator's eviction order), or
 * only the `eviction` order, when the moves were checked decision by decision already and none took pods
 * an earlier one had sent to its nodes (then decision order places them as the checks did).
 */
export type PlanOrders = 'both' | 'eviction';

/**
 * The order the actuator evicts in: a delete evicts as soon as its command starts, a replacement once its
 * new node is Ready, so every delete's pods first (in decision order), then the replacements'.
 */
export function evictionOrder(moves: readonly PlannedMove[]): number[] {
  const byDecision = moves.map((_, index) => index);
  return [...byDecision.filter((i) => moves[i]!.proposal.replacements.length === 0), ...byDecision.filter((i) => moves[i]!.proposal.replacements.length > 0)];
}

/** The first decision (index into `moves`) a pod of which would stay Pending, and why; undefined when none. */
export function firstStrandingMove(
  ctx: SchedulerCheckContext,
  start: Cluster,
  moves: readonly PlannedMove[],
  orders: PlanOrders = 'both',
): { index: number; reason: string } | undefined {
  if (moves.length === 0) return undefined;
  const laidOut = layOut(ctx, start, moves);
  const simulator = (ctx.simulatorFactory ?? createSimulator)({ cluster: laidOut.cluster, nodePools: ctx.nodePools, catalog: ctx.catalog });
  const decisionOf = new Map<string, number>();
  laidOut.evicted.forEach((pods, index) => pods.forEach((p) => decisionOf.set(p.uid, index)));

  const byDecision = moves.map((_, index) => index);
  let worst: { index: number; reason: string } | undefined;
  for (const order of orders === 'both' ? [byDecision, evictionOrder(moves)] : [evictionOrder(moves)]) {
    const { pods, availableFrom } = queueFor(laidOut, order);
    if (pods.length === 0) continue;
    const result = simulator.simulate({ excludedNodes: laidOut.excluded, pods, maxNewNodes: 0, placement: 'least-allocated', podOrder: 'as-given', stopAtFirstFailure: true, availableFrom });
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
export function strandFreePrefix(ctx: SchedulerCheckContext, start: Cluster, moves: readonly PlannedMove[], orders: PlanOrders = 'both'): { kept: number; reason: string } {
  let kept = moves.length;
  let reason = '';
  for (;;) {
    const stranding = firstStrandingMove(ctx, start, moves.slice(0, kept), orders);
    if (!stranding) return { kept, reason };
    reason = stranding.reason;
    kept = stranding.index < kept - 1 ? stranding.index + 1 : stranding.index;
  }
}

/** A plan carried out: the cluster it leaves, the pods that found no node, the nodes that received pods. */
export interface CarriedOut {
  readonly cluster: Cluster;
  readonly pending: readonly Pod[];
  /** Nodes that received evicted pods, and the replacements launched (each had a pod event). */
  readonly touched: ReadonlySet<string>;
  /** The work doing it took (workUnits, as PassOutcome.work). */
  readonly work: number;
  /**
   * Per move (in the order given), where kube-scheduler placed each pod it evicts (`namespace/name` ->
   * node or replacement name); a pod that found no node is absent.
   */
  readonly destinations: readonly Readonly<Record<string, string>>[];
}

/**
 * The cluster once the actuator has carried the moves out as it does (every node of the plan tainted
 * first, the deletes' pods evicted first, then each replacement's once it is Ready) and kube-scheduler
 * has placed each evicted pod on the least allocated node that takes it. A pod that found no node then
 * is tried once more when everything is done; after that it stays Pending. The later waves of a plan
 * start from this cluster (laterWaves.ts).
 */
export function carryOutPlan(ctx: SchedulerCheckContext, start: Cluster, moves: readonly PlannedMove[]): CarriedOut {
  if (moves.length === 0) return { cluster: start, pending: [], touched: new Set(), work: 0, destinations: [] };
  const laidOut = layOut(ctx, start, moves);
  const work = newWork();
  const factory = countingFactory(ctx.simulatorFactory ?? createSimulator, work);
  const { pods, availableFrom } = queueFor(laidOut, evictionOrder(moves));
  const placedAt = new Map<string, string>();
  if (pods.length > 0) {
    const simulator = factory({ cluster: laidOut.cluster, nodePools: ctx.nodePools, catalog: ctx.catalog });
    const result = simulator.simulate({ excludedNodes: laidOut.excluded, pods, maxNewNodes: 0, placement: 'least-allocated', podOrder: 'as-given', availableFrom });
    for (const p of result.placements) placedAt.set(p.pod.uid, p.nodeName);
  }
  // The disrupted nodes go, with the pods that do not move (daemonset, mirror, finished pods).
  const nodes = laidOut.cluster.nodes.filter((n) => !laidOut.excluded.has(n.name));
  const stays = laidOut.cluster.pods.filter((p) => p.nodeName === undefined || !laidOut.excluded.has(p.nodeName));
  // An evicted pod comes back as a new pod, created and started now: that is its node's pod event, and
  // a duration-valued do-not-disrupt annotation protects it again from now.
  const reborn = (pod: Pod): Pod => ({ ...pod, createdAt: ctx.nowMs, startedAt: ctx.nowMs });
  const placed: Pod[] = [];
  const unplaced: Pod[] = [];
  for (const pod of pods) {
    const to = placedAt.get(pod.uid);
    if (to === undefined) unplaced.push({ ...reborn(pod), phase: 'Pending' });
    else placed.push({ ...reborn(pod), nodeName: to });
  }
  if (unplaced.length > 0) {
    const retry = factory({ cluster: { ...laidOut.cluster, nodes, pods: [...stays, ...placed] }, nodePools: ctx.nodePools, catalog: ctx.catalog }).simulate({
      excludedNodes: new Set(),
      pods: unplaced,
      maxNewNodes: 0,
      placement: 'least-allocated',
      podOrder: 'as-given',
    });
    for (const p of retry.placements) placedAt.set(p.pod.uid, p.nodeName);
  }
  const rebound = unplaced.map((p) => {
    const to = placedAt.get(p.uid);
    return to === undefined ? p : { ...p, nodeName: to, phase: 'Running' as const };
  });
  const cluster: Cluster = { ...laidOut.cluster, nodes, pods: [...stays, ...placed, ...rebound] };
  const touched = new Set([...placedAt.values(), ...laidOut.added.flatMap((a) => a.nodes.map((n) => n.name))]);
  const destinations = laidOut.evicted.map((evicted) => {
    const out: Record<string, string> = {};
    for (const pod of evicted) {
      const to = placedAt.get(pod.uid);
      if (to !== undefined) out[podKey(pod)] = to;
    }
    return out;
  });
  return { cluster, pending: rebound.filter((p) => p.nodeName === undefined), touched, work: workUnits(work), destinations };
}
