// One consolidation pass: evaluate the nodes, then let the methods propose commands in a fixed
// priority order, each computed on the cluster as the earlier commands leave it, until budgets or
// opportunities run out.
//
// Priority order (why):
//   1. emptiness   - deleting a node with nothing to move disrupts nothing and always saves its price;
//   2. multi-node  - packing several nodes into at most one saves the most per command and must see the
//                    cluster before single-node swaps use up the free room it needs (Karpenter runs it
//                    before single-node for the same reason);
//   3. single-node - one node at a time, cheapest to disrupt first, for whatever is left;
//   4. m-to-n      - repacks (methods/repack.ts): m nodes into n > 1 new ones, splits of one node into
//                    two. Last, so Karpenter's own moves win where they exist (a delete that saves as
//                    much as a 3-into-2 repack disrupts less). The actuator launches every replacement
//                    of a command before it evicts anything, so these are carried out like the others;
//   5. pair merge  - (methods/pairMerge.ts) only when nothing else was decided: two nodes no ordering of
//                    multi-node's search put side by side, every pod of both on one cheaper new node.
// Methods are repeated while they keep finding commands; single-node sweeps each candidate once.
// No decision disrupts more than `maxNodesPerCommand` nodes (MAX_NODES_PER_COMMAND, commandCap.ts),
// which bounds what one command can break; emptiness deletes more empty nodes than that in several
// decisions.
// Every move that evicts pods must also pass the kube-scheduler check (schedulerCheck.ts).
import type { FeatureGates } from '../featureGates.ts';
import type { Catalog, Cluster, Node, NodePool, Pod } from '../model/types.ts';
import type { Decision, RejectedMove } from '../plan.ts';
import { demandMix } from '../scheduling/costEfficientTypes.ts';
import type { Simulator, SimulatorInput } from '../scheduling/types.ts';
import { createSimulator } from '../scheduling/simulator.ts';
import type { PreferencePolicy } from '../scheduling/preferences.ts';
import { applyProposal, destinationName, replacementNames } from './applyDecision.ts';
import { balancedPoolTotals, rankBalanced } from './balancedScore.ts';
import { architectureChange, architectureIndex, architectureSentence } from './architectureChange.ts';
import { BudgetLedger } from './budgets.ts';
import { capSentence, DEFAULT_MAX_NODES_PER_COMMAND } from './commandCap.ts';
import { nodeDisruptionCost } from './disruptionCost.ts';
import { byDisruptionCost, closedToMovedPods, evaluateNodes, podsByNode, snapshotTiming, type Candidate, type NodeTiming, type NodeVerdict } from './candidates.ts';
import { emptiness } from './methods/emptiness.ts';
import { createMultiNode } from './methods/multiNode.ts';
import { createPairMerge, PAIR_MERGE_TRIES } from './methods/pairMerge.ts';
import { createRepack } from './methods/repack.ts';
import { createSingleNode } from './methods/singleNode.ts';
import type { ConsolidationMethod, PassView, Proposal, RoomyRetry } from './methods/types.ts';
import type { MethodName } from './policy.ts';
import { isReschedulable, podKey, type DurationParser } from './pods.ts';
import { KubeSchedulerWorld, type SchedulerCheckContext } from './schedulerCheck.ts';
import { keepConcurrentlySafe } from './concurrentCheck.ts';
import type { PlannedMove } from './planCheck.ts';
import { DEFAULT_REPLACEMENT_BOUND, type ReplacementBound } from './sizeBound.ts';
import { indexCatalog, roundCost, roundMoney } from './prices.ts';
import { dollars } from './text.ts';
import { countingFactory, newWork, workUnits, type Work } from './work.ts';

/** Scheduler checks that rebuild the simulation (moves with replacements) per pass; see schedulerCheck.ts. */
export const MAX_REBUILT_CHECKS_PER_PASS = 24;
/**
 * How far such checks go on in a pass that has taken nothing yet. The candidates come in the same order
 * every pass, so a pass whose first checked moves were all refused would decide nothing, the next pass
 * would see the same cluster and check the same moves first, and the moves after them would never be
 * weighed: a cluster stopped short of what it could save (seen at 500 nodes, with 17-30 nodes left
 * unchecked when the passes ran dry). Checking on until one move is taken breaks that loop; the cap keeps
 * the cost of a pass that finds nothing bounded.
 */
export const MAX_REBUILT_CHECKS_BEFORE_A_DECISION = 4 * MAX_REBUILT_CHECKS_PER_PASS;

/**
 * Checks of that kind left to the last-resort method (methods/pairMerge.ts), on top of what the other
 * methods used: it runs only when they took nothing, often after they spent the pass's checks on moves
 * refused, and its own moves (every pod of two nodes on one new node) would otherwise never be checked.
 */
export const MAX_LAST_RESORT_CHECKS = PAIR_MERGE_TRIES;

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
  /** Karpenter's preference policy for the methods' simulations (PREFERENCE_POLICY; default Respect). */
  readonly preferencePolicy?: PreferencePolicy;
  /** Restrict the methods (the emptiness-TTL function runs emptiness only). */
  readonly methods?: readonly MethodName[];
  /** Only pools for which this returns true are acted on (the two functions split pools). */
  readonly poolFilter?: (pool: NodePool) => boolean;
  /** Node verdicts already computed for this very input (a probe pass), so they are not computed twice. */
  readonly verdicts?: readonly NodeVerdict[];
  /** Builds the scheduling simulation (default `createSimulator`); the benchmark wraps it to time it. */
  readonly simulatorFactory?: (input: SimulatorInput) => Simulator;
  /** How large a replacement may be (default: 2x the largest node a move removes); null: unbounded. */
  readonly replacementBound?: ReplacementBound | null;
  /** Check every move against kube-scheduler's least-allocated placement (default true). */
  readonly schedulerCheck?: boolean;
  /**
   * Nodes that receive pods from a decision stay candidates in the same pass when their pool has no
   * consolidateAfter wait (default true; false: Karpenter's rule, they are left alone until next pass).
   */
  readonly reopenReceivers?: boolean;
  /** What the replacements are called (`<prefix>-<decision>`); default `replacement` (the actuator's names). */
  readonly replacementPrefix?: string;
  /**
   * Stop deciding once the pass's work (PassOutcome.work: pods simulated plus pods indexed) exceeds this.
   * Only for a plan's later waves (laterWaves.ts), which are a projection; a real pass has no such cut.
   */
  readonly workLimit?: number;
  /**
   * The most nodes one decision may disrupt (`MAX_NODES_PER_COMMAND`, a positive integer; default
   * DEFAULT_MAX_NODES_PER_COMMAND, commandCap.ts). The multi-node search and the m-to-n repack try no
   * longer prefix; emptiness splits its deletions into decisions of at most this many nodes.
   */
  readonly maxNodesPerCommand?: number;
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
  /**
   * Candidates whose merits a method actually weighed (Karpenter's consolidationGracePeriod design:
   * these start a grace period).
   */
  readonly examined: ReadonlySet<string>;
  /**
   * Examined candidates for which a method found a move worth making, taken or not: a cheaper
   * configuration exists, so the consolidationGracePeriod design does not protect them.
   */
  readonly worthMoving: ReadonlySet<string>;
  /** Moves a `Balanced` pool's score refused, once per method and node set (the latest scoring). */
  readonly rejectedMoves: readonly RejectedMove[];
  /** The moves behind the decisions, one per decision, in order (what carrying the plan out needs). */
  readonly moves: readonly PlannedMove[];
  /**
   * What the pass simulated, a measure of its work that does not depend on the machine: simulations run,
   * pods they placed (or failed to), and pods indexed building them (each build indexes the whole cluster).
   */
  readonly work: Readonly<Work>;
}

/**
 * How many times a pass decides again after the concurrent check cut decisions. A cut decision would
 * come first again in the same order, so a pass whose first decision is cut would decide nothing, and
 * every pass after it the same, and a pass that keeps a few would leave the rest of its budget unused.
 * So the pass is decided again from the start with the cut decisions' nodes held back (they are looked
 * at again next pass). Deciding only what came after the kept decisions, with those taken as they were,
 * costs less but ended the quality benchmark's 500-node runs at a 10% budget at 1.9x-2.1x of an FFD
 * repack instead of 1.6x-1.7x: the kept decisions were found with the cut ones' nodes still open, and the
 * methods' order (merges before single-node swaps) is lost after them.
 */
export const MAX_DECIDE_AGAIN = 2;

export function runConsolidationPass(input: PassInput): PassOutcome {
  // A projected wave (a work limit) decides once: deciding again from the start would spend its limit on
  // the same searches and leave the wave with less than its first round kept.
  if (input.workLimit !== undefined) {
    const { cut: _cut, cutLaunching: _launching, ...outcome } = decideOnce(input, new Map());
    return outcome;
  }
  // The node verdicts depend on the input alone: the first round's serve every round.
  return decideWithHeldBack((held, previous, roomy) => decideOnce(previous ? { ...input, verdicts: previous.verdicts } : input, held, roomy));
}

/**
 * A round of deciding and the nodes of the decisions the concurrent check cut in it, with why; and, when
 * it cut moves that launch nodes, those moves' nodes with the largest pod the round's plan moved.
 */
export type DecisionRound = PassOutcome & { readonly cut: ReadonlyMap<string, string>; readonly cutLaunching?: RoomyRetry };

/**
 * Runs `decide` with no node held back, and again (at most MAX_DECIDE_AGAIN times) while the concurrent
 * check cut decisions, each time holding back the cut decisions' nodes too. A round after the first is
 * given the one before it (its node verdicts serve again). The work of every round is counted.
 *
 * When the first round kept at most one move and cut moves that launch nodes, the next round does not hold
 * those back: it is decided with roomy new nodes (PassView.roomyRetry). Such cuts come from one command's
 * pods taking the room another's packed new node kept for its own pods, and a new node that holds all its
 * move's pods and keeps room for the largest pod the pass moves is left room whichever pods come first.
 * Measured on generated clusters of 500 nodes and a catalog of 11 like-priced sizes, passes otherwise
 * ended with one single-node replacement each, every other move cut. The roomy round is the pass's only
 * when it keeps more moves than the best round before it (and saves at least as much): it is there to
 * unblock moves, not to trade a packed move for a dearer roomy one (which, taken early, left 100-node
 * clusters at a worse end).
 */
export function decideWithHeldBack(decide: (held: ReadonlyMap<string, string>, previous?: DecisionRound, roomy?: RoomyRetry) => DecisionRound): PassOutcome {
  let held = new Map<string, string>();
  let roomy: RoomyRetry | undefined;
  let round = decide(held);
  const work = { ...round.work };
  // Every round's plan is one its check kept as a whole. A later round is not always the better one:
  // holding more nodes back, it may find less, even nothing (its one move cut in turn); the round that
  // saves the most is the pass's, the later one when they save alike.
  let best = round;
  const savings = (r: DecisionRound): number => r.decisions.reduce((sum, d) => sum + (d.savingsPerHour ?? 0), 0);
  for (let again = 0; again < MAX_DECIDE_AGAIN && round.cut.size > 0; again++) {
    // The roomy round comes second, or not at all; it stays roomy for the round after it.
    const roomyNow = again === 0 && round.decisions.length <= 1 ? round.cutLaunching : undefined;
    if (roomyNow) roomy = roomyNow;
    held = new Map([...held, ...[...round.cut].filter(([n]) => !roomyNow?.nodes.has(n))]);
    const capped = new Map(round.decisions.filter((d) => d.cappedAt).map((d) => [nodeSetKey(d), d.cappedAt!]));
    round = decide(held, round, roomy);
    for (const key of Object.keys(work) as (keyof Work)[]) work[key] += round.work[key];
    // A decision the cap cut keeps saying so: the nodes now held back were eligible for it too.
    if (capped.size > 0) {
      const decisions = round.decisions.map((d) => {
        const cap = capped.get(nodeSetKey(d));
        return cap && !d.cappedAt ? { ...d, cappedAt: cap } : d;
      });
      round = { ...round, decisions };
    }
    if (savings(round) >= savings(best) - 1e-9 && (!roomyNow || round.decisions.length > best.decisions.length)) best = round;
  }
  const { cut: _cut, cutLaunching: _launching, ...outcome } = best;
  return { ...outcome, work };
}

const nodeSetKey = (decision: Decision): string => [...decision.nodes].sort().join(',');

/**
 * One round of deciding; `held`: nodes a concurrent-check cut holds back this pass, with why; `roomy`:
 * set when every move that launches nodes is to use roomy new nodes (PassView.roomyRetry).
 */
function decideOnce(input: PassInput, held: ReadonlyMap<string, string>, roomy?: RoomyRetry): DecisionRound {
  const pools = new Map(input.nodePools.map((p) => [p.name, p]));
  const inFlight = input.inFlight ?? new Set<string>();
  const prices = indexCatalog(input.catalog);
  const archOf = architectureIndex(input.catalog);
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
  const heldBack = open.filter((c) => held.has(c.node.name));
  if (heldBack.length > 0) open = open.filter((c) => !held.has(c.node.name));

  const notes = new Map<string, string[]>();
  // The text each keyed note has now, per node: a later note of the same key takes its place.
  const keyed = new Map<string, Map<string, string>>();
  const note = (nodeName: string, reason: string, key?: string) => {
    let list = notes.get(nodeName) ?? [];
    const earlier = key === undefined ? undefined : keyed.get(nodeName)?.get(key);
    if (earlier !== undefined) list = list.filter((r) => r !== earlier);
    if (!list.includes(reason)) list.push(reason);
    notes.set(nodeName, list);
    if (key !== undefined) keyed.set(nodeName, (keyed.get(nodeName) ?? new Map<string, string>()).set(key, reason));
  };

  for (const c of heldBack) note(c.node.name, held.get(c.node.name)!);

  // Every simulation of the pass (its own, the kube-scheduler checks) is counted: the work it did.
  const work = newWork();
  const simulatorFactory = countingFactory(input.simulatorFactory ?? createSimulator, work);

  let cluster = input.cluster;
  // Built on first use: a pass whose methods never simulate (emptiness only, a skipped search) pays nothing.
  let simulator: Simulator | undefined;
  const lazySimulator: Simulator = {
    simulate: (request) => {
      simulator ??= simulatorFactory({ cluster, nodePools: input.nodePools, catalog: input.catalog });
      return simulator.simulate(request);
    },
  };
  // The methods' simulations keep the pods they move off nodes still inside their consolidateAfter window,
  // and hold pods to their preferences until nothing fits (policy Respect), as Karpenter's do
  // (candidates.ts consolidateAfterWindow, scheduling/preferences.ts); the kube-scheduler check does
  // neither: the real scheduler knows no such window and only scores preferences.
  const closed = closedToMovedPods(verdicts);
  const preferences = input.preferencePolicy ?? 'Respect';
  const planningSimulator: Simulator = {
    simulate: (request) => lazySimulator.simulate({ ...request, preferences, ...(closed.size > 0 ? { closedToMovedPods: closed } : {}) }),
  };
  const examined = new Set<string>();
  const worthMoving = new Set<string>();
  // Balanced pools are scored against their totals as the pass found them (one snapshot per pass, as
  // Karpenter takes one per cycle).
  const balancedTotals = balancedPoolTotals(input.cluster, pools, prices);
  const rejected = new Map<string, RejectedMove>();
  const rejectMove = (move: RejectedMove) => {
    const key = `${move.method}\u0000${move.move ?? ''}\u0000${move.bound}\u0000${[...move.nodes].sort().join(',')}`;
    rejected.delete(key);
    rejected.set(key, move);
  };
  let decisions: Decision[] = [];
  const moves: PlannedMove[] = [];
  let rebuiltChecks = 0;
  let lastResortChecks = 0;
  const launchesRefused = (): string | undefined => {
    if (!kubeWorld || rebuiltChecks < MAX_REBUILT_CHECKS_PER_PASS) return undefined;
    if (decisions.length > 0) {
      return `not checked against kube-scheduler's placement: this pass already checked ${rebuiltChecks} moves that launch nodes; looked at again next pass`;
    }
    if (rebuiltChecks < MAX_REBUILT_CHECKS_BEFORE_A_DECISION) return undefined;
    // Nothing taken: the next pass, on the same cluster, would check the same moves first again.
    return `not checked against kube-scheduler's placement: this pass checked ${rebuiltChecks} moves that launch nodes and could take none of them; the same moves come first again next pass unless the cluster changes`;
  };
  const disruptedBy = new Map<string, number>();

  const allowed = new Set<MethodName>(input.methods ?? ['emptiness', 'multi-node', 'single-node', 'm-to-n']);
  const methods: ConsolidationMethod[] = [emptiness, createMultiNode(), createSingleNode(), createRepack(), createPairMerge()].filter((m) => allowed.has(m.name));
  const replacementBound = input.replacementBound === undefined ? DEFAULT_REPLACEMENT_BOUND : input.replacementBound;
  const checkScheduler = input.schedulerCheck ?? true;
  const reopenReceivers = input.reopenReceivers ?? true;
  const maxNodesPerCommand = input.maxNodesPerCommand ?? DEFAULT_MAX_NODES_PER_COMMAND;
  // The entry points check it (config.ts, the CLI); a bad number here is a programming error.
  if (!Number.isInteger(maxNodesPerCommand) || maxNodesPerCommand < 1) throw new RangeError(`maxNodesPerCommand must be a positive integer, got ${maxNodesPerCommand}`);
  const checkContext: SchedulerCheckContext = {
    nodePools: input.nodePools,
    pools,
    catalog: input.catalog,
    nowMs: input.nowMs,
    simulatorFactory,
  };
  const kubeWorld = checkScheduler ? new KubeSchedulerWorld(checkContext, input.cluster, lazySimulator) : undefined;

  /** Takes a move into the plan: its decision, its budget, and the cluster as it leaves it. */
  const commit = (proposal: Proposal): void => {
    const index = decisions.length;
    const names = replacementNames(index + 1, proposal.replacements.length, input.replacementPrefix);
    decisions.push(toDecision(proposal, names, archOf));
    moves.push({ proposal, names });
    ledger.take(proposal.candidates.map((c) => c.pool.name));
    for (const c of proposal.candidates) disruptedBy.set(c.node.name, index);

    const applied = applyProposal(cluster, proposal, pools, input.nowMs, names);
    kubeWorld?.commit(proposal, names);
    cluster = applied.cluster;
    // Nodes that receive pods get a pod event: under a consolidateAfter wait they are not candidates
    // again in this pass (Karpenter's disruption-controls design). Without a wait (consolidateAfter
    // 0s) the event changes nothing, so they stay open with the pods they now hold (so the first plan
    // goes as far as later passes would; the nodes of the pass are all tainted before any pod is
    // evicted, so pods still move once, and the kube-scheduler check moves only the pods its world has
    // on them).
    const stays = (c: Candidate): boolean => reopenReceivers && c.pool.consolidateAfterMs === 0;
    for (const c of open) {
      if (applied.receivingNodes.has(c.node.name) && !disruptedBy.has(c.node.name) && !stays(c)) {
        note(c.node.name, `receives pods from decision ${index + 1} of this pass, so it is left alone until they settle`);
      }
    }
    let podsNow: Map<string, Pod[]> | undefined;
    open = open
      .filter((c) => !disruptedBy.has(c.node.name) && (!applied.receivingNodes.has(c.node.name) || stays(c)))
      .map((c) => {
        if (!applied.receivingNodes.has(c.node.name)) return c;
        podsNow ??= podsByNode(cluster);
        const pods = (podsNow.get(c.node.name) ?? []).filter(isReschedulable);
        return { ...c, pods, disruptionCost: nodeDisruptionCost(c.node, pods, c.pool, input.nowMs) };
      });
    simulator = undefined; // the next simulation sees the cluster as this decision leaves it
  };

  const cut = new Map<string, string>();
  let cutLaunching: RoomyRetry | undefined;
  // How many moves of the plan, in order, a check of them together already kept as they are.
  let checkedTogether = 0;
  /**
   * The moves were checked one by one, each with only its own replacement there; the actuator starts
   * them all at once, and their new nodes join in no order the plan controls. Place the plan again as a
   * whole under the orders it may be carried out in, and cut what would leave a pod Pending
   * (concurrentCheck.ts): the plan keeps its longest prefix that binds every pod in every order.
   * True when it cut something.
   */
  const checkTogether = (): boolean => {
    if (!kubeWorld || moves.length === checkedTogether || !moves.some((m) => m.proposal.candidates.some((c) => c.pods.length > 0))) return false;
    const verdict = keepConcurrentlySafe(checkContext, input.cluster, moves, checkedTogether);
    // (A round cuts once: a real pass checks at its end, a projected wave stops at its first cut.)
    const launching = [...verdict.cut].filter(([index]) => decisions[index]!.replacements.length > 0);
    if (launching.length > 0) {
      // The largest pod of the whole plan: any command's pods may be drawn to a cut move's new node.
      const mix = demandMix(moves.flatMap((m) => m.proposal.candidates.flatMap((c) => c.pods)));
      const nodes = new Map(launching.flatMap(([index, reason]) => decisions[index]!.nodes.map((name) => [name, reason] as const)));
      cutLaunching = { nodes, cpuMillis: mix.largestCpuMillis, memoryBytes: mix.largestMemoryBytes };
    }
    for (const [index, reason] of verdict.cut) {
      for (const name of decisions[index]!.nodes) {
        disruptedBy.delete(name);
        const text = `not taken: ${reason}; looked at again next pass`;
        note(name, text);
        cut.set(name, text);
      }
    }
    decisions = decisions.slice(0, verdict.kept);
    moves.length = verdict.kept;
    checkedTogether = verdict.kept;
    return verdict.cut.size > 0;
  };

  // A projected wave (a work limit) checks its plan together as it goes, at its 2nd, 4th, 8th...
  // decision (a first decision alone passed the same orders in its own check): once a decision is cut,
  // every later one is cut with it (the plan keeps a prefix), so deciding on would spend the wave's
  // limit on decisions it throws away (at 5,000 nodes a wave made two merges and then 40 single-node
  // deletes, each evicting before the merges' pods land, and kept the two merges). The doubling keeps
  // the checks to about twice the cost of the last. A real pass checks once, at the end, and decides
  // again with the cut nodes held back.
  const projected = input.workLimit !== undefined;
  const overWorkLimit = () => projected && workUnits(work) > input.workLimit!;
  decide: for (const method of methods) {
    if (method.lastResort && decisions.length > 0) continue;
    for (;;) {
      if (overWorkLimit()) break decide;
      const view: PassView = {
        nowMs: input.nowMs,
        gates: input.gates,
        cluster,
        catalog: input.catalog,
        simulator: planningSimulator,
        ledger,
        candidates: open,
        note,
        examine: (names) => names.forEach((name) => examined.add(name)),
        found: (names) => names.forEach((name) => worthMoving.add(name)),
        replacementBound,
        maxNodesPerCommand,
        schedulerCheck: (proposal) => {
          if (!kubeWorld) return undefined;
          // A move that launches nodes is checked on a simulation built for the cluster it leaves (the
          // whole cluster again): a pass pays for a bounded number of those; later such moves wait.
          if (proposal.replacements.length > 0 && method.lastResort) {
            // The last resort's checks are its own (MAX_LAST_RESORT_CHECKS).
            if (lastResortChecks >= MAX_LAST_RESORT_CHECKS) return `not checked against kube-scheduler's placement: this pass already checked ${lastResortChecks} merges of two nodes; looked at again next pass`;
            lastResortChecks += 1;
          } else if (proposal.replacements.length > 0) {
            const refused = launchesRefused();
            if (refused !== undefined) return refused;
            rebuiltChecks += 1;
          }
          return kubeWorld.check(proposal);
        },
        launchesRefused,
        ...(roomy ? { roomyRetry: roomy } : {}),
        ...(balancedTotals.size > 0 ? { balancedTotals, rejectMove } : {}),
      };
      const proposal = method.next(view);
      if (!proposal) break;
      commit(proposal);
      if (projected && moves.length >= 2 && isPowerOfTwo(moves.length) && checkTogether()) break decide;
    }
  }

  checkTogether();

  return { decisions, verdicts, notes, disruptedBy, evaluated, examined, worthMoving, rejectedMoves: [...rejected.values()], moves, work, cut, ...(cutLaunching ? { cutLaunching } : {}) };
}

const isPowerOfTwo = (n: number): boolean => n > 0 && (n & (n - 1)) === 0;

function toDecision(proposal: Proposal, names: readonly string[], archOf: ReadonlyMap<string, string>): Decision {
  const nodes = proposal.candidates.map((c) => c.node.name);
  const currentPricePerHour = proposal.candidates.reduce((sum, c) => sum + (c.pricePerHour ?? 0), 0);
  const replacementPricePerHour = proposal.replacements.reduce((sum, r) => sum + r.pricePerHour, 0);
  const evicted = proposal.candidates.flatMap((c) => c.pods);
  const podDestinations: Record<string, string> = {};
  for (const placement of proposal.simulation?.placements ?? []) {
    podDestinations[podKey(placement.pod)] = destinationName(placement.nodeName, names);
  }
  const count = proposal.replacements.length;
  const action = count > 0 ? 'replace' : 'delete';
  // A node of unknown price saves an unknown amount: null, never a made-up $0 (it is never replaced, so
  // this only happens for deletions).
  const priceKnown = proposal.candidates.every((c) => c.pricePerHour !== undefined);
  const savingsPerHour = priceKnown ? roundMoney(currentPricePerHour - replacementPricePerHour) : null;
  const first = proposal.replacements[0];
  const sentence =
    count > 1
      ? `repack ${nodes.join(', ')} (${dollars(currentPricePerHour)}) into ${count} new nodes (${proposal.replacements
          .map((r) => `${r.capacityType} ${r.instanceTypes[0]}`)
          .join(' + ')} or similar, ${dollars(replacementPricePerHour)}), moving ${evicted.length} pod(s)`
      : first
        ? `replace ${nodes.join(', ')} (${dollars(currentPricePerHour)}) with one ${first.capacityType} ${first.instanceTypes[0]} or similar (${dollars(replacementPricePerHour)}), moving ${evicted.length} pod(s)`
        : proposal.method === 'emptiness'
          ? `delete empty node(s) ${nodes.join(', ')}`
          : `delete ${nodes.join(', ')}; ${evicted.length} pod(s) fit on other nodes`;
  const cap = proposal.cappedAt;
  const arch = architectureChange(
    proposal.candidates.map((c) => c.node),
    proposal.replacements,
    archOf,
  );
  const clauses = [sentence, ...(arch ? [architectureSentence(arch)] : []), ...(cap ? [capSentence(cap)] : [])];
  const summary = clauses.join('; ');
  return {
    method: proposal.method,
    reason: proposal.reason,
    action,
    nodes,
    replacements: proposal.replacements,
    currentPricePerHour: priceKnown ? roundMoney(currentPricePerHour) : null,
    replacementPricePerHour: roundMoney(replacementPricePerHour),
    savingsPerHour,
    disruptionCost: roundCost(proposal.candidates.reduce((sum, c) => sum + c.disruptionCost, 0)),
    evictedPods: evicted.map(podKey),
    podDestinations,
    summary,
    ...(proposal.move ? { move: proposal.move } : {}),
    ...(cap ? { cappedAt: cap } : {}),
    ...(arch ? { architectureChange: arch } : {}),
    ...(proposal.scores ? { scores: proposal.scores } : {}),
  };
}
