// `spec.disruption.consolidationPolicy`: the one place its values are checked (docs/nodepools.md,
// "Policies"). Karpenter v1.14's CRD allows WhenEmpty, WhenEmptyOrUnderutilized and Balanced;
// Karpenter's consolidation-policies design adds WhenUnderutilized, WhenCheaper and
// WhenUnderutilizedOrCheaper. An integer (Balanced's k) is only
// accepted in the handover annotation (balancedPolicy.ts says why).
import type { ConsolidationPolicy } from '../model/types.ts';
import { integerPolicy, type PolicyChoice } from './balancedPolicy.ts';
import type { Fields } from './fields.ts';

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
  return integerPolicy(f, raw, path, fromAnnotation) ?? { policy: f.oneOf(raw, path, CONSOLIDATION_POLICIES) };
}
