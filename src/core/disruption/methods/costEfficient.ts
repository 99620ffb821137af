// The same move with its new nodes sized for cost (scheduling/costEfficientTypes.ts). Karpenter's
// methods open a new node of whatever size holds the most of the moved pods and launch the cheapest
// type that holds them, so a merge of many nodes lands on one large node, dearer per vCPU than smaller
// types. For a move that launches nodes, the same nodes' pods are simulated again with each new node
// limited to the cheapest types per unit of what the pods ask, as many new nodes as that takes (up to a
// cap), and the cheaper of the two moves is kept. With two or more new nodes it is a repack (m-to-n),
// carried out like every repack: all its nodes launched and Ready before any eviction.
import type { NewNodeEfficiency } from '../../scheduling/types.ts';
import { launchPricePerHour } from '../prices.ts';
import { evaluateRemoval } from './evaluateRemoval.ts';
import type { PassView, Proposal } from './types.ts';

/** Types up to this much dearer per unit than the cheapest may still be chosen (room to fit the pods' mix). */
export const COST_EFFICIENT_SIZING: NewNodeEfficiency = { pricePerHour: launchPricePerHour, tolerance: 0.15 };

/** The most new nodes one cost-sized move may launch: a command stays a size an operator can follow. */
export const MAX_COST_SIZED_NEW_NODES = 40;

/** New nodes a cost-sized move of these nodes may open: a few per removed node, within the cap. */
export function costSizedNewNodes(removedNodes: number): number {
  return Math.min(MAX_COST_SIZED_NEW_NODES, Math.max(2, 4 * removedNodes));
}

/** `proposal`, or the same nodes moved onto cost-sized new nodes when that saves more. */
export function cheaperWithCostSizedNodes(view: PassView, proposal: Proposal): Proposal {
  if (proposal.replacements.length === 0) return proposal;
  const verdict = evaluateRemoval(view, proposal.candidates, proposal.method, {
    maxNewNodes: costSizedNewNodes(proposal.candidates.length),
    costEfficient: true,
  });
  if (!verdict.ok || verdict.proposal.savingsPerHour <= proposal.savingsPerHour + 1e-9) return proposal;
  const sized = verdict.proposal;
  const method: Proposal['method'] = sized.candidates.length === 1 ? 'single-node' : 'multi-node';
  return sized.replacements.length >= 2 ? { ...sized, method, move: 'm-to-n', ...(proposal.cappedAt ? { cappedAt: proposal.cappedAt } : {}) } : { ...sized, ...(proposal.cappedAt ? { cappedAt: proposal.cappedAt } : {}) };
}
