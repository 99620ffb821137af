// The state the product keeps between passes, in the core's terms (times are epoch ms as in the model).
//
// Karpenter learns by watching (pod events, readiness transitions, its own actions). A scheduled pass
// sees only snapshots, so everything it must remember is here and is compared with the next snapshot
// (docs/how-a-pass-decides.md, "Time and state between passes"). Store adapters (a JSON file for the
// CLI, one DynamoDB table for the Lambda) persist exactly these shapes; nothing in here knows about
// either backend.

import type { CapacityType } from '../model/types.ts';
import type { ActuatorKind } from '../ports/actuator.ts';

/** How long a node record lives without being refreshed: a record whose node is gone ages out. */
export const NODE_STATE_TTL_MS = 7 * 24 * 3_600_000;

/** How long a finished (done / rolled back) disruption command is kept for inspection. */
export const FINISHED_COMMAND_RETENTION_MS = 7 * 24 * 3_600_000;

/** What the product remembers about one node. */
export interface NodeState {
  readonly name: string;
  /**
   * The node's `createdAt` when the record was written. Node names (`ip-10-0-1-7...`) are reused by EC2;
   * a record whose `nodeCreatedAt` differs from the node's is about an earlier node and is discarded.
   */
  readonly nodeCreatedAt?: number;
  /**
   * Hash of the sorted uids of the node's pods that count for pod events (see `countsForPodEvents`
   * in observe.ts): bound to the node, not daemonset, not mirror, not terminal, not terminating.
   * A difference from the previous pass's value is a pod event at the pass time.
   */
  readonly podSetFingerprint: string;
  /** How many pods the fingerprint covers (0: the node is empty for consolidation purposes). */
  readonly podCount: number;
  /**
   * The uids the fingerprint covers, sorted. A pod LEAVING counts at the pass time,
   * while an arriving pod brings its own creation/start time; only the uid list tells the two apart.
   */
  readonly podUids?: readonly string[];
  /** Latest of its pods' creation/start times, a pod-set change, or Ready when it never had a pod. */
  readonly lastPodEventAt?: number;
  /** Since when the node has had no counted pod; undefined while it has one. */
  readonly emptySince?: number;
  /** First evaluation at which the node was consolidatable since its last pod event. */
  readonly consolidatableSince?: number;
  /**
   * Karpenter's consolidationGracePeriod design: evaluated, nothing worth doing; not evaluated again
   * before this time.
   */
  readonly graceProtectedUntil?: number;
  /** Last time the pass evaluated this node as a consolidation candidate. */
  readonly lastEvaluatedAt?: number;
  /**
   * The stored version this record was read at (optimistic concurrency); 0 for a record not stored yet.
   * Stores write `version + 1` on the condition that the stored version still equals `version`.
   */
  readonly version: number;
  /** When the record may be forgotten if no pass refreshes it (epoch ms; DynamoDB TTL in seconds). */
  readonly expiresAt: number;
}

/** What the product remembers about the cluster as a whole. */
export interface ClusterState {
  /**
   * Last time a pass decided (Lambda: carried out) a disruption: starts the stabilization window
   * (Karpenter's consolidation design).
   */
  readonly lastActionAt?: number;
  /** `clusterFingerprint` of the cluster the last search ran on. */
  readonly lastFingerprint?: string;
  /**
   * The last search found nothing to do (Karpenter's consolidation design: pause examination until the
   * cluster changes).
   */
  readonly lastPassFoundNothing?: boolean;
  /** When the last real search (not skipped by `noChangeSkip`) ran. */
  readonly lastSearchAt?: number;
  /** As for `NodeState.version`. */
  readonly version: number;
}

export type DisruptionMethod = 'emptiness' | 'single-node' | 'multi-node';

/**
 * Steps of a disruption as the actuator carries it out; stored after each one so a pass that dies in the
 * middle can be resumed (or rolled back) by the next. `done`, `rolledBack` and `abandoned` are final:
 * - `rollingBack`: the replacement is being drained and removed, the old nodes given back;
 * - `abandoned`: the drain made no progress for too long (or the replacement vanished): the old nodes
 *   were given back; a replacement that already took pods stays as an ordinary node.
 */
export type CommandStep =
  | 'tainted'
  | 'launched'
  | 'replacementReady'
  | 'evicting'
  | 'terminated'
  | 'done'
  | 'rollingBack'
  | 'rolledBack'
  | 'abandoned';

export const FINAL_COMMAND_STEPS: ReadonlySet<CommandStep> = new Set(['done', 'rolledBack', 'abandoned']);

export interface ReplacementSpec {
  /** Cheapest first. */
  readonly instanceTypes: readonly string[];
  readonly capacityType: CapacityType;
  readonly zones: readonly string[];
  readonly pricePerHour: number;
  /** The pool it is launched in (records of older builds kept it in the command's detail). */
  readonly nodePool?: string;
  /** How it is launched; absent in records of older builds, which only launched through EC2. */
  readonly actuator?: ActuatorKind;
  /** The highest price any allowed offering could cost, $/hour (what the plan checked savings against). */
  readonly worstPricePerHour?: number;
}

/** A replacement a command asked for: the handle to find it again, and the Node once it registered. */
export interface LaunchedReplacement {
  /** Its position in `DisruptionCommand.replacements`. */
  readonly index: number;
  /** The EC2 instance id (`ec2`) or the NodeClaim's name (`karpenter`). */
  readonly ref: string;
  /** The EC2 instance, once known (a NodeClaim learns it when launched). */
  readonly instanceId?: string;
  /** The Node it registered as, once initialized. */
  readonly nodeName?: string;
}

/** An in-flight (or recently finished) disruption, the actuator's resumable work item. */
export interface DisruptionCommand {
  readonly id: string;
  readonly createdAt: number;
  readonly nodes: readonly string[];
  readonly method: DisruptionMethod;
  /** `Empty` | `Underutilized` | ... (the plan's `reason`). */
  readonly reason: string;
  /** Every node the command launches before it evicts anything (empty or absent for a delete). */
  readonly replacements?: readonly ReplacementSpec[];
  readonly step: CommandStep;
  /** The replacements asked for so far, by index. */
  readonly launched?: readonly LaunchedReplacement[];
  readonly updatedAt: number;
  /** As for `NodeState.version`: the version read; `putCommand` stores `version + 1`. */
  readonly version: number;
  /** Free-form, for operators (last error, eviction progress). */
  readonly detail?: string;
}

/** Node names of a command's registered replacements. */
export function replacementNodeNames(cmd: DisruptionCommand): string[] {
  return (cmd.launched ?? []).flatMap((l) => (l.nodeName === undefined ? [] : [l.nodeName]));
}

/** Everything one pass reads at its start and writes at its end. */
export interface PassState {
  readonly nodes: Readonly<Record<string, NodeState>>;
  readonly cluster: ClusterState;
  /** Read-only snapshot: commands are written one at a time with `StateStore.putCommand`. */
  readonly commands: readonly DisruptionCommand[];
}

export function emptyPassState(): PassState {
  return { nodes: {}, cluster: { version: 0 }, commands: [] };
}

/** When a stored command may be forgotten: only finished commands expire. */
export function commandExpiresAt(cmd: DisruptionCommand): number | undefined {
  return FINAL_COMMAND_STEPS.has(cmd.step) ? cmd.updatedAt + FINISHED_COMMAND_RETENTION_MS : undefined;
}

/** A held lease, as stores report it (for diagnostics). */
export interface LeaseState {
  readonly owner: string;
  /** Epoch ms after which anyone may take it. */
  readonly until: number;
}
