// The cloud side of a command, in the command's words: replacements are launched, become initialized
// (ready to take pods), or fail; old nodes are retired once drained. Two implementations, one per
// actuator, so the command's state machine (commandRunner.ts) never asks which one it drives:
//   ec2.ts        EC2 Fleet launches from the pool's launch template; old instances terminated directly;
//   karpenter.ts  Karpenter NodeClaims built from the NodePool; old nodes leave by deleting their
//                 NodeClaims, so Karpenter's termination finalizer terminates the instance.
import type { Node, NodePool } from '../../../core/model/types.ts';
import type { ActuatorKind } from '../../../core/ports/actuator.ts';
import type { PlannedReplacement } from '../../../core/plan.ts';
import type { LaunchedReplacement } from '../../../core/state/types.ts';

export interface ReplacementLaunch {
  readonly commandId: string;
  /** Position of the replacement in its command (idempotency is per command and index). */
  readonly index: number;
  readonly nodePool: NodePool;
  readonly replacement: PlannedReplacement;
  /** Summed requests of the pods it is meant to hold, model units. */
  readonly requests: Readonly<Record<string, number>>;
}

export interface Launched {
  /** Instance id (ec2) or NodeClaim name (karpenter). */
  readonly ref: string;
  readonly instanceId?: string;
  /** An earlier attempt had already launched it. */
  readonly reused: boolean;
  /** For the command's note: what was launched. */
  readonly description: string;
}

/**
 * - `pending`: asked for, not usable yet (launching, or registered and initializing);
 * - `initialized`: registered and ready to take pods (`node` is its Node as the API has it now);
 * - `failed`: it will never be usable (launch failed, instance gone, NodeClaim deleted); `node` when
 *   a Node registered for it, whose pods a rollback must move first.
 */
export type ReplacementStatus =
  | { readonly state: 'pending'; readonly instanceId?: string; readonly node?: Node }
  | { readonly state: 'initialized'; readonly node: Node; readonly instanceId?: string }
  | { readonly state: 'failed'; readonly why: string; readonly node?: Node };

/** An old node as the command recorded it when it started. */
export interface OldNode {
  readonly name: string;
  readonly uid?: string;
  readonly instanceId?: string;
  /** What `prepareRetire` returned (the NodeClaim's name, for karpenter). */
  readonly handle?: string;
}

export interface Capacity {
  readonly kind: ActuatorKind;
  /** Throws `LaunchError` (capacity / configuration: roll back; api: try again later). */
  launch(request: ReplacementLaunch): Promise<Launched>;
  /** A replacement launched for (command, index) whose answer was lost, if any. */
  find(commandId: string, index: number): Promise<{ readonly ref: string; readonly instanceId?: string } | undefined>;
  status(launched: LaunchedReplacement): Promise<ReplacementStatus>;
  /** Removes a replacement a rollback gives up (its Node, if any, already drained). */
  remove(launched: LaunchedReplacement, node: Node | undefined): Promise<void>;
  /** Checked when a command starts: how this node will be retired, or why it cannot be. */
  prepareRetire(node: Node): Promise<{ readonly handle?: string } | { readonly refused: string }>;
  /** Retires a drained old node; true when this call started it (false: it was already gone). */
  retire(node: OldNode): Promise<boolean>;
  /** After retirement: anything left to clean (a Node object that came back). */
  afterRetire(node: OldNode): Promise<void>;
}

/** The idempotency key of one replacement: the command id for the first (as older builds did), then `#<index>`. */
export function launchKey(commandId: string, index: number): string {
  return index === 0 ? commandId : `${commandId}#${index}`;
}
