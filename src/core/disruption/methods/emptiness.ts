// Emptiness (seed 001): nodes with no pod that would need to move are deleted; nothing is simulated.
// All empty nodes the budgets allow go in one command, as Karpenter does.
import type { Candidate } from '../candidates.ts';
import { checkSavings } from '../savingsThreshold.ts';
import type { ConsolidationMethod, PassView, Proposal } from './types.ts';

export const emptiness: ConsolidationMethod = {
  name: 'emptiness',
  next(view: PassView): Proposal | undefined {
    const chosen: Candidate[] = [];
    for (const candidate of view.candidates) {
      if (!candidate.methods.has('emptiness') || candidate.pods.length > 0) continue;
      const pool = candidate.pool.name;
      if (!view.ledger.canTake([...chosen.filter((c) => c.pool.name === pool).map(() => pool), pool], 'Empty')) {
        view.note(candidate.node.name, view.ledger.describe(pool, 'Empty'));
        continue;
      }
      view.examine([candidate.node.name]);
      // A node of unknown price saves an unknown amount; deleting an empty node never costs more, so it
      // goes ahead (CONTRACT section 3) without a threshold check it cannot make.
      if (candidate.pricePerHour !== undefined) {
        const verdict = checkSavings([candidate], candidate.pricePerHour);
        if (!verdict.ok) {
          view.note(candidate.node.name, `empty, but ${verdict.reason}`);
          continue;
        }
      }
      chosen.push(candidate);
    }
    if (chosen.length === 0) return undefined;
    return {
      method: 'emptiness',
      reason: 'Empty',
      candidates: chosen,
      replacements: [],
      savingsPerHour: chosen.reduce((sum, c) => sum + (c.pricePerHour ?? 0), 0),
    };
  },
};
