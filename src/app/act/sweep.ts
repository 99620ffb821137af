// What lost commands leave behind, found and undone at every pass (core/disruption/orphans.ts says
// what counts as an orphan, and why):
// - capacity we launched that nothing owns any more gets a command of its own, stored at `rollingBack`,
//   so the same state machine as any rollback drains its Node if one shows up, then terminates the
//   instance (or deletes the NodeClaim): idempotent, resumable, fenced by the lease like every step;
// - the orphaned-taint cleanup (ActSession) runs on the Node list this reads.
import { DisruptingTaint, type Node } from '../../core/model/types.ts';
import { findOrphans, type Orphan } from '../../core/disruption/orphans.ts';
import type { NodeClaimView, OurInstance } from '../../core/ports/actuator.ts';
import { StateConflictError } from '../../core/state/errors.ts';
import type { DisruptionCommand } from '../../core/state/types.ts';
import { formatDetail, type CommandDetail } from './commandDetail.ts';
import { CommandRunner, message, type RunContext } from './commandRunner.ts';

/** The reason of a sweep's command (its `method` is `emptiness`: the capacity holds no pod we planned). */
export const ORPHAN_REASON = 'Orphaned';

export interface SweepResult {
  readonly runners: readonly CommandRunner[];
  readonly errors: readonly string[];
}

/**
 * Starts a rollback command for each orphan. `unfinished` are the commands the store listed (and
 * `unreadable` the ids of those it could not read); `nodes` the cluster's Nodes read just now.
 */
export async function sweepOrphans(
  ctx: RunContext,
  input: { readonly unfinished: readonly DisruptionCommand[]; readonly unreadable: ReadonlySet<string>; readonly nodes: readonly Node[] },
): Promise<SweepResult> {
  const { deps } = ctx;
  const errors: string[] = [];
  let instances: readonly OurInstance[] = [];
  let claims: readonly NodeClaimView[] = [];
  try {
    instances = await deps.instances.listOurs();
  } catch (error) {
    errors.push(`listing the instances we launched: ${message(error)}`);
  }
  if (deps.nodeClaims !== undefined) {
    try {
      claims = await deps.nodeClaims.listOurs();
    } catch (error) {
      errors.push(`listing the NodeClaims we created: ${message(error)}`);
    }
  }
  const orphans = findOrphans({
    unfinished: new Set(input.unfinished.map((c) => c.id)),
    unreadable: input.unreadable,
    instances,
    claims,
    nodes: input.nodes,
    nowMs: deps.now(),
    readyTimeoutMs: ctx.options.replacementReadyTimeoutMs,
  });
  const runners: CommandRunner[] = [];
  for (const orphan of orphans) {
    if (deps.remainingMs() < ctx.options.marginMs || !(await ctx.leaseHeld())) break;
    try {
      const stored = await deps.store.putCommand(orphanCommand(orphan, deps.now()));
      runners.push(new CommandRunner(stored, 'new', ctx));
    } catch (error) {
      // Another pass stored it first: it runs as an unfinished command from now on.
      if (error instanceof StateConflictError) continue;
      errors.push(`sweeping ${orphan.ref}: ${message(error)}`);
    }
  }
  return { runners, errors };
}

/** The command that removes one orphan: a rollback of a replacement, with no old node to give back. */
export function orphanCommand(orphan: Orphan, nowMs: number): DisruptionCommand {
  const detail: CommandDetail = {
    taintKey: DisruptingTaint.key,
    rollbackWhy: orphan.why,
    progressAt: nowMs,
    note: `removing: ${orphan.why}`,
  };
  return {
    // One id per orphan: two passes that find the same one race for the same record.
    id: `orphan-${orphan.ref}`,
    createdAt: nowMs,
    nodes: [],
    method: 'emptiness',
    reason: ORPHAN_REASON,
    replacements: [
      {
        instanceTypes: orphan.instanceType === undefined ? [] : [orphan.instanceType],
        capacityType: orphan.capacityType ?? 'on-demand',
        zones: orphan.zone === undefined ? [] : [orphan.zone],
        pricePerHour: 0,
        ...(orphan.nodePool === undefined ? {} : { nodePool: orphan.nodePool }),
        actuator: orphan.actuator,
      },
    ],
    step: 'rollingBack',
    launched: [
      {
        index: 0,
        ref: orphan.ref,
        ...(orphan.instanceId === undefined ? {} : { instanceId: orphan.instanceId }),
        ...(orphan.nodeName === undefined ? {} : { nodeName: orphan.nodeName }),
      },
    ],
    updatedAt: nowMs,
    version: 0,
    detail: formatDetail(detail),
  };
}
