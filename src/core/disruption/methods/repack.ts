// The m-to-n repack (docs/differences-from-karpenter.md, "It adds"): remove m nodes and launch up to n
// new ones when together they cost less, moves Karpenter's methods cannot find because each allows at
// most one new node:
//   - a split (m = 1, n = 2): a node whose pods fit on two cheaper nodes but on no single cheaper one
//     (kubernetes-sigs/karpenter#1442). The simulation is run with every type priced at or above the
//     node ruled out, so its packer has to open a second node instead of one like the node itself.
//     When that split saves nothing, or kube-scheduler's check refuses it (the packer fills the first
//     new node to its last pod slot or millicore, and spreading strands a pod), the node is tried again
//     on up to MAX_REPACK_NEW_NODES new nodes sized for cost, each cheaper than the node and keeping
//     room for its largest pod (costEfficient.ts): a full c6g.16xlarge whose 220 pods no cheaper
//     64-vCPU type has slots for goes onto an hpc7g.16xlarge and an a1.4xlarge, and a c6g.12xlarge
//     ($1.632/h) that no two cheaper nodes replace for less goes onto three a1.4xlarge ($1.224/h);
//   - a merge (m >= 3, n < m): e.g. three half-full nodes into two, where no two of them fit into one.
// The same rules as every move apply: the savings threshold summed over the removed nodes, the pools'
// Underutilized budgets, PDBs and do-not-disrupt (through the candidates), pool limits (through the
// simulation), the replacement size bound, spot rules, and the kube-scheduler check.
// Like every move it disrupts at most MAX_NODES_PER_COMMAND nodes: no merge longer than the cap is tried.
//
// A move launches all its replacements before any pod is evicted (src/app/act), so the repack is
// carried out like every other decision.
import type { Candidate } from '../candidates.ts';
import { launchPricePerHour } from '../prices.ts';
import type { TypeFilter } from '../sizeBound.ts';
import { evaluateRemoval } from './evaluateRemoval.ts';
import { asRepack, COST_EFFICIENT_SIZING } from './costEfficient.ts';
import { better, cappedOrderings, firstAccepted, markCapped, prefixSizes } from './multiNode.ts';
import type { ConsolidationMethod, PassView, Proposal } from './types.ts';

/** A merge of k nodes may launch at most this many (and always fewer than k). */
export const MAX_REPACK_NEW_NODES = 8;


export function createRepack(): ConsolidationMethod {
  const splitTried = new Set<string>();
  return {
    name: 'm-to-n',
    next(view: PassView): Proposal | undefined {
      // Every repack launches nodes: once the pass refuses such moves unchecked, none can be taken, and
      // its simulations would be spent for nothing (its nodes are then left unweighed by it).
      if (view.launchesRefused?.() !== undefined) return undefined;
      const eligible = view.candidates.filter((c) => c.methods.has('m-to-n') && c.pods.length > 0 && c.pricePerHour !== undefined);
      if (eligible.length === 0) return undefined;

      // Merges: every ordering and prefix size of the multi-node search, each allowed fewer new nodes
      // than it removes. Only moves that really need two or more new nodes are kept: with one, the move
      // is multi-node's, which ran first and found none worth taking.
      const seen = new Set<string>();
      const found: Proposal[] = [];
      const capped = cappedOrderings(view, eligible);
      for (const ordered of capped.orderings) {
        for (const size of prefixSizes(ordered.length)) {
          if (size < 3) continue;
          const prefix = ordered.slice(0, size);
          const key = prefix.map((c) => c.node.name).sort().join(',');
          if (seen.has(key)) continue;
          seen.add(key);
          const verdict = evaluateRemoval(view, prefix, 'multi-node', { maxNewNodes: Math.min(size - 1, MAX_REPACK_NEW_NODES), move: 'm-to-n' });
          if (verdict.ok && verdict.proposal.replacements.length >= 2) found.push(asRepack(verdict.proposal));
        }
      }
      const merge = markCapped(firstAccepted(view, found), view.maxNodesPerCommand, capped.available);

      // Splits: each candidate once per pass (as single-node sweeps), the first that pays and holds.
      let split: Proposal | undefined;
      for (const candidate of eligible) {
        if (merge && !better(tagless(candidate), merge)) continue; // could not beat the merge found
        if (splitTried.has(candidate.node.name)) continue;
        if (!view.ledger.canTake([candidate.pool.name], 'Underutilized')) continue;
        splitTried.add(candidate.node.name);
        const nodePrice = candidate.pricePerHour!;
        // Every new node of a split costs less than the node: otherwise the move is a swap for one
        // dearer node and others, which single-node and the merges weigh.
        const cheaper: TypeFilter = (_type, offerings) => launchPricePerHour(offerings) < nodePrice;
        const packed = evaluateRemoval(view, [candidate], 'single-node', { maxNewNodes: 2, move: 'm-to-n', newNodeTypes: cheaper });
        // A Balanced score's refusal keeps its own wording (the plan and the events tell score
        // sentences apart by it); the best-case one is the same sentence single-node noted already.
        if (!packed.ok && packed.scoreBlocked) {
          view.note(candidate.node.name, packed.reason);
          continue;
        }
        let refusal: string;
        if (packed.ok) {
          if (packed.proposal.replacements.length < 2) continue; // a one-for-one swap is single-node's
          const packedSplit = asRepack(packed.proposal);
          const rejected = view.schedulerCheck(packedSplit);
          if (rejected === undefined) {
            split = packedSplit;
            break;
          }
          refusal = rejected;
        } else {
          refusal = `split into two nodes: ${packed.reason}`;
        }
        const sized = evaluateRemoval(view, [candidate], 'single-node', { maxNewNodes: MAX_REPACK_NEW_NODES, move: 'm-to-n', sizing: COST_EFFICIENT_SIZING, newNodeTypes: cheaper });
        if (sized.ok && sized.proposal.replacements.length >= 2) {
          const proposal = asRepack(sized.proposal);
          const rejected = view.schedulerCheck(proposal);
          if (rejected === undefined) {
            split = proposal;
            break;
          }
          refusal = `${refusal}; split onto ${proposal.replacements.length} nodes sized for cost, also ${rejected}`;
        }
        view.note(candidate.node.name, refusal);
      }
      if (merge && split) return better(split, merge) ? split : merge;
      return merge ?? split;
    },
  };
}

/** An upper bound on what splitting this candidate could save: its whole price. */
function tagless(candidate: Candidate): Proposal {
  return { method: 'single-node', reason: 'Underutilized', candidates: [candidate], replacements: [], savingsPerHour: candidate.pricePerHour ?? 0 };
}
