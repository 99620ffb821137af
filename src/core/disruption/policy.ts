// Which consolidation methods each policy allows (seed 001, option 2; Karpenter v1 naming).
import type { ConsolidationPolicy } from '../model/types.ts';
import type { ConsolidationMethodName } from '../plan.ts';

const METHODS: Record<ConsolidationPolicy, readonly ConsolidationMethodName[]> = {
  // Only nodes with nothing to move: the emptiness-TTL behaviour.
  WhenEmpty: ['emptiness'],
  // Karpenter v1's name for "everything".
  WhenEmptyOrUnderutilized: ['emptiness', 'single-node', 'multi-node'],
  // Seed 001: packing several nodes into fewer, but no one-for-one swaps.
  WhenUnderutilized: ['emptiness', 'multi-node'],
  // Seed 001: one-for-one deletes and swaps for a cheaper node, no packing.
  WhenCheaper: ['emptiness', 'single-node'],
  WhenUnderutilizedOrCheaper: ['emptiness', 'single-node', 'multi-node'],
  // Karpenter v1.14: every method, but single- and multi-node moves must pass the score (balancedScore.ts).
  Balanced: ['emptiness', 'single-node', 'multi-node'],
};

export function policyAllows(policy: ConsolidationPolicy, method: ConsolidationMethodName): boolean {
  return METHODS[policy].includes(method);
}
