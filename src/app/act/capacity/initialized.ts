import type { Node } from '../../../core/model/types.ts';

/** Taints a node carries until it can take pods: a replacement with one of these is not ready yet. */
const NOT_INITIALIZED_TAINTS: ReadonlySet<string> = new Set([
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.cloudprovider.kubernetes.io/uninitialized',
  // Karpenter's, until the kubelet registered the node with it.
  'karpenter.sh/unregistered',
]);

/** Ready and free of the taints that keep a fresh node from taking pods. */
export function initialized(node: Node): boolean {
  return node.ready && !node.taints.some((t) => NOT_INITIALIZED_TAINTS.has(t.key));
}
