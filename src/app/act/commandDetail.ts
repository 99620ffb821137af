// What the executor keeps in a command's `detail` between invocations. `DisruptionCommand` has fixed
// fields for the step and the launched instance; everything else a resumed command needs (the
// replacement's pool, when it was launched, the old nodes' instance ids, which events were already
// sent) and what an operator wants to see (progress, the last errors) travels here, as one JSON
// object. JSON rather than prose: it must be read back exactly, and it is still readable in the
// DynamoDB console or the state file.
//
// Events are deduplicated through `events`: a short hash of node + reason + message per event sent.
// Kept in the command (not in memory) so that a blocked eviction retried by every pass for an hour
// produces one `DisruptionBlocked` event, not one per pass. An event sent just before a crash, before
// the command was written again, may be sent twice: harmless.
import { createHash } from 'node:crypto';

export interface CommandDetail {
  /** Older records only: the replacement's NodePool (now in each replacement's spec). */
  pool?: string;
  /** Older records only: the replacement's worst-case price, $/hour (now in each replacement's spec). */
  worstPricePerHour?: number;
  /**
   * The taint this command puts on the nodes it drains. Absent in records of older builds, which used
   * Karpenter's `karpenter.sh/disrupted`.
   */
  taintKey?: string;
  /** Old node -> how it is retired (`ec2`: terminate the instance; `karpenter`: delete its NodeClaim). */
  retireVia?: Record<string, 'ec2' | 'karpenter'>;
  /** Old node -> the name of its NodeClaim (karpenter), found when the command started. */
  claims?: Record<string, string>;
  /** Replacement index -> the summed requests of the pods planned onto it (a NodeClaim asks for them). */
  requests?: Record<string, Record<string, number>>;
  /** The pods of the old nodes were placed on the live cluster before the first eviction. */
  proven?: boolean;
  /** When (command's clock) the command first waited, before its first eviction, for pods to be placed. */
  settlingSince?: number;
  /**
   * Commands of the same plan whose replacements this command's pods are planned onto: until each has
   * drained into its replacements (or ended), this command evicts nothing; its proof would find the room
   * the plan counted on missing, or pods evicted now would take it first.
   */
  awaits?: string[];
  /** Old node -> EC2 instance id, read from providerID when the command was decided. */
  instances?: Record<string, string>;
  /**
   * Old node -> Node metadata.uid when the command was decided. Every step acts on a node only while
   * both its uid and its instance still match: EKS names nodes after their IP, which a new machine
   * may get while the command runs.
   */
  uids?: Record<string, string>;
  /** Old nodes found deleted, or replaced by another machine under the same name: left alone. */
  gone?: string[];
  /** Last time (command's clock) the drain made progress (a pod evicted or gone): a drain stuck longer is given up. */
  progressAt?: number;
  /** Why the command is being rolled back (the `rollingBack` step). */
  rollbackWhy?: string;
  /** Old nodes that were already cordoned before the command: a rollback leaves them cordoned. */
  cordonedBefore?: string[];
  /** When the replacement was launched, on the command's clock: the Ready timeout counts from here. */
  launchedAt?: number;
  /**
   * The command's clock (commandRunner.ts `clock`): where it stands, and the wall-clock time it was last
   * advanced at. Absent in older records: the clock starts at `updatedAt`.
   */
  clockAt?: number;
  clockSeenAt?: number;
  /** Pods evicted so far (all invocations). */
  evicted?: number;
  /** `namespace/name` of pods a PodDisruptionBudget refused in the last round. */
  blocked?: string[];
  /** Some of the pods still on the old nodes after the last round. */
  waitingFor?: string[];
  /** Old nodes whose instance was terminated and Node object deleted. */
  terminated?: string[];
  /** Hashes of events already sent (deduplication). */
  events?: string[];
  /** The last errors, newest last. */
  errors?: string[];
  /** A sentence for operators: what happened last. */
  note?: string;
}

const MAX_ERRORS = 5;
const MAX_EVENTS = 100;
const MAX_LISTED_PODS = 10;

/** The detail of a stored command; a non-JSON text (written by hand or by an older build) becomes the note. */
export function parseDetail(text: string | undefined): CommandDetail {
  if (text === undefined || text === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as CommandDetail;
  } catch {
    // fall through: keep it as a note
  }
  return { note: text };
}

export function formatDetail(detail: CommandDetail): string {
  return JSON.stringify(detail);
}

export function addError(detail: CommandDetail, message: string): void {
  detail.errors = [...(detail.errors ?? []), message].slice(-MAX_ERRORS);
}

export function listPods(keys: readonly string[]): string[] {
  return keys.slice(0, MAX_LISTED_PODS);
}

export function eventKey(nodeName: string, reason: string, message: string): string {
  return createHash('sha256').update(`${nodeName}\u0000${reason}\u0000${message}`).digest('hex').slice(0, 16);
}

export function eventSent(detail: CommandDetail, key: string): boolean {
  return (detail.events ?? []).includes(key);
}

/** Remembers an event as sent; the oldest are forgotten past a cap (the record must stay small). */
export function rememberEvent(detail: CommandDetail, key: string): void {
  detail.events = [...(detail.events ?? []), key].slice(-MAX_EVENTS);
}
