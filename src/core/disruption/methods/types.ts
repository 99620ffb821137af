// One interface for every consolidation method (the shape of Karpenter's disruption methods): a method
// looks at the pass as the earlier decisions left it and proposes at most one command at a time.
import type { FeatureGates } from '../../featureGates.ts';
import type { Cluster, DisruptionReason } from '../../model/types.ts';
import type { ConsolidationMethodName, PlannedReplacement } from '../../plan.ts';
import type { SimulationResult, Simulator } from '../../scheduling/types.ts';
import type { BudgetLedger } from '../budgets.ts';
import type { Candidate } from '../candidates.ts';

/** A command decided but not yet taken into the plan. */
export interface Proposal {
  readonly method: ConsolidationMethodName;
  readonly reason: DisruptionReason;
  readonly candidates: readonly Candidate[];
  /** Absent for emptiness: nothing moves. */
  readonly simulation?: SimulationResult;
  readonly replacement?: PlannedReplacement;
  readonly savingsPerHour: number;
}

export interface PassView {
  readonly nowMs: number;
  readonly gates: FeatureGates;
  /** The cluster as the earlier decisions of this pass leave it. */
  readonly cluster: Cluster;
  readonly simulator: Simulator;
  readonly ledger: BudgetLedger;
  /** Candidates still open: not disrupted, not receiving pods from an earlier decision. Cheapest first. */
  readonly candidates: readonly Candidate[];
  /** Records why a candidate was considered and not consolidated (latest reason per method wins). */
  note(nodeName: string, reason: string): void;
  /** Records that these candidates were weighed on their merits (not merely skipped for budget). */
  examine(nodeNames: readonly string[]): void;
}

export interface ConsolidationMethod {
  readonly name: ConsolidationMethodName;
  /** The next command worth taking, or undefined when this method has nothing more to offer. */
  next(view: PassView): Proposal | undefined;
}
