// A plan must survive the real scheduler (docs/differences-from-karpenter.md, "It adds"). The search
// places moved pods best-fit (as Karpenter's simulation does), but kube-scheduler's default scoring puts
// each pod on the feasible node left least allocated, spreading pods out; a move that only works with
// tight packing then leaves pods Pending. So before a method takes a move, the moved pods are placed
// again the kube-scheduler way, in four orders (smallest first, largest first, a shuffled order, and the
// scheduler queue's order: priority, then eviction order; for a move that launches nodes also largest
// first with one largest pod held back to the end), on the
// cluster as the move leaves it (its replacements already there, as they are when the drain starts).
//
// That cluster is the pass's "kube-scheduler world" (it keeps passes linear): the cluster as the pass's
// accepted moves leave it with their pods where kube-scheduler would put them, not where the tight
// packing of the search did. Each accepted move is committed to it once (its queue-order placement), so
// a check places only the pods of its own nodes: the move's pods, and any pod of an earlier move that
// kube-scheduler would have put on one of those nodes (in the real cluster those nodes are tainted when
// the pass starts acting, so such a pod has to find a node elsewhere, and the room it takes is gone for
// this move's pods). A check therefore costs the pods of one move, not every pod moved so far.
// If a pod finds no node in either order, the move is refused with the reason.
import type { Catalog, Cluster, Node, NodePool, Pod } from '../model/types.ts';
import { createSimulator, largestFirst } from '../scheduling/simulator.ts';
import { MEMORY } from '../scheduling/resources.ts';
import type { Placement, Simulator, SimulatorInput } from '../scheduling/types.ts';
import { applyProposal, destinations, replacementNames, replacementNodes } from './applyDecision.ts';
import { changeCluster, listedPositionsOn } from '../scheduling/clusterChange.ts';
import type { Proposal } from './methods/types.ts';
import { podKey } from './pods.ts';
import { seededShuffle } from '../random.ts';

export interface SchedulerCheckContext {
  readonly nodePools: readonly NodePool[];
  readonly pools: ReadonlyMap<string, NodePool>;
  readonly catalog: Catalog;
  readonly nowMs: number;
  readonly simulatorFactory?: (input: SimulatorInput) => Simulator;
}

interface Checked {
  readonly proposal: Proposal;
  /** Uid -> node name in the checked cluster (replacements under their check names). */
  readonly placements: ReadonlyMap<string, string>;
  readonly moved: readonly Pod[];
  readonly checkNames: readonly string[];
}

/**
 * The kube-scheduler world of one pass. `check` answers whether a move's pods find nodes there the way
 * kube-scheduler places them; `commit` records an accepted move (after its check, or unchecked).
 */
export class KubeSchedulerWorld {
  private cluster: Cluster;
  private simulator: Simulator | undefined;
  /** Uids of pods moved by committed moves (the movable pods found on a later move's nodes), and when: the
   * number of the commit that first moved each. */
  private readonly movedAt = new Map<string, number>();
  /** Replacement node -> the number of the commit that launched it. */
  private readonly replacementAt = new Map<string, number>();
  private commits = 0;
  /** True once a committed move took pods an earlier move had sent to its nodes (see planCheck.ts). */
  reshuffled = false;
  private last: Checked | undefined;
  /**
   * Moves refused since the last commit, by what the check of each placed (see `place`): a method may
   * offer the same move again (a variant that came out alike), and the world has not changed since.
   */
  private readonly refused = new Map<string, string>();
  /** False while every committed move moved no pod: the world is then the pass's own cluster. */
  private diverged = false;

  /**
   * `start` is the cluster the pass starts from; `passSimulator`, when given, simulates the pass's
   * cluster as it is now (the pass's own, rebuilt after each decision): the world uses it until a
   * committed move has moved pods.
   */
  constructor(
    private readonly ctx: SchedulerCheckContext,
    start: Cluster,
    private readonly passSimulator?: Simulator,
  ) {
    this.cluster = start;
  }

  /** Undefined when every moved pod also finds a node under least-allocated scoring; else why not. */
  check(proposal: Proposal): string | undefined {
    const result = this.place(proposal);
    if (typeof result === 'string') return result;
    this.last = result;
    return undefined;
  }

  /** Takes an accepted move into the world: its nodes go, its replacements join, its pods land. */
  commit(proposal: Proposal, names: readonly string[]): void {
    // The move checked last, also when the method passed it on marked as cut by the command cap (a copy
    // with the same nodes, replacements and simulation): placing its pods again would place them alike.
    const last = this.last?.proposal;
    const same = last !== undefined && last.candidates === proposal.candidates && last.replacements === proposal.replacements && last.simulation === proposal.simulation;
    let checked = same ? this.last : undefined;
    if (!checked) {
      // A move taken without a check (emptiness, or checks turned off): place its pods all the same; a
      // pod that finds no node is left out of the world (it would be Pending).
      const result = this.place(proposal, false);
      checked = typeof result === 'string' ? undefined : result;
    }
    this.last = undefined;
    if (!checked) {
      this.cluster = applyProposal(this.cluster, proposal, this.ctx.pools, this.ctx.nowMs, names).cluster;
    } else {
      // The move applied, then its moved pods taken out and put back where the check placed them, in
      // one change of the world (scheduling/clusterChange.ts): the next check indexes only what it touched.
      const rename = new Map(checked.checkNames.map((n, i) => [n, names[i]!] as const));
      const rebound: Pod[] = [];
      for (const pod of checked.moved) {
        const to = checked.placements.get(pod.uid);
        if (to !== undefined) rebound.push({ ...pod, nodeName: rename.get(to) ?? to });
      }
      const added = replacementNodes(this.cluster, proposal, this.ctx.pools, this.ctx.nowMs, names);
      this.cluster = changeCluster(this.cluster, {
        removedNodes: new Set(proposal.candidates.map((c) => c.node.name)),
        rebound: notMoved(destinations(proposal, names), checked.moved),
        addedNodes: added.nodes,
        addedPods: [...added.pods, ...rebound],
      });
    }
    if (checked?.moved.some((p) => this.movedAt.has(p.uid))) this.reshuffled = true;
    this.commits += 1;
    for (const pod of [...proposal.candidates.flatMap((c) => c.pods), ...(checked?.moved ?? [])]) {
      if (!this.movedAt.has(pod.uid)) this.movedAt.set(pod.uid, this.commits);
    }
    for (const name of names) this.replacementAt.set(name, this.commits);
    if (checked ? checked.moved.length > 0 : proposal.candidates.some((c) => c.pods.length > 0)) this.diverged = true;
    this.simulator = undefined;
    this.refused.clear();
  }

  /**
   * The pods a move sends to the scheduler: those the world has on its nodes, its own (in the move's
   * order) and those earlier moves left there. A pod the search put on one of these nodes but the world
   * did not is not moved by this move: it is running somewhere else.
   */
  private movedBy(proposal: Proposal): Pod[] {
    const own = proposal.candidates.flatMap((c) => c.pods);
    if (this.movedAt.size === 0) return own;
    // Pods found on the move's nodes, by uid, with their place in the world's pod list (the order the
    // rest are evicted in).
    const here = new Map<string, number>();
    const byNode = listedPositionsOn(this.cluster, proposal.candidates.map((c) => c.node.name));
    for (const c of proposal.candidates) for (const at of byNode.get(c.node.name) ?? []) here.set(this.cluster.pods[at]!.uid, at);
    const out: Pod[] = [];
    for (const p of own) {
      const at = here.get(p.uid);
      if (at !== undefined) out.push(this.cluster.pods[at]!);
      here.delete(p.uid);
    }
    const rest = [...here.values()].filter((at) => this.movedAt.has(this.cluster.pods[at]!.uid)).sort((a, b) => a - b);
    for (const at of rest) out.push(this.cluster.pods[at]!);
    return out;
  }

  private place(proposal: Proposal, mustPlaceAll = true): Checked | string {
    const moved = this.movedBy(proposal);
    const nodes = new Set(proposal.candidates.map((c) => c.node.name));
    if (moved.length === 0) return { proposal, placements: new Map(), moved, checkNames: [] };
    if (proposal.replacements.length === 0) {
      // Nothing is added: the world's simulator answers, with the move's nodes excluded.
      const key = mustPlaceAll ? refusalKey(nodes, moved, [], undefined) : undefined;
      const known = key === undefined ? undefined : this.refused.get(key);
      if (known !== undefined) return known;
      const simulator = !this.diverged && this.passSimulator ? this.passSimulator : (this.simulator ??= this.build(this.cluster));
      return this.remember(key, this.placeAll(proposal, simulator, nodes, moved, [], mustPlaceAll));
    }
    const checkNames = replacementNames(0, proposal.replacements.length).map((n) => `${n}-check`);
    // The move applied without its moved pods (they are placed again), as one change of the world.
    const added = replacementNodes(this.cluster, proposal, this.ctx.pools, this.ctx.nowMs, checkNames);
    const rebound = notMoved(destinations(proposal, checkNames), moved);
    const key = mustPlaceAll ? refusalKey(nodes, moved, added.nodes, rebound) : undefined;
    const known = key === undefined ? undefined : this.refused.get(key);
    if (known !== undefined) return known;
    const cluster: Cluster = changeCluster(this.cluster, {
      removedNodes: nodes,
      rebound,
      addedNodes: added.nodes,
      addedPods: added.pods,
    });
    return this.remember(key, this.placeAll(proposal, this.build(cluster), new Set(), unbind(moved), checkNames, mustPlaceAll));
  }

  private remember(key: string | undefined, result: Checked | string): Checked | string {
    if (key !== undefined && typeof result === 'string') this.refused.set(key, result);
    return result;
  }

  /**
   * The move's pods placed least-allocated, smallest first, largest first, shuffled and in queue order (only the latter for an
   * unchecked move; whatever fails is then left out). Pods an earlier move left on these nodes come first
   * and without this move's replacements or those of the moves decided after theirs: they are evicted
   * when that earlier move drains, and these nodes are tainted from the start of the pass (the actuator
   * starts every command before any pod is evicted), so they need room elsewhere then. The queue order's
   * placement is the one kept (what the real scheduler does).
   */
  private placeAll(
    proposal: Proposal,
    simulator: Simulator,
    excludedNodes: ReadonlySet<string>,
    moved: readonly Pod[],
    checkNames: readonly string[],
    mustPlaceAll: boolean,
  ): Checked | string {
    const earlier = moved.filter((p) => this.movedAt.has(p.uid));
    const own = moved.filter((p) => !this.movedAt.has(p.uid));
    let availableFrom: Map<string, number> | undefined;
    if (earlier.length > 0) {
      const since = Math.min(...earlier.map((p) => this.movedAt.get(p.uid)!));
      availableFrom = new Map(checkNames.map((n) => [n, earlier.length] as const));
      for (const [name, at] of this.replacementAt) if (at > since) availableFrom.set(name, earlier.length);
    }
    const first = queueOrder(earlier);
    // The pods are recreated and bound one at a time in an order the plan does not choose: a move that
    // holds only when its large pods are bound first (its new node sized to the pod, the small ones
    // sent to the last bits of room elsewhere) leaves a pod Pending when a small one takes the empty new
    // node first. So largest first, smallest first and shuffled orders must all hold; the queue
    // order's placement comes last and is the one kept.
    // Smallest first goes first: it is the order that most often strands a large pod, and a refused move
    // then costs one placement instead of two. The held-back orders come next: the new node (or, for a
    // delete, the emptiest kept node) draws every pod while it is the least allocated, and the small pods
    // take the holes elsewhere (largestHeldBackPods); then largest first and the shuffles (more of them
    // for a move of few pods, moreShuffles).
    // The further shuffles are scored in kube-scheduler's whole points with seeded ties (moreShuffles).
    const checkedOrders = (): { pods: Pod[]; ties?: number }[] => {
      const [largest, smallest, shuffled, queue] = bindingOrders(own) as [Pod[], Pod[], Pod[], Pod[]];
      const heldBack = heldBackOrders(own);
      const further = moreShuffles(own, this.cluster.nodes.length, heldBack).map((pods, k) => ({ pods, ties: k + 1 }));
      return [{ pods: smallest }, ...heldBack.map((pods) => ({ pods })), { pods: largest }, { pods: shuffled }, ...further, { pods: queue }];
    };
    const orders = (mustPlaceAll ? checkedOrders() : [{ pods: queueOrder(own) }]).map((order) => ({ ...order, pods: [...first, ...order.pods] }));
    let placements: readonly Placement[] = [];
    for (const { pods, ties } of orders) {
      const result = simulator.simulate({
        excludedNodes,
        pods,
        maxNewNodes: 0,
        placement: 'least-allocated',
        podOrder: 'as-given',
        stopAtFirstFailure: mustPlaceAll,
        ...(availableFrom ? { availableFrom } : {}),
        ...(ties !== undefined ? { integerScoreTies: ties } : {}),
      });
      if (!result.allScheduled && mustPlaceAll) {
        const miss = result.unschedulable[0]!;
        if (this.movedAt.has(miss.pod.uid)) {
          const onNode = this.cluster.pods.find((p) => p.uid === miss.pod.uid)?.nodeName ?? 'its nodes';
          return `not taken: pod ${podKey(miss.pod)}, which an earlier decision of this pass moves onto ${onNode}, would stay Pending when that decision drains, before this move's replacement is Ready (placed the way kube-scheduler scores nodes: ${miss.reason})`;
        }
        return pendingReason(miss.pod, miss.reason);
      }
      placements = result.placements;
    }
    return { proposal, placements: new Map(placements.map((p) => [p.pod.uid, p.nodeName] as const)), moved, checkNames };
  }

  private build(cluster: Cluster): Simulator {
    return (this.ctx.simulatorFactory ?? createSimulator)({ cluster, nodePools: this.ctx.nodePools, catalog: this.ctx.catalog });
  }
}

/**
 * Everything a check's placement depends on besides the world: the nodes the move takes away, the pods it
 * places again (in their order), the replacements it adds (as the check builds them) and where the rest
 * of the search's pods are bound. Two moves alike in all of these are placed alike.
 */
function refusalKey(nodes: ReadonlySet<string>, moved: readonly Pod[], added: readonly Node[], rebound: ReadonlyMap<string, string> | undefined): string {
  return JSON.stringify([[...nodes], moved.map((p) => p.uid), added, rebound ? [...rebound] : []]);
}

/**
 * The search's destinations without the pods the world moves itself. Those are all on the move's own
 * nodes (movedBy takes them from there), which leave the world: so leaving them out of the rebound pods
 * takes them out of the world's pod list, wherever they were listed.
 */
function notMoved(destination: Map<string, string>, moved: readonly Pod[]): Map<string, string> {
  for (const pod of moved) destination.delete(pod.uid);
  return destination;
}

// One copy per pod object: every check of a pass unbinds the pods it moves again, and a fresh copy each
// time made each simulation work out the pod's constraints again (they are cached per pod object,
// scheduling/podConstraints.ts).
const unboundCopies = new WeakMap<Pod, Pod>();

/** A pod as the scheduler sees it once evicted: bound to no node (the same object for the same pod). */
export function unbound(pod: Pod): Pod {
  let copy = unboundCopies.get(pod);
  if (copy === undefined) {
    const { nodeName: _bound, ...rest } = pod;
    copy = rest;
    unboundCopies.set(pod, copy);
  }
  return copy;
}

const unbind = (pods: readonly Pod[]): Pod[] => pods.map(unbound);

/**
 * The orders evicted pods may be bound in, whichever the plan would like: largest first, smallest first,
 * a fixed shuffle, and the scheduler queue's order (last: its placement is the one kept); the per-move
 * check also binds them in `heldBackOrders` and `moreShuffles`. The pass-level check (concurrentCheck.ts) binds a lone move's
 * pods in these same orders, so a move taken here is not cut there for its own sake.
 */
export function bindingOrders(pods: readonly Pod[]): Pod[][] {
  const largest = [...pods].sort(largestFirst);
  return [largest, [...largest].reverse(), shuffledPods(pods), queueOrder(pods)];
}

/**
 * The held-back orders of a move that launches nodes, from one sort: largest first with one largest pod
 * last (`largestHeldBackPods`), and, when another pod asks the most memory, largest first with that pod
 * last (`largestMemoryHeldBackPods`). None for a single pod (every order is then the same).
 */
export function heldBackOrders(pods: readonly Pod[]): Pod[][] {
  if (pods.length < 2) return [];
  const largest = [...pods].sort(largestFirst);
  const heaviest = heaviestInMemory(largest);
  const cpuHeldBack = withLast(largest, largest[0]!);
  const orders = heaviest === largest[0] ? [cpuHeldBack] : [cpuHeldBack, withLast(largest, heaviest)];
  // Every other shape no moved pod outgrows in both cpu and memory, held back the same way: pods that
  // differ in both (a 2000m/3Gi worker beside 500m/4Gi caches) strand on the shape whose hole the others
  // fill, which need be neither the largest in cpu nor in memory.
  for (const pod of unoutgrown(largest)) {
    if (orders.length >= MAX_HELD_BACK) break;
    if (sameShape(pod, largest[0]!) || sameShape(pod, heaviest)) continue;
    orders.push(withLast(largest, pod));
  }
  return orders;
}

/** Held-back orders per check at most (each binds the move's pods once more). */
const MAX_HELD_BACK = 6;

const sameShape = (a: Pod, b: Pod): boolean => (a.requests['cpu'] ?? 0) === (b.requests['cpu'] ?? 0) && (a.requests[MEMORY] ?? 0) === (b.requests[MEMORY] ?? 0);

/**
 * One pod of each shape (cpu, memory) that no other pod asks at least as much of in both, in `largest`'s
 * order. A pod outgrown in both fits wherever the larger one does, so holding it back adds nothing.
 */
function unoutgrown(largest: readonly Pod[]): Pod[] {
  const shapes: Pod[] = [];
  for (const pod of largest) if (!shapes.some((o) => sameShape(o, pod))) shapes.push(pod);
  const cpu = (p: Pod) => p.requests['cpu'] ?? 0;
  const memory = (p: Pod) => p.requests[MEMORY] ?? 0;
  return shapes.filter((pod) => !shapes.some((o) => o !== pod && cpu(o) >= cpu(pod) && memory(o) >= memory(pod)));
}

/**
 * Largest first, but one largest pod bound last. Smallest first also binds a largest pod last, but after
 * small pods only; here every other pod comes first, the large ones taking the biggest holes while the
 * new node is still the least allocated, the small ones then filling what is left. When the moved pods
 * overflow the new node, this is the order that leaves the last large pod without a hole big enough: a
 * 10-into-1 merge of 170 pods passed smallest first, largest first and every shuffle the check tried,
 * and left a 900m pod Pending in 172 of 2,000 random orders, all of them a largest pod placed late. A
 * move that only deletes is bound this way too: the small pods take the holes of the kept nodes just the
 * same (it costs bench:quality's bundled 100-node runs a few percent, 1.61x the bound against 1.58x, and
 * on generated clusters of unlike pod shapes deletes stranded a pod in as many random orders as merges).
 */
export const largestHeldBackPods = (pods: readonly Pod[]): Pod[] => heldBackOrders(pods)[0] ?? [...pods];

const withLast = (largest: readonly Pod[], last: Pod): Pod[] => [...largest.filter((p) => p !== last), last];

/** The first pod (in `largest`'s order, not empty) asking the most memory. */
function heaviestInMemory(largest: readonly Pod[]): Pod {
  let heaviest = largest[0]!;
  for (const pod of largest) if ((pod.requests[MEMORY] ?? 0) > (heaviest.requests[MEMORY] ?? 0)) heaviest = pod;
  return heaviest;
}

/**
 * The same with the pod that asks the most memory held back, when that is not the pod asking the most
 * cpu (which `largestHeldBackPods` holds back); undefined when it is. The hole a memory-heavy pod needs
 * is filled the same way: a random search of small clusters found moves every other order binds and
 * this one strands.
 */
export const largestMemoryHeldBackPods = (pods: readonly Pod[]): Pod[] | undefined => heldBackOrders(pods)[1];

/** Smallest pods first (the largest-first order reversed, as bindingOrders has it). */
export const smallestFirstPods = (pods: readonly Pod[]): Pod[] => [...pods].sort(largestFirst).reverse();

/** A fixed shuffle of the pods, seeded by their number: the same move is checked the same way. */
export const shuffledPods = (pods: readonly Pod[]): Pod[] => seededShuffle(pods, pods.length * 2654435761);

/**
 * Pod placements the further shuffles of one check may cost, and the most shuffles it takes. The fixed
 * orders are the likely worst cases for pods that differ in one resource; pods that differ in cpu and in
 * memory (a cpu-heavy worker beside a memory-heavy cache) strand in orders no simple rule names: on
 * generated clusters of such pods, moves these orders all bound left a pod Pending in 3% to 30% of
 * random orders. A move of few pods is cheap to bind many times, so it is bound in more random orders.
 */
const SHUFFLE_PLACEMENTS = 3_000;
const MAX_SHUFFLES = 24;

/**
 * How many further shuffled orders a check of `count` pods binds on a cluster of `nodes` nodes (more for
 * fewer pods, none for one), within `placements` and at most `most` orders. An order costs its pods
 * plus one setting-up of every node's state, so on a large cluster a small move gets fewer.
 */
export function shuffleCount(count: number, nodes = 0, placements = SHUFFLE_PLACEMENTS, most = MAX_SHUFFLES): number {
  if (count < 2) return 0;
  return Math.min(most, Math.floor(placements / (count + nodes)));
}

/**
 * The further shuffled orders (shuffleCount), each seeded from the pods' number and its place; `heldBack`:
 * the pods' `heldBackOrders`, when the caller has them already. The checks bind these in kube-scheduler's
 * own whole-point scores, each with its own seed for the ties (SimulationRequest.integerScoreTies): the
 * exact shares that the other orders use rank nodes a few tenths of a point apart, where kube-scheduler
 * sees a tie and picks at random, and a small pod may then take another hole than the one the exact
 * order gave it (a 5-into-1 merge beside a delete, every exact order binding every pod, left a 900m pod
 * Pending in 4 of 100 random orders scored in whole points).
 */
export function moreShuffles(pods: readonly Pod[], nodes = 0, heldBack?: readonly Pod[][]): Pod[][] {
  const out: Pod[][] = [];
  const count = shuffleCount(pods.length, nodes);
  if (count === 0) return out;
  // The pods the held-back orders bind last, in their order.
  const last = (heldBack ?? heldBackOrders(pods)).map((order) => order[order.length - 1]!);
  for (let k = 1; k <= count; k++) {
    const shuffled = seededShuffle(pods, pods.length * 2654435761 + k * 40503);
    // Every other shuffle binds a held-back pod last (each in turn): the pods before it land in a random
    // order, which may spread them over the holes it needs as the held-back orders' fixed sort does not
    // (a 6-node delete's 3000m/6Gi pod passed every held-back order and stayed Pending in 3 of 50
    // random orders, each with the pod late).
    out.push(k % 2 === 0 && last.length > 0 ? withLast(shuffled, last[(k / 2 - 1) % last.length]!) : shuffled);
  }
  return out;
}

/** The scheduler queue's order: priority first, then the order given (eviction order). */
export const queueOrder = (pods: readonly Pod[]): Pod[] =>
  pods.map((pod, i) => ({ pod, i })).sort((a, b) => b.pod.priority - a.pod.priority || a.i - b.i).map((e) => e.pod);

const pendingReason = (pod: Pod, reason: string): string =>
  `not taken: placed the way kube-scheduler scores nodes (least allocated first), pod ${podKey(pod)} would stay Pending (${reason})`;
