// One disruption command as a resumable state machine.
//
//   tainted ──(replace)──> launched ──> replacementReady ──> evicting ──> terminated ──> done
//      │                       │                │               ^  │
//      └──────(delete)─────────┼────────────────┼───────────────┘  └─(no progress for drainTimeout,
//                              │                │                     or the replacement vanished)──> abandoned
//                              └──(not Ready in time / launch failed)──> rollingBack ──> rolledBack
//
// A stored step means: every earlier step is complete, and this one has been started (the command is
// stored at `tainted` before the first taint). Every step is idempotent — taints that are present,
// instances already launched for the command (found by tag), pods already gone, instances already
// terminating — so a resumed command simply does its stored step again and goes on. The command is
// written with `putCommand(cmd, version)` right after each step; a crash between doing and recording
// only means the step is done twice.
//
// Rules that are never bent:
// - A command acts only on the machines it decided about. The old nodes' uids and instance ids are
//   recorded when the command starts (from the plan's snapshot, checked against the live node); before
//   every step each old node is looked up again, and a node deleted or registered again under the same
//   name by another machine is left alone for good. Taints and deletes carry the uid as a precondition.
// - An instance is terminated only after a fresh listing shows no pod that counts (drain.ts) on its
//   node: the old nodes', and the replacement's when a rollback removes it (its pods are evicted
//   through the Eviction API like any drain). Pods refused by a PodDisruptionBudget stay, and so does
//   the node, until the drain timeout gives the old nodes back.
// - Every step first checks the Lambda's remaining time and that the pass still holds its lease.
//
// `tick` goes as far as it can without waiting and returns `waiting` when only time can help (the
// replacement is not Ready yet, pods are still leaving); the caller sleeps and ticks again, or leaves
// the command to the next pass.
import { createHash } from 'node:crypto';
import { DisruptedTaint, type Node, type NodePool, type Pod } from '../../core/model/types.ts';
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
  /** The NodePool by name (the pass's pools, or loaded once). May throw when the pools cannot be read. */
  pool(name: string): Promise<NodePool | undefined>;
  /** Something was disrupted now (stabilization window). */
  noteAction(nowMs: number): Promise<void>;
  /** True while the pass still holds its lease (renewed when due). */
  leaseHeld(): Promise<boolean>;
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
    /** False when the store itself failed (or the lease is lost): nothing more is written. */
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
  private endedBecause: string | undefined;

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

  get step(): CommandStep {
    return this.cmd.step;
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
      ...(this.endedBecause === undefined ? {} : { endedBecause: this.endedBecause }),
      errors: [...this.errors],
    };
  }

  async tick(): Promise<TickOutcome> {
    this.waitingFor = undefined;
    try {
      for (;;) {
        if (FINAL_COMMAND_STEPS.has(this.cmd.step)) return 'finished';
        await this.ensureTime();
        switch (this.cmd.step) {
          case 'tainted':
            await this.taintAll();
            if (this.liveNodes().length === 0) {
              await this.noOldNodeLeft();
              break;
            }
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
          case 'evicting': {
            if (this.isReplace) {
              const replacement = await this.replacementState();
              if (replacement === 'gone') {
                await this.abandon(`the replacement ${this.cmd.launchedInstanceId ?? ''} disappeared before the old nodes were drained`);
                break;
              }
              if (replacement === 'notReady') {
                // No eviction while the pods would have nowhere to go; a long outage ends the drain.
                if (await this.drainStuck('the replacement is not Ready')) break;
                return this.waiting('replacement');
              }
            }
            if (!(await this.drainAndTerminate())) return this.waiting('pods');
            break;
          }
          case 'terminated':
            await this.finish();
            break;
          case 'rollingBack':
            if (!(await this.rollBack())) return this.waiting('pods');
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

  /** Taint `karpenter.sh/disrupted:NoSchedule`, cordon and mark every old node that is still the one decided about. */
  private async taintAll(): Promise<void> {
    let wrote = false;
    for (const node of this.liveNodes()) {
      await this.ensureTime();
      if ((await this.identify(node)) === undefined) continue;
      const result = await this.ctx.deps.nodes.taintAndCordon(node, DisruptedTaint, { ...this.uidOf(node), commandId: this.cmd.id });
      if (result === 'gone') this.markGone(node, 'it disappeared before it could be tainted');
      if (result === 'tainted') wrote = true;
    }
    if (wrote) await this.ctx.noteAction(this.now());
  }

  /** Every old node vanished (or was reused by another machine) before anything was launched or evicted. */
  private async noOldNodeLeft(): Promise<void> {
    this.detail.note = 'every old node was already gone; nothing to do';
    await this.record({ step: 'done' });
  }

  /** Launch the replacement and record its instance; a launch that cannot succeed rolls back. */
  private async launch(): Promise<'launched' | 'rollingBack' | 'later'> {
    const poolName = this.detail.pool;
    let pool: NodePool | undefined;
    try {
      pool = poolName === undefined ? undefined : await this.ctx.pool(poolName);
    } catch (error) {
      return this.launchFailed(`the NodePools could not be read: ${message(error)}`);
    }
    if (pool === undefined) return this.launchFailed(`NodePool "${poolName ?? '?'}" of the replacement is not known`);
    const replacement = this.plannedReplacement(poolName!);
    for (const node of this.liveNodes()) {
      await this.emit(
        node,
        'DisruptionLaunching',
        `Launching a ${replacement.capacityType} replacement (${describeTypes(replacement.instanceTypes)}) before disrupting this node: ${this.cmd.reason} (command ${this.cmd.id})`,
      );
    }
    await this.ensureTime();
    let launched;
    try {
      launched = await this.ctx.deps.instances.launch({ commandId: this.cmd.id, nodePool: pool, replacement });
    } catch (error) {
      if (error instanceof LaunchError && !error.retryable) {
        await this.startRollback(`the replacement could not be launched: ${error.problem}`);
        return 'rollingBack';
      }
      return this.launchFailed(message(error));
    }
    this.detail.launchedAt ??= this.now();
    this.detail.note = `${launched.reused ? 'found already launched' : 'launched'} ${launched.instanceId}${launched.instanceType ? ` (${launched.instanceType}${launched.zone ? ` in ${launched.zone}` : ''})` : ''}`;
    await this.record({ step: 'launched', launchedInstanceId: launched.instanceId });
    return 'launched';
  }

  /** A launch attempt that may succeed later: retried by the next pass until the Ready timeout, then rolled back. */
  private async launchFailed(why: string): Promise<'rollingBack' | 'later'> {
    this.noteError(why);
    if (this.now() - this.cmd.createdAt >= this.ctx.options.replacementReadyTimeoutMs) {
      await this.startRollback(`no replacement could be launched within ${minutes(this.ctx.options.replacementReadyTimeoutMs)}: ${why}`);
      return 'rollingBack';
    }
    await this.record({});
    return 'later';
  }

  /** True when the replacement is Ready (recorded) or a rollback started; false: keep waiting. */
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
      if (state === 'shutting-down' || state === 'terminated' || state === 'stopping' || state === 'stopped' || state === 'notFound') {
        await this.startRollback(`the replacement instance ${instanceId} is ${state === 'notFound' ? 'unknown to EC2' : state}`);
        return true;
      }
    }
    const launchedAt = this.detail.launchedAt ?? this.cmd.updatedAt;
    if (this.now() - launchedAt >= this.ctx.options.replacementReadyTimeoutMs) {
      await this.startRollback(`the replacement ${instanceId} did not become Ready within ${minutes(this.ctx.options.replacementReadyTimeoutMs)}`);
      return true;
    }
    return false;
  }

  /** Where a replace's replacement stands while the old nodes drain. */
  private async replacementState(): Promise<'ready' | 'notReady' | 'gone'> {
    const instanceId = this.cmd.launchedInstanceId;
    if (instanceId === undefined) return 'gone';
    const { nodes } = this.ctx.deps;
    // By name first (one GET); the name is only a hint: the instance id decides.
    let lookup = this.cmd.replacementNodeName === undefined ? undefined : await nodes.getNode(this.cmd.replacementNodeName);
    if (lookup === undefined || !lookup.exists || lookup.node.instanceId !== instanceId) lookup = await nodes.findNodeByInstanceId(instanceId);
    if (!lookup.exists || lookup.node.deleting) return 'gone';
    return lookup.ready && initialized(lookup.node) ? 'ready' : 'notReady';
  }

  /** Records the rollback's reason and instance, then `rollBack` carries it out (now or in later ticks). */
  private async startRollback(why: string): Promise<void> {
    const instanceId = this.cmd.launchedInstanceId ?? (await this.ctx.deps.instances.findByCommand(this.cmd.id))?.instanceId;
    this.detail.rollbackWhy = why;
    this.detail.progressAt = this.now();
    this.detail.note = `rolling back: ${why}`;
    await this.record({ step: 'rollingBack', ...(instanceId === undefined ? {} : { launchedInstanceId: instanceId }) });
  }

  /**
   * Undo a replace that cannot complete: give the old nodes back first (pods leaving the replacement need
   * somewhere to go), then drain the replacement through the Eviction API and only then terminate it.
   * True when the rollback is complete (or given up); false: pods are still leaving the replacement.
   */
  private async rollBack(): Promise<boolean> {
    const { deps } = this.ctx;
    const why = this.detail.rollbackWhy ?? 'the replacement could not be used';
    await this.giveBackOldNodes();
    const instanceId = this.cmd.launchedInstanceId ?? (await deps.instances.findByCommand(this.cmd.id))?.instanceId;
    if (instanceId !== undefined) {
      const registered = await deps.nodes.findNodeByInstanceId(instanceId);
      if (registered.exists) {
        const node = registered.node;
        await this.ensureTime();
        await deps.nodes.taintAndCordon(node.name, DisruptedTaint, { ...(node.uid === undefined ? {} : { uid: node.uid }), commandId: this.cmd.id });
        const evictedBefore = this.evicted;
        const left = await this.drainNode(node.name, registered.ready && initialized(node) ? undefined : { nowMs: this.now() });
        if (left.length > 0) {
          const before = this.detail.waitingFor?.join(',');
          setList(this.detail, 'waitingFor', listPods(left.map(podKey).sort()));
          if (this.detail.waitingFor?.join(',') !== before || this.evicted > evictedBefore) this.detail.progressAt = this.now();
          if (this.now() - (this.detail.progressAt ?? this.cmd.updatedAt) >= this.ctx.options.drainTimeoutMs) {
            // The replacement runs pods that will not leave: it stays, as an ordinary node.
            await deps.nodes.untaintAndUncordon(node.name, DisruptedTaint.key, node.uid === undefined ? {} : { uid: node.uid });
            await this.end('abandoned', `${why}; the replacement ${node.name} was kept because its pods could not be evicted within ${minutes(this.ctx.options.drainTimeoutMs)}`);
            return true;
          }
          await this.record({});
          return false;
        }
        await this.ensureTime();
        await deps.instances.terminate(instanceId, { requireOurTag: true });
        await deps.nodes.deleteNode(node.name, node.uid === undefined ? {} : { uid: node.uid });
      } else {
        // Never registered: no pod can be bound to it.
        await deps.instances.terminate(instanceId, { requireOurTag: true });
      }
    }
    delete this.detail.waitingFor;
    await this.end('rolledBack', why, instanceId);
    return true;
  }

  /** Untaints and uncordons the old nodes still present (a node cordoned before the command stays cordoned). */
  private async giveBackOldNodes(): Promise<void> {
    const keepCordoned = new Set(this.detail.cordonedBefore ?? []);
    for (const node of this.liveNodes()) {
      await this.ensureTime();
      await this.ctx.deps.nodes.untaintAndUncordon(node, DisruptedTaint.key, { ...this.uidOf(node), uncordon: !keepCordoned.has(node) });
    }
  }

  /** Ends the command short of its goal (rolled back or abandoned): an event on each old node, then the final step. */
  private async end(step: 'rolledBack' | 'abandoned', why: string, instanceId?: string): Promise<void> {
    const reason = step === 'rolledBack' ? 'DisruptionBlocked' : 'DisruptionAbandoned';
    const text = step === 'rolledBack' ? `Disruption rolled back, the node stays: ${why}` : `Disruption given up, the node stays: ${why}`;
    for (const node of this.liveNodes()) await this.emit(node, reason, `${text} (command ${this.cmd.id})`, 'Warning');
    this.endedBecause = why;
    this.detail.note = `${step === 'rolledBack' ? 'rolled back' : 'abandoned'}: ${why}`;
    await this.record({ step, ...(instanceId === undefined ? {} : { launchedInstanceId: instanceId }) });
  }

  /** Gives the drain up: the old nodes are untainted and uncordoned, the command ends `abandoned`. */
  private async abandon(why: string): Promise<void> {
    await this.giveBackOldNodes();
    await this.end('abandoned', why);
  }

  /** True (and the command abandoned) when the drain has made no progress for the drain timeout. */
  private async drainStuck(what: string): Promise<boolean> {
    const since = this.detail.progressAt ?? this.cmd.updatedAt;
    if (this.now() - since < this.ctx.options.drainTimeoutMs) return false;
    const waiting = this.detail.waitingFor?.length ? ` (still waiting for ${this.detail.waitingFor.join(', ')})` : '';
    await this.abandon(`the drain made no progress for ${minutes(this.ctx.options.drainTimeoutMs)}: ${what}${waiting}`);
    return true;
  }

  /** One eviction round, then termination when nothing that counts is left. True once finished (or given up). */
  private async drainAndTerminate(): Promise<boolean> {
    if (!(await this.drainRound())) return this.drainStuck('pods are still on the old nodes');
    return this.terminateAll();
  }

  /**
   * Asks the Eviction API to move every pod that must leave the old nodes. A PDB's refusal is left for
   * the next round or pass (an event says so, once). True when no pod that counts remains.
   */
  private async drainRound(): Promise<boolean> {
    const before = JSON.stringify([this.detail.blocked ?? [], this.detail.waitingFor ?? []]);
    const remaining: string[] = [];
    const blocked: string[] = [];
    const evictedBefore = this.evicted;
    for (const node of this.liveNodes()) {
      if ((await this.identify(node)) === undefined) continue;
      const result = await this.drainNode(node, undefined);
      remaining.push(...result.map(podKey));
      blocked.push(...this.lastBlocked);
    }
    const evicted = this.evicted - evictedBefore;
    this.blocked = blocked.length;
    this.remainingPods = remaining.length;
    setList(this.detail, 'blocked', blocked.sort());
    setList(this.detail, 'waitingFor', listPods(remaining.sort()));
    if (evicted > 0) await this.ctx.noteAction(this.now());
    const changed = JSON.stringify([this.detail.blocked ?? [], this.detail.waitingFor ?? []]) !== before;
    if (this.cmd.step !== 'evicting' || evicted > 0 || changed) {
      // Entering the drain, a pod evicted, or the set of pods still there changed: the drain moves.
      this.detail.progressAt = this.now();
      this.detail.note = remaining.length === 0 ? 'every pod has left the old nodes' : `${remaining.length} pod(s) still on the old nodes`;
      await this.record({ step: 'evicting' });
    }
    return remaining.length === 0;
  }

  /** Pods a PDB refused in the last `drainNode`. */
  private lastBlocked: string[] = [];

  /**
   * One eviction round on one node (an old node, or the replacement during a rollback); returns the
   * pods that still count after it. Events say what blocks it, once per command.
   */
  private async drainNode(node: string, notReady: { nowMs: number } | undefined): Promise<readonly Pod[]> {
    const { nodes } = this.ctx.deps;
    let pods = await nodes.listPodsOnNode(node);
    let evictedHere = 0;
    const blockedHere: string[] = [];
    const protectedHere: string[] = [];
    try {
      for (const pod of pods) {
        const disposition = podDisposition(pod);
        if (disposition === 'protected') protectedHere.push(podKey(pod));
        if (disposition !== 'evict') continue;
        await this.ensureTime();
        const result = await nodes.evictPod(pod.namespace, pod.name, { podUid: pod.uid });
        if (result === 'evicted') evictedHere += 1;
        else if (result === 'blockedByPdb') blockedHere.push(podKey(pod));
      }
    } finally {
      // Even when the round is cut short (time, an error), what was evicted is counted.
      this.evicted += evictedHere;
      this.detail.evicted = (this.detail.evicted ?? 0) + evictedHere;
    }
    // Evicted pods take their grace period to go; a second look tells which have already left.
    if (evictedHere > 0) pods = await nodes.listPodsOnNode(node);
    this.lastBlocked = blockedHere;
    if (blockedHere.length > 0) {
      await this.emit(
        node,
        'DisruptionBlocked',
        `Cannot drain the node yet: a PodDisruptionBudget refuses to evict ${blockedHere.sort().join(', ')}; retrying later (command ${this.cmd.id})`,
      );
    }
    if (protectedHere.length > 0) {
      await this.emit(node, 'DisruptionBlocked', `Cannot drain the node yet: ${protectedHere.sort().join(', ')} has karpenter.sh/do-not-disrupt (command ${this.cmd.id})`);
    }
    return podsThatCount(pods, notReady);
  }

  /**
   * Terminates each old node's recorded instance and deletes its Node object (that uid only), each only
   * after a fresh listing shows nothing that counts on it. False when a pod turned up meanwhile.
   */
  private async terminateAll(): Promise<boolean> {
    const { nodes, instances } = this.ctx.deps;
    for (const node of this.liveNodes()) {
      const live = await this.identify(node);
      if (live === undefined) continue;
      const left = podsThatCount(await nodes.listPodsOnNode(node));
      if (left.length > 0) {
        this.remainingPods = left.length;
        setList(this.detail, 'waitingFor', listPods(left.map(podKey).sort()));
        await this.record({ step: 'evicting' });
        return false;
      }
      const instanceId = this.detail.instances?.[node];
      if (instanceId === undefined) throw new Error(`no EC2 instance id is known for node ${node}`);
      await this.ensureTime();
      await this.emit(node, 'DisruptionTerminating', `Terminating the node: ${this.cmd.reason} consolidation, ${this.cmd.method} (command ${this.cmd.id})`);
      const result = await instances.terminate(instanceId, { requireOurTag: false });
      if (result === 'terminating') this.terminatedInstances.push(instanceId);
      // The instance first: a Node object deleted while its kubelet still runs registers again.
      await nodes.deleteNode(node, this.uidOf(node));
      this.detail.terminated = [...(this.detail.terminated ?? []), node];
    }
    await this.ctx.noteAction(this.now());
    this.detail.note = `terminated ${this.cmd.nodes.join(', ')}`;
    await this.record({ step: 'terminated' });
    return true;
  }

  /**
   * After termination: make sure no Node object of a terminated instance came back (a kubelet shutting
   * down may register again, under a new uid). Only a node whose providerID is that instance is deleted.
   */
  private async finish(): Promise<void> {
    const { nodes } = this.ctx.deps;
    for (const name of this.detail.terminated ?? []) {
      const lookup = await nodes.getNode(name);
      if (!lookup.exists || lookup.node.instanceId !== this.detail.instances?.[name]) continue;
      await nodes.deleteNode(name, lookup.node.uid === undefined ? {} : { uid: lookup.node.uid });
    }
    this.detail.note = 'done';
    await this.record({ step: 'done' });
  }

  // --- identity ---------------------------------------------------------------------------------

  /**
   * The live node when it is still the machine the command decided about; otherwise (deleted, or
   * another machine under the same name) it is marked gone and left alone from now on.
   */
  private async identify(name: string): Promise<Node | undefined> {
    const lookup = await this.ctx.deps.nodes.getNode(name);
    if (!lookup.exists) {
      this.markGone(name, 'it no longer exists');
      return undefined;
    }
    const uid = this.detail.uids?.[name];
    const instanceId = this.detail.instances?.[name];
    if ((uid !== undefined && lookup.node.uid !== uid) || (instanceId !== undefined && lookup.node.instanceId !== instanceId)) {
      this.markGone(name, `another machine (${lookup.node.instanceId ?? lookup.node.uid ?? 'unknown'}) now has its name`);
      return undefined;
    }
    return lookup.node;
  }

  private markGone(name: string, why: string): void {
    if (this.detail.gone?.includes(name)) return;
    this.detail.gone = [...(this.detail.gone ?? []), name];
    this.noteError(`node ${name} is left alone: ${why}`);
  }

  private uidOf(name: string): { uid?: string } {
    const uid = this.detail.uids?.[name];
    return uid === undefined ? {} : { uid };
  }

  // --- plumbing ---------------------------------------------------------------------------------

  /** Old nodes still to act on: not terminated by this command, not gone. */
  private liveNodes(): string[] {
    const done = new Set([...(this.detail.terminated ?? []), ...(this.detail.gone ?? [])]);
    return this.cmd.nodes.filter((n) => !done.has(n));
  }

  private plannedReplacement(pool: string): PlannedReplacement {
    const spec = this.cmd.replacement!;
    return { ...spec, nodePool: pool, worstPricePerHour: this.detail.worstPricePerHour ?? spec.pricePerHour };
  }

  /** Before every step: the lease is still ours and the Lambda has time left. */
  private async ensureTime(): Promise<void> {
    if (this.stoppedBecause === 'lease') throw new Stop('lease', 'the pass lease was lost', false);
    if (this.ctx.deps.remainingMs() < this.ctx.options.marginMs) {
      throw new Stop('time', 'the invocation is running out of time', true);
    }
    if (!(await this.ctx.leaseHeld())) {
      this.stoppedBecause = 'lease';
      throw new Stop('lease', 'the pass lease was lost', false);
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

/** What the plan's snapshot said about a node: the machine the decision is about. */
export interface PlannedNode {
  readonly uid?: string;
  readonly instanceId?: string;
}

/**
 * Starts a command for one decision: checks that each node is still the machine the plan saw, stores
 * the command (before anything is changed) and returns its runner, or says why it was not started.
 *
 * Two invocations may start the same decision (a retried delivery, a lease that expired): the default
 * command id is derived from the decision, so both write the same record and the second one's write is
 * refused. Overlapping but different decisions are caught after the write: a command that finds another
 * unfinished command on one of its nodes steps aside (ends at once, having done nothing).
 */
export async function startCommand(
  decision: Decision,
  ctx: RunContext,
  options: { readonly newId?: () => string; readonly planned?: (name: string) => PlannedNode | undefined; readonly evaluatedAt?: string } = {},
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
  const uids: Record<string, string> = {};
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
    if (node.instanceId === undefined) return { skipped: `node ${name} has no EC2 providerID, so its instance cannot be terminated` };
    if (node.taints.some((t) => t.key === DisruptedTaint.key)) {
      return { skipped: `node ${name} already carries ${DisruptedTaint.key} (another disruption is in progress)` };
    }
    instances[name] = node.instanceId;
    if (node.uid !== undefined) uids[name] = node.uid;
    if (node.unschedulable) cordonedBefore.push(name);
  }
  const nowMs = deps.now();
  const detail: CommandDetail = {
    ...(replacement === undefined ? {} : { pool: replacement.nodePool, worstPricePerHour: replacement.worstPricePerHour }),
    instances,
    ...(Object.keys(uids).length === 0 ? {} : { uids }),
    ...(cordonedBefore.length === 0 ? {} : { cordonedBefore }),
    ...(decision.summary === undefined ? {} : { note: decision.summary }),
  };
  const id = options.newId?.() ?? commandIdFor(decision, instances, uids, options.evaluatedAt);
  const cmd: DisruptionCommand = {
    id,
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

/** A command id that is the same for the same decision on the same machines in the same plan. */
export function commandIdFor(decision: Decision, instances: Readonly<Record<string, string>>, uids: Readonly<Record<string, string>>, evaluatedAt = ''): string {
  const identity = decision.nodes.map((n) => `${n}/${uids[n] ?? ''}/${instances[n] ?? ''}`).join(',');
  const replacement = decision.replacements.map((r) => `${r.nodePool}:${r.capacityType}:${r.instanceTypes.join('|')}`).join(';');
  const digest = createHash('sha256').update([evaluatedAt, decision.method, decision.action, identity, replacement].join('\u0000')).digest('hex');
  return `cmd-${digest.slice(0, 24)}`;
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
