// `spec.disruption.consolidationPolicy`: the one place its values are checked (CONTRACT section 4).
// Karpenter v1.14's CRD allows WhenEmpty, WhenEmptyOrUnderutilized and Balanced; the seeds add
// WhenUnderutilized, WhenCheaper and WhenUnderutilizedOrCheaper.
import type { ConsolidationPolicy } from '../model/types.ts';
import type { Fields } from './fields.ts';

export const CONSOLIDATION_POLICIES: readonly ConsolidationPolicy[] = [
  'WhenEmpty',
  'WhenEmptyOrUnderutilized',
  'WhenUnderutilized',
  'WhenCheaper',
  'WhenUnderutilizedOrCheaper',
];

/** Absent: Karpenter's default, WhenEmptyOrUnderutilized. */
export function parseConsolidationPolicy(f: Fields, raw: unknown, path: string): ConsolidationPolicy {
  if (raw === undefined || raw === null) return 'WhenEmptyOrUnderutilized';
  // A value Karpenter v1.14 knows, so not a typo: say so rather than list it as unknown.
  if (raw === 'Balanced') f.fail(path, '"Balanced" (Karpenter\'s scored policy) is not supported; use one of ' + CONSOLIDATION_POLICIES.join(', '));
  return f.oneOf(raw, path, CONSOLIDATION_POLICIES);
}
