// What the actuator needs from the outside world to carry a decision out, in the core's terms. Two
// ports: the Kubernetes side (`NodeOperations`: taint, cordon, evict, delete, events) and the cloud
// side (`InstanceLauncher`: launch, terminate, describe). Adapters answer in outcomes ("already gone",
// "refused by a PDB") rather than HTTP codes or SDK exceptions, so the executor can treat every step
// as idempotent: doing it twice gives the same answer as doing it once.
import type { Node, NodePool, Pod, Taint } from '../model/types.ts';
import type { PlannedReplacement } from '../plan.ts';

// ---------------------------------------------------------------------------------------------------
// Kubernetes

export type TaintResult = 'tainted' | 'alreadyTainted' | 'gone';
export type UntaintResult = 'untainted' | 'alreadyClean' | 'gone';
/** `blockedByPdb`: the Eviction API answered 429; try again later, never force. */
export type EvictionResult = 'evicted' | 'blockedByPdb' | 'gone';
export type DeleteResult = 'deleted' | 'gone';

export type NodeLookup =
  | { readonly exists: false }
  | {
      readonly exists: true;
      /** The Ready condition is True. */
      readonly ready: boolean;
      /** The node as the model sees it (name, providerId/instanceId, taints, unschedulable, ...). */
      readonly node: Node;
    };

export interface NodeEvent {
  readonly nodeName: string;
  /** Short CamelCase reason: `DisruptionLaunching`, `DisruptionTerminating`, `DisruptionBlocked`. */
  readonly reason: string;
  /** A sentence for a person. */
  readonly message: string;
  readonly type: 'Normal' | 'Warning';
}

/**
 * The annotation that marks a node tainted by one of our commands (value: the command id). Karpenter
 * uses the same `karpenter.sh/disrupted` taint; this tells ours apart, so that a taint whose command
 * was lost can be found and removed, and a foreign one is never touched.
 */
export const COMMAND_ANNOTATION = 'eks-consolidator.io/disruption-command';

/** Which Node object a write is meant for: a node registered again under the same name has another uid. */
export interface NodeIdentity {
  /** metadata.uid the write requires; absent: any node of that name (older commands, tests). */
  readonly uid?: string;
}

export interface TaintOptions extends NodeIdentity {
  /** Marks the node with `COMMAND_ANNOTATION` = this command id, in the same write as the taint. */
  readonly commandId?: string;
}

export interface UntaintOptions extends NodeIdentity {
  /** False: leave the node cordoned (it was cordoned before the command). Default true. */
  readonly uncordon?: boolean;
}

export interface NodeOperations {
  /**
   * Adds the taint (if missing) and cordons the node, in one write guarded by the node's uid: a node
   * with another uid is `gone` for this command and is not touched.
   */
  taintAndCordon(nodeName: string, taint: Taint, options?: TaintOptions): Promise<TaintResult>;
  /**
   * Removes every taint with `taintKey` and our `COMMAND_ANNOTATION`, and, unless `uncordon` is false,
   * uncordons the node (a rollback leaves a node cordoned when it was cordoned before the command).
   */
  untaintAndUncordon(nodeName: string, taintKey: string, options?: UntaintOptions): Promise<UntaintResult>;
  getNode(nodeName: string): Promise<NodeLookup>;
  /** The node whose providerID ends with `/<instanceId>`, if one has registered. */
  findNodeByInstanceId(instanceId: string): Promise<NodeLookup>;
  /** Every Node of the cluster as the model sees it (the sweep of what our lost commands left behind). */
  listNodes(): Promise<readonly Node[]>;
  /** Every pod bound to the node, any phase, daemonset and mirror pods included. */
  listPodsOnNode(nodeName: string): Promise<readonly Pod[]>;
  /** Through the Eviction API only. `podUid` limits the eviction to that incarnation of the pod. */
  evictPod(namespace: string, name: string, options?: { readonly podUid?: string }): Promise<EvictionResult>;
  /** Deletes the Node object; with `uid`, only that incarnation (a precondition: another uid is `gone`). */
  deleteNode(nodeName: string, options?: NodeIdentity): Promise<DeleteResult>;
  /** Records a Kubernetes Event on the node; deduplication is the caller's business. */
  createEvent(event: NodeEvent): Promise<unknown>;
}

// ---------------------------------------------------------------------------------------------------
// Cloud instances

export interface LaunchRequest {
  /** Idempotency key: a second launch with the same id returns the instance the first one started. */
  readonly commandId: string;
  /** The pool the replacement belongs to; its `launch` settings say how to launch. */
  readonly nodePool: NodePool;
  readonly replacement: PlannedReplacement;
}

export interface LaunchedInstance {
  readonly instanceId: string;
  readonly instanceType?: string;
  readonly zone?: string;
  readonly capacityType?: 'on-demand' | 'spot';
  /** True when an earlier attempt for the same command had already launched it. */
  readonly reused: boolean;
}

/** `notFound`: the cloud no longer knows the id (terminated long ago, or never existed). */
export type InstanceState = 'pending' | 'running' | 'stopping' | 'stopped' | 'shutting-down' | 'terminated' | 'notFound';

export type TerminateResult = 'terminating' | 'alreadyGone';

/** A live instance carrying our managed tag for this cluster (the sweep looks for ones nothing owns). */
export interface OurInstance {
  readonly instanceId: string;
  /** The launch's idempotency key from its command tag: `<command id>` or `<command id>#<index>`. */
  readonly launchKey?: string;
  /** EC2's LaunchTime, epoch ms. */
  readonly launchedAt?: number;
  readonly state: InstanceState;
  readonly nodePool?: string;
  readonly instanceType?: string;
  readonly zone?: string;
  readonly capacityType?: 'on-demand' | 'spot';
}

export interface TerminateOptions {
  /**
   * True: only an instance carrying our `managed` tag may be terminated (a replacement we launched);
   * anything else is refused with `TerminationRefusedError`. False: the instance of an existing node
   * being consolidated (launched by Karpenter or a node group), identified by the node's providerID.
   */
  readonly requireOurTag: boolean;
}

export interface InstanceLauncher {
  /** Starts one instance for the replacement; idempotent per `commandId`. Throws `LaunchError`. */
  launch(request: LaunchRequest): Promise<LaunchedInstance>;
  /**
   * The live (pending or running) instance a launch for this command started, if any. A rollback asks
   * when the launch's answer was lost, so that no instance is left behind.
   */
  findByCommand(commandId: string): Promise<LaunchedInstance | undefined>;
  /** Idempotent: an instance already shutting down, terminated or unknown is `alreadyGone`. */
  terminate(instanceId: string, options: TerminateOptions): Promise<TerminateResult>;
  describe(instanceId: string): Promise<InstanceState>;
  /** Every pending or running instance this product launched for this cluster (managed and cluster tags). */
  listOurs(): Promise<readonly OurInstance[]>;
}

/**
 * Why a launch failed:
 * - `capacity`: the cloud had no capacity for any allowed type and zone (ICE, spot unavailable);
 * - `configuration`: the pool's launch settings are missing or wrong (no template, no subnet in an
 *   allowed zone, template not found) — retrying will not help;
 * - `api`: the call itself failed (throttled, network, 5xx) — a later attempt may succeed.
 */
export type LaunchFailure = 'capacity' | 'configuration' | 'api';

export class LaunchError extends Error {
  override readonly name = 'LaunchError';
  constructor(
    readonly failure: LaunchFailure,
    /** One sentence, with the cloud's error codes when there were some. */
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`launch failed (${failure}): ${problem}`, options);
  }

  /** Capacity and configuration failures end the attempt; an API failure may be retried. */
  get retryable(): boolean {
    return this.failure === 'api';
  }
}

/** Termination refused: the instance does not carry the tag `requireOurTag` asked for. */
export class TerminationRefusedError extends Error {
  override readonly name = 'TerminationRefusedError';
  constructor(
    readonly instanceId: string,
    readonly problem: string,
  ) {
    super(`refused to terminate ${instanceId}: ${problem}`);
  }
}

/** A terminate or describe call failed for a reason other than the instance being gone. */
export class InstanceApiError extends Error {
  override readonly name = 'InstanceApiError';
  constructor(
    /** e.g. `ec2:TerminateInstances`. */
    readonly operation: string,
    readonly instanceId: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${operation} ${instanceId} failed: ${problem}`, options);
  }
}

// ---------------------------------------------------------------------------------------------------
// Karpenter's NodeClaims (the `karpenter` actuator)

/**
 * Which machinery carries a pool's commands out:
 * - `karpenter`: replacements are Karpenter NodeClaims built from the NodePool, and old nodes leave by
 *   deleting their NodeClaims once drained, so every node stays in Karpenter's lifecycle (interruption
 *   handling, drift, expiry, repair);
 * - `ec2`: replacements are EC2 Fleet launches from the pool's launch template, old instances are
 *   terminated directly (standalone pools with no Karpenter).
 */
export type ActuatorKind = 'karpenter' | 'ec2';

/** The annotation (value: the command id) on every NodeClaim a command created. */
export const NODECLAIM_COMMAND_ANNOTATION = 'eks-consolidator.io/command';
/** The annotation (value: the replacement's index in its command, "0", "1", ...) beside the command's. */
export const NODECLAIM_INDEX_ANNOTATION = 'eks-consolidator.io/replacement-index';

/** One condition of a NodeClaim's status, as Karpenter writes it. */
export interface NodeClaimCondition {
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason?: string;
  readonly message?: string;
}

/** A NodeClaim as the actuator needs to see it. */
export interface NodeClaimView {
  readonly name: string;
  readonly uid?: string;
  /** `karpenter.sh/nodepool` label. */
  readonly nodePool?: string;
  /** Our command annotation, when one of our commands created it. */
  readonly commandId?: string;
  readonly replacementIndex?: number;
  /** status.providerID (`aws:///<zone>/<instance-id>`) once launched. */
  readonly providerId?: string;
  /** The instance id at the end of providerID. */
  readonly instanceId?: string;
  /** status.nodeName once its Node registered. */
  readonly nodeName?: string;
  readonly launched?: NodeClaimCondition;
  readonly registered?: NodeClaimCondition;
  readonly initialized?: NodeClaimCondition;
  /** metadata.deletionTimestamp is set: Karpenter is terminating it. */
  readonly deleting: boolean;
  readonly createdAt?: number;
}

/** What to create: everything the adapter needs to build the NodeClaim as Karpenter's provisioner would. */
export interface NodeClaimRequest {
  /** The command that creates it (annotation) and the replacement's index in the command. */
  readonly commandId: string;
  readonly index: number;
  /** The NodePool the claim belongs to (its `nodeClaimTemplate` source is required). */
  readonly nodePool: NodePool;
  /** Instance types (cheapest first), capacity type and zones the requirements are narrowed to. */
  readonly replacement: PlannedReplacement;
  /** The summed requests of the pods it must hold (spec.resources.requests), model units (cpu millicores, memory bytes). */
  readonly requests: Readonly<Record<string, number>>;
}

export interface NodeClaimApi {
  /**
   * Creates the NodeClaim for (commandId, index). Idempotent: its name is derived from both, so a second
   * call (the first answer lost) gets the existing claim back with `reused: true`.
   */
  create(request: NodeClaimRequest): Promise<{ readonly claim: NodeClaimView; readonly reused: boolean }>;
  /** The claim of that name, or undefined when it does not exist. */
  get(name: string): Promise<NodeClaimView | undefined>;
  /** The claim whose status.providerID ends with `/<instanceId>` (or whose status.nodeName is `nodeName`). */
  findForNode(node: { readonly name: string; readonly instanceId?: string }): Promise<NodeClaimView | undefined>;
  /** Deletes the claim (that uid only, when given); Karpenter's termination finalizer does the rest. */
  delete(name: string, options?: { readonly uid?: string }): Promise<DeleteResult>;
  /** Every NodeClaim carrying our command annotation. */
  listOurs(): Promise<readonly NodeClaimView[]>;
}

/** A NodeClaim call failed (not "not found", which is an answer). */
export class NodeClaimApiError extends Error {
  override readonly name = 'NodeClaimApiError';
  constructor(
    /** e.g. `create nodeclaims.karpenter.sh`. */
    readonly operation: string,
    readonly problem: string,
    /** HTTP status when the API answered. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(`${operation} failed: ${problem}`, options);
  }
}
