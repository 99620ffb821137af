// One disruption command as a resumable state machine, the same for both actuators (capacity/).
//
//   tainted ──(replace)──> launched ──> replacementReady ──> evicting ──> terminated ──> done
//      │                       │                │               ^  │
//      └──────(delete)─────────┼────────────────┼───────────────┘  └─(no progress for drainTimeout,
//                              │                │                     or a replacement vanished)──> abandoned
//                              └──(a replacement failed or was not ready in time,
//                                  or the pods have no place on the live cluster)──> rollingBack ──> rolledBack
//
// A command may launch several replacements (an m-to-n repack): `launched` means every one of them was
// asked for, `replacementReady` that every one is initialized. The first eviction waits for all of
// them and for the proof (core/disruption/proveCommand.ts) that the old nodes' pods have a place on
// the cluster as it is now; if any replacement fails before that, all are rolled back.
//
// A stored step means: every earlier step is complete, and this one has been started (the command is
// stored at `tainted` before the first taint). Every step is idempotent — taints that are present,
// replacements already launched for the command (found by tag or name), pods already gone, nodes
// already retiring — so a resumed command simply does its stored step again and goes on. The command
// is written with `putCommand(cmd, version)` right after each step, and right after each launch; a
// crash between doing and recording only means the step is done twice.
//
// Rules that are never bent:
// - A command acts only on the machines it decided about. The old nodes' uids and instance ids are
//   recorded when the command starts (from the plan's snapshot, checked against the live node); before
//   every step each old node is looked up again, and a node deleted or registered again under the same
//   name by another machine is left alone for good. Taints and deletes carry the uid as a precondition.
// - No pod is evicted before every replacement is initialized and the pods are proven to fit.
// - A node is retired only after a fresh listing shows no pod that counts (drain.ts) on it: the old
//   nodes', and a replacement's when a rollback removes it (its pods are evicted through the Eviction
//   API like any drain). Pods refused by a PodDisruptionBudget stay, and so does the node, until the
//   drain timeout gives the old nodes back.
// - Every step first checks the Lambda's remaining time and that the pass still holds its lease.
//
// `tick` goes as far as it can without waiting and returns `waiting` when only time can help (a
// replacement is not ready yet, pods are still leaving); the caller sleeps and ticks again, or leaves
// the command to the next pass.
import { DisruptedTaint, DisruptingTaint, type Node, type NodePool, type Pod, type Taint } from '../../core/model/types.ts';
import type { PlannedReplacement } from '../../core/plan.ts';
import { LaunchError, type ActuatorKind, type NodeEvent } from '../../core/ports/actuator.ts';
import { StateConflictError } from '../../core/state/errors.ts';
import { FINAL_COMMAND_STEPS, replacementNodeNames, type CommandStep, type DisruptionCommand, type LaunchedReplacement } from '../../core/state/types.ts';
import type { Capacity, OldNode, ReplacementStatus } from './capacity/types.ts';
import { initialized } from './capacity/initialized.ts';
import { addError, eventKey, eventSent, formatDetail, listPods, parseDetail, rememberEvent, type CommandDetail } from './commandDetail.ts';
import { podDisposition, podKey, podsThatCount } from './drain.ts';
import { largestFirst } from '../../core/scheduling/simulator.ts';
import type { Proof } from '../../core/disruption/proveCommand.ts';
import type { ActDeps, CommandReport, ResolvedActOptions, StopReason } from './types.ts';

export type TickOutcome = 'finished' | 'waiting' | 'stopped';

/**
 * The most a command's clock advances between two looks (see `clock`). Passes run every few minutes; a
 * longer gap (the schedule paused) only makes the deadlines come later, never earlier.
 */
export const MAX_CLOCK_STEP_MS = 15 * 60_000;
/** A waiting command writes its clock when it has advanced this much since it was last written. */
const CLOCK_WRITE_EVERY_MS = 60_000;

/** What a runner needs from the invocation driving it. */
export interface RunContext {
  readonly deps: ActDeps;
  readonly options: ResolvedActOptions;
  /** The NodePool by name (the pass's pools, or loaded once). May throw when the pools cannot be read. */
  pool(name: string): Promise<NodePool | undefined>;
  /** The capacity side of an actuator; throws when this deployment cannot act through it. */
  capacity(kind: ActuatorKind): Capacity;
  /** Places the old nodes' pods on the live cluster (the proof before the first eviction). */
  prove(oldNodes: readonly string[], ownReplacements: readonly string[]): Promise<Proof>;
  /** Why no command should evict its first pod yet (pods evicted or pending not placed yet), or undefined. */
  unsettled(): Promise<string | undefined>;
  /** A command evicted pods just now. */
  noteEvicted(): void;
  /** A command tainted a node (closed: it takes no pod now) or gave it back. */
  noteClosed(node: string, closed: boolean): void;
  /** Why one of these commands has not drained into its replacements yet (nor ended), or undefined. */
  awaiting(commandIds: readonly string[]): string | undefined;
  /** Something was disrupted now (stabilization window). */
  noteAction(nowMs: number): Promise<void>;
  /** True while the pass still holds its lease (renewed when due). */
  leaseHeld(): Promise<boolean>;
}

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
  private waitingFor: 'replacement' | 'pods' | 'scheduler' | undefined;
  private stoppedBecause: StopReason | undefined;
  private endedBecause: string | undefined;
  /** This invocation has tainted the old nodes (step `tainted`). */
  private taintedHere = false;
  /** `clockSeenAt` as last stored. */
  private storedClockSeenAt: number | undefined;

  constructor(
    stored: DisruptionCommand,
    private readonly from: CommandStep | 'new',
    private readonly ctx: RunContext,
  ) {
    this.cmd = stored;
    this.detail = parseDetail(stored.detail);
    this.storedClockSeenAt = this.detail.clockSeenAt;
  }

  get id(): string {
    return this.cmd.id;
  }

  get step(): CommandStep {
    return this.cmd.step;
  }

  /** The old nodes' pods were proven to have a place (this command evicts, or has evicted). */
  get proven(): boolean {
    return this.detail.proven === true;
  }

  private get isReplace(): boolean {
    return (this.cmd.replacements?.length ?? 0) > 0;
  }

  /** Our taint; commands of older builds used Karpenter's. */
  private get taint(): Taint {
    return this.detail.taintKey === undefined ? DisruptedTaint : DisruptingTaint;
  }

  private now(): number {
    return this.ctx.deps.now();
  }

  /**
   * The command's own clock, which the Ready and drain deadlines are measured in (and the times they
   * count from are stamped in). It advances with the wall clock between two looks, but never backwards
   * and at most MAX_CLOCK_STEP_MS per look: a host whose clock jumped (or is skewed) a day ahead cannot
   * end a drain early or roll a replacement back at once, and one a day behind cannot keep a stuck
   * drain alive for a day. Passes look every few minutes, so in normal running it is the wall clock.
   */
  private clock(): number {
    const wall = this.now();
    const seenAt = this.detail.clockSeenAt ?? this.cmd.updatedAt;
    const at = this.detail.clockAt ?? seenAt;
    this.detail.clockAt = at + Math.min(Math.max(0, wall - seenAt), MAX_CLOCK_STEP_MS);
    this.detail.clockSeenAt = wall;
    return this.detail.clockAt;
  }

  /** Ends the command's work for this invocation from outside (lease lost). */
  halt(reason: StopReason): void {
    this.stoppedBecause ??= reason;
  }

  report(): CommandReport {
    const c = this.cmd;
    const launched = c.launched ?? [];
    const first = launched.find((l) => l.index === 0);
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
      ...(first?.instanceId === undefined ? {} : { launchedInstanceId: first.instanceId }),
      ...(first?.nodeName === undefined ? {} : { replacementNodeName: first.nodeName }),
      ...(launched.length === 0 ? {} : { replacements: launched.map((l) => ({ ...l })) }),
      terminatedInstances: [...this.terminatedInstances],
      ...(this.waitingFor === undefined || FINAL_COMMAND_STEPS.has(c.step) ? {} : { waitingFor: this.waitingFor }),
      ...(this.stoppedBecause === undefined ? {} : { stoppedBecause: this.stoppedBecause }),
      ...(this.endedBecause === undefined ? {} : { endedBecause: this.endedBecause }),
      errors: [...this.errors],
    };
  }

  async tick(): Promise<TickOutcome> {
    this.clock();
    const outcome = await this.advance();
    // A command that waits writes nothing else: its clock is written now and then, so that the next
    // look measures a few minutes since this one, not since the last step.
    // (Either way: a wall clock that went back must be written too, or every later look would measure
    // from the time ahead and the clock would stand still until the wall clock caught up.)
    if (outcome === 'waiting' && !(Math.abs((this.detail.clockSeenAt ?? 0) - (this.storedClockSeenAt ?? -Infinity)) < CLOCK_WRITE_EVERY_MS)) await this.recordQuietly();
    return outcome;
  }

  private async advance(): Promise<TickOutcome> {
    this.waitingFor = undefined;
    try {
      for (;;) {
        if (FINAL_COMMAND_STEPS.has(this.cmd.step)) return 'finished';
        await this.ensureTime();
        switch (this.cmd.step) {
          case 'tainted':
            // Once per invocation: a delete waiting for its turn (proveOrRollBack) ticks every poll, and
            // tainting every node again each time cost two API calls per node per poll. A resumed command
            // taints again; the drain looks every node up again before it evicts.
            if (!this.taintedHere) {
              await this.taintAll();
              this.taintedHere = true;
            }
            if (this.liveNodes().length === 0) {
              await this.noOldNodeLeft();
              break;
            }
            if (this.isReplace) {
              if ((await this.launchAll()) === 'later') return this.stopped('error');
              break;
            }
            {
              const waiting = await this.proveAndDrain();
              if (waiting !== undefined) return waiting;
            }
            break;
          case 'launched':
            if (!(await this.awaitReplacements())) return this.waiting('replacement');
            break;
          case 'replacementReady':
          case 'evicting': {
            if (this.isReplace) {
              const state = await this.replacementsState();
              if (state.kind === 'failed') {
                // Before the first eviction nothing has moved: undo all of it. After, the replacements
                // that stand hold pods: keep them and give the old nodes back.
                if (this.cmd.step === 'replacementReady' && !this.detail.evicted) await this.startRollback(state.why);
                else await this.abandon(`${state.why} before the old nodes were drained`);
                break;
              }
              if (state.kind === 'notReady') {
                // No eviction while the pods would have nowhere to go; a long outage ends the drain.
                if (await this.drainStuck('a replacement is not Ready')) break;
                return this.waiting('replacement');
              }
            }
            const waiting = await this.proveAndDrain();
            if (waiting !== undefined) return waiting;
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

  /** Taint, cordon and mark every old node that is still the one decided about. */
  private async taintAll(): Promise<void> {
    let wrote = false;
    for (const node of this.liveNodes()) {
      await this.ensureTime();
      if ((await this.identify(node)) === undefined) continue;
      const result = await this.ctx.deps.nodes.taintAndCordon(node, this.taint, { ...this.uidOf(node), commandId: this.cmd.id });
      if (result === 'gone') this.markGone(node, 'it disappeared before it could be tainted');
      else this.ctx.noteClosed(node, true);
      if (result === 'tainted') wrote = true;
    }
    if (wrote) await this.ctx.noteAction(this.now());
  }

  /** Every old node vanished (or was reused by another machine) before anything was launched or evicted. */
  private async noOldNodeLeft(): Promise<void> {
    if (this.isReplace && (this.cmd.launched?.length ?? 0) > 0) {
      await this.startRollback('every old node was already gone');
      return;
    }
    this.detail.note = 'every old node was already gone; nothing to do';
    await this.record({ step: 'done' });
  }

  /** Asks for every replacement not asked for yet, recording each one at once; a launch that cannot succeed rolls back. */
  private async launchAll(): Promise<'launched' | 'rollingBack' | 'later'> {
    for (const index of (this.cmd.replacements ?? []).keys()) {
      if (this.launchedAt(index) !== undefined) continue;
      const outcome = await this.launchOne(index);
      if (outcome !== 'launched') return outcome;
    }
    this.detail.launchedAt ??= this.clock();
    await this.record({ step: 'launched' });
    return 'launched';
  }

  private async launchOne(index: number): Promise<'launched' | 'rollingBack' | 'later'> {
    const replacement = this.plannedReplacement(index);
    let pool: NodePool | undefined;
    try {
      pool = await this.ctx.pool(replacement.nodePool);
    } catch (error) {
      return this.launchFailed(`the NodePools could not be read: ${message(error)}`);
    }
    if (pool === undefined) return this.launchFailed(`NodePool "${replacement.nodePool}" of the replacement is not known`);
    const capacity = this.ctx.capacity(this.replacementActuator(index));
    const count = this.cmd.replacements!.length;
    for (const node of this.liveNodes()) {
      await this.emit(
        node,
        'DisruptionLaunching',
        `Launching ${count > 1 ? `replacement ${index + 1} of ${count}, ` : 'a '}${replacement.capacityType} (${describeTypes(replacement.instanceTypes)}) through ${capacity.kind === 'karpenter' ? 'a Karpenter NodeClaim' : 'EC2'} before disrupting this node: ${this.cmd.reason} (command ${this.cmd.id})`,
      );
    }
    await this.ensureTime();
    let launched;
    try {
      launched = await capacity.launch({
        commandId: this.cmd.id,
        index,
        nodePool: pool,
        replacement,
        requests: this.detail.requests?.[String(index)] ?? {},
      });
    } catch (error) {
      if (error instanceof LaunchError && !error.retryable) {
        await this.startRollback(`replacement ${index + 1} could not be launched: ${error.problem}`);
        return 'rollingBack';
      }
      return this.launchFailed(message(error));
    }
    this.detail.launchedAt ??= this.clock();
    this.detail.note = `${launched.reused ? 'found already launched' : 'launched'} ${launched.description}`;
    await this.recordLaunched({ index, ref: launched.ref, ...(launched.instanceId === undefined ? {} : { instanceId: launched.instanceId }) });
    return 'launched';
  }

  /** A launch attempt that may succeed later: retried by the next pass until the Ready timeout, then rolled back. */
  private async launchFailed(why: string): Promise<'rollingBack' | 'later'> {
    this.noteError(why);
    if (this.clock() - this.cmd.createdAt >= this.ctx.options.replacementReadyTimeoutMs) {
      await this.startRollback(`no replacement could be launched within ${minutes(this.ctx.options.replacementReadyTimeoutMs)}: ${why}`);
      return 'rollingBack';
    }
    await this.record({});
    return 'later';
  }

  /** True when every replacement is initialized (recorded) or a rollback started; false: keep waiting. */
  private async awaitReplacements(): Promise<boolean> {
    const specs = this.cmd.replacements ?? [];
    if (specs.some((_, i) => this.launchedAt(i) === undefined)) return (await this.launchAll()) !== 'later';
    const ready: LaunchedReplacement[] = [];
    for (const launched of this.sortedLaunched()) {
      const status = await this.statusOf(launched);
      if (status.state === 'failed') {
        await this.startRollback(`replacement ${launched.index + 1} failed: ${status.why}`);
        return true;
      }
      if (status.state === 'initialized') ready.push({ ...launched, nodeName: status.node.name, ...(status.instanceId === undefined ? {} : { instanceId: status.instanceId }) });
      else if (status.instanceId !== undefined && launched.instanceId === undefined) await this.recordLaunched({ ...launched, instanceId: status.instanceId });
    }
    if (ready.length === specs.length) {
      this.detail.note = `replacement${ready.length > 1 ? 's' : ''} ${ready.map((l) => `${l.nodeName} (${l.ref})`).join(', ')} ready`;
      this.detail.progressAt = this.clock();
      await this.record({ step: 'replacementReady', launched: ready });
      return true;
    }
    const launchedAt = this.detail.launchedAt ?? this.cmd.updatedAt;
    if (this.clock() - launchedAt >= this.ctx.options.replacementReadyTimeoutMs) {
      const late = this.sortedLaunched().filter((l) => !ready.some((r) => r.index === l.index));
      await this.startRollback(`replacement${late.length > 1 ? 's' : ''} ${late.map((l) => l.ref).join(', ')} did not become Ready within ${minutes(this.ctx.options.replacementReadyTimeoutMs)}`);
      return true;
    }
    return false;
  }

  /** Where a replace's replacements stand while the old nodes drain. */
  private async replacementsState(): Promise<{ kind: 'ready' } | { kind: 'notReady' } | { kind: 'failed'; why: string }> {
    let notReady = false;
    for (const launched of this.sortedLaunched()) {
      const status = await this.statusOf(launched);
      if (status.state === 'failed') return { kind: 'failed', why: `replacement ${launched.nodeName ?? launched.ref} disappeared (${status.why})` };
      if (status.state !== 'initialized') notReady = true;
    }
    if ((this.cmd.launched?.length ?? 0) < (this.cmd.replacements?.length ?? 0)) return { kind: 'failed', why: 'a replacement was never recorded' };
    return notReady ? { kind: 'notReady' } : { kind: 'ready' };
  }

  /**
   * Before the first eviction: the commands whose replacements this one's pods are planned onto have
   * drained into them (`awaiting` until then), kube-scheduler has placed the pods evicted before (by
   * this command's invocation) and the pending pods it has room for (ProofSession.unsettled), for at
   * most the settle timeout; then the old nodes' pods must have a place on the live cluster (the
   * registered replacements as they really are). `proven` now or before; `awaiting`, `settling`: wait
   * and look again; `rolledBack`: the proof failed and the command is rolled back instead.
   */
  private async proveOrRollBack(): Promise<'proven' | 'awaiting' | 'settling' | 'rolledBack'> {
    if (this.detail.proven) return 'proven';
    await this.ensureTime();
    const awaited = this.ctx.awaiting(this.detail.awaits ?? []);
    if (awaited !== undefined) {
      await this.noteWait(awaited);
      return 'awaiting';
    }
    const since = this.detail.settlingSince;
    // Past the timeout the proof goes ahead: pending pods that kube-scheduler leaves unbound for
    // minutes though the simulation finds them room (a scheduling gate, another scheduler) must not
    // hold every command back; the proof still keeps their room (proveCommand.ts).
    if (since === undefined || this.clock() - since < this.ctx.options.settleTimeoutMs) {
      const why = await this.ctx.unsettled();
      if (why !== undefined) {
        // The timeout counts from the first wait, across invocations (recorded with the note).
        this.detail.settlingSince ??= this.clock();
        await this.noteWait(why);
        return 'settling';
      }
    }
    const proof = await this.ctx.prove(this.liveNodes(), replacementNodeNames(this.cmd));
    if (!proof.ok) {
      const first = proof.unplaced[0]!;
      const more = proof.unplaced.length > 1 ? ` (and ${proof.unplaced.length - 1} more pod(s))` : '';
      await this.startRollback(`pod ${first.pod} would have no place on the cluster as it is now: ${first.why}${more}`);
      return 'rolledBack';
    }
    this.detail.proven = true;
    this.detail.note = `the ${proof.placed.length} pod(s) to move have a place on the live cluster`;
    await this.record({});
    return 'proven';
  }

  /**
   * The proof (proveOrRollBack), then a drain round: the tick's outcome when the command waits, undefined
   * when it moved on (drained and retired, or rolling back).
   */
  private async proveAndDrain(): Promise<TickOutcome | undefined> {
    const proof = await this.proveOrRollBack();
    if (proof === 'awaiting') return this.waiting('replacement');
    if (proof === 'settling') return this.waiting('scheduler');
    if (proof === 'rolledBack') return undefined;
    return (await this.drainAndTerminate()) ? undefined : this.waiting('pods');
  }

  /** Says (in the stored note) what the command waits for before its first eviction, when that changed. */
  private async noteWait(why: string): Promise<void> {
    const note = `waiting before the first eviction: ${why}`;
    if (this.detail.note === note) return;
    this.detail.note = note;
    await this.record({});
  }

  /** Records the rollback's reason and every replacement it must undo, then `rollBack` carries it out (now or in later ticks). */
  private async startRollback(why: string): Promise<void> {
    const launched = [...(this.cmd.launched ?? [])];
    for (const index of (this.cmd.replacements ?? []).keys()) {
      if (launched.some((l) => l.index === index)) continue;
      // A launch whose answer was lost must not be left running.
      const found = await this.ctx.capacity(this.replacementActuator(index)).find(this.cmd.id, index);
      if (found !== undefined) launched.push({ index, ref: found.ref, ...(found.instanceId === undefined ? {} : { instanceId: found.instanceId }) });
    }
    this.detail.rollbackWhy = why;
    this.detail.progressAt = this.clock();
    this.detail.note = `rolling back: ${why}`;
    await this.record({ step: 'rollingBack', launched });
  }

  /**
   * Undo a command that cannot complete: give the old nodes back first (pods leaving the replacements
   * need somewhere to go), then drain each replacement through the Eviction API and only then remove it.
   * True when the rollback is complete (or given up); false: pods are still leaving a replacement.
   */
  private async rollBack(): Promise<boolean> {
    const why = this.detail.rollbackWhy ?? 'the replacement could not be used';
    await this.giveBackOldNodes();
    const kept: string[] = [];
    let leaving = false;
    for (const launched of this.sortedLaunched()) {
      const outcome = await this.rollBackOne(launched);
      if (outcome === 'leaving') leaving = true;
      if (outcome === 'kept') kept.push(launched.nodeName ?? launched.ref);
    }
    if (leaving) {
      await this.record({});
      return false;
    }
    delete this.detail.waitingFor;
    if (kept.length > 0) {
      await this.end('abandoned', `${why}; replacement ${kept.join(', ')} was kept because its pods could not be evicted within ${minutes(this.ctx.options.drainTimeoutMs)}`);
    } else await this.end('rolledBack', why);
    return true;
  }

  /** Drains one replacement (if it registered) and removes it. */
  private async rollBackOne(launched: LaunchedReplacement): Promise<'removed' | 'leaving' | 'kept'> {
    const { deps } = this.ctx;
    const capacity = this.ctx.capacity(this.replacementActuator(launched.index));
    const status = await this.statusOf(launched);
    const node = status.node;
    if (node !== undefined) {
      await this.ensureTime();
      await deps.nodes.taintAndCordon(node.name, this.taint, { ...(node.uid === undefined ? {} : { uid: node.uid }), commandId: this.cmd.id });
      this.ctx.noteClosed(node.name, true);
      const evictedBefore = this.evicted;
      const left = await this.drainNodes([node.name], node.ready && initialized(node) ? undefined : { nowMs: this.now() });
      if (left.length > 0) {
        const before = this.detail.waitingFor?.join(',');
        setList(this.detail, 'waitingFor', listPods(left.map(podKey).sort()));
        if (this.detail.waitingFor?.join(',') !== before || this.evicted > evictedBefore) this.detail.progressAt = this.clock();
        this.detail.progressAt ??= this.clock();
        if (this.clock() - this.detail.progressAt >= this.ctx.options.drainTimeoutMs) {
          // The replacement runs pods that will not leave: it stays, as an ordinary node.
          await deps.nodes.untaintAndUncordon(node.name, this.taint.key, node.uid === undefined ? {} : { uid: node.uid });
          this.ctx.noteClosed(node.name, false);
          return 'kept';
        }
        return 'leaving';
      }
    }
    await this.ensureTime();
    await capacity.remove(launched, node);
    return 'removed';
  }

  /** Untaints and uncordons the old nodes still present (a node cordoned before the command stays cordoned). */
  private async giveBackOldNodes(): Promise<void> {
    const keepCordoned = new Set(this.detail.cordonedBefore ?? []);
    for (const node of this.liveNodes()) {
      await this.ensureTime();
      await this.ctx.deps.nodes.untaintAndUncordon(node, this.taint.key, { ...this.uidOf(node), uncordon: !keepCordoned.has(node) });
      // (Kept cordoned, it still takes no pod: the reading says so.)
      this.ctx.noteClosed(node, false);
    }
  }

  /** Ends the command short of its goal (rolled back or abandoned): an event on each old node, then the final step. */
  private async end(step: 'rolledBack' | 'abandoned', why: string): Promise<void> {
    const reason = step === 'rolledBack' ? 'DisruptionBlocked' : 'DisruptionAbandoned';
    const text = step === 'rolledBack' ? `Disruption rolled back, the node stays: ${why}` : `Disruption given up, the node stays: ${why}`;
    for (const node of this.liveNodes()) await this.emit(node, reason, `${text} (command ${this.cmd.id})`, 'Warning');
    this.endedBecause = why;
    this.detail.note = `${step === 'rolledBack' ? 'rolled back' : 'abandoned'}: ${why}`;
    await this.record({ step });
  }

  /** Gives the drain up: the old nodes are untainted and uncordoned, the command ends `abandoned`. */
  private async abandon(why: string): Promise<void> {
    await this.giveBackOldNodes();
    await this.end('abandoned', why);
  }

  /** True (and the command abandoned) when the drain has made no progress for the drain timeout. */
  private async drainStuck(what: string): Promise<boolean> {
    if (this.detail.progressAt === undefined) {
      // The wait starts counting now, on the command's clock (`updatedAt` is wall time, and moves with
      // every write of a waiting command: measured from it, the timeout would never come).
      this.detail.progressAt = this.clock();
      await this.record({});
      return false;
    }
    const since = this.detail.progressAt;
    if (this.clock() - since < this.ctx.options.drainTimeoutMs) return false;
    const waiting = this.detail.waitingFor?.length ? ` (still waiting for ${this.detail.waitingFor.join(', ')})` : '';
    await this.abandon(`the drain made no progress for ${minutes(this.ctx.options.drainTimeoutMs)}: ${what}${waiting}`);
    return true;
  }

  /** One eviction round, then retirement when nothing that counts is left. True once finished (or given up). */
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
    const draining: string[] = [];
    for (const node of this.liveNodes()) if ((await this.identify(node)) !== undefined) draining.push(node);
    const result = await this.drainNodes(draining, undefined);
    remaining.push(...result.map(podKey));
    blocked.push(...this.lastBlocked);
    const evicted = this.evicted - evictedBefore;
    this.blocked = blocked.length;
    this.remainingPods = remaining.length;
    setList(this.detail, 'blocked', blocked.sort());
    setList(this.detail, 'waitingFor', listPods(remaining.sort()));
    if (evicted > 0) await this.ctx.noteAction(this.now());
    const changed = JSON.stringify([this.detail.blocked ?? [], this.detail.waitingFor ?? []]) !== before;
    if (this.cmd.step !== 'evicting' || evicted > 0 || changed) {
      // Entering the drain, a pod evicted, or the set of pods still there changed: the drain moves.
      this.detail.progressAt = this.clock();
      this.detail.note = remaining.length === 0 ? 'every pod has left the old nodes' : `${remaining.length} pod(s) still on the old nodes`;
      await this.record({ step: 'evicting' });
    }
    return remaining.length === 0;
  }

  /** Pods a PDB (or any refusal) kept in the last `drainNodes`. */
  private lastBlocked: string[] = [];

  /**
   * One eviction round on a set of nodes (the old nodes, or a replacement during a rollback); returns
   * the pods that still count after it. Events say what blocks it, once per command.
   *
   * Pods are evicted largest first, across the nodes, in the order the plan and the proof placed them
   * (core/scheduling/simulator.ts), and a pod that cannot leave yet holds back every smaller one: the
   * room the plan kept for it elsewhere must not be taken by smaller pods kube-scheduler places first
   * (a PodDisruptionBudget pacing one large pod would otherwise strand it Pending).
   */
  private async drainNodes(names: readonly string[], notReady: { nowMs: number } | undefined): Promise<readonly Pod[]> {
    const { nodes } = this.ctx.deps;
    const listed = new Map<string, readonly Pod[]>();
    for (const node of names) listed.set(node, await nodes.listPodsOnNode(node));
    const blockedHere: string[] = [];
    const failedHere: string[] = [];
    const heldHere: string[] = [];
    const protectedOn = new Map<string, string[]>();
    const evictedOn = new Set<string>();
    let evictedHere = 0;
    let waitingFor: Pod | undefined;
    const order = [...listed.values()].flat().filter((pod) => {
      const disposition = podDisposition(pod);
      if (disposition === 'protected') protectedOn.set(pod.nodeName ?? '', [...(protectedOn.get(pod.nodeName ?? '') ?? []), podKey(pod)]);
      return disposition === 'evict';
    });
    try {
      for (const pod of order.sort(largestFirst)) {
        if (waitingFor !== undefined && largestFirst(waitingFor, pod) < 0 && !sameSize(waitingFor, pod)) {
          heldHere.push(podKey(pod));
          continue;
        }
        await this.ensureTime();
        let result;
        try {
          result = await nodes.evictPod(pod.namespace, pod.name, { podUid: pod.uid });
        } catch (error) {
          // Any refusal, not only a PDB's 429, leaves the pod where it is and counts toward the drain
          // timeout (Karpenter bounds its whole drain the same way, whatever the error): a pod under two
          // PDBs (500), a webhook that refuses evictions (403, 400), missing RBAC.
          failedHere.push(`${podKey(pod)} (${message(error)})`);
          waitingFor ??= pod;
          continue;
        }
        if (result === 'evicted') {
          evictedHere += 1;
          evictedOn.add(pod.nodeName ?? '');
        } else if (result === 'blockedByPdb') {
          blockedHere.push(podKey(pod));
          waitingFor ??= pod;
        }
      }
    } finally {
      // Even when the round is cut short (time, an error), what was evicted is counted.
      this.evicted += evictedHere;
      this.detail.evicted = (this.detail.evicted ?? 0) + evictedHere;
      if (evictedHere > 0) this.ctx.noteEvicted();
    }
    // Evicted pods take their grace period to go; a second look tells which have already left.
    for (const node of names) if (evictedOn.has(node)) listed.set(node, await nodes.listPodsOnNode(node));
    this.lastBlocked = [...blockedHere, ...failedHere.map((f) => f.slice(0, f.indexOf(' (')))];
    const where = names.length === 1 ? names[0]! : names.join(', ');
    const eventNode = (keys: readonly string[]) => order.find((p) => keys.includes(podKey(p)))?.nodeName ?? names[0]!;
    if (failedHere.length > 0) {
      this.noteError(`evictions refused on ${where}: ${failedHere.sort().slice(0, 3).join('; ')}${failedHere.length > 3 ? ` and ${failedHere.length - 3} more` : ''}`);
      const keys = failedHere.map((f) => f.slice(0, f.indexOf(' (')));
      await this.emit(eventNode(keys), 'DisruptionBlocked', `Cannot drain the node yet: the Eviction API refuses ${failedHere.sort().join(', ')}; retrying until the drain timeout (command ${this.cmd.id})`, 'Warning');
    }
    if (blockedHere.length > 0) {
      await this.emit(
        eventNode(blockedHere),
        'DisruptionBlocked',
        `Cannot drain the node yet: a PodDisruptionBudget refuses to evict ${blockedHere.sort().join(', ')}; retrying later${heldHere.length > 0 ? `, and ${heldHere.length} smaller pod(s) wait so as not to take its place` : ''} (command ${this.cmd.id})`,
      );
    }
    for (const [node, keys] of protectedOn) {
      await this.emit(
        node === '' ? names[0]! : node,
        'DisruptionBlocked',
        `Cannot drain the node yet: ${keys.sort().join(', ')} has karpenter.sh/do-not-disrupt or no controller that would recreate it (command ${this.cmd.id})`,
      );
    }
    return [...listed.values()].flatMap((pods) => podsThatCount(pods, notReady));
  }

  /**
   * Retires each old node through its actuator (terminates its instance, or deletes its NodeClaim),
   * each only after a fresh listing shows nothing that counts on it. False when a pod turned up meanwhile.
   */
  private async terminateAll(): Promise<boolean> {
    const { nodes } = this.ctx.deps;
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
      await this.ensureTime();
      const via = this.retireVia(node);
      await this.emit(
        node,
        'DisruptionTerminating',
        `${via === 'karpenter' ? 'Deleting the NodeClaim of the node' : 'Terminating the node'}: ${this.cmd.reason} consolidation, ${this.cmd.method} (command ${this.cmd.id})`,
      );
      const started = await this.ctx.capacity(via).retire(this.oldNode(node));
      const instanceId = this.detail.instances?.[node];
      if (started && instanceId !== undefined) this.terminatedInstances.push(instanceId);
      this.detail.terminated = [...(this.detail.terminated ?? []), node];
    }
    await this.ctx.noteAction(this.now());
    this.detail.note = `retired ${this.cmd.nodes.join(', ')}`;
    await this.record({ step: 'terminated' });
    return true;
  }

  /** After retirement: whatever the actuator still has to clean (a Node object that registered again). */
  private async finish(): Promise<void> {
    for (const name of this.detail.terminated ?? []) {
      await this.ctx.capacity(this.retireVia(name)).afterRetire(this.oldNode(name));
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

  private oldNode(name: string): OldNode {
    const uid = this.detail.uids?.[name];
    const instanceId = this.detail.instances?.[name];
    const handle = this.detail.claims?.[name];
    return { name, ...(uid === undefined ? {} : { uid }), ...(instanceId === undefined ? {} : { instanceId }), ...(handle === undefined ? {} : { handle }) };
  }

  // --- plumbing ---------------------------------------------------------------------------------

  /** Old nodes still to act on: not retired by this command, not gone. */
  private liveNodes(): string[] {
    const done = new Set([...(this.detail.terminated ?? []), ...(this.detail.gone ?? [])]);
    return this.cmd.nodes.filter((n) => !done.has(n));
  }

  private launchedAt(index: number): LaunchedReplacement | undefined {
    return this.cmd.launched?.find((l) => l.index === index);
  }

  private sortedLaunched(): LaunchedReplacement[] {
    return [...(this.cmd.launched ?? [])].sort((a, b) => a.index - b.index);
  }

  private statusOf(launched: LaunchedReplacement): Promise<ReplacementStatus> {
    return this.ctx.capacity(this.replacementActuator(launched.index)).status(launched);
  }

  /** Records (or updates) one launched replacement. */
  private async recordLaunched(entry: LaunchedReplacement): Promise<void> {
    const launched = [...(this.cmd.launched ?? []).filter((l) => l.index !== entry.index), entry].sort((a, b) => a.index - b.index);
    await this.record({ launched });
  }

  /** How a replacement is launched; records of older builds only launched through EC2. */
  private replacementActuator(index: number): ActuatorKind {
    return this.cmd.replacements?.[index]?.actuator ?? 'ec2';
  }

  /** How an old node is retired; records of older builds only terminated through EC2. */
  private retireVia(node: string): ActuatorKind {
    return this.detail.retireVia?.[node] ?? 'ec2';
  }

  private plannedReplacement(index: number): PlannedReplacement {
    const spec = this.cmd.replacements![index]!;
    const nodePool = spec.nodePool ?? this.detail.pool ?? '?';
    return {
      instanceTypes: spec.instanceTypes,
      capacityType: spec.capacityType,
      zones: spec.zones,
      pricePerHour: spec.pricePerHour,
      nodePool,
      worstPricePerHour: spec.worstPricePerHour ?? this.detail.worstPricePerHour ?? spec.pricePerHour,
    };
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
  private async record(changes: Partial<Pick<DisruptionCommand, 'step' | 'launched'>>): Promise<void> {
    const next: DisruptionCommand = { ...this.cmd, ...changes, updatedAt: this.now(), detail: formatDetail(this.detail) };
    try {
      this.cmd = await this.ctx.deps.store.putCommand(next, this.cmd.version);
      this.storedClockSeenAt = this.detail.clockSeenAt;
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

  /** What the last tick waited for, when it waited. */
  get waitsFor(): 'replacement' | 'pods' | 'scheduler' | undefined {
    return this.waitingFor;
  }

  private waiting(on: 'replacement' | 'pods' | 'scheduler'): TickOutcome {
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

function setList(detail: CommandDetail, key: 'blocked' | 'waitingFor', values: string[]): void {
  if (values.length === 0) delete detail[key];
  else detail[key] = values;
}

function describeTypes(types: readonly string[]): string {
  if (types.length === 0) return 'no type';
  if (types.length <= 2) return types.join(' or ');
  return `${types[0]} or one of ${types.length - 1} other types`;
}

/** Two pods whose requests are the same for the placement (cpu and memory): either may take the other's room. */
function sameSize(a: Pod, b: Pod): boolean {
  return (a.requests['cpu'] ?? 0) === (b.requests['cpu'] ?? 0) && (a.requests['memory'] ?? 0) === (b.requests['memory'] ?? 0);
}

export function minutes(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
