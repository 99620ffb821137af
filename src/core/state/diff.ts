// What `StateStore.save` has to write: the difference between the state a pass read and the state it
// ends with. Shared by every store so that "writes only what changed" means the same everywhere.

import { canonicalJson } from './fingerprint.ts';
import type { ClusterState, NodeState, PassState } from './types.ts';

export interface StateChanges {
  /** New or changed node records; each carries the version it was read at (0: new). */
  readonly putNodes: readonly NodeState[];
  /** Node records to delete (nodes gone from the cluster), as they were read. */
  readonly deleteNodes: readonly NodeState[];
  /** The cluster record, when it changed. */
  readonly cluster?: ClusterState;
}

export function diffPassState(next: PassState, previous: PassState): StateChanges {
  const putNodes: NodeState[] = [];
  for (const name of Object.keys(next.nodes).sort()) {
    const record = next.nodes[name]!;
    const before = previous.nodes[name];
    if (before === undefined || !sameContent(record, before)) putNodes.push(record);
  }
  const deleteNodes = Object.keys(previous.nodes)
    .sort()
    .filter((name) => next.nodes[name] === undefined)
    .map((name) => previous.nodes[name]!);
  const cluster = sameContent(next.cluster, previous.cluster) ? undefined : next.cluster;
  return cluster ? { putNodes, deleteNodes, cluster } : { putNodes, deleteNodes };
}

/** Equal apart from `version` (a record re-read at another version but with the same content is unchanged). */
function sameContent(a: { readonly version: number }, b: { readonly version: number }): boolean {
  return canonicalJson({ ...a, version: 0 }) === canonicalJson({ ...b, version: 0 });
}

/** The state as stored after `changes` were written: written records one version up, deleted ones gone. */
export function applyChanges(next: PassState, changes: StateChanges): PassState {
  const nodes: Record<string, NodeState> = { ...next.nodes };
  for (const record of changes.putNodes) nodes[record.name] = { ...record, version: record.version + 1 };
  const cluster = changes.cluster ? { ...changes.cluster, version: changes.cluster.version + 1 } : next.cluster;
  return { nodes, cluster, commands: next.commands };
}
