// A pass's plan checked the way it is carried out. The actuator starts every command of a pass at once:
// every node the plan disrupts is tainted first; a delete evicts its pods first, one delete after
// another (each once kube-scheduler has placed the pods evicted before it, app/act/proveLive.ts); a
// replacement's command evicts once its own new node is Ready, and the new nodes of the pass become
// Ready in no order the plan controls, so one may stand Ready and empty while another command drains.
// Each evicted pod is then recreated by its controller and bound, one at a time, by kube-scheduler,
// whose default scoring (NodeResourcesFit, LeastAllocated) puts it on the feasible node left least
// allocated: an empty new node of another command is the first choice of every pod.
//
// The per-move check (schedulerCheck.ts) places each move's pods with its own replacement there and the
// others not yet; here the whole plan is placed again under several carrying-out orders, and a decision
// any of them leaves a pod Pending under is cut:
//   - the deletes' pods first, in decision order (a delete evicts at once, before any new node is Ready);
//   - then the replacements' commands, each new node Ready only when its own command drains, commands in
//     decision order, in reverse and in seeded shuffled orders (more of them when the plan moves few
//     pods), each command's pods in the queue's order, and also smallest first or shuffled (a controller
//     recreates them in no fixed order), and each replacement's pods largest first with one pod held
//     back to the end (a largest one, the one asking the most memory, each shape no pod outgrows);
//   - each replacement's command first and alone (only its own new nodes Ready), its pods in those
//     orders (firstAloneStranding);
//   - a pass that only deletes: its pods in the queue's order, smallest first, largest first, with each
//     held-back pod last, and in several seeded shuffles (they all come back at once);
//   - when the pass both deletes and replaces: every new node Ready before the deletes' pods are bound (a
//     delete whose disruption budget lets its pods go one at a time drains for longer than a launch
//     takes), every pod of the pass in seeded shuffles;
//   - or every new node Ready before any of those commands drains (the pods of one command then spread
//     over the other commands' empty nodes), the pods bound command by command, in reverse, taking
//     turns between commands, and in the per-move check's orders (largest first, smallest first,
//     shuffled), so a move that passed that check alone is never cut here for its own sake.
// The further seeded shuffles are scored in kube-scheduler's own whole points, ties drawn by the seed
// (schedulerCheck.ts moreShuffles says why); the other orders in exact shares, ties by name.
// The plan is cut after the first decision whose pod would stay Pending under some order (or that
// decision itself, when it is the last), and placed again, until every order binds every pod. A cut
// decision is looked at again next pass, with the other commands done.
import type { Cluster, Pod } from '../model/types.ts';
import { createSimulator } from '../scheduling/simulator.ts';
import type { Simulator } from '../scheduling/types.ts';
import { layOut, type LaidOut, type PlannedMove } from './planCheck.ts';
import { podKey } from './pods.ts';
import { bindingOrders, heldBackOrders, queueOrder, shuffleCount, shuffledPods as shuffledWithinCommand, smallestFirstPods, type SchedulerCheckContext } from './schedulerCheck.ts';
import { changeCluster } from '../scheduling/clusterChange.ts';
import { seededShuffle } from '../random.ts';

const RANDOM_SEEDS = [1, 2] as const;
/** Further shuffles when a pass only deletes: each costs one placement of those pods on existing nodes. */
const DELETE_SEEDS = [3, 4, 5] as const;
/**
 * Seeds of further shuffled orders when the pass moves few pods (schedulerCheck.ts shuffleCount), within
 * about 20,000 pod placements (an order's pods plus the cluster's nodes) and at most 48 orders: one
 * check of the whole plan a pass, so it can afford more than a move's. A 100-node pass of four replacements (540 pods, every node disrupted)
 * left a pod Pending in one random carrying-out order in ten, none of the seven shuffles it then had.
 */
const PLAN_SHUFFLE_PLACEMENTS = 20_000;
const PLAN_MAX_SHUFFLES = 48;
/** The most shuffles with the deletes' pods among the commands' (every new node Ready), and their first seed. */
const LATE_DELETE_SHUFFLES = 8;
const LATE_DELETE_SEED = 200;
const extraSeeds = (pods: number, nodes: number): number[] => Array.from({ length: shuffleCount(pods, nodes, PLAN_SHUFFLE_PLACEMENTS, PLAN_MAX_SHUFFLES) }, (_, k) => 100 + k);
const deleteSeeds = (pods: number, nodes: number): number[] => [...DELETE_SEEDS, ...extraSeeds(pods, nodes)];

export interface ConcurrentVerdict {
  /** How many of the moves, in order, are kept. */
  readonly kept: number;
  /** Index of each cut decision -> why. */
  readonly cut: ReadonlyMap<number, string>;
}

interface Order {
  readonly name: string;
  readonly pods: readonly Pod[];
  readonly availableFrom?: ReadonlyMap<string, number>;
  /** It starts with every delete's pods in the queue's order, no new node Ready before they are bound. */
  readonly afterDeletesInQueueOrder?: boolean;
  /** Scored in kube-scheduler's whole points, ties drawn by this seed (the further shuffles). */
  readonly ties?: number;
}

/**
 * The decisions of `moves` that every carrying-out order leaves without a Pending pod: the longest such
 * prefix. A stranded pod's decision was checked on the cluster as the decisions before it left it; what
 * takes its room is a later decision (its taint, its pods, or its new node drawing pods away). So the
 * later decisions go first, and the stranded pod's own only when it is the last one left (the pass's
 * earlier decisions are its surer and larger savings). Each round cuts the plan shorter, so this ends.
 * `knownSafe`: how many of the first moves an earlier check of this same plan found safe together (a
 * pass that checks as it decides); the plan is never cut shorter than that, and stops being checked
 * there: a stranded pod of an early decision is then one a later decision strands.
 */
export function keepConcurrentlySafe(ctx: SchedulerCheckContext, start: Cluster, moves: readonly PlannedMove[], knownSafe = 0): ConcurrentVerdict {
  const cut = new Map<number, string>();
  let kept = moves.length;
  while (kept > knownSafe) {
    const stranding = firstStranding(ctx, start, moves.slice(0, kept));
    if (!stranding) break;
    const next = Math.max(knownSafe, stranding.index < kept - 1 ? stranding.index + 1 : stranding.index);
    for (let i = next; i < kept; i++) {
      cut.set(i, i === stranding.index ? stranding.reason : `with decision ${stranding.index + 1} of this pass ${stranding.reason}`);
    }
    kept = next;
  }
  return { kept, cut };
}

/** The first decision (index into `moves`) a pod of which stays Pending under some order, and why. */
function firstStranding(ctx: SchedulerCheckContext, start: Cluster, moves: readonly PlannedMove[]): { index: number; reason: string } | undefined {
  const laidOut = layOut(ctx, start, moves);
  const decisionOf = new Map<string, number>();
  laidOut.evicted.forEach((pods, index) => pods.forEach((p) => decisionOf.set(p.uid, index)));
  if (decisionOf.size === 0) return undefined;
  const build = (cluster: Cluster): Simulator => (ctx.simulatorFactory ?? createSimulator)({ cluster, nodePools: ctx.nodePools, catalog: ctx.catalog });
  // The earliest decision stranded, and of the orders that strand it the first in the list (its name is
  // the reason given; the orders are not bound in the list's order, see below).
  let worst: { index: number; reason: string; position: number } | undefined;
  const note = (name: string, miss: { pod: Pod; reason: string }, position: number): void => {
    const index = decisionOf.get(miss.pod.uid)!;
    if (worst && (index > worst.index || (index === worst.index && position >= worst.position))) return;
    worst = {
      index,
      position,
      reason: `carried out together with the pass's other commands (${name}; pods bound one at a time the way kube-scheduler scores nodes, least allocated first), pod ${podKey(miss.pod)} would stay Pending (${miss.reason})`,
    };
  };
  const bind = (simulator: Simulator, order: Order, position: number, skip = 0): void => {
    if (order.pods.length <= skip) return;
    const availableFrom = order.availableFrom && skip > 0 ? new Map([...order.availableFrom].map(([name, at]) => [name, at - skip] as const)) : order.availableFrom;
    const result = simulator.simulate({
      excludedNodes: laidOut.excluded,
      pods: skip > 0 ? order.pods.slice(skip) : order.pods,
      maxNewNodes: 0,
      placement: 'least-allocated',
      podOrder: 'as-given',
      stopAtFirstFailure: true,
      ...(availableFrom ? { availableFrom } : {}),
      ...(order.ties !== undefined ? { integerScoreTies: order.ties } : {}),
    });
    if (!result.allScheduled) note(order.name, result.unschedulable[0]!, position);
  };
  const { orders, deletePods, heldBack } = carryingOutOrders(laidOut, moves);
  // Most orders start alike: the deletes' pods in the queue's order, before any new node is Ready. Those
  // pods are bound once, and those orders go on from the world they leave (the laid-out cluster with them
  // bound, simulated afresh), as does each command carried out first and alone. The orders that bind the
  // deletes' pods some other way go first, on the laid-out cluster, which is let go before the second
  // world is built (at 1,000 nodes each holds an index of every pod).
  let world = build(laidOut.cluster);
  orders.forEach((order, position) => {
    if (!order.afterDeletesInQueueOrder) bind(world, order, position);
  });
  // (A plan that only deletes has bound its pods every way already.)
  if (!laidOut.added.some((a) => a.nodes.length > 0)) return finding(worst);
  if (deletePods.length > 0) {
    const notReady = new Map(laidOut.added.flatMap((a) => a.nodes.map((n) => [n.name, deletePods.length] as const)));
    const bound = world.simulate({ excludedNodes: laidOut.excluded, pods: deletePods, maxNewNodes: 0, placement: 'least-allocated', podOrder: 'as-given', stopAtFirstFailure: true, availableFrom: notReady });
    if (!bound.allScheduled) {
      const first = orders.findIndex((o) => o.afterDeletesInQueueOrder);
      note(orders[first]?.name ?? "deletes first, in the queue's order", bound.unschedulable[0]!, first);
      return finding(worst);
    }
    const placed = new Map(bound.placements.map((p) => [p.pod.uid, p.nodeName] as const));
    world = build(changeCluster(laidOut.cluster, { removedNodes: new Set(), addedPods: deletePods.map((p) => ({ ...p, nodeName: placed.get(p.uid)! })) }));
  }
  orders.forEach((order, position) => {
    if (order.afterDeletesInQueueOrder) bind(world, order, position, deletePods.length);
  });
  const alone = firstAloneStranding(laidOut, world, heldBack);
  if (alone && (!worst || alone.index < worst.index)) return alone;
  return finding(worst);
}

const finding = (worst: { index: number; reason: string } | undefined): { index: number; reason: string } | undefined => (worst ? { index: worst.index, reason: worst.reason } : undefined);

/**
 * Each replacement's command carried out first, alone, in `world` (the laid-out plan with the deletes'
 * pods bound, in the queue's order): only this command's new nodes Ready, every other decided node tainted and every other new node
 * not Ready yet. Its pods must then find room on its own new nodes and the holes the kept nodes have
 * left, whatever order they come back in: smallest first, each held-back order, the queue's, and a
 * shuffle (the plan's own shuffles cover more random orders). In decision order an earlier command's
 * new node is there to take what overflows; a command that runs first has none. Undefined with fewer
 * than two replacements' commands (the plan's orders already run that one first).
 */
export function firstAloneStranding(laidOut: LaidOut, world: Simulator, heldBack?: ReadonlyMap<readonly Pod[], Pod[][]>): { index: number; reason: string } | undefined {
  const replaces = laidOut.added.map((a, i) => (a.nodes.length > 0 ? i : -1)).filter((i) => i >= 0);
  if (replaces.length < 2) return undefined;
  const newNodes = laidOut.added.flatMap((a) => a.nodes.map((n) => n.name));
  for (const index of replaces) {
    const own = new Set(laidOut.added[index]!.nodes.map((n) => n.name));
    const excluded = new Set([...laidOut.excluded, ...newNodes.filter((name) => !own.has(name))]);
    const pods = laidOut.evicted[index]!;
    const within: [string, Pod[]][] = [
      ['smallest first', smallestFirstPods(pods)],
      ...(heldBack?.get(pods) ?? heldBackOrders(pods)).map((order, k): [string, Pod[]] => [`largest first, held-back order ${k + 1}`, order]),
      ["in the queue's order", queueOrder(pods)],
      ['shuffled', shuffledWithinCommand(pods)],
    ];
    for (const [name, order] of within) {
      const result = world.simulate({ excludedNodes: excluded, pods: order, maxNewNodes: 0, placement: 'least-allocated', podOrder: 'as-given', stopAtFirstFailure: true });
      if (result.allScheduled) continue;
      const miss = result.unschedulable[0]!;
      return {
        index,
        reason: `carried out together with the pass's other commands (deletes first, then decision ${index + 1}'s new nodes Ready before any other, its pods ${name}; pods bound one at a time the way kube-scheduler scores nodes, least allocated first), pod ${podKey(miss.pod)} would stay Pending (${miss.reason})`,
      };
    }
  }
  return undefined;
}

/**
 * The orders the plan may be carried out in (see the top of this file), the deletes' pods in the queue's
 * order, and each replacement's held-back orders (by its evicted pods), for firstAloneStranding.
 */
function carryingOutOrders(laidOut: LaidOut, moves: readonly PlannedMove[]): { orders: Order[]; deletePods: Pod[]; heldBack: ReadonlyMap<readonly Pod[], Pod[][]> } {
  const byDecision = moves.map((_, i) => i);
  const deletes = byDecision.filter((i) => laidOut.added[i]!.nodes.length === 0);
  const replaces = byDecision.filter((i) => laidOut.added[i]!.nodes.length > 0);
  // A delete evicts as soon as its command starts, long before any new node is Ready: its pods go first.
  const deletePods = deletes.flatMap((i) => queueOrder(laidOut.evicted[i]!));
  const evictedCount = laidOut.evicted.reduce((sum, pods) => sum + pods.length, 0);
  // Within one command the pods come back in whatever order their controllers recreate them: besides the
  // queue's order, smallest first (small pods spread over the emptiest nodes before the large ones come,
  // the order most likely to leave a large pod without room) and shuffled.
  const ownReady = (name: string, order: readonly number[], within: (pods: readonly Pod[]) => Pod[] = queueOrder, deletesWithin = within): Order => {
    const pods: Pod[] = deletes.flatMap((i) => deletesWithin(laidOut.evicted[i]!));
    const availableFrom = new Map<string, number>();
    for (const index of order) {
      for (const node of laidOut.added[index]!.nodes) availableFrom.set(node.name, pods.length);
      pods.push(...within(laidOut.evicted[index]!));
    }
    return { name, pods, availableFrom, afterDeletesInQueueOrder: deletesWithin === queueOrder && replaces.length > 0 };
  };
  const orders: Order[] = [
    ownReady('deletes first, then each new node Ready as its own command drains, commands in decision order', replaces),
    ownReady("deletes first, then each new node Ready as its own command drains, commands in decision order, each command's pods smallest first", replaces, smallestFirstPods),
  ];
  // A largest pod of each replacement's command held back to the end, then the pod asking the most
  // memory and each other shape no pod outgrows (schedulerCheck.ts heldBackOrders, worked out once per
  // command).
  const heldBack = new Map(replaces.map((i) => [laidOut.evicted[i]!, heldBackOrders(laidOut.evicted[i]!)] as const));
  if (replaces.length > 0) {
    const heldBackWithin = (which: number) => (pods: readonly Pod[]): Pod[] => {
      const held = heldBack.get(pods) ?? heldBackOrders(pods);
      return held[which] ?? held[0] ?? [...pods];
    };
    const most = Math.max(...[...heldBack.values()].map((held) => held.length));
    for (let which = 0; which < Math.max(1, most); which++) {
      const name = which === 0 ? 'one largest pod last' : `another pod last (held-back order ${which + 1}: the pod asking the most memory, then each shape no pod outgrows in both)`;
      orders.push(ownReady(`deletes first, then each new node Ready as its own command drains, commands in decision order, each replacement's pods largest first with ${name}`, replaces, heldBackWithin(which), queueOrder));
    }
  }
  if (replaces.length === 0) {
    // Deletes only: their pods all come back at once, in an order no one controls; a few more of them.
    const [largest, , shuffled] = bindingOrders(deletePods);
    orders.push(
      { name: 'deletes only, largest pods first', pods: largest! },
      ...heldBackOrders(deletePods).map((pods, k) => ({ name: `deletes only, largest pods first with one pod held back to the end (held-back order ${k + 1})`, pods })),
      { name: 'deletes only, pods in a shuffled order', pods: shuffled! },
      ...deleteSeeds(deletePods.length, laidOut.cluster.nodes.length).map((seed) => ({ name: `deletes only, pods in a shuffled order (seed ${seed}, scored in whole points)`, pods: seededShuffle(deletePods, seed), ties: seed })),
    );
    return { orders, deletePods, heldBack };
  }
  orders.push(
    ownReady('deletes first, then each new node Ready as its own command drains, commands in reverse order', [...replaces].reverse()),
    ...RANDOM_SEEDS.map((seed) => ownReady(`deletes first, then each new node Ready as its own command drains, commands in a shuffled order (seed ${seed})`, seededShuffle(replaces, seed))),
    ...RANDOM_SEEDS.map((seed) =>
      ownReady(`deletes first, then each new node Ready as its own command drains, commands and each command's pods in a shuffled order (seed ${seed})`, seededShuffle(replaces, seed + 10), shuffledWithinCommand),
    ),
    // More of those when the pass moves few pods, each command's pods in a shuffle of its own.
    ...extraSeeds(evictedCount, laidOut.cluster.nodes.length).map((seed) => ({
      ...ownReady(`deletes first, then each new node Ready as its own command drains, commands and each command's pods in a shuffled order (seed ${seed}, scored in whole points)`, seededShuffle(replaces, seed + 10), (pods) => seededShuffle(pods, seed * 7919 + pods.length)),
      ties: seed,
    })),
  );
  // Every new node Ready before the replacements' commands drain (after the deletes' pods are bound).
  const perDecision = replaces.map((i) => queueOrder(laidOut.evicted[i]!));
  const all = perDecision.flat();
  const roundRobin: Pod[] = [];
  for (let k = 0; roundRobin.length < all.length; k++) for (const pods of perDecision) if (k < pods.length) roundRobin.push(pods[k]!);
  const readyAfterDeletes = new Map(replaces.flatMap((i) => laidOut.added[i]!.nodes.map((n) => [n.name, deletePods.length] as const)));
  const [largest, smallest, shuffledPods] = bindingOrders(all);
  const allReady = (name: string, pods: readonly Pod[]): Order => ({ name: `deletes first, then every new node Ready, ${name}`, pods: [...deletePods, ...pods], availableFrom: readyAfterDeletes, afterDeletesInQueueOrder: true });
  // A delete whose drain outlasts the launches (a disruption budget lets its pods go one at a time) sends
  // some of its pods after the new nodes are Ready, among the commands' pods: they may take a new node's
  // room (it is the emptiest node) that a command's pod needs, or come after the holes they were planned
  // into are taken. Shuffles of every pod, every new node Ready from the start (more when the pass moves
  // few pods). Not fixed orders: the deletes' pods after every command's made no random order of that
  // world safer, and every pod smallest first, the harshest, cut every replacement of a 1,000-node
  // benchmark pass ($113/h saved became $85/h).
  if (deletePods.length > 0) {
    const evicted = [...all, ...deletePods];
    const count = Math.max(RANDOM_SEEDS.length, shuffleCount(evicted.length, laidOut.cluster.nodes.length, PLAN_SHUFFLE_PLACEMENTS, LATE_DELETE_SHUFFLES));
    orders.push(
      ...Array.from({ length: count }, (_, k) => LATE_DELETE_SEED + k).map((seed) => ({
        name: `every new node Ready before the deletes' pods are bound, every pod in a shuffled order (seed ${seed}, scored in whole points)`,
        pods: seededShuffle(evicted, seed),
        ties: seed,
      })),
    );
  }
  orders.push(
    allReady('commands in decision order', all),
    allReady('commands in reverse order', [...perDecision].reverse().flat()),
    allReady('commands taking turns', roundRobin),
    allReady('largest pods first', largest!),
    allReady('smallest pods first', smallest!),
    allReady('pods in a shuffled order', shuffledPods!),
  );
  return { orders, deletePods, heldBack };
}

