// The plan: what one pass would do and why (docs/file-formats.md, "The plan"). The CLI prints it; the
// Lambda returns it from a dry run and executes its decisions otherwise.
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

/**
 * Extension: how one source pool of a move scored under `consolidationPolicy: Balanced`
 * (core/disruption/balancedScore.ts). Fractions are of the pool's totals at the start of the pass.
 */
export interface ConsolidationScore {
  readonly nodePool: string;
  /** The tolerance: approved when score >= 1/k. */
  readonly k: number;
  readonly threshold: number;
  /** The pool's share of the move's net savings, $/hour. */
  readonly savingsPerHour: number;
  /** Disruption of the pool's moved nodes: 1 per node plus each moved pod's eviction cost (negatives as 0). */
  readonly disruptionCost: number;
  /** Price of every node of the pool, $/hour. */
  readonly poolCostPerHour: number;
  readonly poolDisruptionCost: number;
  readonly savingsFraction: number;
  readonly disruptionFraction: number;
  /** savingsFraction / disruptionFraction; 0 when nothing is saved. */
  readonly score: number;
  readonly approved: boolean;
}

/** Extension: a move a Balanced pool's score turned down. */
export interface RejectedMove {
  readonly method: ConsolidationMethodName;
  /** Set when the move was an m-to-n repack (see Decision.move). */
  readonly move?: 'm-to-n';
  readonly nodes: readonly string[];
  /** Absent when the move was refused on its best case (`bound`) before a replacement was sought. */
  readonly action?: 'delete' | 'replace';
  readonly savingsPerHour: number;
  /** True when scored as an outright delete before simulating: no move of these nodes could pass. */
  readonly bound: boolean;
  readonly scores: readonly ConsolidationScore[];
}

/** Extension: how `MAX_NODES_PER_COMMAND` cut a decision (see Decision.cappedAt). */
export interface DecisionCap {
  readonly maxNodes: number;
  readonly eligible: number;
}

export interface Decision {
  readonly method: ConsolidationMethodName;
  readonly reason: DisruptionReason;
  readonly action: 'delete' | 'replace';
  readonly nodes: readonly string[];
  readonly replacements: readonly PlannedReplacement[];
  /** Null when the price of a node in `nodes` is unknown (never shown as $0). */
  readonly currentPricePerHour: number | null;
  readonly replacementPricePerHour: number;
  /** Null when `currentPricePerHour` is. */
  readonly savingsPerHour: number | null;
  readonly disruptionCost: number;
  /** `namespace/name` of every pod that would be evicted. */
  readonly evictedPods: readonly string[];
  /**
   * Extension: where the plan places each evicted pod (a node or a `replacement-N`): what the
   * replacements are sized for and what the move was checked with.
   */
  readonly podDestinations?: Readonly<Record<string, string>>;
  /**
   * Extension: where kube-scheduler is expected to put each evicted pod when the pass is carried out
   * (every command in flight, pods recreated and bound one by one to the least allocated node that
   * takes them); the projection's model, so absent when the projection is off. A pod that would find
   * no node is absent.
   */
  readonly expectedDestinations?: Readonly<Record<string, string>>;
  /** Extension: a sentence a person can read. */
  readonly summary?: string;
  /** Extension: set for a move Karpenter's methods cannot make: m nodes into up to n new ones. */
  readonly move?: 'm-to-n';
  /**
   * Extension: set when `MAX_NODES_PER_COMMAND` cut this move: `eligible` nodes were open to it (within
   * the budgets) and it takes `maxNodes` of them; the rest are left to later decisions or passes.
   */
  readonly cappedAt?: DecisionCap;
  /** Extension: the Balanced scores that approved the move (absent when no source pool is Balanced). */
  readonly scores?: readonly ConsolidationScore[];
  /**
   * Extension: set when the replacement may run the pods on another CPU architecture than the removed
   * nodes' `kubernetes.io/arch` (amd64 to arm64 or the reverse); `certain` when every allowed type does.
   */
  readonly architectureChange?: { readonly from: readonly string[]; readonly to: readonly string[]; readonly certain: boolean };
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
  /** Extension: disruption cost (Karpenter's savings-threshold design). */
  readonly disruptionCost?: number;
  readonly instanceType?: string;
  readonly capacityType?: CapacityType;
  readonly zone?: string;
  /** Extension: what the node's pods request against what it can hold (kubectl describe node's view). */
  readonly usage?: NodeUsage;
}

/**
 * Requests of the pods bound to a node (not finished: Succeeded and Failed pods hold nothing),
 * daemonset and mirror pods included, against the node's allocatable. cpu in millicores, memory in bytes.
 */
export interface NodeUsage {
  readonly cpuRequestedMillis: number;
  readonly cpuAllocatableMillis: number;
  readonly memoryRequestedBytes: number;
  readonly memoryAllocatableBytes: number;
  readonly pods: number;
  readonly podsAllocatable: number;
}

/**
 * Extension (docs/quality.md, "The efficiency line"): the plan's end cost against a lower bound no plan
 * can beat (an LP over the offerings the pools allow, untouchable nodes kept), and what keeps nodes
 * where they are.
 */
export interface PlanEfficiency {
  /** Priced nodes now, $/hour. */
  readonly startCostPerHour: number;
  /** After every decision of the plan, $/hour. */
  readonly endCostPerHour: number;
  /**
   * No plan can end below this, $/hour; null when no allowed capacity can cover the pods, or when a node
   * has no price (`unpricedNodes`: start, end and bound all leave it out, so they compare nothing).
   */
  readonly lowerBoundPerHour: number | null;
  /** endCostPerHour / lowerBoundPerHour (1.000 is the best possible); null when either is no figure. */
  readonly ratio: number | null;
  /** endCostPerHour - lowerBoundPerHour: the most any better packing could still save (an upper limit, not an expectation). */
  readonly leftPerHour: number | null;
  /** Extension: nodes whose price is unknown (absent: none). */
  readonly unpricedNodes?: number;
  /** Nodes no plan may touch (part of the bound). */
  readonly lockedCostPerHour: number;
  /** Nodes kept, by cause (pdb, doNotDisrupt, budget, threshold, kubeScheduler, consolidateAfter, ...). */
  readonly heldBack: Readonly<Record<string, { readonly nodes: number; readonly pricePerHour: number }>>;
}

/**
 * Extension: what the passes after this one are expected to do once its decisions are
 * carried out (core/disruption/laterWaves.ts). Nothing here is acted on: every pass decides again from
 * the cluster it reads.
 */
/** Why a plan's projection ends: nothing more to carry out, the wave or work limit, or pods the model could not place. */
export type ProjectionStop = 'settled' | 'wave limit' | 'work limit' | 'pods would stay Pending';

export interface PlanProjection {
  /** Each later pass that would decide something: 2 is the one after this pass's plan is carried out. */
  readonly waves: readonly ProjectedWave[];
  /** Why the projection ends: `settled` (nothing more to do), or a limit (`PLAN_WAVES`). */
  readonly stoppedBecause: ProjectionStop;
  /** Saved by the later waves, $/hour; null when a later decision's savings are unknown. */
  readonly savingsPerHour: number | null;
  /** Extension: later-wave decisions whose savings are unknown (absent: none). */
  readonly unpricedDecisions?: number;
  /** Where this pass and its later waves lead: the start cost minus what they carry out, $/hour (null: no cost known). */
  readonly endCostPerHour: number | null;
  /** endCostPerHour / the plan's lower bound (efficiency), when there is one. */
  readonly ratio: number | null;
  readonly nodesDisrupted: number;
  readonly podsEvicted: number;
}

export interface ProjectedWave {
  readonly wave: number;
  /** When the projection puts it: the previous wave carried out and every consolidateAfter wait over. */
  readonly evaluatedAt: string;
  /** Null when a decision of the wave has no known savings (a node of unknown price). */
  readonly savingsPerHour: number | null;
  readonly decisions: readonly Decision[];
  /** Extension: the scheduled budget(s) that allowed no disruption before this wave, which waited for them to end. */
  readonly waitedFor?: string;
  /** Extension: nodes this wave disrupts that the plan launched earlier, and when (a launch regretted soon after). */
  readonly relaunched?: readonly { readonly node: string; readonly launchedAt: string }[];
  /** Extension: pods this wave evicts that an earlier wave (or this pass) had just moved. */
  readonly evictedAgain?: readonly string[];
}

export interface Plan {
  readonly dryRun: boolean;
  readonly evaluatedAt: string;
  readonly decisions: readonly Decision[];
  readonly nodes: readonly PlanNode[];
  /** Extension: moves that `consolidationPolicy: Balanced` scored and refused (absent when none). */
  readonly rejectedMoves?: readonly RejectedMove[];
  /** Extension: pass-level notes (stabilization hold, skipped search, catalog warnings). */
  readonly notes?: readonly string[];
  /** Extension: totals for a person. */
  readonly summary?: {
    /** Null when a decision's savings are unknown (a node of unknown price): the total is then no figure. */
    readonly savingsPerHour: number | null;
    readonly savingsPerMonth: number | null;
    /** Extension, with null savings: what the decisions of known price save, $/hour, and how many have none. */
    readonly knownSavingsPerHour?: number;
    readonly unpricedDecisions?: number;
    readonly nodesDisrupted: number;
    readonly podsEvicted: number;
    /** Nodes without a `karpenter.sh/nodepool` label: never disrupted, not in `nodes`, still receive pods. */
    readonly nodesOutsideNodePools?: number;
  };
  /** Extension: see PlanEfficiency. */
  readonly efficiency?: PlanEfficiency;
  /** Extension: see PlanProjection (absent when the projection is off). */
  readonly projection?: PlanProjection;
  /**
   * Extension: which actuator carries out each in-scope pool's decisions, and why
   * (core/disruption/actuatorChoice.ts). Absent from plans built without the setting.
   */
  readonly actuators?: Readonly<Record<string, PoolActuator>>;
}

/** Extension: the machinery that acts on one pool (see ActuatorKind in core/ports/actuator.ts). */
export interface PoolActuator {
  readonly actuator: 'karpenter' | 'ec2';
  readonly why: string;
}

/** 730 hours: the average month AWS uses for monthly prices. */
export const HOURS_PER_MONTH = 730;
