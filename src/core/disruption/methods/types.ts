// One interface for every consolidation method (the shape of Karpenter's disruption methods): a method
// looks at the pass as the earlier decisions left it and proposes at most one command at a time.
import type { FeatureGates } from '../../featureGates.ts';
import type { Catalog, Cluster, DisruptionReason } from '../../model/types.ts';
import type { ConsolidationMethodName, ConsolidationScore, DecisionCap, PlannedReplacement, RejectedMove } from '../../plan.ts';
import type { PoolTotals } from '../balancedScore.ts';
import type { SimulationResult, Simulator } from '../../scheduling/types.ts';
import type { BudgetLedger } from '../budgets.ts';
import type { Candidate } from '../candidates.ts';
import type { MethodName } from '../policy.ts';
import type { ReplacementBound } from '../sizeBound.ts';

/** A command decided but not yet taken into the plan. */
export interface Proposal {
  readonly method: ConsolidationMethodName;
  readonly reason: DisruptionReason;
  readonly candidates: readonly Candidate[];
  /** Absent for emptiness: nothing moves. */
  readonly simulation?: SimulationResult;
  /** One per new node, in the order of `simulation.newNodes`; empty for a delete. */
  readonly replacements: readonly PlannedReplacement[];
  readonly savingsPerHour: number;
  /** Set by the m-to-n repack, so the plan can tell its moves apart from Karpenter's. */
  readonly move?: 'm-to-n';
  /** The Balanced scores that approved it, when a source pool is Balanced. */
  readonly scores?: readonly ConsolidationScore[];
  /** Set when `PassView.maxNodesPerCommand` cut the move (more nodes were eligible within the budgets). */
  readonly cappedAt?: DecisionCap;
}

export interface PassView {
  readonly nowMs: number;
  readonly gates: FeatureGates;
  /** The cluster as the earlier decisions of this pass leave it. */
  readonly cluster: Cluster;
  /** The instance types replacements are chosen from. */
  readonly catalog: Catalog;
  readonly simulator: Simulator;
  readonly ledger: BudgetLedger;
  /** Candidates still open: not disrupted, not receiving pods from an earlier decision. Cheapest first. */
  readonly candidates: readonly Candidate[];
  /**
   * Records why a candidate was considered and not consolidated (latest reason per method wins). A note
   * with a `key` replaces the node's earlier note of the same key, so one cause reads as one sentence.
   */
  note(nodeName: string, reason: string, key?: string): void;
  /** Records that these candidates were weighed on their merits (not merely skipped for budget). */
  examine(nodeNames: readonly string[]): void;
  /**
   * Records that a move of these candidates was found worth making (it passes every check of the
   * method: it fits, it saves, the threshold and the Balanced score allow it), taken or not.
   */
  found?(nodeNames: readonly string[]): void;
  /** How large a replacement may be (null: unbounded). */
  readonly replacementBound: ReplacementBound | null;
  /** The most nodes one proposal may disrupt (MAX_NODES_PER_COMMAND). */
  readonly maxNodesPerCommand: number;
  /**
   * The last check before a method returns a proposal: would the moved pods also find room when
   * kube-scheduler places them its own way? Undefined when it holds, else the reason it does not.
   */
  schedulerCheck(proposal: Proposal): string | undefined;
  /**
   * Why a move that launches nodes would be refused unchecked now (the pass has used up its checks of
   * such moves), or undefined while they are still checked. Absent: always checked.
   */
  launchesRefused?(): string | undefined;
  /**
   * Set in a round decided again because moves that launch nodes were cut when the pass was checked as a
   * whole (concurrentCheck.ts; pass.ts decideWithHeldBack): every move that launches nodes may then only
   * put every moved pod on its new nodes, each keeping room for the largest pod the pass moves
   * (`cpuMillis`, `memoryBytes`). Absent otherwise.
   */
  readonly roomyRetry?: RoomyRetry;
  /** Totals of the `Balanced` pools at the start of the pass; absent when no pool is Balanced. */
  readonly balancedTotals?: ReadonlyMap<string, PoolTotals>;
  /** Records a move a Balanced score refused (for the plan, metrics and events). */
  rejectMove?(move: RejectedMove): void;
}

export interface ConsolidationMethod {
  readonly name: MethodName;
  /** Run only when the pass has decided nothing before it (methods/pairMerge.ts). */
  readonly lastResort?: boolean;
  /** The next command worth taking, or undefined when this method has nothing more to offer. */
  next(view: PassView): Proposal | undefined;
}

/** See PassView.roomyRetry. */
export interface RoomyRetry {
  /** The nodes of the cut moves, each with why it was cut (said again when the roomy move is not cheaper). */
  readonly nodes: ReadonlyMap<string, string>;
  readonly cpuMillis: number;
  readonly memoryBytes: number;
}
