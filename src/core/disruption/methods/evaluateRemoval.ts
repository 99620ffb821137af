// The question single-node and multi-node consolidation share: if these nodes went away, could their
// pods run on the rest of the cluster plus at most one new, cheaper node, and would it pay?
// (seed 000 "Node Deletion" and "Node Replacement"; seed 003 threshold; Karpenter v1.14's Balanced score.)
import { describeScore, roundScore, scoreMove } from '../balancedScore.ts';
import type { ConsolidationScore } from '../../plan.ts';
import type { Candidate } from '../candidates.ts';
import { placeablePendingPods } from '../pendingPods.ts';
import { podKey } from '../pods.ts';
import { chooseReplacement } from '../replacement.ts';
import { checkSavings } from '../savingsThreshold.ts';
import type { PassView, Proposal } from './types.ts';

export type RemovalVerdict =
  | { readonly ok: true; readonly proposal: Proposal }
  | { readonly ok: false; readonly reason: string; readonly thresholdBlocked?: boolean; readonly scoreBlocked?: boolean };

export function evaluateRemoval(
  view: PassView,
  candidates: readonly Candidate[],
  method: 'single-node' | 'multi-node',
): RemovalVerdict {
  view.examine(candidates.map((c) => c.node.name));
  const pods = candidates.flatMap((c) => c.pods);
  const pricesKnown = candidates.every((c) => c.pricePerHour !== undefined);
  const currentPricePerHour = candidates.reduce((sum, c) => sum + (c.pricePerHour ?? 0), 0);
  // Balanced: an outright delete is the best any move of these nodes can score (a replacement only
  // costs money), so when even that fails there is nothing to simulate (Karpenter skips such
  // candidates the same way).
  const bound = balancedGate(view, candidates, method, currentPricePerHour, undefined);
  if (bound.refusal) return bound.refusal;
  // Pending pods that have a place now must keep one (pendingPods.ts).
  const pending = placeablePendingPods(view.cluster, view.simulator);
  const pendingUids = new Set(pending.map((p) => p.uid));
  const full = view.simulator.simulate({
    excludedNodes: new Set(candidates.map((c) => c.node.name)),
    pods: pending.length > 0 ? [...pods, ...pending] : pods,
    // A node of unknown price is never replaced: only existing capacity may take its pods.
    maxNewNodes: pricesKnown ? 1 : 0,
    stopAtFirstFailure: true,
  });
  if (!full.allScheduled) {
    const first = full.unschedulable[0]!;
    if (pendingUids.has(first.pod.uid)) {
      return { ok: false, reason: `pending pod ${podKey(first.pod)} would have nowhere to run: ${first.reason}` };
    }
    // Pods are placed largest first, so a candidate's pod may be the one left over when pending pods
    // took the room: say that it is the pending pods' room, when without them the move would fit.
    if (pending.length > 0) {
      const alone = view.simulator.simulate({ excludedNodes: new Set(candidates.map((c) => c.node.name)), pods, maxNewNodes: pricesKnown ? 1 : 0, stopAtFirstFailure: true });
      if (alone.allScheduled) {
        const names = pending.slice(0, 3).map(podKey).join(', ');
        return { ok: false, reason: `its pods fit elsewhere only in the room that pending pod(s) ${names}${pending.length > 3 ? ', ...' : ''} need, which would leave a pending pod with nowhere to run` };
      }
    }
    return { ok: false, reason: `its pods cannot all run elsewhere: pod ${podKey(first.pod)}: ${first.reason}` };
  }
  // The decision moves only the candidates' pods; pending pods are bound by the scheduler later.
  const simulation = pending.length > 0 ? { ...full, placements: full.placements.filter((p) => !pendingUids.has(p.pod.uid)) } : full;

  if (simulation.newNodes.length === 0) {
    if (pricesKnown) {
      const verdict = checkSavings(candidates, currentPricePerHour);
      if (!verdict.ok) return { ok: false, reason: verdict.reason!, thresholdBlocked: true };
    }
    return scored(view, { method, reason: 'Underutilized', candidates, simulation, savingsPerHour: currentPricePerHour });
  }

  const choice = chooseReplacement(candidates, simulation.newNodes[0]!, view.gates, { sameTypeGuard: method === 'multi-node' });
  if (!choice.ok) return { ok: false, reason: choice.reason, thresholdBlocked: choice.thresholdBlocked };
  return scored(view, {
    method,
    reason: 'Underutilized',
    candidates,
    simulation,
    replacement: choice.replacement,
    savingsPerHour: currentPricePerHour - choice.replacement.pricePerHour,
  });
}

/** The move as found, with its Balanced scores attached, or refused by them. */
function scored(view: PassView, proposal: Proposal): RemovalVerdict {
  const action = proposal.replacement ? 'replace' : 'delete';
  const gate = balancedGate(view, proposal.candidates, proposal.method as 'single-node' | 'multi-node', proposal.savingsPerHour, action);
  if (gate.refusal) return gate.refusal;
  return { ok: true, proposal: gate.scores ? { ...proposal, scores: gate.scores } : proposal };
}

/**
 * Scores a move of `candidates` saving `savingsPerHour` ($/hr, net) when a source pool is Balanced:
 * its scores when it passes, else the refusal, which is also recorded for the plan. `action`
 * undefined: the best-case bound, before any simulation.
 */
function balancedGate(
  view: PassView,
  candidates: readonly Candidate[],
  method: 'single-node' | 'multi-node',
  savingsPerHour: number,
  action: 'delete' | 'replace' | undefined,
): { readonly refusal?: RemovalVerdict; readonly scores?: readonly ConsolidationScore[] } {
  if (!view.balancedTotals) return {};
  const move = scoreMove(candidates, savingsPerHour, view.balancedTotals);
  if (move.scores.length === 0) return {};
  const scores = move.scores.map(roundScore);
  if (move.approved) return { scores };
  view.rejectMove?.({
    method,
    nodes: candidates.map((c) => c.node.name),
    ...(action ? { action } : {}),
    savingsPerHour: Math.round(savingsPerHour * 1e6) / 1e6,
    bound: action === undefined,
    scores,
  });
  const failing = move.scores.filter((s) => !s.approved);
  const unknown = candidates.filter((c) => c.pricePerHour === undefined).map((c) => c.node.name);
  const priceNote = unknown.length > 0 ? ` (price unknown for ${unknown.join(', ')}: it saves nothing that can be scored)` : '';
  return {
    refusal: {
      ok: false,
      reason: failing.map((s) => describeScore(s, action === undefined)).join('; ') + priceNote,
      scoreBlocked: true,
    },
  };
}
