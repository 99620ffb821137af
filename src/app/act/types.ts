// The executor's dependencies, options and report (re-exported by executeCommands.ts).
import type { Node, NodePool } from '../../core/model/types.ts';
import type { Decision } from '../../core/plan.ts';
import type { InstanceLauncher, NodeClaimApi, NodeOperations } from '../../core/ports/actuator.ts';
import type { ProveWorld } from './proveLive.ts';
import type { StateStore } from '../../core/state/ports.ts';
import type { CommandStep, DisruptionMethod, LaunchedReplacement } from '../../core/state/types.ts';

export interface ActDeps {
  readonly store: StateStore;
  readonly nodes: NodeOperations;
  /** The `ec2` actuator's launches and terminations. */
  readonly instances: InstanceLauncher;
  /** The `karpenter` actuator's NodeClaims; absent where Karpenter is not served (its pools cannot be acted on). */
  readonly nodeClaims?: NodeClaimApi;
  /**
   * The live cluster (read now), the NodePools and the catalog: the proof before a command's first
   * eviction places the old nodes' pods on it.
   */
  readonly readWorld: () => Promise<ProveWorld>;
  /** The clock, epoch ms. */
  readonly now: () => number;
  /** Milliseconds before the Lambda is stopped (`context.getRemainingTimeInMillis`). */
  readonly remainingMs: () => number;
  /** Waits between polls (replacement Ready, pods leaving). Default: a timer. Tests advance a fake clock. */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * Told when the executor disrupted something (tainted, evicted, terminated), to start the
   * stabilization window (`ClusterState.lastActionAt`). Called at the first action of an invocation and
   * once more at its end if later actions followed. See `recordActionInStore`.
   */
  readonly onAction?: (nowMs: number) => Promise<void>;
  /** The NodePools, for commands resumed without a pass result (a replacement's launch settings). */
  readonly loadNodePools?: () => Promise<readonly NodePool[]>;
  /** Extends the pass lease between polling rounds; false (lost) stops the executor. */
  readonly renewLease?: () => Promise<boolean>;
  /**
   * New command ids. Default: derived from the decision, its nodes' uids and the plan time, so two
   * invocations that start the same decision race for the same record and only one wins.
   */
  readonly newCommandId?: () => string;
  /** Told when a command for one of the pass's decisions has been started (the node(s) are being disrupted). */
  readonly onCommandStarted?: (started: CommandStarted) => void;
}

export interface CommandStarted {
  readonly commandId: string;
  readonly decision: Decision;
  /** The decision's nodes as the pass saw them, in `decision.nodes` order. */
  readonly nodes: readonly (Node | undefined)[];
}

export interface ActOptions {
  /** Stop starting new work when the Lambda has less than this left. Default 30 s. */
  readonly marginMs?: number;
  /** A replacement not Ready this long after its launch is rolled back. Default 10 min. */
  readonly replacementReadyTimeoutMs?: number;
  /** Wait between polling rounds. Default 10 s. */
  readonly pollIntervalMs?: number;
  /** The most one invocation waits (sleeps) in total before leaving the rest to the next pass. Default 5 min. */
  readonly maxWaitMs?: number;
  /**
   * A drain (or a rollback's drain of the replacement) that makes no progress this long is given up:
   * the old nodes are untainted and uncordoned and the command ends `abandoned`. Default 1 h.
   */
  readonly drainTimeoutMs?: number;
  /** Renew the pass lease when it was last renewed this long ago (checked before every step). Default 30 s. */
  readonly leaseRenewEveryMs?: number;
  /**
   * The most a command waits, before its first eviction, for kube-scheduler to place the pods evicted
   * before it and the pending pods it has room for (proveLive.ts). Default 2 min.
   */
  readonly settleTimeoutMs?: number;
}

export type ResolvedActOptions = Required<ActOptions>;

export const DEFAULT_ACT_OPTIONS: ResolvedActOptions = {
  marginMs: 30_000,
  replacementReadyTimeoutMs: 10 * 60_000,
  pollIntervalMs: 10_000,
  maxWaitMs: 5 * 60_000,
  drainTimeoutMs: 60 * 60_000,
  leaseRenewEveryMs: 30_000,
  settleTimeoutMs: 2 * 60_000,
};

/** Why a command stopped short of a final step in this invocation. */
export type StopReason = 'time' | 'conflict' | 'error' | 'lease';

export interface CommandReport {
  readonly id: string;
  readonly nodes: readonly string[];
  readonly method: DisruptionMethod;
  readonly action: 'delete' | 'replace';
  /** The step the command was at when this invocation picked it up; `new` when it created it. */
  readonly from: CommandStep | 'new';
  /** The step reached (as stored). */
  readonly step: CommandStep;
  /** Pods evicted by this invocation. */
  readonly evicted: number;
  /** Pods a PodDisruptionBudget refused in the last eviction round. */
  readonly blocked: number;
  /** Pods still keeping an old node alive after the last round. */
  readonly remainingPods: number;
  /** The first replacement's instance and Node (see `replacements` for all of them). */
  readonly launchedInstanceId?: string;
  readonly replacementNodeName?: string;
  /** Every replacement asked for: instance id or NodeClaim name, and the Node once initialized. */
  readonly replacements?: readonly LaunchedReplacement[];
  /** Instances of old nodes this invocation terminated. */
  readonly terminatedInstances: readonly string[];
  /**
   * Still waiting (for the next poll or pass): on the replacement to be Ready, on pods to leave, or
   * (before the first eviction) on kube-scheduler to place pods evicted or pending before.
   */
  readonly waitingFor?: 'replacement' | 'pods' | 'scheduler';
  /** Set when the command was rolled back or abandoned in this invocation: why. */
  readonly endedBecause?: string;
  readonly stoppedBecause?: StopReason;
  /** Errors met by this invocation. */
  readonly errors: readonly string[];
}

export interface SkippedDecision {
  /** Index into the plan's decisions. */
  readonly decision: number;
  readonly nodes: readonly string[];
  readonly why: string;
}

export interface ExecutionReport {
  readonly commands: readonly CommandReport[];
  /** Decisions not started (the cluster moved on since the plan, or they cannot be carried out). */
  readonly skipped: readonly SkippedDecision[];
  /** Errors not tied to one command (listing commands, recording the action time, the lease). */
  readonly errors: readonly string[];
  /** Nodes whose taint (left by a command that no longer runs) this invocation removed. */
  readonly cleanedTaints?: readonly string[];
}
