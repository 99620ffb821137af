// Capacity this product asked for that nothing looks after any more: an instance we launched through
// EC2, or a NodeClaim we created, that no unfinished command owns and that has no Node in the cluster.
// It happens when a command's record is lost (a recreated table, a restore, a record this build cannot
// read is NOT such a case: see below), or when a replacement's Node is deleted by someone else while
// its machine keeps running, paid, for ever.
//
// Karpenter's AWS provider garbage-collects the instances carrying its tags that no NodeClaim owns, and
// its NodeClaim lifecycle deletes a claim whose Node never registers; this is the same idea for the
// capacity this product launched. Pure: the caller lists the instances, claims, nodes and commands.
import type { Node } from '../model/types.ts';
import type { ActuatorKind, NodeClaimView, OurInstance } from '../ports/actuator.ts';

export interface OrphanInput {
  /** Ids of the commands that are not finished: everything they launched is theirs. */
  readonly unfinished: ReadonlySet<string>;
  /**
   * Ids of command records this build could not read. What they launched is treated as owned: a record
   * written by a newer build may well be a running command.
   */
  readonly unreadable: ReadonlySet<string>;
  readonly instances: readonly OurInstance[];
  readonly claims: readonly NodeClaimView[];
  readonly nodes: readonly Node[];
  readonly nowMs: number;
  /** A replacement not Ready this long after its launch is rolled back; an orphan gets the same time to show a Node. */
  readonly readyTimeoutMs: number;
}

export interface Orphan {
  readonly actuator: ActuatorKind;
  /** The instance id (ec2) or the NodeClaim's name (karpenter). */
  readonly ref: string;
  readonly instanceId?: string;
  /** The Node it registered as once, when known (a claim's status.nodeName). */
  readonly nodeName?: string;
  readonly nodePool?: string;
  readonly instanceType?: string;
  readonly zone?: string;
  readonly capacityType?: 'on-demand' | 'spot';
  /** The command that launched it, when its tag or annotation says. */
  readonly commandId?: string;
  /** A sentence for the operator. */
  readonly why: string;
}

/** The command id of a launch key (`<id>` or `<id>#<index>`, see capacity/types.ts `launchKey`). */
export function commandOfLaunchKey(key: string | undefined): string | undefined {
  if (key === undefined || key === '') return undefined;
  const hash = key.lastIndexOf('#');
  return hash > 0 && /^\d+$/.test(key.slice(hash + 1)) ? key.slice(0, hash) : key;
}

export function findOrphans(input: OrphanInput): Orphan[] {
  const owned = (commandId: string | undefined) => commandId !== undefined && (input.unfinished.has(commandId) || input.unreadable.has(commandId));
  const byInstance = new Set(input.nodes.flatMap((n) => (n.instanceId === undefined ? [] : [n.instanceId])));
  const byName = new Set(input.nodes.map((n) => n.name));
  const minutes = Math.round(input.readyTimeoutMs / 60_000);
  // Young capacity may still be registering; an unknown age counts as young only if we cannot tell.
  const oldEnough = (since: number | undefined) => since !== undefined && input.nowMs - since >= input.readyTimeoutMs;
  const orphans: Orphan[] = [];

  for (const instance of input.instances) {
    if (instance.state !== 'pending' && instance.state !== 'running') continue;
    const commandId = commandOfLaunchKey(instance.launchKey);
    if (owned(commandId) || byInstance.has(instance.instanceId) || !oldEnough(instance.launchedAt)) continue;
    orphans.push({
      actuator: 'ec2',
      ref: instance.instanceId,
      instanceId: instance.instanceId,
      ...optional({ nodePool: instance.nodePool, instanceType: instance.instanceType, zone: instance.zone, capacityType: instance.capacityType, commandId }),
      why: `instance ${instance.instanceId}${commandId === undefined ? '' : ` (launched by command ${commandId})`} has had no Node for more than ${minutes} minutes and no unfinished command owns it`,
    });
  }

  for (const claim of input.claims) {
    if (claim.deleting || owned(claim.commandId)) continue;
    const registered = (claim.nodeName !== undefined && byName.has(claim.nodeName)) || (claim.instanceId !== undefined && byInstance.has(claim.instanceId));
    if (registered || !oldEnough(claim.createdAt)) continue;
    orphans.push({
      actuator: 'karpenter',
      ref: claim.name,
      ...optional({ instanceId: claim.instanceId, nodeName: claim.nodeName, nodePool: claim.nodePool, commandId: claim.commandId }),
      why: `NodeClaim ${claim.name}${claim.commandId === undefined ? '' : ` (created by command ${claim.commandId})`} ${claim.nodeName === undefined ? 'has had no Node' : `lost its Node ${claim.nodeName}`} for more than ${minutes} minutes and no unfinished command owns it`,
    });
  }
  return orphans;
}

function optional<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
