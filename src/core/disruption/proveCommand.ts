// The last check before a command evicts its first pod: do the pods of its old nodes have a place on
// the cluster as it is now? The plan placed them on a cluster read minutes earlier and on replacements
// as their NodePool describes them; the registered replacements may carry other labels, taints or less
// allocatable than the plan assumed (a launch template or an EC2NodeClass that disagrees with the
// NodePool), and other nodes have filled up since. Karpenter waits for its replacements to be
// initialized and then re-checks the move against the live cluster before it deletes the candidates;
// this is the same check, with the same simulator the plan used: the old nodes closed, every other node
// (the replacements with their real labels, taints and allocatable) as the API shows it now.
import type { Catalog, Cluster, NodePool, Pod } from '../model/types.ts';
import type { Simulator, SimulatorInput } from '../scheduling/types.ts';
import { isReschedulable, podKey } from './pods.ts';

export interface ProofInput {
  /** The live cluster, read just now. */
  readonly cluster: Cluster;
  readonly nodePools: readonly NodePool[];
  readonly catalog: Catalog;
  /** The nodes the command removes (their pods must go elsewhere). */
  readonly oldNodes: readonly string[];
  readonly simulatorFactory: (input: SimulatorInput) => Simulator;
}

export type Proof =
  | { readonly ok: true; readonly pods: number }
  | {
      readonly ok: false;
      /** `namespace/name` of the first pods with no place, and why (the simulator's sentence). */
      readonly unplaced: readonly { readonly pod: string; readonly why: string }[];
    };

/** Places every pod that must leave the old nodes on the rest of the live cluster, opening no node. */
export function proveCommand(input: ProofInput): Proof {
  const old = new Set(input.oldNodes);
  const pods: Pod[] = input.cluster.pods.filter((p) => p.nodeName !== undefined && old.has(p.nodeName) && isReschedulable(p));
  if (pods.length === 0) return { ok: true, pods: 0 };
  const simulator = input.simulatorFactory({ cluster: input.cluster, nodePools: input.nodePools, catalog: input.catalog });
  const result = simulator.simulate({ excludedNodes: old, pods, maxNewNodes: 0 });
  if (result.allScheduled) return { ok: true, pods: pods.length };
  return { ok: false, unplaced: result.unschedulable.map((u) => ({ pod: podKey(u.pod), why: u.reason })) };
}
