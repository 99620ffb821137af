// The question every moving method shares: if these nodes went away, could their pods run on the rest
// of the cluster plus at most N new, cheaper nodes, and would it pay? Single-node and multi-node ask it
// with N = 1 (node deletion and node replacement in Karpenter's consolidation design; the threshold of
// Karpenter's savings-threshold design); the m-to-n repack asks it with N > 1. Every replacement is
// bounded in size (sizeBound.ts), and a move out of a Balanced pool must pass Karpenter v1.14's Balanced
// score (balancedScore.ts), the repack's moves included.
import { describeScore, roundScore, scoreMove } from '../balancedScore.ts';
import type { ConsolidationScore } from '../../plan.ts';
import type { Candidate } from '../candidates.ts';
import { placeablePendingPods } from '../pendingPods.ts';
import { podKey } from '../pods.ts';
import { chooseReplacements } from '../replacement.ts';
import { checkSavings } from '../savingsThreshold.ts';
import { bothFilters, boundedTypes, describeBound, type TypeFilter } from '../sizeBound.ts';
import type { PassView, Proposal } from './types.ts';
import type { NewNodeEfficiency } from '../../scheduling/types.ts';

export type RemovalVerdict =
  | { readonly ok: true; readonly proposal: Proposal }
  | { readonly ok: false; readonly reason: string; readonly thresholdBlocked?: boolean; readonly scoreBlocked?: boolean };

export interface RemovalOptions {
  /** At most this many new nodes (default 1). */
  readonly maxNewNodes?: number;
  /** A further restriction on the new nodes' types (the split's price cap). */
  readonly newNodeTypes?: TypeFilter;
  /** Size new nodes for cost, or keep room on them (methods/costEfficient.ts); default: Karpenter's packing. */
  readonly sizing?: NewNodeEfficiency;
  /** Set by the m-to-n repack, so a move its Balanced score refuses is reported as one. */
  readonly move?: 'm-to-n';
  /**
   * The moved pods go to new nodes only, no existing node taking any of them (methods/costEfficient.ts:
   * the move that holds in any binding order). Pending pods then keep the room they have.
   */
  readonly newNodesOnly?: boolean;
  /**
   * The nodes count as weighed (PassView.examine) only when a move is found: set when only part of
   * what the method could find is looked for (deletes only, once moves that launch nodes would be
   * refused unchecked), so a node left alone then is not taken for one with nothing worth doing.
   */
  readonly examineOnlyIfFound?: boolean;
}

export function evaluateRemoval(
  view: PassView,
  candidates: readonly Candidate[],
  method: Proposal['method'],
  options: RemovalOptions = {},
): RemovalVerdict {
  const names = candidates.map((c) => c.node.name);
  if (!options.examineOnlyIfFound) view.examine(names);
  const verdict = weighRemoval(view, candidates, method, options);
  if (options.examineOnlyIfFound && verdict.ok) view.examine(names);
  // A move worth making was found for these nodes, whether or not the pass takes it (a better move, a
  // budget, kube-scheduler's placement): they are not "evaluated with nothing worth doing", which is
  // what starts a consolidationGracePeriod.
  if (verdict.ok) view.found?.(names);
  return verdict;
}

function weighRemoval(view: PassView, candidates: readonly Candidate[], method: Proposal['method'], options: RemovalOptions): RemovalVerdict {
  const pods = candidates.flatMap((c) => c.pods);
  const pricesKnown = candidates.every((c) => c.pricePerHour !== undefined);
  const currentPricePerHour = candidates.reduce((sum, c) => sum + (c.pricePerHour ?? 0), 0);
  // Balanced: an outright delete is the best any move of these nodes can score (a replacement only
  // costs money), so when even that fails there is nothing to simulate (Karpenter skips such
  // candidates the same way).
  const bound = balancedGate(view, candidates, method, currentPricePerHour, undefined, options.move);
  if (bound.refusal) return bound.refusal;
  const bounded = boundedTypes(candidates, view.replacementBound);
  const newNodeTypes = bothFilters(bounded, options.newNodeTypes);
  // A node of unknown price is never replaced: only existing capacity may take its pods.
  const maxNewNodes = pricesKnown ? (options.maxNewNodes ?? 1) : 0;
  // Pending pods that have a place now must keep one (pendingPods.ts); a move onto new nodes only takes
  // no room from them.
  const pending = options.newNodesOnly ? [] : placeablePendingPods(view.cluster, view.simulator);
  const pendingUids = new Set(pending.map((p) => p.uid));
  const request = {
    excludedNodes: new Set(options.newNodesOnly ? view.cluster.nodes.map((n) => n.name) : candidates.map((c) => c.node.name)),
    maxNewNodes,
    stopAtFirstFailure: true,
    newNodeTypes,
    ...(options.sizing ? { costEfficientNewNodes: options.sizing } : {}),
  };
  const full = view.simulator.simulate({ ...request, pods: pending.length > 0 ? [...pods, ...pending] : pods });
  if (!full.allScheduled) {
    const first = full.unschedulable[0]!;
    if (pendingUids.has(first.pod.uid)) {
      return { ok: false, reason: `pending pod ${podKey(first.pod)} would have nowhere to run: ${first.reason}` };
    }
    // Pods are placed largest first, so a candidate's pod may be the one left over when pending pods
    // took the room: say that it is the pending pods' room, when without them the move would fit.
    if (pending.length > 0) {
      const alone = view.simulator.simulate({ ...request, pods });
      if (alone.allScheduled) {
        const names = pending.slice(0, 3).map(podKey).join(', ');
        return { ok: false, reason: `its pods fit elsewhere only in the room that pending pod(s) ${names}${pending.length > 3 ? ', ...' : ''} need, which would leave a pending pod with nowhere to run` };
      }
    }
    const sizeNote = bounded && view.replacementBound ? ` (a replacement may be ${describeBound(view.replacementBound)})` : '';
    return { ok: false, reason: `its pods cannot all run elsewhere: pod ${podKey(first.pod)}: ${first.reason}${sizeNote}` };
  }
  // The decision moves only the candidates' pods; pending pods are bound by the scheduler later.
  const simulation = pending.length > 0 ? { ...full, placements: full.placements.filter((p) => !pendingUids.has(p.pod.uid)) } : full;

  if (simulation.newNodes.length === 0) {
    if (pricesKnown) {
      const verdict = checkSavings(candidates, currentPricePerHour);
      if (!verdict.ok) return { ok: false, reason: verdict.reason!, thresholdBlocked: true };
    }
    return scored(view, { method, reason: 'Underutilized', candidates, simulation, replacements: [], savingsPerHour: currentPricePerHour }, options.move);
  }

  const choice = chooseReplacements(candidates, simulation.newNodes, view.gates);
  if (!choice.ok) return { ok: false, reason: choice.reason, thresholdBlocked: choice.thresholdBlocked };
  return scored(
    view,
    {
      method,
      reason: 'Underutilized',
      candidates,
      simulation,
      replacements: choice.replacements,
      savingsPerHour: currentPricePerHour - choice.replacements.reduce((sum, r) => sum + r.pricePerHour, 0),
    },
    options.move,
  );
}

/** The move as found, with its Balanced scores attached, or refused by them. */
function scored(view: PassView, proposal: Proposal, move: 'm-to-n' | undefined): RemovalVerdict {
  // The repack keeps only moves that launch two or more nodes; one with fewer is single-node's or
  // multi-node's, which ran first and scored it (and reported a refusal) already.
  if (move && proposal.replacements.length < 2) return { ok: true, proposal };
  const action = proposal.replacements.length > 0 ? 'replace' : 'delete';
  const gate = balancedGate(view, proposal.candidates, proposal.method, proposal.savingsPerHour, action, move);
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
  method: Proposal['method'],
  savingsPerHour: number,
  action: 'delete' | 'replace' | undefined,
  repack: 'm-to-n' | undefined,
): { readonly refusal?: RemovalVerdict; readonly scores?: readonly ConsolidationScore[] } {
  if (!view.balancedTotals) return {};
  const move = scoreMove(candidates, savingsPerHour, view.balancedTotals);
  if (move.scores.length === 0) return {};
  const scores = move.scores.map(roundScore);
  if (move.approved) return { scores };
  // The best case of a repack's nodes is the bound single-node and multi-node already met for them (the
  // same candidates, the same pass totals): refused, but not reported a second time.
  const report = !(repack && action === undefined);
  if (report) view.rejectMove?.({
    method,
    ...(repack ? { move: repack } : {}),
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
