// The last check before a command evicts its first pod: do the pods of its old nodes have a place on
// the cluster as it is now? The plan placed them on a cluster read minutes earlier and on replacements
// as their NodePool describes them; the registered replacements may carry other labels, taints or less
// allocatable than the plan assumed (a launch template or an EC2NodeClass that disagrees with the
// NodePool), and other nodes have filled up since. Karpenter waits for its replacements to be
// initialized and then re-checks the move against the live cluster before it deletes the candidates;
// this is the same check, with the same simulator the plan used: the old nodes closed, every other node
// (the replacements with their real labels, taints and allocatable) as the API shows it now.
//
// Pending pods the live nodes can take now are placed first, as Karpenter puts the cluster's pending pods
// into every disruption simulation (pendingPods.ts): kube-scheduler binds them before the pods this
// command evicts (they were queued earlier), so the room they are about to take is not the command's.
import type { Catalog, Cluster, NodePool, Pod } from '../model/types.ts';
import type { Simulator, SimulatorInput } from '../scheduling/types.ts';
import { unboundPods } from '../scheduling/clusterChange.ts';
import { isPending, isReschedulable, podKey } from './pods.ts';

export interface ProofInput {
  /** The live cluster, read just now. */
  readonly cluster: Cluster;
  readonly nodePools: readonly NodePool[];
  readonly catalog: Catalog;
  /** The nodes the command removes (their pods must go elsewhere). */
  readonly oldNodes: readonly string[];
  /**
   * The command's own replacements, tried first, as the plan meant its pods to go there: placing them
   * anywhere first could take the room another command's pods were planned into.
   */
  readonly ownReplacements?: readonly string[];
  readonly simulatorFactory: (input: SimulatorInput) => Simulator;
}

export type Proof =
  | {
      readonly ok: true;
      /** The pods placed, with the node each went to. */
      readonly placed: readonly { readonly pod: Pod; readonly node: string }[];
    }
  | {
      readonly ok: false;
      /** `namespace/name` of the pods with no place, and why (the simulator's sentence). */
      readonly unplaced: readonly { readonly pod: string; readonly why: string }[];
    };

/** Places every pod that must leave the old nodes on the rest of the live cluster, opening no node. */
export function proveCommand(input: ProofInput): Proof {
  const old = new Set(input.oldNodes);
  const pods: Pod[] = input.cluster.pods.filter((p) => p.nodeName !== undefined && old.has(p.nodeName) && isReschedulable(p));
  const placed: { pod: Pod; node: string }[] = [];
  if (pods.length === 0) return { ok: true, placed };
  let cluster = withPendingPlaced(input, old);
  const own = new Set((input.ownReplacements ?? []).filter((n) => cluster.nodes.some((node) => node.name === n)));
  if (own.size > 0) {
    const others = new Set(cluster.nodes.map((n) => n.name).filter((n) => !own.has(n)));
    for (const p of place(input, cluster, pods, others).placements) placed.push({ pod: p.pod, node: p.nodeName });
    cluster = withPlacements(cluster, placed);
  }
  const done = new Set(placed.map((p) => p.pod.uid));
  const rest = pods.filter((p) => !done.has(p.uid));
  if (rest.length > 0) {
    const result = place(input, cluster, rest, old);
    if (!result.allScheduled) return { ok: false, unplaced: result.unschedulable.map((u) => ({ pod: podKey(u.pod), why: u.reason })) };
    for (const p of result.placements) placed.push({ pod: p.pod, node: p.nodeName });
  }
  return { ok: true, placed };
}

/**
 * The live cluster with its placeable pending pods bound where the simulator puts them (the old nodes
 * are cordoned, so none lands there): those that fit nowhere wait for new capacity whatever the command
 * does, and are left out, as Karpenter ignores their failures.
 */
function withPendingPlaced(input: ProofInput, old: ReadonlySet<string>): Cluster {
  const pending = unboundPods(input.cluster).filter(isPending);
  if (pending.length === 0) return input.cluster;
  // One simulation: the pods it finds no place for are the ones left out.
  const placed = place(input, input.cluster, pending, old).placements;
  return placed.length === 0 ? input.cluster : withPlacements(input.cluster, placed.map((p) => ({ pod: p.pod, node: p.nodeName })));
}

function place(input: ProofInput, cluster: Cluster, pods: readonly Pod[], excluded: ReadonlySet<string>) {
  const simulator = input.simulatorFactory({ cluster, nodePools: input.nodePools, catalog: input.catalog });
  return simulator.simulate({ excludedNodes: excluded, pods, maxNewNodes: 0 });
}

/**
 * The cluster with pods bound where earlier proofs placed them: the next command proven on the same
 * reading must not count the room those take. A placed pod the reading no longer shows (evicted since,
 * and perhaps recreated under another name, still Pending) is added on its node, so its room stays taken.
 */
export function withPlacements(cluster: Cluster, placed: readonly { readonly pod: Pod; readonly node: string }[]): Cluster {
  if (placed.length === 0) return cluster;
  const nodeOf = new Map(placed.map((p) => [p.pod.uid, p.node]));
  const nodes = new Set(cluster.nodes.map((n) => n.name));
  const seen = new Set<string>();
  const pods = cluster.pods.map((p) => {
    const to = nodeOf.get(p.uid);
    if (to === undefined) return p;
    seen.add(p.uid);
    return { ...p, nodeName: to };
  });
  for (const p of placed) if (!seen.has(p.pod.uid) && nodes.has(p.node)) pods.push({ ...p.pod, nodeName: p.node });
  return { ...cluster, pods };
}
