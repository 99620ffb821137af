// The question single-node and multi-node consolidation share: if these nodes went away, could their
// pods run on the rest of the cluster plus at most one new, cheaper node, and would it pay?
// (seed 000 "Node Deletion" and "Node Replacement"; seed 003 threshold.)
import type { Candidate } from '../candidates.ts';
import { placeablePendingPods } from '../pendingPods.ts';
import { podKey } from '../pods.ts';
import { chooseReplacement } from '../replacement.ts';
import { checkSavings } from '../savingsThreshold.ts';
import type { PassView, Proposal } from './types.ts';

export type RemovalVerdict =
  | { readonly ok: true; readonly proposal: Proposal }
  | { readonly ok: false; readonly reason: string; readonly thresholdBlocked?: boolean };

export function evaluateRemoval(
  view: PassView,
  candidates: readonly Candidate[],
  method: 'single-node' | 'multi-node',
): RemovalVerdict {
  view.examine(candidates.map((c) => c.node.name));
  const pods = candidates.flatMap((c) => c.pods);
  const pricesKnown = candidates.every((c) => c.pricePerHour !== undefined);
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
  const currentPricePerHour = candidates.reduce((sum, c) => sum + (c.pricePerHour ?? 0), 0);

  if (simulation.newNodes.length === 0) {
    if (pricesKnown) {
      const verdict = checkSavings(candidates, currentPricePerHour);
      if (!verdict.ok) return { ok: false, reason: verdict.reason!, thresholdBlocked: true };
    }
    return {
      ok: true,
      proposal: { method, reason: 'Underutilized', candidates, simulation, savingsPerHour: currentPricePerHour },
    };
  }

  const choice = chooseReplacement(candidates, simulation.newNodes[0]!, view.gates, { sameTypeGuard: method === 'multi-node' });
  if (!choice.ok) return { ok: false, reason: choice.reason, thresholdBlocked: choice.thresholdBlocked };
  return {
    ok: true,
    proposal: {
      method,
      reason: 'Underutilized',
      candidates,
      simulation,
      replacement: choice.replacement,
      savingsPerHour: currentPricePerHour - choice.replacement.pricePerHour,
    },
  };
}
