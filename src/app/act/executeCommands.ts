// Acting on a pass's decisions (the Lambda only): each decision becomes a `DisruptionCommand`, stored
// before anything is changed and after every step, so a pass that dies in the middle is carried on by
// the next one (commandRunner.ts has the state machine and its safety rules).
//
// One invocation acts through an `ActSession`, in three phases:
//   resume()       before the pass reads anything else: every unfinished command is carried one tick
//                  forward (progress, or rollback when overdue), so that a failing NodePool file, catalog
//                  or plan can never strand a launched instance or a taint;
//   start(result)  after the plan is saved: removes our taints that no unfinished command owns any more,
//                  then starts one command per decision;
//   drive()        polls the commands still waiting, until they finish, the wait budget is spent, or the
//                  Lambda's remaining time drops under the margin. Whatever is left is resumed by the
//                  next pass: waiting across invocations is the normal case for a replacement that takes
//                  minutes to join or a PodDisruptionBudget that allows one eviction at a time.
// The lease is checked (and renewed when due) before every step of every command.
//
//   executePlan(result, deps)   start + drive (tests)
//   resumeCommands(deps)        resume + drive
//   actOnPass(result, deps)     resume + start + drive
//   makeActor(deps)             a session as runPass's `Actor`
import type { Actor, PassResult } from '../runPass.ts';
import type { Node, NodePool } from '../../core/model/types.ts';
import { COMMAND_ANNOTATION, type ActuatorKind } from '../../core/ports/actuator.ts';
import { DisruptedTaint, DisruptingTaint } from '../../core/model/types.ts';
import type { StateStore } from '../../core/state/ports.ts';
import { FINAL_COMMAND_STEPS, replacementNodeNames, type DisruptionCommand } from '../../core/state/types.ts';
import { recordAction } from '../../core/state/windows.ts';
import { StateConflictError } from '../../core/state/errors.ts';
import { replacementNames } from '../../core/disruption/applyDecision.ts';
import { parseDetail } from './commandDetail.ts';
import { ec2Capacity } from './capacity/ec2.ts';
import { karpenterCapacity } from './capacity/karpenter.ts';
import type { Capacity } from './capacity/types.ts';
import { CommandRunner, type RunContext } from './commandRunner.ts';
import { ProofSession } from './proveLive.ts';
import { startCommand } from './startCommand.ts';
import { sweepOrphans } from './sweep.ts';
import {
  DEFAULT_ACT_OPTIONS,
  type ActDeps,
  type ActOptions,
  type ExecutionReport,
  type ResolvedActOptions,
  type SkippedDecision,
} from './types.ts';

export type {
  ActDeps,
  ActOptions,
  CommandReport,
  ExecutionReport,
  SkippedDecision,
  StopReason,
} from './types.ts';
export { DEFAULT_ACT_OPTIONS } from './types.ts';

/** Starts (and drives as far as this invocation allows) one command per decision of the pass. */
export async function executePlan(result: PassResult, deps: ActDeps, options: ActOptions = {}): Promise<ExecutionReport> {
  const session = new ActSession(deps, options);
  await session.start(result);
  await session.drive();
  return session.report();
}

/** Carries on every unfinished command found in the store. */
export async function resumeCommands(deps: ActDeps, options: ActOptions = {}): Promise<ExecutionReport> {
  const session = new ActSession(deps, options);
  await session.resume();
  await session.drive();
  return session.report();
}

/** Resumes unfinished commands, then starts this pass's decisions, in one polling loop. */
export async function actOnPass(result: PassResult, deps: ActDeps, options: ActOptions = {}): Promise<ExecutionReport> {
  const session = new ActSession(deps, options);
  await session.resume();
  await session.start(result);
  await session.drive();
  return session.report();
}

/**
 * runPass's `Actor`: resumes before the pass reads anything, acts after it saved (or, when planning
 * failed, only drives the resumed commands). `onReport` gets the report (logs, metrics).
 */
export function makeActor(deps: ActDeps, options: ActOptions = {}, onReport?: (report: ExecutionReport) => void): Actor & { report(): ExecutionReport } {
  const session = new ActSession(deps, options);
  return {
    resume: () => session.resume(),
    act: async (result) => {
      if (result !== undefined) await session.start(result);
      await session.drive();
      onReport?.(session.report());
    },
    report: () => session.report(),
  };
}

/**
 * An `onAction` that records `ClusterState.lastActionAt` in the store (the stabilization window of the
 * next passes). Reads the cluster record fresh; a conflict with another writer is retried once.
 */
export function recordActionInStore(store: StateStore): (nowMs: number) => Promise<void> {
  return async (nowMs) => {
    for (let attempt = 1; ; attempt += 1) {
      const previous = await store.load(nowMs);
      if ((previous.cluster.lastActionAt ?? -Infinity) >= nowMs) return;
      try {
        await store.save({ ...previous, cluster: recordAction(previous.cluster, nowMs) }, previous, nowMs);
        return;
      } catch (error) {
        if (!(error instanceof StateConflictError) || attempt >= 2) throw error;
      }
    }
  };
}

// ---------------------------------------------------------------------------------------------------

/** One invocation's acting: the runners it drives, what it skipped, and the lease it keeps. */
export class ActSession {
  private readonly options: ResolvedActOptions;
  private readonly errors: string[] = [];
  private readonly skipped: SkippedDecision[] = [];
  private readonly cleaned: string[] = [];
  private readonly actions: ActionClock;
  private readonly lease: LeaseKeeper;
  private readonly runners: CommandRunner[] = [];
  /** Runners to tick at the next round (new, or resumed and still waiting). */
  private due: CommandRunner[] = [];
  private readonly ctx: RunContext;
  private pools: (name: string) => Promise<NodePool | undefined>;
  private readonly proofs: ProofSession;

  constructor(
    private readonly deps: ActDeps,
    options: ActOptions = {},
  ) {
    this.options = { ...DEFAULT_ACT_OPTIONS, ...definedOnly(options) };
    this.actions = new ActionClock(deps, this.errors);
    this.lease = new LeaseKeeper(deps, this.options.leaseRenewEveryMs, this.errors);
    this.pools = poolLookup(undefined, deps);
    this.proofs = new ProofSession(() => deps.readWorld(), () => deps.now());
    const capacities = new Map<ActuatorKind, Capacity>();
    this.ctx = {
      deps,
      options: this.options,
      pool: (name) => this.pools(name),
      capacity: (kind) => {
        let capacity = capacities.get(kind);
        if (capacity === undefined) {
          capacity = makeCapacity(kind, deps);
          capacities.set(kind, capacity);
        }
        return capacity;
      },
      prove: (oldNodes, own) => this.proofs.prove(oldNodes, own),
      unsettled: () => this.proofs.unsettled(),
      noteEvicted: () => this.proofs.noteEvicted(),
      noteClosed: (node, closed) => this.proofs.close(node, closed),
      awaiting: (ids) => this.awaiting(ids),
      noteAction: (nowMs) => this.actions.note(nowMs),
      leaseHeld: () => this.lease.held(),
    };
  }

  /** Every unfinished command in the store, one tick forward. Never throws: failures are reported. */
  async resume(): Promise<void> {
    let stored: DisruptionCommand[];
    try {
      stored = await this.deps.store.listCommands(this.deps.now());
    } catch (error) {
      this.errors.push(`listing commands: ${message(error)}`);
      return;
    }
    const known = new Set(this.runners.map((r) => r.id));
    // Every unfinished command is known before any is ticked: a command waiting for another one
    // (`awaiting`) takes a command it does not know for one that has ended.
    const resumed = stored.filter((cmd) => !FINAL_COMMAND_STEPS.has(cmd.step) && !known.has(cmd.id)).map((cmd) => new CommandRunner(cmd, cmd.step, this.ctx));
    this.runners.push(...resumed);
    for (const runner of resumed) if ((await runner.tick()) === 'waiting') this.due.push(runner);
    await this.sweep(stored.filter((c) => !FINAL_COMMAND_STEPS.has(c.step)));
  }

  /**
   * Before the pass plans (and whether or not planning then fails): our taints that no unfinished
   * command owns are removed, and capacity we launched that nothing owns is rolled back (sweep.ts).
   */
  private async sweep(unfinished: readonly DisruptionCommand[]): Promise<void> {
    if (this.deps.remainingMs() < this.options.marginMs || !(await this.lease.held())) return;
    let nodes: readonly Node[];
    try {
      nodes = await this.deps.nodes.listNodes();
    } catch (error) {
      this.errors.push(`listing the nodes (sweep): ${message(error)}`);
      return;
    }
    await this.clearOrphanedTaints(nodes, unfinished);
    const unreadable = this.deps.store.unreadableCommandIds?.() ?? new Set<string>();
    const swept = await sweepOrphans(this.ctx, { unfinished, unreadable, nodes });
    this.errors.push(...swept.errors);
    for (const runner of swept.runners) {
      this.runners.push(runner);
      if ((await runner.tick()) === 'waiting') this.due.push(runner);
    }
  }

  /** Clears our orphaned taints, then starts one command per decision of the pass. */
  async start(result: PassResult): Promise<void> {
    if (!result.leaseAcquired || result.plan.dryRun) return;
    if (result.nodePools !== undefined) this.pools = poolLookup(result.nodePools, this.deps);
    let unfinished: DisruptionCommand[];
    try {
      unfinished = (await this.deps.store.listCommands(this.deps.now())).filter((c) => !FINAL_COMMAND_STEPS.has(c.step));
    } catch (error) {
      this.errors.push(`listing commands: ${message(error)}`);
      // Without the list, nodes of unfinished commands cannot be told apart: start nothing new.
      this.skipped.push(...allSkipped(result, 'the stored commands could not be listed'));
      return;
    }
    await this.clearOrphanedTaints(result.cluster?.nodes ?? [], unfinished);

    // Old nodes and replacements of unfinished commands: a later decision naming one was planned on a
    // cluster in which that command did not yet hold it.
    const busy = new Set(unfinished.flatMap((c) => [...c.nodes, ...replacementNodeNames(c)]));
    const snapshot = new Map((result.cluster?.nodes ?? []).map((n) => [n.name, n]));
    // Replacements of decisions not started: a later decision that planned pods onto one of them was
    // computed on a cluster that will not exist, so it is not started either.
    const missing = new Set<string>();
    // Replacements of decisions started -> their command: a later decision that planned pods onto one
    // waits for that command to drain into it before its own first eviction.
    const launchedBy = new Map<string, string>();
    const skip = (index: number, why: string): void => {
      const decision = result.plan.decisions[index]!;
      this.skipped.push({ decision: index, nodes: decision.nodes, why });
      for (const name of replacementNames(index + 1, decision.replacements.length)) missing.add(name);
    };
    for (const [index, decision] of result.plan.decisions.entries()) {
      const dependsOn = Object.values(decision.podDestinations ?? {}).find((to) => missing.has(to));
      if (dependsOn !== undefined) {
        skip(index, `it moves pods onto ${dependsOn}, the replacement of a decision that was not started`);
        continue;
      }
      const clash = decision.nodes.find((n) => busy.has(n));
      if (clash !== undefined) {
        skip(index, `node ${clash} is already part of an unfinished command`);
        continue;
      }
      if (this.deps.remainingMs() < this.options.marginMs) {
        skip(index, 'the invocation ran out of time before starting it');
        continue;
      }
      if (!(await this.lease.held())) {
        skip(index, 'the pass lease was lost');
        continue;
      }
      const awaits = [...new Set(Object.values(decision.podDestinations ?? {}).flatMap((to) => launchedBy.get(to) ?? []))];
      try {
        const started = await startCommand(decision, this.ctx, {
          awaits,
          ...(this.deps.newCommandId === undefined ? {} : { newId: this.deps.newCommandId }),
          planned: (name) => snapshot.get(name),
          evaluatedAt: result.plan.evaluatedAt,
          index,
          ...(result.plan.actuators === undefined ? {} : { actuators: result.plan.actuators }),
          ...(result.cluster === undefined ? {} : { pods: result.cluster.pods }),
        });
        if ('skipped' in started) skip(index, started.skipped);
        else {
          this.runners.push(started.runner);
          this.due.push(started.runner);
          for (const n of decision.nodes) busy.add(n);
          for (const name of replacementNames(index + 1, decision.replacements.length)) launchedBy.set(name, started.runner.id);
          this.deps.onCommandStarted?.({ commandId: started.runner.id, decision, nodes: decision.nodes.map((n) => snapshot.get(n)) });
        }
      } catch (error) {
        skip(index, `could not start: ${message(error)}`);
      }
    }
  }

  /**
   * Why one of `ids` has neither drained into its replacements (its proof done) nor ended, or undefined.
   * Every unfinished command is among the runners (resumed first); one that is not has ended, or its
   * record is lost: nothing to wait for.
   */
  private awaiting(ids: readonly string[]): string | undefined {
    for (const id of ids) {
      const runner = this.runners.find((r) => r.id === id);
      if (runner !== undefined && !FINAL_COMMAND_STEPS.has(runner.step) && !runner.proven) {
        return `command ${id}, onto whose replacement the plan moves this command's pods, has not drained into it yet (${runner.step})`;
      }
    }
    return undefined;
  }

  /** Ticks the due runners; sleeps and ticks the waiting ones again while time and the wait budget allow. */
  async drive(): Promise<void> {
    const sleep = this.deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    let active = this.due;
    this.due = [];
    let waitedMs = 0;
    while (active.length > 0) {
      // Each round proves against a fresh reading of the cluster.
      this.proofs.newRound();
      const waiting: CommandRunner[] = [];
      for (const runner of active) if ((await runner.tick()) === 'waiting') waiting.push(runner);
      if (waiting.length === 0) break;
      const poll = this.sleepMs(waiting);
      if (this.deps.remainingMs() - poll < this.options.marginMs || waitedMs + poll > this.options.maxWaitMs) break;
      await sleep(poll);
      waitedMs += poll;
      if (!(await this.lease.held(true))) {
        for (const runner of waiting) runner.halt('lease');
        break;
      }
      active = waiting;
    }
    await this.actions.flush();
  }

  /**
   * How long to sleep before the next round: a poll, or less when a command waits for kube-scheduler and
   * the last eviction's settle delay ends sooner. The commands of a pass drain one after another, each
   * after the one before has settled, so a whole poll per command would stretch a pass of twenty deletes
   * over three minutes. A command still waiting after the delay (pending pods not bound yet) waits a poll.
   */
  private sleepMs(waiting: readonly CommandRunner[]): number {
    const poll = this.options.pollIntervalMs;
    if (!waiting.some((r) => r.waitsFor === 'scheduler')) return poll;
    const untilSettled = this.proofs.settledAt() - this.deps.now();
    return untilSettled > 0 ? Math.min(poll, untilSettled) : poll;
  }

  report(): ExecutionReport {
    return {
      commands: this.runners.map((r) => r.report()),
      skipped: [...this.skipped],
      errors: [...this.errors],
      ...(this.cleaned.length === 0 ? {} : { cleanedTaints: [...this.cleaned] }),
    };
  }

  /**
   * A node marked by one of our commands (COMMAND_ANNOTATION) whose command is no longer unfinished (a
   * lost record, a recreated table, a crash between a rollback's steps) gets our taint and cordon
   * removed. A node being deleted is left alone (Karpenter's termination owns it), and so is any taint
   * that is not ours: Karpenter's `karpenter.sh/disrupted` is removed only from a node that carries our
   * mark and no deletion, where an older build of this product put it.
   */
  private async clearOrphanedTaints(nodes: readonly Node[], unfinished: readonly DisruptionCommand[]): Promise<void> {
    const owned = new Set(unfinished.map((c) => c.id));
    const marked = nodes.filter((n) => {
      const id = n.annotations[COMMAND_ANNOTATION];
      return id !== undefined && !owned.has(id) && !n.deleting && !this.cleaned.includes(n.name);
    });
    if (marked.length === 0) return;
    let finished: Map<string, DisruptionCommand> | undefined;
    for (const node of marked) {
      try {
        if (!(await this.lease.held())) return;
        // Look again: the snapshot may be minutes old.
        const live = await this.deps.nodes.getNode(node.name);
        if (!live.exists || live.node.uid !== node.uid || live.node.deleting) continue;
        const id = live.node.annotations[COMMAND_ANNOTATION];
        if (id === undefined || owned.has(id)) continue;
        finished ??= new Map((await this.deps.store.listCommands(this.deps.now())).map((c) => [c.id, c]));
        const cmd = finished.get(id);
        if (cmd !== undefined && !FINAL_COMMAND_STEPS.has(cmd.step)) continue;
        const cordonedBefore = cmd === undefined ? false : (parseDetail(cmd.detail).cordonedBefore ?? []).includes(node.name);
        const identity = node.uid === undefined ? {} : { uid: node.uid };
        const legacy = live.node.taints.some((t) => t.key === DisruptedTaint.key);
        await this.deps.nodes.untaintAndUncordon(node.name, DisruptingTaint.key, { ...identity, uncordon: !cordonedBefore });
        if (legacy) await this.deps.nodes.untaintAndUncordon(node.name, DisruptedTaint.key, { ...identity, uncordon: !cordonedBefore });
        this.cleaned.push(node.name);
        await this.deps.nodes
          .createEvent({
            nodeName: node.name,
            reason: 'DisruptionTaintRemoved',
            message: `Removed the disruption taint left by command ${id}, which no longer runs${cmd === undefined ? ' (its record is lost)' : ` (it ended ${cmd.step})`}`,
            type: 'Normal',
          })
          .catch((error: unknown) => this.errors.push(`event on ${node.name}: ${message(error)}`));
      } catch (error) {
        this.errors.push(`clearing the taint of ${node.name}: ${message(error)}`);
      }
    }
  }
}

/** The capacity side of an actuator, from the deps; `karpenter` needs a NodeClaim client. */
function makeCapacity(kind: ActuatorKind, deps: ActDeps): Capacity {
  if (kind === 'ec2') return ec2Capacity(deps.instances, deps.nodes);
  if (deps.nodeClaims === undefined) throw new Error('this deployment has no access to Karpenter NodeClaims, so the karpenter actuator cannot act');
  return karpenterCapacity(deps.nodeClaims, deps.nodes);
}

/**
 * The pass lease, renewed when it was last renewed `everyMs` ago (checked before every step, so a long
 * eviction round or a slow CreateFleet cannot outlive it) and between polling rounds. Once lost, it
 * stays lost for the invocation: nothing more is done or written.
 */
class LeaseKeeper {
  private lost = false;
  private renewedAt: number;

  constructor(
    private readonly deps: ActDeps,
    private readonly everyMs: number,
    private readonly errors: string[],
  ) {
    this.renewedAt = deps.now();
  }

  async held(force = false): Promise<boolean> {
    if (this.lost) return false;
    if (this.deps.renewLease === undefined) return true;
    if (!force && this.deps.now() - this.renewedAt < this.everyMs) return true;
    const ok = await renewed(this.deps.renewLease, this.errors);
    if (ok) this.renewedAt = this.deps.now();
    else this.lost = true;
    return ok;
  }
}

async function renewed(renew: () => Promise<boolean>, errors: string[]): Promise<boolean> {
  try {
    return await renew();
  } catch (error) {
    errors.push(`renewing the lease: ${message(error)}`);
    return false;
  }
}

/**
 * Tells `onAction` when something was disrupted: at once for the first action of the invocation (so a
 * crash right after still starts the stabilization window) and once more at the end with the latest
 * action time, instead of one state write per eviction.
 */
class ActionClock {
  private latest: number | undefined;
  private told: number | undefined;

  constructor(
    private readonly deps: ActDeps,
    private readonly errors: string[],
  ) {}

  async note(nowMs: number): Promise<void> {
    this.latest = Math.max(this.latest ?? nowMs, nowMs);
    if (this.told === undefined) await this.tell(nowMs);
  }

  async flush(): Promise<void> {
    if (this.latest !== undefined && this.latest !== this.told) await this.tell(this.latest);
  }

  private async tell(nowMs: number): Promise<void> {
    this.told = nowMs;
    if (this.deps.onAction === undefined) return;
    try {
      await this.deps.onAction(nowMs);
    } catch (error) {
      this.errors.push(`recording the action time: ${message(error)}`);
    }
  }
}

function poolLookup(fromPass: readonly NodePool[] | undefined, deps: ActDeps): (name: string) => Promise<NodePool | undefined> {
  let pools: Promise<readonly NodePool[]> | undefined = fromPass === undefined ? undefined : Promise.resolve(fromPass);
  return async (name) => {
    pools ??= deps.loadNodePools === undefined ? Promise.resolve([]) : deps.loadNodePools();
    return (await pools).find((p) => p.name === name);
  };
}

function allSkipped(result: PassResult, why: string): SkippedDecision[] {
  return result.plan.decisions.map((d, decision) => ({ decision, nodes: d.nodes, why }));
}

function definedOnly(options: ActOptions): Partial<ResolvedActOptions> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<ResolvedActOptions>;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
