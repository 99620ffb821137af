// One consolidation pass: evaluate the nodes, then let the methods propose commands in a fixed
// priority order, each computed on the cluster as the earlier commands leave it, until budgets or
// opportunities run out.
//
// Priority order (why):
//   1. emptiness   - deleting a node with nothing to move disrupts nothing and always saves its price;
//   2. multi-node  - packing several nodes into at most one saves the most per command and must see the
//                    cluster before single-node swaps use up the free room it needs (Karpenter runs it
//                    before single-node for the same reason);
//   3. single-node - one node at a time, cheapest to disrupt first, for whatever is left.
// Methods are repeated while they keep finding commands; single-node sweeps each candidate once.
import type { FeatureGates } from '../featureGates.ts';
import type { Catalog, Cluster, Node, NodePool, Pod } from '../model/types.ts';
import type { Decision, RejectedMove } from '../plan.ts';
import type { Simulator, SimulatorInput } from '../scheduling/types.ts';
import { createSimulator } from '../scheduling/simulator.ts';
import { applyProposal } from './applyDecision.ts';
import { balancedPoolTotals, rankBalanced } from './balancedScore.ts';
import { BudgetLedger } from './budgets.ts';
import { byDisruptionCost, evaluateNodes, snapshotTiming, type Candidate, type NodeTiming, type NodeVerdict } from './candidates.ts';
import { emptiness } from './methods/emptiness.ts';
import { createMultiNode } from './methods/multiNode.ts';
import { createSingleNode } from './methods/singleNode.ts';
import type { ConsolidationMethod, PassView, Proposal } from './methods/types.ts';
import { podKey, type DurationParser } from './pods.ts';
import { indexCatalog, roundCost, roundMoney } from './prices.ts';
import { dollars } from './text.ts';

export interface PassInput {
  readonly cluster: Cluster;
  readonly nodePools: readonly NodePool[];
  readonly catalog: Catalog;
  readonly nowMs: number;
  readonly gates: FeatureGates;
  readonly parseDuration: DurationParser;
  /** Nodes with an unfinished command (they use up budget and are not candidates). */
  readonly inFlight?: ReadonlySet<string>;
  /** Node history from the state store; default: what one snapshot shows. */
  readonly timing?: (node: Node, pods: readonly Pod[]) => NodeTiming;
  /** Extra reasons a node is not a candidate (minimum lifetime, ...). */
  readonly extraReasons?: (node: Node) => readonly string[];
  /** Restrict the methods (the emptiness-TTL function runs emptiness only). */
  readonly methods?: readonly ('emptiness' | 'single-node' | 'multi-node')[];
  /** Only pools for which this returns true are acted on (the two functions split pools). */
  readonly poolFilter?: (pool: NodePool) => boolean;
  /** Node verdicts already computed for this very input (a probe pass), so they are not computed twice. */
  readonly verdicts?: readonly NodeVerdict[];
  /** Builds the scheduling simulation (default `createSimulator`); the benchmark wraps it to time it. */
  readonly simulatorFactory?: (input: SimulatorInput) => Simulator;
}

export interface PassOutcome {
  readonly decisions: readonly Decision[];
  readonly verdicts: readonly NodeVerdict[];
  /** Per node, why a candidate was not consolidated. */
  readonly notes: ReadonlyMap<string, readonly string[]>;
  /** Node name -> index of the decision that disrupts it. */
  readonly disruptedBy: ReadonlyMap<string, number>;
  /** Candidates of the pools in scope (shown as `candidate: true`). */
  readonly evaluated: ReadonlySet<string>;
  /** Candidates whose merits a method actually weighed (seed 002: these start a grace period). */
  readonly examined: ReadonlySet<string>;
  /** Moves a `Balanced` pool's score refused, once per method and node set (the latest scoring). */
  readonly rejectedMoves: readonly RejectedMove[];
}

export function runConsolidationPass(input: PassInput): PassOutcome {
  const pools = new Map(input.nodePools.map((p) => [p.name, p]));
  const inFlight = input.inFlight ?? new Set<string>();
  const prices = indexCatalog(input.catalog);
  const verdicts = input.verdicts ?? evaluateNodes({
    cluster: input.cluster,
    pools,
    nowMs: input.nowMs,
    prices,
    parseDuration: input.parseDuration,
    inFlight,
    timing: input.timing ?? snapshotTiming,
    extraReasons: input.extraReasons,
  });

  const nodesByPool = new Map<string, Node[]>();
  for (const node of input.cluster.nodes) {
    if (!node.nodePool) continue;
    const list = nodesByPool.get(node.nodePool);
    if (list) list.push(node);
    else nodesByPool.set(node.nodePool, [node]);
  }
  const ledger = new BudgetLedger(pools, nodesByPool, input.nowMs, inFlight);

  let open: Candidate[] = verdicts
    .map((v) => v.candidate)
    .filter((c): c is Candidate => c !== undefined && (input.poolFilter?.(c.pool) ?? true))
    .sort(byDisruptionCost);
  open = rankBalanced(open);
  const evaluated = new Set(open.map((c) => c.node.name));

  const notes = new Map<string, string[]>();
  const note = (nodeName: string, reason: string) => {
    const list = notes.get(nodeName) ?? [];
    if (!list.includes(reason)) list.push(reason);
    notes.set(nodeName, list);
  };

  let cluster = input.cluster;
  // Built on first use: a pass whose methods never simulate (emptiness only, a skipped search) pays nothing.
  let simulator: Simulator | undefined;
  const lazySimulator: Simulator = {
    simulate: (request) => {
      simulator ??= (input.simulatorFactory ?? createSimulator)({ cluster, nodePools: input.nodePools, catalog: input.catalog });
      return simulator.simulate(request);
    },
  };
  const examined = new Set<string>();
  // Balanced pools are scored against their totals as the pass found them (one snapshot per pass, as
  // Karpenter takes one per cycle).
  const balancedTotals = balancedPoolTotals(input.cluster, pools, prices);
  const rejected = new Map<string, RejectedMove>();
  const rejectMove = (move: RejectedMove) => {
    const key = `${move.method}\u0000${move.bound}\u0000${[...move.nodes].sort().join(',')}`;
    rejected.delete(key);
    rejected.set(key, move);
  };
  const decisions: Decision[] = [];
  const disruptedBy = new Map<string, number>();

  const allowed = new Set(input.methods ?? ['emptiness', 'multi-node', 'single-node']);
  const methods: ConsolidationMethod[] = [emptiness, createMultiNode(), createSingleNode()].filter((m) => allowed.has(m.name));

  for (const method of methods) {
    for (;;) {
      const view: PassView = {
        nowMs: input.nowMs,
        gates: input.gates,
        cluster,
        simulator: lazySimulator,
        ledger,
        candidates: open,
        note,
        examine: (names) => names.forEach((name) => examined.add(name)),
        ...(balancedTotals.size > 0 ? { balancedTotals, rejectMove } : {}),
      };
      const proposal = method.next(view);
      if (!proposal) break;
      const index = decisions.length;
      const replacementName = `replacement-${index + 1}`;
      decisions.push(toDecision(proposal, replacementName));
      ledger.take(proposal.candidates.map((c) => c.pool.name));
      for (const c of proposal.candidates) disruptedBy.set(c.node.name, index);

      const applied = applyProposal(cluster, proposal, pools, input.nowMs, replacementName);
      cluster = applied.cluster;
      // Nodes that receive pods get a pod event; they are not candidates again in this pass.
      const openNames = new Set(open.map((c) => c.node.name));
      for (const name of applied.receivingNodes) {
        if (openNames.has(name)) note(name, `receives pods from decision ${index + 1} of this pass, so it is left alone until they settle`);
      }
      open = open.filter((c) => !disruptedBy.has(c.node.name) && !applied.receivingNodes.has(c.node.name));
      simulator = undefined; // the next simulation sees the cluster as this decision leaves it
    }
  }

  return { decisions, verdicts, notes, disruptedBy, evaluated, examined, rejectedMoves: [...rejected.values()] };
}

function toDecision(proposal: Proposal, replacementName: string): Decision {
  const nodes = proposal.candidates.map((c) => c.node.name);
  const currentPricePerHour = proposal.candidates.reduce((sum, c) => sum + (c.pricePerHour ?? 0), 0);
  const replacementPricePerHour = proposal.replacement?.pricePerHour ?? 0;
  const evicted = proposal.candidates.flatMap((c) => c.pods);
  const podDestinations: Record<string, string> = {};
  for (const placement of proposal.simulation?.placements ?? []) {
    podDestinations[podKey(placement.pod)] = placement.nodeName.startsWith('new:') ? replacementName : placement.nodeName;
  }
  const action = proposal.replacement ? 'replace' : 'delete';
  // A node of unknown price saves an unknown amount: null, never a made-up $0 (it is never replaced, so
  // this only happens for deletions).
  const priceKnown = proposal.candidates.every((c) => c.pricePerHour !== undefined);
  const savingsPerHour = priceKnown ? roundMoney(currentPricePerHour - replacementPricePerHour) : null;
  const summary =
    action === 'replace'
      ? `replace ${nodes.join(', ')} (${dollars(currentPricePerHour)}) with one ${proposal.replacement!.capacityType} ${proposal.replacement!.instanceTypes[0]} or similar (${dollars(replacementPricePerHour)}), moving ${evicted.length} pod(s)`
      : proposal.method === 'emptiness'
        ? `delete empty node(s) ${nodes.join(', ')}`
        : `delete ${nodes.join(', ')}; ${evicted.length} pod(s) fit on other nodes`;
  return {
    method: proposal.method,
    reason: proposal.reason,
    action,
    nodes,
    replacements: proposal.replacement ? [proposal.replacement] : [],
    currentPricePerHour: priceKnown ? roundMoney(currentPricePerHour) : null,
    replacementPricePerHour: roundMoney(replacementPricePerHour),
    savingsPerHour,
    disruptionCost: roundCost(proposal.candidates.reduce((sum, c) => sum + c.disruptionCost, 0)),
    evictedPods: evicted.map(podKey),
    podDestinations,
    summary,
    ...(proposal.scores ? { scores: proposal.scores } : {}),
  };
}
