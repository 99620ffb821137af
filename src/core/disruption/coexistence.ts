// Running next to Karpenter. Most users already run Karpenter, whose disruption controller consolidates
// the same NodePools this product reads. Two consolidators acting on one pool do not know about each
// other's moves (each may delete the node the other just chose as a destination), and Karpenter removes
// the `karpenter.sh/disrupted` taint from every node outside its own queue on each loop, so a taint
// alone cannot keep it away from our commands.
//
// The model: this product acts on a pool only when Karpenter would not consolidate it. A pool is handed
// over by setting `spec.disruption.consolidateAfter: Never` (Karpenter stops consolidating; it still
// provisions, and drift and expiry go on) and putting this product's settings in the
// `eks-consolidator.io/disruption` annotation (core/input/nodePools.ts). Where Karpenter runs and would
// consolidate a pool, a real run leaves the pool alone and says so; a dry run plans it anyway, with a
// note, so an operator can see what a handover would bring.
import type { Node, NodePool } from '../model/types.ts';
import { InputError } from '../errors.ts';
import { HANDOVER_ANNOTATION } from '../input/nodePools.ts';

/** Labels Karpenter puts on the nodes it launched and registered. */
const KARPENTER_NODE_LABELS = ['karpenter.sh/registered', 'karpenter.sh/initialized'] as const;

/**
 * - `auto`: Karpenter runs for a pool when one of its nodes carries Karpenter's registration labels, or
 *   when the NodePools were read from the cluster's own API (the CRD is installed: Karpenter is there);
 * - `present` / `absent`: the operator says so.
 */
export type KarpenterPresence = 'auto' | 'present' | 'absent';

/** `KARPENTER` / `--karpenter`: unset is `auto`. */
export function parseKarpenterPresence(text: string | undefined, source = 'KARPENTER'): KarpenterPresence {
  const value = text?.trim().toLowerCase() ?? '';
  if (value === '') return 'auto';
  if (value === 'auto' || value === 'present' || value === 'absent') return value;
  throw new InputError('', source, `"${text}" is not auto, present or absent`);
}

export interface CoexistenceInput {
  readonly nodePools: readonly NodePool[];
  readonly nodes: readonly Node[];
  readonly presence: KarpenterPresence;
  /** The NodePools came from the cluster's Kubernetes API (not from a file). */
  readonly poolsFromCluster: boolean;
}

/**
 * Per pool, how Karpenter was found to serve it (a short phrase), or no entry when it was not: the
 * operator said so (`present`), the NodePools came from the cluster's API, or a node of the pool carries
 * Karpenter's registration labels. `absent` means never.
 */
export function karpenterServes(input: CoexistenceInput): Map<string, string> {
  const served = new Map<string, string>();
  if (input.presence === 'absent') return served;
  const registered = new Set<string>();
  for (const node of input.nodes) {
    if (node.nodePool !== undefined && KARPENTER_NODE_LABELS.some((l) => node.labels[l] !== undefined)) registered.add(node.nodePool);
  }
  for (const pool of input.nodePools) {
    if (input.presence === 'present') served.set(pool.name, 'KARPENTER=present');
    else if (input.poolsFromCluster) served.set(pool.name, "its NodePool was read from the cluster's API (Karpenter's CRD is installed)");
    else if (registered.has(pool.name)) served.set(pool.name, "its nodes carry Karpenter's registration labels");
  }
  return served;
}

/** Pools that Karpenter's disruption controller would also consolidate -> why this product leaves them. */
export function karpenterConflicts(input: CoexistenceInput): Map<string, string> {
  const conflicts = new Map<string, string>();
  const served = karpenterServes(input);
  for (const pool of input.nodePools) {
    if (pool.karpenterConsolidates === false) continue;
    if (!served.has(pool.name)) continue;
    conflicts.set(
      pool.name,
      pool.handedOver
        ? `NodePool "${pool.name}" carries ${HANDOVER_ANNOTATION}, but its spec.disruption still lets Karpenter consolidate it: set spec.disruption.consolidateAfter: Never so that only one consolidator acts on it`
        : `Karpenter's own disruption controller also consolidates NodePool "${pool.name}": eks-consolidator does not act next to it; to hand the pool over, set spec.disruption.consolidateAfter: Never and put this product's settings in the ${HANDOVER_ANNOTATION} annotation (README: Handing a pool over)`,
    );
  }
  return conflicts;
}

/**
 * The plan's notes for the pools left to Karpenter: one note for every pool not handed over (a cluster
 * of eight pools reads one sentence, not eight), and one per pool that carries the hand-over annotation
 * while Karpenter still consolidates it (each such spec needs its own fix).
 */
export function karpenterConflictNotes(pools: readonly NodePool[], conflicts: ReadonlyMap<string, string>, dryRun: boolean): string[] {
  const left = pools.filter((p) => conflicts.has(p.name) && !p.handedOver).map((p) => `"${p.name}"`);
  const notes: string[] = [];
  if (left.length > 0) {
    const named = `NodePool${left.length === 1 ? '' : 's'} ${left.join(', ')}`;
    const it = left.length === 1 ? 'it' : 'them';
    notes.push(
      `${dryRun ? `a real run would not act on ${named}: ` : `${named}: `}Karpenter's own disruption controller also consolidates ${it}, and eks-consolidator does not act next to it; to hand a pool over, set its spec.disruption.consolidateAfter: Never and put this product's settings in the ${HANDOVER_ANNOTATION} annotation (README: Handing a pool over)`,
    );
  }
  for (const pool of pools) {
    if (pool.handedOver && conflicts.has(pool.name)) notes.push(dryRun ? `a real run would not act on NodePool "${pool.name}": ${conflicts.get(pool.name)!}` : conflicts.get(pool.name)!);
  }
  return notes;
}
