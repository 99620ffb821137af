// One disruption command as a resumable state machine.
//
//   tainted ──(replace)──> launched ──> replacementReady ──> evicting ──> terminated ──> done
//      │                       │                                ^
//      └──────(delete)─────────┼────────────────────────────────┘
//                              └──(not Ready in time / launch failed)──> rolledBack
//
// A stored step means: every earlier step is complete, and this one has been started (the command is
// stored at `tainted` before the first taint). Every step is idempotent — taints that are present,
// instances already launched for the command (found by tag), pods already gone, instances already
// terminating — so a resumed command simply does its stored step again and goes on. The command is
// written with `putCommand(cmd, version)` right after each step; a crash between doing and recording
// only means the step is done twice.
//
// The one rule that is never bent: an old node's instance is terminated only after a fresh listing
// shows no pod that counts (drain.ts) on it. Pods refused by a PodDisruptionBudget stay, and so does
// the node, for as many passes as it takes.
//
// `tick` goes as far as it can without waiting and returns `waiting` when only time can help (the
// replacement is not Ready yet, pods are still leaving); the caller sleeps and ticks again, or leaves
// the command to the next pass.
import { DisruptedTaint, type Node, type NodePool } from '../../core/model/types.ts';
import type { Decision, PlannedReplacement } from '../../core/plan.ts';
import { LaunchError, type NodeEvent } from '../../core/ports/actuator.ts';
import { StateConflictError } from '../../core/state/errors.ts';
import { FINAL_COMMAND_STEPS, type CommandStep, type DisruptionCommand } from '../../core/state/types.ts';
import {
  addError,
  eventKey,
  eventSent,
  formatDetail,
  listPods,
  parseDetail,
  rememberEvent,
  type CommandDetail,
} from './commandDetail.ts';
import { podDisposition, podKey, podsThatCount } from './drain.ts';
import type { ActDeps, CommandReport, ResolvedActOptions, StopReason } from './types.ts';

export type TickOutcome = 'finished' | 'waiting' | 'stopped';

/** What a runner needs from the invocation driving it. */
export interface RunContext {
  readonly deps: ActDeps;
  readonly options: ResolvedActOptions;
  /** The NodePool by name (the pass's pools, or loaded once). */
  pool(name: string): Promise<NodePool | undefined>;
  /** Something was disrupted now (stabilization window). */
  noteAction(nowMs: number): Promise<void>;
}

/** Taints a node carries until it can take pods: a replacement with one of these is not ready yet. */
const NOT_INITIALIZED_TAINTS: ReadonlySet<string> = new Set([
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.cloudprovider.kubernetes.io/uninitialized',
]);

/** Thrown inside a step to end the tick; `failed` turns it into the outcome. */
class Stop extends Error {
  constructor(
    readonly reason: StopReason,
    message: string,
    /** False when the store itself failed: nothing more is written. */
    readonly canRecord: boolean,
  ) {
    super(message);
  }
}

export class CommandRunner {
  private cmd: DisruptionCommand;
  private readonly detail: CommandDetail;
  private evicted = 0;
  private blocked = 0;
  private remainingPods = 0;
  private readonly terminatedInstances: string[] = [];
  private readonly errors: string[] = [];
  private waitingFor: 'replacement' | 'pods' | undefined;
  private stoppedBecause: StopReason | undefined;

  constructor(
    stored: DisruptionCommand,
    private readonly from: CommandStep | 'new',
    private readonly ctx: RunContext,
  ) {
    this.cmd = stored;
    this.detail = parseDetail(stored.detail);
  }

  get id(): string {
    return this.cmd.id;
  }

  private get isReplace(): boolean {
    return this.cmd.replacement !== undefined;
  }

  private now(): number {
    return this.ctx.deps.now();
  }

  /** Ends the command's work for this invocation from outside (lease lost). */
  halt(reason: StopReason): void {
    this.stoppedBecause ??= reason;
  }

  report(): CommandReport {
    const c = this.cmd;
    return {
      id: c.id,
      nodes: c.nodes,
      method: c.method,
      action: this.isReplace ? 'replace' : 'delete',
      from: this.from,
      step: c.step,
      evicted: this.evicted,
      blocked: this.blocked,
      remainingPods: this.remainingPods,
      ...(c.launchedInstanceId === undefined ? {} : { launchedInstanceId: c.launchedInstanceId }),
      ...(c.replacementNodeName === undefined ? {} : { replacementNodeName: c.replacementNodeName }),
      terminatedInstances: [...this.terminatedInstances],
      ...(this.waitingFor === undefined || FINAL_COMMAND_STEPS.has(c.step) ? {} : { waitingFor: this.waitingFor }),
      ...(this.stoppedBecause === undefined ? {} : { stoppedBecause: this.stoppedBecause }),
      errors: [...this.errors],
    };
  }

  async tick(): Promise<TickOutcome> {
    this.waitingFor = undefined;
    try {
      for (;;) {
        if (FINAL_COMMAND_STEPS.has(this.cmd.step)) return 'finished';
        this.ensureTime();
        switch (this.cmd.step) {
          case 'tainted':
            await this.taintAll();
            if (this.isReplace) {
              if ((await this.launch()) === 'later') return this.stopped('error');
              break;
            }
            if (!(await this.drainAndTerminate())) return this.waiting('pods');
            break;
          case 'launched':
            if (!(await this.awaitReplacement())) return this.waiting('replacement');
            break;
          case 'replacementReady':
          case 'evicting':
            if (!(await this.drainAndTerminate())) return this.waiting('pods');
            break;
          case 'terminated':
            await this.finish();
            break;
          default:
            return 'finished';
        }
      }
    } catch (error) {
      return this.failed(error);
    }
  }

  // --- steps ------------------------------------------------------------------------------------

  /** Taint `karpenter.sh/disrupted:NoSchedule` and cordon every old node not yet terminated. */
  private async taintAll(): Promise<void> {
    let wrote = false;
    for (const node of this.liveNodes()) {
      this.ensureTime();
      const result = await this.ctx.deps.nodes.taintAndCordon(node, DisruptedTaint);
      if (result === 'tainted') wrote = true;
    }
    if (wrote) await this.ctx.noteAction(this.now());
  }

  /** Launch the replacement and record its instance; a launch that cannot succeed rolls back. */
  private async launch(): Promise<'launched' | 'rolledBack' | 'later'> {
    const poolName = this.detail.pool;
    const pool = poolName === undefined ? undefined : await this.ctx.pool(poolName);
    if (pool === undefined) return this.launchFailed(`NodePool "${poolName ?? '?'}" of the replacement is not known`);
    const replacement = this.plannedReplacement(poolName!);
    for (const node of this.cmd.nodes) {
      await this.emit(
        node,
        'DisruptionLaunching',
        `Launching a ${replacement.capacityType} replacement (${describeTypes(replacement.instanceTypes)}) before disrupting this node: ${this.cmd.reason} (command ${this.cmd.id})`,
      );
    }
    this.ensureTime();
    let launched;
    try {
      launched = await this.ctx.deps.instances.launch({ commandId: this.cmd.id, nodePool: pool, replacement });
    } catch (error) {
      if (error instanceof LaunchError && !error.retryable) {
        await this.rollback(`the replacement could not be launched: ${error.problem}`);
        return 'rolledBack';
      }
      return this.launchFailed(message(error));
    }
    this.detail.launchedAt ??= this.now();
    this.detail.note = `${launched.reused ? 'found already launched' : 'launched'} ${launched.instanceId}${launched.instanceType ? ` (${launched.instanceType}${launched.zone ? ` in ${launched.zone}` : ''})` : ''}`;
    await this.record({ step: 'launched', launchedInstanceId: launched.instanceId });
    return 'launched';
  }

  /** A launch attempt that may succeed later: retried by the next pass until the Ready timeout, then rolled back. */
  private async launchFailed(why: string): Promise<'rolledBack' | 'later'> {
    this.noteError(why);
    if (this.now() - this.cmd.createdAt >= this.ctx.options.replacementReadyTimeoutMs) {
      await this.rollback(`no replacement could be launched within ${minutes(this.ctx.options.replacementReadyTimeoutMs)}: ${why}`);
      return 'rolledBack';
    }
    await this.record({});
    return 'later';
  }

  /** True when the replacement is Ready (recorded) or the command was rolled back; false: keep waiting. */
  private async awaitReplacement(): Promise<boolean> {
    const instanceId = this.cmd.launchedInstanceId;
    if (instanceId === undefined) return (await this.launch()) !== 'later';
    const lookup = await this.ctx.deps.nodes.findNodeByInstanceId(instanceId);
    if (lookup.exists && lookup.ready && initialized(lookup.node)) {
      this.detail.note = `replacement ${lookup.node.name} (${instanceId}) is Ready`;
      await this.record({ step: 'replacementReady', replacementNodeName: lookup.node.name });
      return true;
    }
    if (!lookup.exists) {
      const state = await this.ctx.deps.instances.describe(instanceId);
      if (state === 'shutting-down' || state === 'terminated' || state === 'stopping' || state === 'stopped') {
        await this.rollback(`the replacement instance ${instanceId} is ${state}`);
        return true;
      }
    }
    const launchedAt = this.detail.launchedAt ?? this.cmd.updatedAt;
    if (this.now() - launchedAt >= this.ctx.options.replacementReadyTimeoutMs) {
      await this.rollback(`the replacement ${instanceId} did not become Ready within ${minutes(this.ctx.options.replacementReadyTimeoutMs)}`);
      return true;
    }
    return false;
  }

  /** Undo a replace that cannot complete: remove the replacement, give the old nodes back. */
  private async rollback(why: string): Promise<void> {
    const { deps } = this.ctx;
    const instanceId = this.cmd.launchedInstanceId ?? (await deps.instances.findByCommand(this.cmd.id))?.instanceId;
    if (instanceId !== undefined) {
      const registered = await deps.nodes.findNodeByInstanceId(instanceId);
      await deps.instances.terminate(instanceId, { requireOurTag: true });
      if (registered.exists) await deps.nodes.deleteNode(registered.node.name);
    }
    const keepCordoned = new Set(this.detail.cordonedBefore ?? []);
    for (const node of this.cmd.nodes) {
      await deps.nodes.untaintAndUncordon(node, DisruptedTaint.key, { uncordon: !keepCordoned.has(node) });
    }
    for (const node of this.cmd.nodes) {
      await this.emit(node, 'DisruptionBlocked', `Disruption rolled back, the node stays: ${why} (command ${this.cmd.id})`, 'Warning');
    }
    this.detail.note = `rolled back: ${why}`;
    await this.record({ step: 'rolledBack', ...(instanceId === undefined ? {} : { launchedInstanceId: instanceId }) });
  }

  /** One eviction round, then termination when nothing that counts is left. True once terminated. */
  private async drainAndTerminate(): Promise<boolean> {
    if (!(await this.drainRound())) return false;
    return this.terminateAll();
  }

  /**
   * Asks the Eviction API to move every pod that must leave the old nodes. A PDB's refusal is left for
   * the next round or pass (an event says so, once). True when no pod that counts remains.
   */
  private async drainRound(): Promise<boolean> {
    const { nodes } = this.ctx.deps;
    const before = JSON.stringify([this.detail.blocked ?? [], this.detail.waitingFor ?? []]);
    const remaining: string[] = [];
    const blocked: string[] = [];
    let evicted = 0;
    try {
      for (const node of this.liveNodes()) {
        let pods = await nodes.listPodsOnNode(node);
        let evictedHere = 0;
        const blockedHere: string[] = [];
        const protectedHere: string[] = [];
        for (const pod of pods) {
          const disposition = podDisposition(pod);
          if (disposition === 'protected') protectedHere.push(podKey(pod));
          if (disposition !== 'evict') continue;
          this.ensureTime();
          const result = await nodes.evictPod(pod.namespace, pod.name, { podUid: pod.uid });
          if (result === 'evicted') evictedHere += 1;
          else if (result === 'blockedByPdb') blockedHere.push(podKey(pod));
        }
        // Evicted pods take their grace period to go; a second look tells which have already left.
        if (evictedHere > 0) pods = await nodes.listPodsOnNode(node);
        remaining.push(...podsThatCount(pods).map(podKey));
        blocked.push(...blockedHere);
        evicted += evictedHere;
        if (blockedHere.length > 0) {
          await this.emit(
            node,
            'DisruptionBlocked',
            `Cannot drain the node yet: a PodDisruptionBudget refuses to evict ${blockedHere.sort().join(', ')}; retrying later (command ${this.cmd.id})`,
          );
        }
        if (protectedHere.length > 0) {
          await this.emit(
            node,
            'DisruptionBlocked',
            `Cannot drain the node yet: ${protectedHere.sort().join(', ')} has karpenter.sh/do-not-disrupt (command ${this.cmd.id})`,
          );
        }
      }
    } finally {
      // Even when the round is cut short (time, an error), what was evicted is counted.
      this.evicted += evicted;
      this.detail.evicted = (this.detail.evicted ?? 0) + evicted;
    }
    this.blocked = blocked.length;
    this.remainingPods = remaining.length;
    setList(this.detail, 'blocked', blocked.sort());
    setList(this.detail, 'waitingFor', listPods(remaining.sort()));
    if (evicted > 0) await this.ctx.noteAction(this.now());
    const changed = JSON.stringify([this.detail.blocked ?? [], this.detail.waitingFor ?? []]) !== before;
    if (this.cmd.step !== 'evicting' || evicted > 0 || changed) {
      this.detail.note = remaining.length === 0 ? 'every pod has left the old nodes' : `${remaining.length} pod(s) still on the old nodes`;
      await this.record({ step: 'evicting' });
    }
    return remaining.length === 0;
  }

  /**
   * Terminates each old node's instance and deletes its Node object, each only after a fresh listing
   * shows nothing that counts on it. False when a pod turned up meanwhile (back to draining).
   */
  private async terminateAll(): Promise<boolean> {
    const { nodes, instances } = this.ctx.deps;
    for (const node of this.liveNodes()) {
      const left = podsThatCount(await nodes.listPodsOnNode(node));
      if (left.length > 0) {
        this.remainingPods = left.length;
        setList(this.detail, 'waitingFor', listPods(left.map(podKey).sort()));
        await this.record({ step: 'evicting' });
        return false;
      }
      const instanceId = this.detail.instances?.[node];
      if (instanceId === undefined) throw new Error(`no EC2 instance id is known for node ${node}`);
      this.ensureTime();
      await this.emit(node, 'DisruptionTerminating', `Terminating the node: ${this.cmd.reason} consolidation, ${this.cmd.method} (command ${this.cmd.id})`);
      const result = await instances.terminate(instanceId, { requireOurTag: false });
      if (result === 'terminating') this.terminatedInstances.push(instanceId);
      // The instance first: a Node object deleted while its kubelet still runs registers again.
      await nodes.deleteNode(node);
      this.detail.terminated = [...(this.detail.terminated ?? []), node];
    }
    await this.ctx.noteAction(this.now());
    this.detail.note = `terminated ${this.cmd.nodes.join(', ')}`;
    await this.record({ step: 'terminated' });
    return true;
  }

  /** After termination: make sure no Node object came back (a kubelet shutting down may re-register). */
  private async finish(): Promise<void> {
    for (const node of this.cmd.nodes) await this.ctx.deps.nodes.deleteNode(node);
    this.detail.note = 'done';
    await this.record({ step: 'done' });
  }

  // --- plumbing ---------------------------------------------------------------------------------

  private liveNodes(): string[] {
    const terminated = new Set(this.detail.terminated ?? []);
    return this.cmd.nodes.filter((n) => !terminated.has(n));
  }

  private plannedReplacement(pool: string): PlannedReplacement {
    const spec = this.cmd.replacement!;
    return { ...spec, nodePool: pool, worstPricePerHour: this.detail.worstPricePerHour ?? spec.pricePerHour };
  }

  private ensureTime(): void {
    if (this.stoppedBecause === 'lease') throw new Stop('lease', 'the pass lease was lost', false);
    if (this.ctx.deps.remainingMs() < this.ctx.options.marginMs) {
      throw new Stop('time', 'the invocation is running out of time', true);
    }
  }

  /** Stores the command with `changes` and the current detail, on the version last read. */
  private async record(changes: Partial<Pick<DisruptionCommand, 'step' | 'launchedInstanceId' | 'replacementNodeName'>>): Promise<void> {
    const next: DisruptionCommand = { ...this.cmd, ...changes, updatedAt: this.now(), detail: formatDetail(this.detail) };
    try {
      this.cmd = await this.ctx.deps.store.putCommand(next, this.cmd.version);
    } catch (error) {
      if (error instanceof StateConflictError) {
        throw new Stop('conflict', `another pass changed command ${this.cmd.id}: ${error.message}`, false);
      }
      throw new Stop('error', `could not record command ${this.cmd.id}: ${message(error)}`, false);
    }
  }

  /** Sends an event unless this command already sent the same one. A failed event is noted, not fatal. */
  private async emit(nodeName: string, reason: string, text: string, type: NodeEvent['type'] = 'Normal'): Promise<void> {
    const key = eventKey(nodeName, reason, text);
    if (eventSent(this.detail, key)) return;
    try {
      await this.ctx.deps.nodes.createEvent({ nodeName, reason, message: text, type });
      rememberEvent(this.detail, key);
    } catch (error) {
      this.noteError(`event ${reason} on ${nodeName}: ${message(error)}`);
    }
  }

  private noteError(text: string): void {
    this.errors.push(text);
    addError(this.detail, text);
  }

  private waiting(on: 'replacement' | 'pods'): TickOutcome {
    this.waitingFor = on;
    return 'waiting';
  }

  private stopped(reason: StopReason): TickOutcome {
    this.stoppedBecause = reason;
    return 'stopped';
  }

  private async failed(error: unknown): Promise<TickOutcome> {
    if (error instanceof Stop) {
      if (error.reason !== 'time') this.errors.push(error.message);
      if (error.canRecord) await this.recordQuietly();
      return this.stopped(error.reason);
    }
    this.noteError(message(error));
    await this.recordQuietly();
    return this.stopped('error');
  }

  /** Persists progress and errors after a failure; a failure to do so is only reported. */
  private async recordQuietly(): Promise<void> {
    try {
      await this.record({});
    } catch (error) {
      this.errors.push(message(error));
    }
  }
}

/**
 * Starts a command for one decision: checks the plan still holds for its nodes, stores the command
 * (before anything is changed) and returns its runner, or says why it was not started.
 */
export async function startCommand(
  decision: Decision,
  ctx: RunContext,
  newId: () => string,
): Promise<{ readonly runner: CommandRunner } | { readonly skipped: string }> {
  const { deps } = ctx;
  if (decision.nodes.length === 0) return { skipped: 'the decision names no node' };
  let replacement: PlannedReplacement | undefined;
  if (decision.action === 'replace') {
    if (decision.replacements.length !== 1) return { skipped: `a replace with ${decision.replacements.length} replacements is not supported (one per command)` };
    replacement = decision.replacements[0]!;
    if ((await ctx.pool(replacement.nodePool)) === undefined) return { skipped: `NodePool "${replacement.nodePool}" of the replacement is not known` };
  }
  const instances: Record<string, string> = {};
  const cordonedBefore: string[] = [];
  for (const name of decision.nodes) {
    const lookup = await deps.nodes.getNode(name);
    if (!lookup.exists) return { skipped: `node ${name} no longer exists` };
    const node = lookup.node;
    if (node.deleting) return { skipped: `node ${name} is already being deleted` };
    if (node.instanceId === undefined) return { skipped: `node ${name} has no EC2 providerID, so its instance cannot be terminated` };
    if (node.taints.some((t) => t.key === DisruptedTaint.key)) {
      return { skipped: `node ${name} already carries ${DisruptedTaint.key} (another disruption is in progress)` };
    }
    instances[name] = node.instanceId;
    if (node.unschedulable) cordonedBefore.push(name);
  }
  const nowMs = deps.now();
  const detail: CommandDetail = {
    ...(replacement === undefined ? {} : { pool: replacement.nodePool, worstPricePerHour: replacement.worstPricePerHour }),
    instances,
    ...(cordonedBefore.length === 0 ? {} : { cordonedBefore }),
    ...(decision.summary === undefined ? {} : { note: decision.summary }),
  };
  const cmd: DisruptionCommand = {
    id: newId(),
    createdAt: nowMs,
    nodes: [...decision.nodes],
    method: decision.method,
    reason: decision.reason,
    ...(replacement === undefined
      ? {}
      : {
          replacement: {
            instanceTypes: [...replacement.instanceTypes],
            capacityType: replacement.capacityType,
            zones: [...replacement.zones],
            pricePerHour: replacement.pricePerHour,
          },
        }),
    step: 'tainted',
    updatedAt: nowMs,
    version: 0,
    detail: formatDetail(detail),
  };
  const stored = await deps.store.putCommand(cmd);
  return { runner: new CommandRunner(stored, 'new', ctx) };
}

function initialized(node: Node): boolean {
  return node.ready && !node.taints.some((t) => NOT_INITIALIZED_TAINTS.has(t.key));
}

function setList(detail: CommandDetail, key: 'blocked' | 'waitingFor', values: string[]): void {
  if (values.length === 0) delete detail[key];
  else detail[key] = values;
}

function describeTypes(types: readonly string[]): string {
  if (types.length === 0) return 'no type';
  return types.length === 1 ? types[0]! : `${types[0]} or one of ${types.length - 1} other type(s)`;
}

function minutes(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
