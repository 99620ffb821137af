// Which consolidation methods each policy allows (Karpenter's consolidation-policies design; Karpenter
// v1 naming).
import type { ConsolidationPolicy } from '../model/types.ts';
import type { ConsolidationMethodName } from '../plan.ts';

/**
 * The methods of a pass: Karpenter's three, and the m-to-n repack (methods/repack.ts), which removes m
 * nodes and launches up to n new ones (n < m, or a split of one node into two). Its decisions are
 * reported as `multi-node` or `single-node` (the plan's documented `method` values,
 * docs/file-formats.md) with the extension `move: "m-to-n"`.
 */
export type MethodName = ConsolidationMethodName | 'm-to-n';

const METHODS: Record<ConsolidationPolicy, readonly MethodName[]> = {
  // Only nodes with nothing to move: the emptiness-TTL behaviour. Never a repack.
  WhenEmpty: ['emptiness'],
  // Karpenter v1's name for "everything".
  WhenEmptyOrUnderutilized: ['emptiness', 'single-node', 'multi-node', 'm-to-n'],
  // Karpenter's consolidation-policies design: packing several nodes into fewer, but no one-for-one
  // swaps. A repack is packing.
  WhenUnderutilized: ['emptiness', 'multi-node', 'm-to-n'],
  // Karpenter's consolidation-policies design: one-for-one deletes and swaps for a cheaper node, no
  // packing (so no repack either).
  WhenCheaper: ['emptiness', 'single-node'],
  WhenUnderutilizedOrCheaper: ['emptiness', 'single-node', 'multi-node', 'm-to-n'],
  // Karpenter v1.14: every method, but single-, multi-node and m-to-n moves must pass the score
  // (balancedScore.ts).
  Balanced: ['emptiness', 'single-node', 'multi-node', 'm-to-n'],
};

export function policyAllows(policy: ConsolidationPolicy, method: MethodName): boolean {
  return METHODS[policy].includes(method);
}
