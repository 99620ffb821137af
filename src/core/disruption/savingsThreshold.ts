// Karpenter's savings-threshold design: a move must save enough to pay for the disruption it causes.
//   required (cents/hr) = sum over removed nodes of pool threshold x node disruption cost
//   act only when savings > 0 and savings >= required
// Summing per node lets each pool's threshold guard its own pods when nodes of several pools merge.
import type { Candidate } from './candidates.ts';

export function requiredSavingsCents(candidates: readonly Candidate[]): number {
  return candidates.reduce((sum, c) => sum + c.pool.savingsThresholdCents * c.disruptionCost, 0);
}

export interface ThresholdVerdict {
  readonly ok: boolean;
  readonly savingsCents: number;
  readonly requiredCents: number;
  /** Set when blocked: the sentence for the plan. */
  readonly reason?: string;
}

// Float noise must not flip a decision that is exactly on the boundary (6.0 >= 6.0 acts).
const EPSILON_CENTS = 1e-9;

export function checkSavings(candidates: readonly Candidate[], savingsPerHour: number): ThresholdVerdict {
  const savingsCents = savingsPerHour * 100;
  const requiredCents = requiredSavingsCents(candidates);
  if (savingsCents <= EPSILON_CENTS) {
    return { ok: false, savingsCents, requiredCents, reason: `no savings: ${savingsCents.toFixed(1)} cents/hr` };
  }
  if (savingsCents + EPSILON_CENTS >= requiredCents) return { ok: true, savingsCents, requiredCents };
  return { ok: false, savingsCents, requiredCents, reason: describeBlocked(candidates, savingsCents, requiredCents) };
}

/** e.g. `savings 0.6 cents/hr below required 6.0 cents/hr (disruption cost 6.0, threshold 1)` */
export function describeBlocked(candidates: readonly Candidate[], savingsCents: number, requiredCents: number): string {
  const cost = candidates.reduce((sum, c) => sum + c.disruptionCost, 0);
  const thresholds = [...new Set(candidates.map((c) => c.pool.savingsThresholdCents))];
  const threshold = thresholds.length === 1 ? `threshold ${thresholds[0]}` : `thresholds ${thresholds.join('/')} by pool`;
  return `savings ${savingsCents.toFixed(1)} cents/hr below required ${requiredCents.toFixed(1)} cents/hr (disruption cost ${cost.toFixed(1)}, ${threshold})`;
}
