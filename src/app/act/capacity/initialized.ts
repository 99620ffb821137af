import type { Node } from '../../../core/model/types.ts';
import { NOT_INITIALIZED_TAINT_KEYS } from '../../../core/scheduling/taints.ts';

/** Ready and free of the taints that keep a fresh node from taking pods. */
export function initialized(node: Node): boolean {
  return node.ready && !node.taints.some((t) => NOT_INITIALIZED_TAINT_KEYS.has(t.key));
}
