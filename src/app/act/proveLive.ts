// The proof before a command's first eviction, on the cluster as the API shows it now (see
// core/disruption/proveCommand.ts for why), with the simulator the plan used; and the wait before it
// while kube-scheduler is still placing pods evicted moments earlier.
import { proveCommand, withPlacements, type Proof } from '../../core/disruption/proveCommand.ts';
import { placeablePendingPods } from '../../core/disruption/pendingPods.ts';
import { isOwnedByStatefulSet, isPending, isTerminal, podKey } from '../../core/disruption/pods.ts';
import type { Catalog, Cluster, NodePool, Pod } from '../../core/model/types.ts';
import { createSimulator } from '../../core/scheduling/simulator.ts';

/** What the proof reads: the live cluster, the pools and the catalog. */
export interface ProveWorld {
  readonly cluster: Cluster;
  readonly nodePools: readonly NodePool[];
  readonly catalog: Catalog;
}

/**
 * How long after an eviction a reading of the cluster is taken to show where the evicted pod went: its
 * controller recreates it and kube-scheduler binds it within a second or two when there is room.
 */
export const SETTLE_DELAY_MS = 5_000;

/**
 * The proofs of one invocation. A reading of the live world is shared by the commands proven in the
 * same polling round (a read of a large cluster costs seconds) and taken again when a command's own
 * replacements are not in it yet. Every pod an earlier proof of this invocation placed keeps its room
 * in later proofs: several commands in flight together must not each count the same free room.
 */
export class ProofSession {
  private reading: Promise<ProveWorld> | undefined;
  private readAt = Number.NEGATIVE_INFINITY;
  /** When a command of this invocation last evicted pods (never: -Infinity). */
  private lastEvictionAt = Number.NEGATIVE_INFINITY;
  private readonly placed = new Map<string, { readonly pod: Pod; readonly node: string }>();
  private readonly pendingByWorld = new WeakMap<ProveWorld, readonly Pod[]>();
  /** Nodes a command of this invocation tainted (and has not given back) since its reading may have been taken. */
  private readonly closedNodes = new Set<string>();

  constructor(
    private readonly read: () => Promise<ProveWorld>,
    private readonly now: () => number,
  ) {}

  /** Forget the reading: the next proof reads the cluster again. */
  newRound(): void {
    this.reading = undefined;
  }

  /**
   * A command tainted `node` (closed) or gave it back (open). A reading shared by the commands of a
   * round may predate the taints the later commands of the round put on their nodes: a proof must not
   * place pods on a node another command is about to drain.
   */
  close(node: string, closed: boolean): void {
    if (closed) this.closedNodes.add(node);
    else this.closedNodes.delete(node);
  }

  /** A command of this invocation evicted pods just now. */
  noteEvicted(): void {
    this.lastEvictionAt = this.now();
  }

  /**
   * When the pods evicted last by a command of this invocation have had their moment to be placed: a
   * command that waits for that alone looks again then, not a whole poll later.
   */
  settledAt(): number {
    return this.lastEvictionAt + SETTLE_DELAY_MS;
  }

  /**
   * Why a command should not evict its first pod yet, or undefined. Pods evicted moments ago (by any
   * command of this invocation) are still being recreated and bound, and pending pods the cluster has
   * room for are about to be bound: until kube-scheduler has placed them, no one knows which room they
   * take, and the pods of a command draining now would be bound among them, in an order no plan chose
   * (the interleaving that can leave a pod without room). A StatefulSet's pod that is terminating is
   * waited for too: its successor, created under the same name only once it is gone, needs a place as
   * well. Waiting lets each command be proven against the placements kube-scheduler really made, so
   * the commands of a pass drain one after another.
   */
  async unsettled(): Promise<string | undefined> {
    const since = this.now() - this.lastEvictionAt;
    if (since < SETTLE_DELAY_MS) return `pods were evicted ${Math.round(since / 1000)} s ago and kube-scheduler may still be placing them`;
    // A reading taken before the evicted pods could have been placed does not show where they went.
    if (this.readAt < this.settledAt()) this.reading = undefined;
    const world = await this.current();
    const leaving = world.cluster.pods.find((p) => p.terminating && !isTerminal(p) && isOwnedByStatefulSet(p));
    if (leaving !== undefined) return `StatefulSet pod ${podKey(leaving)} is terminating and its successor is not placed yet`;
    let pending = this.pendingByWorld.get(world);
    if (pending === undefined) {
      // (A simulator indexes every pod of the cluster: only built when some pod is pending.)
      pending = world.cluster.pods.some(isPending) ? placeablePendingPods(world.cluster, createSimulator(world)) : [];
      this.pendingByWorld.set(world, pending);
    }
    if (pending.length === 0) return undefined;
    const names = pending.slice(0, 3).map(podKey).join(', ');
    return `${pending.length} pending pod(s) the cluster has room for are not bound yet (${names}${pending.length > 3 ? ', ...' : ''})`;
  }

  async prove(oldNodes: readonly string[], ownReplacements: readonly string[] = []): Promise<Proof> {
    let world = await this.current();
    if (ownReplacements.some((name) => !world.cluster.nodes.some((n) => n.name === name))) {
      this.reading = undefined;
      world = await this.current();
    }
    const cluster = closing(withPlacements(world.cluster, [...this.placed.values()]), this.closedNodes);
    const proof = proveCommand({ ...world, cluster, oldNodes, ownReplacements, simulatorFactory: createSimulator });
    if (proof.ok) for (const p of proof.placed) this.placed.set(p.pod.uid, p);
    return proof;
  }

  private async current(): Promise<ProveWorld> {
    if (this.reading === undefined) {
      this.readAt = this.now();
      this.reading = this.read();
    }
    try {
      return await this.reading;
    } catch (error) {
      this.reading = undefined;
      throw error;
    }
  }
}

/** The cluster with `closed` nodes cordoned (they take no pod), whatever the reading said. */
function closing(cluster: Cluster, closed: ReadonlySet<string>): Cluster {
  if (!cluster.nodes.some((n) => closed.has(n.name) && !n.unschedulable)) return cluster;
  return { ...cluster, nodes: cluster.nodes.map((n) => (closed.has(n.name) && !n.unschedulable ? { ...n, unschedulable: true } : n)) };
}
