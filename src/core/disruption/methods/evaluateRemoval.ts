// The question every moving method shares: if these nodes went away, could their pods run on the rest
// of the cluster plus at most N new, cheaper nodes, and would it pay? Single-node and multi-node ask it
// with N = 1 (seed 000 "Node Deletion" and "Node Replacement"; seed 003 threshold); the m-to-n repack
// asks it with N > 1. Every replacement is bounded in size (sizeBound.ts).
import type { Candidate } from '../candidates.ts';
import { podKey } from '../pods.ts';
import { chooseReplacements } from '../replacement.ts';
import { checkSavings } from '../savingsThreshold.ts';
import { bothFilters, boundedTypes, describeBound, type TypeFilter } from '../sizeBound.ts';
import type { PassView, Proposal } from './types.ts';

export type RemovalVerdict =
  | { readonly ok: true; readonly proposal: Proposal }
  | { readonly ok: false; readonly reason: string; readonly thresholdBlocked?: boolean };

export interface RemovalOptions {
  /** At most this many new nodes (default 1). */
  readonly maxNewNodes?: number;
  /** A further restriction on the new nodes' types (the split's price cap). */
  readonly newNodeTypes?: TypeFilter;
}

export function evaluateRemoval(
  view: PassView,
  candidates: readonly Candidate[],
  method: Proposal['method'],
  options: RemovalOptions = {},
): RemovalVerdict {
  view.examine(candidates.map((c) => c.node.name));
  const pods = candidates.flatMap((c) => c.pods);
  const pricesKnown = candidates.every((c) => c.pricePerHour !== undefined);
  const bounded = boundedTypes(candidates, view.replacementBound);
  const simulation = view.simulator.simulate({
    excludedNodes: new Set(candidates.map((c) => c.node.name)),
    pods,
    // A node of unknown price is never replaced: only existing capacity may take its pods.
    maxNewNodes: pricesKnown ? (options.maxNewNodes ?? 1) : 0,
    stopAtFirstFailure: true,
    newNodeTypes: bothFilters(bounded, options.newNodeTypes),
  });
  if (!simulation.allScheduled) {
    const first = simulation.unschedulable[0]!;
    const bound = bounded && view.replacementBound ? ` (a replacement may be ${describeBound(view.replacementBound)})` : '';
    return { ok: false, reason: `its pods cannot all run elsewhere: pod ${podKey(first.pod)}: ${first.reason}${bound}` };
  }
  const currentPricePerHour = candidates.reduce((sum, c) => sum + (c.pricePerHour ?? 0), 0);

  if (simulation.newNodes.length === 0) {
    if (pricesKnown) {
      const verdict = checkSavings(candidates, currentPricePerHour);
      if (!verdict.ok) return { ok: false, reason: verdict.reason!, thresholdBlocked: true };
    }
    return {
      ok: true,
      proposal: { method, reason: 'Underutilized', candidates, simulation, replacements: [], savingsPerHour: currentPricePerHour },
    };
  }

  const choice = chooseReplacements(candidates, simulation.newNodes, view.gates);
  if (!choice.ok) return { ok: false, reason: choice.reason, thresholdBlocked: choice.thresholdBlocked };
  return {
    ok: true,
    proposal: {
      method,
      reason: 'Underutilized',
      candidates,
      simulation,
      replacements: choice.replacements,
      savingsPerHour: currentPricePerHour - choice.replacements.reduce((sum, r) => sum + r.pricePerHour, 0),
    },
  };
}
