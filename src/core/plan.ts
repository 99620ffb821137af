// The plan: what one pass would do and why (CONTRACT section 5). The CLI prints it; the Lambda returns it
// from a dry run and executes its decisions otherwise.
import type { CapacityType, DisruptionReason } from './model/types.ts';

export type ConsolidationMethodName = 'emptiness' | 'single-node' | 'multi-node';

export interface PlannedReplacement {
  /** Instance types the launch may use, cheapest first. */
  readonly instanceTypes: readonly string[];
  readonly capacityType: CapacityType;
  readonly zones: readonly string[];
  /** Price of the cheapest allowed offering, $/hour. */
  readonly pricePerHour: number;
  /** Extension: the pool the replacement is launched from. */
  readonly nodePool: string;
  /** Extension: the highest price any allowed offering could cost, $/hour (what savings were checked against). */
  readonly worstPricePerHour: number;
}

export interface Decision {
  readonly method: ConsolidationMethodName;
  readonly reason: DisruptionReason;
  readonly action: 'delete' | 'replace';
  readonly nodes: readonly string[];
  readonly replacements: readonly PlannedReplacement[];
  readonly currentPricePerHour: number;
  readonly replacementPricePerHour: number;
  readonly savingsPerHour: number;
  readonly disruptionCost: number;
  /** `namespace/name` of every pod that would be evicted. */
  readonly evictedPods: readonly string[];
  /** Extension: where each evicted pod is expected to land (`node` or `replacement`). */
  readonly podDestinations?: Readonly<Record<string, string>>;
  /** Extension: a sentence a person can read. */
  readonly summary?: string;
  /** Extension: set for a move Karpenter's methods cannot make (issue 11): m nodes into up to n new ones. */
  readonly move?: 'm-to-n';
  /**
   * Extension: why the actuator will not carry this decision out (it is shown, not acted on), e.g. a
   * move with more than one replacement, which one command cannot launch safely.
   */
  readonly dryRunOnly?: string;
}

export interface PlanNode {
  readonly name: string;
  readonly nodePool: string;
  readonly candidate: boolean;
  /** Every reason it was not a candidate or, for a candidate, why it was not consolidated. */
  readonly reasons: readonly string[];
  /** Extension: index into `decisions` when the node is disrupted by the plan. */
  readonly decision?: number;
  /** Extension: price of the node, $/hour, when known. */
  readonly pricePerHour?: number;
  /** Extension: disruption cost (seed 003). */
  readonly disruptionCost?: number;
  readonly instanceType?: string;
  readonly capacityType?: CapacityType;
  readonly zone?: string;
}

/**
 * Extension (issue 11): the plan's end cost against a lower bound no plan can beat (an LP over the
 * offerings the pools allow, untouchable nodes kept), and what keeps nodes where they are.
 */
export interface PlanEfficiency {
  /** Priced nodes now, $/hour. */
  readonly startCostPerHour: number;
  /** After every decision of the plan (planned-only ones included), $/hour. */
  readonly endCostPerHour: number;
  /** No plan can end below this, $/hour; null when no allowed capacity can cover the pods. */
  readonly lowerBoundPerHour: number | null;
  /** endCostPerHour / lowerBoundPerHour (1.000 is the best possible). */
  readonly ratio: number | null;
  readonly leftPerHour: number | null;
  /** Nodes no plan may touch (part of the bound). */
  readonly lockedCostPerHour: number;
  /** Savings in decisions the actuator will not carry out (`dryRunOnly`). */
  readonly plannedOnlyPerHour: number;
  /** Nodes kept, by cause (pdb, doNotDisrupt, budget, threshold, kubeScheduler, consolidateAfter, ...). */
  readonly heldBack: Readonly<Record<string, { readonly nodes: number; readonly pricePerHour: number }>>;
}

export interface Plan {
  readonly dryRun: boolean;
  readonly evaluatedAt: string;
  readonly decisions: readonly Decision[];
  readonly nodes: readonly PlanNode[];
  /** Extension: pass-level notes (stabilization hold, skipped search, catalog warnings). */
  readonly notes?: readonly string[];
  /** Extension: totals for a person. */
  readonly summary?: {
    readonly savingsPerHour: number;
    readonly savingsPerMonth: number;
    readonly nodesDisrupted: number;
    readonly podsEvicted: number;
  };
  /** Extension: see PlanEfficiency. */
  readonly efficiency?: PlanEfficiency;
}

/** 730 hours: the average month AWS uses for monthly prices. */
export const HOURS_PER_MONTH = 730;
