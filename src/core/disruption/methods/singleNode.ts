// Single-node consolidation (Karpenter's consolidation design; Karpenter's consolidation-policies
// design): one node at a time, cheapest to disrupt first; delete it when its pods fit elsewhere, or
// replace it with one cheaper node.
import type { ConsolidationMethod, PassView, Proposal } from './types.ts';
import { evaluateRemoval } from './evaluateRemoval.ts';
import { movesToCheck } from './costEfficient.ts';
import { budgetNoteKey } from '../budgets.ts';

/**
 * One sweep per pass: a candidate that did not consolidate is not simulated again in the same pass
 * (later decisions only take room away, or add a replacement sized for its own pods); the next pass
 * looks again.
 */
export function createSingleNode(): ConsolidationMethod {
  const tried = new Set<string>();
  return {
    name: 'single-node',
    next(view: PassView): Proposal | undefined {
      for (const candidate of view.candidates) {
        if (!candidate.methods.has('single-node') || candidate.pods.length === 0) continue;
        if (tried.has(candidate.node.name)) continue;
        if (!view.ledger.canTake([candidate.pool.name], 'Underutilized')) {
          view.note(candidate.node.name, view.ledger.describe(candidate.pool.name, 'Underutilized'), budgetNoteKey(candidate.pool.name));
          continue;
        }
        tried.add(candidate.node.name);
        // Once the pass would refuse a move that launches nodes unchecked, only a delete can still be
        // taken: look for that alone (one simulation that stops at the first pod with no room, instead
        // of the replacement's and its cost-sized variants' simulations, all refused in the end).
        const launchesRefused = view.launchesRefused?.();
        const verdict = evaluateRemoval(view, [candidate], 'single-node', launchesRefused === undefined ? {} : { maxNewNodes: 0, examineOnlyIfFound: true });
        if (!verdict.ok) {
          view.note(candidate.node.name, launchesRefused ?? verdict.reason);
          continue;
        }
        for (const proposal of movesToCheck(view, verdict.proposal)) {
          const rejected = view.schedulerCheck(proposal);
          if (rejected === undefined) return proposal;
          view.note(candidate.node.name, rejected);
        }
      }
      return undefined;
    },
  };
}
