// `spec.disruption.consolidationPolicy`: the one place its values are checked (docs/nodepools.md,
// "Policies"). Karpenter v1.14's CRD allows WhenEmpty, WhenEmptyOrUnderutilized and Balanced;
// Karpenter's consolidation-policies design adds WhenUnderutilized, WhenCheaper and
// WhenUnderutilizedOrCheaper. An integer (Balanced's k) is only
// accepted in the handover annotation (balancedPolicy.ts says why).
import type { ConsolidationPolicy } from '../model/types.ts';
import { integerPolicy, type PolicyChoice } from './balancedPolicy.ts';
import { closest } from './closestName.ts';
import { show, type Fields } from './fields.ts';

export const CONSOLIDATION_POLICIES: readonly ConsolidationPolicy[] = [
  'WhenEmpty',
  'WhenEmptyOrUnderutilized',
  'WhenUnderutilized',
  'WhenCheaper',
  'WhenUnderutilizedOrCheaper',
  'Balanced',
];

/** Absent: Karpenter's default, WhenEmptyOrUnderutilized. `fromAnnotation`: read from the handover annotation. */
export function parseConsolidationPolicy(f: Fields, raw: unknown, path: string, fromAnnotation: boolean): PolicyChoice {
  if (raw === undefined || raw === null) return { policy: 'WhenEmptyOrUnderutilized' };
  const integer = integerPolicy(f, raw, path, fromAnnotation);
  if (integer !== undefined) return integer;
  if (typeof raw !== 'string' || !(CONSOLIDATION_POLICIES as readonly string[]).includes(raw)) {
    const guess = typeof raw === 'string' ? closest(raw, CONSOLIDATION_POLICIES) : undefined;
    f.fail(
      path,
      `${show(raw)} must be one of WhenEmpty, WhenEmptyOrUnderutilized, Balanced (Karpenter v1.14's), or WhenUnderutilized, WhenCheaper, WhenUnderutilizedOrCheaper (this product's own: a karpenter.sh/v1 API server refuses them, so they belong in the hand-over annotation)${guess === undefined ? '' : ` (did you mean "${guess}"?)`}`,
    );
  }
  return { policy: raw as ConsolidationPolicy };
}

