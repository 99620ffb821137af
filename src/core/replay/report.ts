// The replay's result (`--format json`): one entry per NodePool config, each with a summary row, one
// row per pass and the decisions timeline. Money: `...PerHour` in $/hour, `...Dollars` in dollars.

export const REPLAY_REPORT_FORMAT = 'eks-consolidator/replay';

export interface ReplayPassRow {
  readonly pass: number;
  readonly at: string;
  /** Price per hour of every node running or launching when the pass ran. */
  readonly costPerHour: number;
  readonly nodes: number;
  /** Workload pods (not daemonset or mirror pods, not finished), bound or pending. */
  readonly pods: number;
  readonly pendingPods: number;
  /** Pods the pass's decisions evict. */
  readonly evictions: number;
  readonly decisions: number;
}

export interface ReplayDecisionRow {
  readonly pass: number;
  readonly at: string;
  readonly method: string;
  readonly action: 'delete' | 'replace';
  readonly nodes: readonly string[];
  /** Instance type launched in place of the nodes (cheapest allowed), if any. */
  readonly replacement?: string;
  readonly savingsPerHour: number;
  readonly podsEvicted: number;
  /** How many of the nodes had been launched less than 30 minutes before. */
  readonly regret: number;
}

export interface ReplaySummary {
  readonly startCostPerHour: number;
  readonly endCostPerHour: number;
  /** Dollars spent over the replay divided by its length in hours. */
  readonly averageCostPerHour: number;
  readonly totalCostDollars: number;
  /** Dollars saved against the same timeline with no consolidation at all (the baseline). */
  readonly savingsDollars: number;
  readonly podsEvicted: number;
  readonly nodesDisrupted: number;
  readonly nodesReplaced: number;
  /** Nodes disrupted again within 30 minutes of their launch. */
  readonly regret: number;
  readonly pendingPodMinutes: number;
  readonly decisions: number;
  readonly nodesLaunchedForPending: number;
}

export interface ReplayConfigResult {
  /** The config's name (its file name, or `default`). */
  readonly name: string;
  readonly summary: ReplaySummary;
  readonly passes: readonly ReplayPassRow[];
  readonly decisions: readonly ReplayDecisionRow[];
}

export interface ReplayReport {
  readonly format: typeof REPLAY_REPORT_FORMAT;
  readonly version: 1;
  readonly startedAt: string;
  readonly endedAt: string;
  readonly passes: number;
  readonly intervalMs: number;
  readonly launchDelayMs: number;
  readonly scheduler: string;
  readonly churn: string;
  readonly seed: number;
  /** `synthetic` (a cluster plus --churn), `recording` (a directory of dumps) or `ledger`. */
  readonly source: 'synthetic' | 'recording' | 'ledger';
  /** The same timeline with no consolidation: what the savings are measured against. */
  readonly baseline: { readonly totalCostDollars: number; readonly averageCostPerHour: number; readonly endCostPerHour: number };
  readonly configs: readonly ReplayConfigResult[];
  readonly notes: readonly string[];
}

export const money = (dollars: number): number => Math.round(dollars * 1e4) / 1e4;
