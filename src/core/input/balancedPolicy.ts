// `consolidationPolicy` as Karpenter v1.14 accepts it, plus `Balanced`'s tolerance k.
//
// v1.14's CRD is a string enum: WhenEmpty, WhenEmptyOrUnderutilized, Balanced (k fixed at 2). The RFC
// (kubernetes-sigs/karpenter#2942) first made the field IntOrString, with an integer 1-3 giving k
// directly as an escape hatch; the change that shipped Balanced (#2962) deferred that, and the v1.14
// CRD refuses "1", "2" and "3". So in `spec.disruption` an integer is refused, as the API server would.
// The escape hatch lives where only this product reads it: the `eks-consolidator.io/disruption`
// handover annotation, whose JSON may say `"consolidationPolicy": 3` (scored like Balanced, k = 3).
import type { ConsolidationPolicy } from '../model/types.ts';
import { show, type Fields } from './fields.ts';

/** k limits of the RFC's integer form (its analysis: k = 4 already allows long replacement chains). */
const MIN_K = 1;
const MAX_K = 3;

export interface PolicyChoice {
  readonly policy: ConsolidationPolicy;
  /** Only for an integer given in the handover annotation. */
  readonly balancedK?: number;
}

/**
 * Reads an integer or numeric-text `consolidationPolicy`: the k of the escape hatch when
 * `fromAnnotation`, else an error explaining that Karpenter v1.14 has no integer form. Returns
 * undefined for anything else (the caller checks the enum).
 */
export function integerPolicy(f: Fields, raw: unknown, path: string, fromAnnotation: boolean): PolicyChoice | undefined {
  const numeric = typeof raw === 'number' || (typeof raw === 'string' && /^\s*[+-]?\d+(\.\d*)?\s*$/.test(raw));
  if (!numeric) return undefined;
  if (!fromAnnotation) {
    return f.fail(
      path,
      `${show(raw)}: Karpenter v1.14 has no integer consolidationPolicy (the Balanced RFC's integer k was deferred and its CRD refuses it); ` +
        `use "Balanced" (k = 2), or put an integer k from ${MIN_K} to ${MAX_K} in the eks-consolidator.io/disruption annotation`,
    );
  }
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < MIN_K || raw > MAX_K) {
    return f.fail(path, `${show(raw)} must be "Balanced" or an integer k from ${MIN_K} to ${MAX_K} written as a number (a move passes when its score >= 1/k)`);
  }
  return { policy: 'Balanced', balancedK: raw };
}
