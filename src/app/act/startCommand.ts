// Turning one decision of the plan into a stored command, before anything in the cluster changes.
import { createHash } from 'node:crypto';
import { replacementNames } from '../../core/disruption/applyDecision.ts';
import { DisruptedTaint, DisruptingTaint, type Pod } from '../../core/model/types.ts';
import type { Decision, PoolActuator } from '../../core/plan.ts';
import type { ActuatorKind } from '../../core/ports/actuator.ts';
import { StateConflictError } from '../../core/state/errors.ts';
import { FINAL_COMMAND_STEPS, type DisruptionCommand, type ReplacementSpec } from '../../core/state/types.ts';
import { formatDetail, type CommandDetail } from './commandDetail.ts';
import { CommandRunner, message, type RunContext } from './commandRunner.ts';

/** What the plan's snapshot said about a node: the machine the decision is about. */
export interface PlannedNode {
  readonly uid?: string;
  readonly instanceId?: string;
}

export interface StartOptions {
  readonly newId?: () => string;
  readonly planned?: (name: string) => PlannedNode | undefined;
  readonly evaluatedAt?: string;
  /** The decision's position in the plan (its replacements' names in `podDestinations`). */
  readonly index?: number;
  /** The plan's actuator per pool; a pool it does not name acts through EC2. */
  readonly actuators?: Readonly<Record<string, PoolActuator>>;
  /** The pods of the plan's snapshot, for the requests each replacement is launched for. */
  readonly pods?: readonly Pod[];
  /**
   * Commands of the same plan whose replacements the decision's pods are planned onto: the command
   * evicts nothing before they have drained into them (CommandDetail.awaits).
   */
  readonly awaits?: readonly string[];
}

/**
 * Starts a command for one decision: checks that each node is still the machine the plan saw and that
 * its actuator can retire it, that every replacement's pool can launch through its actuator, stores
 * the command (before anything is changed) and returns its runner, or says why it was not started.
 *
 * Two invocations may start the same decision (a retried delivery, a lease that expired): the default
 * command id is derived from the decision, so both write the same record and the second one's write is
 * refused. Overlapping but different decisions are caught after the write: a command that finds another
 * unfinished command on one of its nodes steps aside (ends at once, having done nothing).
 */
export async function startCommand(decision: Decision, ctx: RunContext, options: StartOptions = {}): Promise<{ readonly runner: CommandRunner } | { readonly skipped: string }> {
  const { deps } = ctx;
  if (decision.nodes.length === 0) return { skipped: 'the decision names no node' };
  const actuatorOf = (pool: string | undefined): ActuatorKind => (pool === undefined ? undefined : options.actuators?.[pool]?.actuator) ?? 'ec2';

  const replacements: ReplacementSpec[] = [];
  for (const planned of decision.replacements) {
    const pool = await ctx.pool(planned.nodePool);
    if (pool === undefined) return { skipped: `NodePool "${planned.nodePool}" of the replacement is not known` };
    const actuator = actuatorOf(planned.nodePool);
    if (actuator === 'karpenter' && pool.nodeClaimTemplate === undefined) {
      return { skipped: `NodePool "${pool.name}" has no spec.template.spec.nodeClassRef, so no NodeClaim can be built for its replacement` };
    }
    const unavailable = capacityProblem(ctx, actuator);
    if (unavailable !== undefined) return { skipped: unavailable };
    replacements.push({
      instanceTypes: [...planned.instanceTypes],
      capacityType: planned.capacityType,
      zones: [...planned.zones],
      pricePerHour: planned.pricePerHour,
      nodePool: planned.nodePool,
      actuator,
      worstPricePerHour: planned.worstPricePerHour,
    });
  }

  const instances: Record<string, string> = {};
  const uids: Record<string, string> = {};
  const retireVia: Record<string, ActuatorKind> = {};
  const claims: Record<string, string> = {};
  const cordonedBefore: string[] = [];
  for (const name of decision.nodes) {
    const lookup = await deps.nodes.getNode(name);
    if (!lookup.exists) return { skipped: `node ${name} no longer exists` };
    const node = lookup.node;
    const planned = options.planned?.(name);
    if (planned !== undefined && ((planned.uid !== undefined && node.uid !== planned.uid) || (planned.instanceId !== undefined && node.instanceId !== planned.instanceId))) {
      return { skipped: `node ${name} is no longer the machine the plan was made for (another instance registered under its name)` };
    }
    if (node.deleting) return { skipped: `node ${name} is already being deleted` };
    const taken = node.taints.find((t) => t.key === DisruptedTaint.key || t.key === DisruptingTaint.key);
    if (taken !== undefined) return { skipped: `node ${name} already carries ${taken.key} (another disruption is in progress)` };
    const via = actuatorOf(node.nodePool);
    const unavailable = capacityProblem(ctx, via);
    if (unavailable !== undefined) return { skipped: unavailable };
    const retire = await ctx.capacity(via).prepareRetire(node);
    if ('refused' in retire) return { skipped: retire.refused };
    if (node.instanceId !== undefined) instances[name] = node.instanceId;
    if (node.uid !== undefined) uids[name] = node.uid;
    if (retire.handle !== undefined) claims[name] = retire.handle;
    retireVia[name] = via;
    if (node.unschedulable) cordonedBefore.push(name);
  }

  const nowMs = deps.now();
  const requests = requestsPerReplacement(decision, options);
  const detail: CommandDetail = {
    taintKey: DisruptingTaint.key,
    instances,
    ...(Object.keys(uids).length === 0 ? {} : { uids }),
    retireVia,
    ...(Object.keys(claims).length === 0 ? {} : { claims }),
    ...(Object.keys(requests).length === 0 ? {} : { requests }),
    ...(cordonedBefore.length === 0 ? {} : { cordonedBefore }),
    ...(options.awaits === undefined || options.awaits.length === 0 ? {} : { awaits: [...options.awaits] }),
    ...(decision.summary === undefined ? {} : { note: decision.summary }),
  };
  const id = options.newId?.() ?? commandIdFor(decision, instances, uids, options.evaluatedAt);
  const cmd: DisruptionCommand = {
    id,
    createdAt: nowMs,
    nodes: [...decision.nodes],
    method: decision.method,
    reason: decision.reason,
    ...(replacements.length === 0 ? {} : { replacements }),
    step: 'tainted',
    updatedAt: nowMs,
    version: 0,
    detail: formatDetail(detail),
  };
  let stored: DisruptionCommand;
  try {
    stored = await deps.store.putCommand(cmd);
  } catch (error) {
    if (error instanceof StateConflictError) return { skipped: `command ${id} for this decision was already started by another pass` };
    throw error;
  }
  // Written first, checked after: of two overlapping commands at least one sees the other and yields.
  const others = (await deps.store.listCommands(nowMs)).filter(
    (c) => c.id !== id && !FINAL_COMMAND_STEPS.has(c.step) && c.nodes.some((n) => decision.nodes.includes(n)),
  );
  if (others.length > 0) {
    const why = `command ${others[0]!.id} of another pass already covers node ${others[0]!.nodes.find((n) => decision.nodes.includes(n))}`;
    await deps.store.putCommand({ ...stored, step: 'rolledBack', updatedAt: deps.now(), detail: formatDetail({ ...detail, note: `stepped aside before acting: ${why}` }) }, stored.version);
    return { skipped: why };
  }
  return { runner: new CommandRunner(stored, 'new', ctx) };
}

/** Why this deployment cannot act through `kind` (no NodeClaim client, say), or undefined. */
function capacityProblem(ctx: RunContext, kind: ActuatorKind): string | undefined {
  try {
    ctx.capacity(kind);
    return undefined;
  } catch (error) {
    return message(error);
  }
}

/**
 * The summed requests of the pods the plan sends to each replacement (index -> resource -> amount, model
 * units): a NodeClaim states what it must hold, as Karpenter's provisioner does for the pods it packed.
 */
function requestsPerReplacement(decision: Decision, options: StartOptions): Record<string, Record<string, number>> {
  const count = decision.replacements.length;
  if (count === 0 || options.pods === undefined || decision.podDestinations === undefined) return {};
  const names = replacementNames((options.index ?? 0) + 1, count);
  const byKey = new Map(options.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
  const out: Record<string, Record<string, number>> = {};
  for (const [key, destination] of Object.entries(decision.podDestinations)) {
    const index = names.indexOf(destination);
    const pod = byKey.get(key);
    if (index < 0 || pod === undefined) continue;
    const sum = (out[String(index)] ??= { pods: 0 });
    sum['pods'] = (sum['pods'] ?? 0) + 1;
    for (const [resource, amount] of Object.entries(pod.requests)) sum[resource] = (sum[resource] ?? 0) + amount;
  }
  return out;
}

/** A command id that is the same for the same decision on the same machines in the same plan. */
export function commandIdFor(decision: Decision, instances: Readonly<Record<string, string>>, uids: Readonly<Record<string, string>>, evaluatedAt = ''): string {
  const identity = decision.nodes.map((n) => `${n}/${uids[n] ?? ''}/${instances[n] ?? ''}`).join(',');
  const replacement = decision.replacements.map((r) => `${r.nodePool}:${r.capacityType}:${r.instanceTypes.join('|')}`).join(';');
  const digest = createHash('sha256').update([evaluatedAt, decision.method, decision.action, identity, replacement].join('\u0000')).digest('hex');
  return `cmd-${digest.slice(0, 24)}`;
}
