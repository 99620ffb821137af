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

/** A move of m nodes onto n > 1 new ones, reported as `single-node`/`multi-node` by how many it removes. */
export function asRepack(proposal: Proposal): Proposal {
  return { ...proposal, method: proposal.candidates.length === 1 ? 'single-node' : 'multi-node', move: 'm-to-n' };
}

/** `variant` of `proposal`, still saying so when the command cap cut `proposal`. */
const keepCap = (variant: Proposal, proposal: Proposal): Proposal => (proposal.cappedAt ? { ...variant, cappedAt: proposal.cappedAt } : variant);

/** Types up to this much dearer per unit than the cheapest may still be chosen (room to fit the pods' mix). */
export const COST_EFFICIENT_SIZING: NewNodeEfficiency = { pricePerHour: launchPricePerHour, tolerance: 0.15 };
/**
 * Every type allowed, each new node keeping room for the largest moved pod beside what it is planned to
 * hold: kube-scheduler may send any of the moved pods to it first (it is the emptiest node).
 */
export const ROOM_KEEPING_SIZING: NewNodeEfficiency = { pricePerHour: launchPricePerHour, tolerance: Number.POSITIVE_INFINITY, roomFromFirstPod: true };

/** The most new nodes one cost-sized move may launch: a command stays a size an operator can follow. */
export const MAX_COST_SIZED_NEW_NODES = 40;

/** New nodes a cost-sized move of these nodes may open: a few per removed node, within the cap. */
export function costSizedNewNodes(removedNodes: number): number {
  return Math.min(MAX_COST_SIZED_NEW_NODES, Math.max(2, 4 * removedNodes));
}

/**
 * The moves to offer kube-scheduler's check for `proposal`, best first: the cost-sized move when it saves
 * more, the move as found, then (a move that launches nodes and was refused) the same nodes' pods all on
 * one new node, then the same move with each new node keeping room for the largest moved pod: a new node
 * packed full is what kube-scheduler's spreading most often leaves a large pod without room on; and last
 * the same move with every moved pod on its new nodes, each keeping that room. The moved pods may still
 * spread to other nodes when bound, but whatever goes elsewhere leaves more room on the new nodes, so no
 * binding order strands one of them there: this is the move to fall back on when the pods overflow the
 * new nodes into small holes on the kept ones and some binding order leaves a large pod without a hole
 * big enough. Each is simulated only when the one before is refused.
 */
export function* movesToCheck(view: PassView, proposal: Proposal): Generator<Proposal> {
  const retry = view.roomyRetry;
  if (retry && proposal.replacements.length > 0) {
    // A round decided again after the pass's moves that launch nodes were cut when checked together:
    // the commands start together, their new nodes come up in no order the plan controls, and
    // kube-scheduler sends each command's pods to whichever new node is emptiest. Only the move that
    // holds whichever command's pods come first is offered: every moved pod on its new nodes, each
    // keeping room for the largest pod the pass moves.
    const verdict = evaluateRemoval(view, proposal.candidates, proposal.method, {
      maxNewNodes: proposal.replacements.length,
      sizing: { ...ROOM_KEEPING_SIZING, roomAtLeast: { cpuMillis: retry.cpuMillis, memoryBytes: retry.memoryBytes } },
      newNodesOnly: true,
    });
    if (verdict.ok) {
      yield keepCap(proposal.move ? { ...verdict.proposal, move: proposal.move } : verdict.proposal, proposal);
      return;
    }
    const room = `${retry.cpuMillis}m cpu / ${Math.ceil(retry.memoryBytes / 2 ** 20)}Mi memory`;
    for (const c of proposal.candidates) {
      const cut = retry.nodes.get(c.node.name);
      const why = cut === undefined ? '' : `${cut}; `;
      view.note(c.node.name, `not taken: ${why}with every moved pod on its new nodes, each keeping room for the largest pod of the pass (${room}): ${verdict.reason}; looked at again next pass`);
    }
    return;
  }
  const sized = cheaperWithCostSizedNodes(view, proposal);
  yield sized;
  if (sized !== proposal) yield proposal;
  // One new node that holds every moved pod by itself, room kept for none: whatever order the pods come
  // back in, each finds room there, since a pod bound elsewhere only leaves more of it. For a full node
  // whose cheaper type of the same size has just enough room, this is the one move that holds: the
  // move below keeps a largest pod's room, which such a node does not have, and the packed move
  // leaves pods in holes that spreading does not fill in its order. So is it for a delete refused
  // because spreading leaves a large pod no hole: the pods onto one cheaper new node save less than the
  // delete would, but they save, and the delete is not safe to take.
  const alone = evaluateRemoval(view, proposal.candidates, proposal.method, { maxNewNodes: 1, newNodesOnly: true });
  if (alone.ok) yield keepCap(alone.proposal, proposal);
  if (proposal.replacements.length === 0) return;
  // Last, the move's new nodes each keeping a largest moved pod's room beside what they are planned to
  // hold, the rest of the pods in the kept nodes' holes: whichever pods reach the holes first, the
  // largest still finds that room.
  const roomy = evaluateRemoval(view, proposal.candidates, proposal.method, { maxNewNodes: proposal.replacements.length, sizing: ROOM_KEEPING_SIZING });
  if (roomy.ok) yield keepCap(proposal.move ? { ...roomy.proposal, move: proposal.move } : roomy.proposal, proposal);
}

/** `proposal`, or the same nodes moved onto cost-sized new nodes when that saves more. */
export function cheaperWithCostSizedNodes(view: PassView, proposal: Proposal): Proposal {
  if (proposal.replacements.length === 0) return proposal;
  const verdict = evaluateRemoval(view, proposal.candidates, proposal.method, {
    maxNewNodes: costSizedNewNodes(proposal.candidates.length),
    sizing: COST_EFFICIENT_SIZING,
  });
  if (!verdict.ok || verdict.proposal.savingsPerHour <= proposal.savingsPerHour + 1e-9) return proposal;
  const sized = verdict.proposal;
  return keepCap(sized.replacements.length >= 2 ? asRepack(sized) : sized, proposal);
}
