// Emptiness (Karpenter's consolidation-policies design): nodes with no pod that would need to move are
// deleted; nothing is simulated unless pods are pending (then they must keep a place, pendingPods.ts).
// All empty nodes the budgets allow go in one command, as Karpenter does, up to MAX_NODES_PER_COMMAND:
// Karpenter's emptiness command has no cap of its own, but one command here never disrupts more nodes
// than the cap, so the rest go in the next command of the same pass (the pass calls again), each still
// within the budgets.
import type { Candidate } from '../candidates.ts';
import { placeablePendingPods } from '../pendingPods.ts';
import { podKey } from '../pods.ts';
import { checkSavings } from '../savingsThreshold.ts';
import type { ConsolidationMethod, PassView, Proposal } from './types.ts';

export const emptiness: ConsolidationMethod = {
  name: 'emptiness',
  next(view: PassView): Proposal | undefined {
    const chosen: Candidate[] = [];
    const cap = view.maxNodesPerCommand;
    // Once the command is full, the empty nodes the budgets and the threshold would also have let in
    // are only counted (the decision says how many were eligible); the next command weighs them.
    let beyondCap = 0;
    const taken = new Map<string, number>();
    for (const candidate of view.candidates) {
      if (!candidate.methods.has('emptiness') || candidate.pods.length > 0) continue;
      const pool = candidate.pool.name;
      const full = chosen.length >= cap;
      if (!view.ledger.canTake(Array.from({ length: (taken.get(pool) ?? 0) + 1 }, () => pool), 'Empty')) {
        if (!full) view.note(candidate.node.name, view.ledger.describe(pool, 'Empty'));
        continue;
      }
      if (full) {
        if (candidate.pricePerHour === undefined || checkSavings([candidate], candidate.pricePerHour).ok) {
          beyondCap += 1;
          taken.set(pool, (taken.get(pool) ?? 0) + 1);
        }
        continue;
      }
      view.examine([candidate.node.name]);
      // A node of unknown price saves an unknown amount; deleting an empty node never costs more, so it
      // goes ahead without a threshold check it cannot make.
      if (candidate.pricePerHour !== undefined) {
        const verdict = checkSavings([candidate], candidate.pricePerHour);
        if (!verdict.ok) {
          view.note(candidate.node.name, `empty, but ${verdict.reason}`);
          continue;
        }
      }
      // A pending pod that could run on this node now must still have a place once it is gone.
      const stranded = strandedPendingPod(view, [...chosen, candidate]);
      if (stranded) {
        view.note(candidate.node.name, `empty, but ${stranded}`);
        continue;
      }
      chosen.push(candidate);
      taken.set(pool, (taken.get(pool) ?? 0) + 1);
    }
    if (chosen.length === 0) return undefined;
    return {
      method: 'emptiness',
      reason: 'Empty',
      candidates: chosen,
      replacements: [],
      savingsPerHour: chosen.reduce((sum, c) => sum + (c.pricePerHour ?? 0), 0),
      ...(beyondCap > 0 ? { cappedAt: { maxNodes: cap, eligible: chosen.length + beyondCap } } : {}),
    };
  },
};

/** Why deleting these nodes would leave a pending pod that has a place now with none, if it would. */
function strandedPendingPod(view: PassView, nodes: readonly Candidate[]): string | undefined {
  const pending = placeablePendingPods(view.cluster, view.simulator);
  if (pending.length === 0) return undefined;
  const result = view.simulator.simulate({ excludedNodes: new Set(nodes.map((c) => c.node.name)), pods: pending, maxNewNodes: 0, stopAtFirstFailure: true });
  const first = result.unschedulable[0];
  return first ? `deleting it would leave pending pod ${podKey(first.pod)} with nowhere to run (${first.reason})` : undefined;
}
