// Acting on a pass's decisions (the Lambda only): each decision becomes a `DisruptionCommand`, stored
// before anything is changed and after every step, so a pass that dies in the middle is carried on by
// the next one (commandRunner.ts has the state machine and its safety rules).
//
//   executePlan(result, deps)   starts the decisions of this pass
//   resumeCommands(deps)        carries on every unfinished command in the store
//   actOnPass(result, deps)     both, in one polling loop (unfinished work first): what the Lambda runs
//   makeAct(deps)               `actOnPass` as runPass's `Act` callback
//
// Commands advance together: each is ticked as far as it can go without waiting, then the invocation
// sleeps one poll interval and ticks the waiting ones again, until they finish, the wait budget is
// spent, or the Lambda's remaining time drops under the margin. Whatever is left is resumed by the
// next pass: waiting across invocations is the normal case for a replacement that takes minutes to
// join or a PodDisruptionBudget that allows one eviction at a time.
import { randomUUID } from 'node:crypto';
import type { Act, PassResult } from '../runPass.ts';
import type { NodePool } from '../../core/model/types.ts';
import type { StateStore } from '../../core/state/ports.ts';
import { FINAL_COMMAND_STEPS } from '../../core/state/types.ts';
import { recordAction } from '../../core/state/windows.ts';
import { StateConflictError } from '../../core/state/errors.ts';
import { CommandRunner, startCommand, type RunContext } from './commandRunner.ts';
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
  return run({ result, resume: false }, deps, options);
}

/** Carries on every unfinished command found in the store. */
export async function resumeCommands(deps: ActDeps, options: ActOptions = {}): Promise<ExecutionReport> {
  return run({ resume: true }, deps, options);
}

/** Resumes unfinished commands, then starts this pass's decisions, in one polling loop. */
export async function actOnPass(result: PassResult, deps: ActDeps, options: ActOptions = {}): Promise<ExecutionReport> {
  return run({ result, resume: true }, deps, options);
}

/** runPass's `Act` callback: `actOnPass`, its report handed to `onReport` (logs, metrics). */
export function makeAct(deps: ActDeps, options: ActOptions = {}, onReport?: (report: ExecutionReport) => void): Act {
  return async (result) => {
    const report = await actOnPass(result, deps, options);
    onReport?.(report);
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

interface RunRequest {
  readonly result?: PassResult;
  readonly resume: boolean;
}

async function run(request: RunRequest, deps: ActDeps, options: ActOptions): Promise<ExecutionReport> {
  const resolved: ResolvedActOptions = { ...DEFAULT_ACT_OPTIONS, ...definedOnly(options) };
  const errors: string[] = [];
  const skipped: SkippedDecision[] = [];
  const actions = new ActionClock(deps, errors);
  const ctx: RunContext = {
    deps,
    options: resolved,
    pool: poolLookup(request.result?.nodePools, deps),
    noteAction: (nowMs) => actions.note(nowMs),
  };
  const runners: CommandRunner[] = [];

  let stored: Awaited<ReturnType<StateStore['listCommands']>> = [];
  try {
    stored = await deps.store.listCommands(deps.now());
  } catch (error) {
    errors.push(`listing commands: ${message(error)}`);
    // Without the list, nodes of unfinished commands cannot be told apart: start nothing new.
    if (request.result !== undefined) return { commands: [], skipped: allSkipped(request.result, 'the stored commands could not be listed'), errors };
  }
  const unfinished = stored.filter((c) => !FINAL_COMMAND_STEPS.has(c.step));
  if (request.resume) for (const cmd of unfinished) runners.push(new CommandRunner(cmd, cmd.step, ctx));

  const result = request.result;
  if (result !== undefined && result.leaseAcquired && !result.plan.dryRun) {
    const busy = new Set(unfinished.flatMap((c) => c.nodes));
    const newId = deps.newCommandId ?? randomUUID;
    for (const [index, decision] of result.plan.decisions.entries()) {
      const clash = decision.nodes.find((n) => busy.has(n));
      if (clash !== undefined) {
        skipped.push({ decision: index, nodes: decision.nodes, why: `node ${clash} is already part of an unfinished command` });
        continue;
      }
      if (deps.remainingMs() < resolved.marginMs) {
        skipped.push({ decision: index, nodes: decision.nodes, why: 'the invocation ran out of time before starting it' });
        continue;
      }
      try {
        const started = await startCommand(decision, ctx, newId);
        if ('skipped' in started) skipped.push({ decision: index, nodes: decision.nodes, why: started.skipped });
        else {
          runners.push(started.runner);
          for (const n of decision.nodes) busy.add(n);
        }
      } catch (error) {
        skipped.push({ decision: index, nodes: decision.nodes, why: `could not start: ${message(error)}` });
      }
    }
  }

  await drive(runners, ctx, errors);
  await actions.flush();
  return { commands: runners.map((r) => r.report()), skipped, errors };
}

/** Ticks every runner; sleeps and ticks the waiting ones again while time and the wait budget allow. */
async function drive(runners: readonly CommandRunner[], ctx: RunContext, errors: string[]): Promise<void> {
  const { deps, options } = ctx;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let active = [...runners];
  let waitedMs = 0;
  while (active.length > 0) {
    const waiting: CommandRunner[] = [];
    for (const runner of active) {
      if ((await runner.tick()) === 'waiting') waiting.push(runner);
    }
    if (waiting.length === 0) return;
    const poll = options.pollIntervalMs;
    if (deps.remainingMs() - poll < options.marginMs || waitedMs + poll > options.maxWaitMs) return;
    await sleep(poll);
    waitedMs += poll;
    if (deps.renewLease !== undefined && !(await renewed(deps.renewLease, errors))) {
      for (const runner of waiting) runner.halt('lease');
      return;
    }
    active = waiting;
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
