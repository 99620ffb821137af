// A plan's later waves (docs/how-a-pass-decides.md, step 8: the first plan should come close to where
// consolidation ends, later passes mostly carrying it out). One pass cannot take every move at once: the
// actuator taints every node of a pass before it evicts anything, so a node that receives pods from one
// decision cannot also be replaced in the same pass (the kube-scheduler check refuses it,
// schedulerCheck.ts), and a node whose pods only just moved waits out its pool's consolidateAfter
// (Karpenter's disruption-controls design). Those moves are for the next passes.
//
// The projection plays those passes forward on a model of the cluster: the pass's plan is carried out
// as the actuator does it and the evicted pods are placed as kube-scheduler's default scoring would
// place them (planCheck.ts carryOutPlan), then the same pass runs again on the cluster that leaves,
// once the waits are over, and so on until a pass finds nothing the actuator would carry out. Each
// wave's pass gets the pass's own input, MAX_NODES_PER_COMMAND included, so no projected decision is
// larger than a real one could be. Nothing is acted on from a later wave: each real pass decides again
// from the cluster it reads, so a wave is what the next passes are expected to do, not a promise. What
// the projection cannot know (where the real scheduler puts a pod when several nodes score the same,
// workload changing meanwhile, grace periods and budget windows in between) is why each wave is
// decided again for real.
import { InputError } from '../errors.ts';
import type { Decision, ProjectionStop } from '../plan.ts';
import type { Node, Pod } from '../model/types.ts';
import { activeWindowEndMs } from './budgets.ts';
import { snapshotTiming } from './candidates.ts';
import { podKey } from './pods.ts';
import { formatTime } from './text.ts';
import { runConsolidationPass, type PassInput, type PassOutcome } from './pass.ts';
import { carryOutPlan } from './planCheck.ts';
import type { SchedulerCheckContext } from './schedulerCheck.ts';
import { workUnits } from './work.ts';

/** At most this many change freezes in a row are waited for (a schedule could freeze again and again). */
const MAX_FREEZE_WAITS = 3;

/** Later passes see a new node only once it has been Ready this long (the app's minimum lifetime). */
const SETTLE_FLOOR_MS = 5 * 60_000;

export interface ProjectionLimits {
  /** At most this many later waves (0: none). */
  readonly waves: number;
  /**
   * Stop once the later waves together have done more work than this (workUnits of PassOutcome.work,
   * carrying out included): a bound on the projection's time that does not depend on the machine. Absent: none.
   */
  readonly work?: number;
}

/**
 * The default: 20 later waves, doing together at most about twice the work of the pass itself, so a
 * plan with its projection costs about 3 passes (later waves decide on a cluster with fewer nodes but
 * often more replacements to check, and each such check indexes the whole cluster again).
 */
export function defaultLimits(first: PassOutcome): ProjectionLimits {
  return { waves: 20, work: 2 * Math.max(workUnits(first.work), 10_000) };
}

/**
 * `PLAN_WAVES`: unset or `default` -> the default limits (defaultLimits); `0` or `off` -> no projection;
 * `N` (1-100) -> N later waves, however much they simulate.
 */
export type PlanWaves = 'default' | number;

export function parsePlanWaves(text: string | undefined, source = 'PLAN_WAVES'): PlanWaves {
  const value = text?.trim().toLowerCase() ?? '';
  if (value === '' || value === 'default') return 'default';
  if (value === 'off') return 0;
  const waves = Number(value);
  if (!/^\d+$/.test(value) || waves > 100) throw new InputError('', source, `"${text}" is not a number of waves from 0 to 100, "default" or "off"`);
  return waves;
}

/** The limits `PLAN_WAVES` asks for, for this pass; undefined when the projection is off. */
export function limitsFor(planWaves: PlanWaves, first: PassOutcome): ProjectionLimits | undefined {
  if (planWaves === 'default') return defaultLimits(first);
  return planWaves > 0 ? { waves: planWaves } : undefined;
}

export interface LaterWave {
  /** 2 for the pass after this one's plan is carried out, and so on. */
  readonly wave: number;
  /** The time the wave is projected at: the wave before it carried out, every wait over. */
  readonly atMs: number;
  readonly decisions: readonly Decision[];
  /** The scheduled zero budget(s) the wave waited for (the projection does not stop at a freeze). */
  readonly waitedFor?: string;
  /** Nodes the wave disrupts that an earlier wave (or the pass) launched, and when. */
  readonly relaunched?: readonly { readonly node: string; readonly launchedAtMs: number }[];
  /** Pods the wave evicts that the wave before it (or the pass) had just moved. */
  readonly evictedAgain?: readonly string[];
}

/** How far ahead the projection waits for a scheduled budget of zero to end. */
const FREEZE_HORIZON_MS = 7 * 24 * 3_600_000;

/**
 * The earliest end of a scheduled budget allowing no disruption now, in a pool in scope (Karpenter's
 * budgets with a schedule and a duration: a window with `nodes: "0"` is a change freeze). Undefined when
 * no such window is active or it ends beyond the horizon.
 */
function freezeEnd(input: PassInput, nowMs: number): { endMs: number; text: string } | undefined {
  let best: { endMs: number; text: string } | undefined;
  for (const pool of input.nodePools) {
    if (!(input.poolFilter?.(pool) ?? true)) continue;
    for (const budget of pool.budgets) {
      const zero = 'count' in budget.nodes ? budget.nodes.count === 0 : budget.nodes.percent === 0;
      if (!zero) continue;
      const end = activeWindowEndMs(budget, nowMs);
      if (end === undefined || end - nowMs > FREEZE_HORIZON_MS || (best && best.endMs <= end)) continue;
      best = { endMs: end, text: `scheduled budget "${budget.schedule}" of NodePool "${pool.name}" allows no disruption until ${formatTime(end)}` };
    }
  }
  return best;
}

export interface WaveProjection {
  readonly waves: readonly LaterWave[];
  readonly stoppedBecause: ProjectionStop;
  /** Pods left Pending by the last carried-out wave (the projection stops there). */
  readonly pendingPods: number;
  /** The work the projection did, carrying out included (the unit of PassOutcome.work). */
  readonly work: number;
  /**
   * Where the carried-out model placed the pods of the pass's own decisions (one record per decision,
   * `namespace/name` -> node), absent when the pass decided nothing to carry out.
   */
  readonly firstDestinations?: readonly Readonly<Record<string, string>>[];
}

/** The waves later passes are expected to take after `first` (the pass's own outcome for `input`). */
export function projectLaterWaves(input: PassInput, first: PassOutcome, limits: ProjectionLimits): WaveProjection {
  const waves: LaterWave[] = [];
  const pools = new Map(input.nodePools.map((p) => [p.name, p]));
  // The next pass that can see a wave's nodes again comes after the longest wait of a pool in scope.
  const waitsMs = input.nodePools.filter((p) => input.poolFilter?.(p) ?? true).map((p) => p.consolidateAfterMs ?? 0);
  const settleMs = Math.max(SETTLE_FLOOR_MS, ...waitsMs);
  const original = new Set(input.cluster.nodes.map((n) => n.name));
  const lastEventAt = new Map<string, number>();
  let cluster = input.cluster;
  let outcome = first;
  let nowMs = input.nowMs;
  let work = 0;
  const overLimit = (): boolean => limits.work !== undefined && work > limits.work;
  // Replacements the plan launched, and when; pods the last carried-out wave moved.
  const launchedAt = new Map<string, number>();
  let justMoved = new Set<string>();
  let waits = 0;
  let firstDestinations: readonly Readonly<Record<string, string>>[] | undefined;
  const end = (stoppedBecause: ProjectionStop, pendingPods = 0): WaveProjection => ({
    waves,
    stoppedBecause,
    pendingPods,
    work,
    ...(firstDestinations === undefined ? {} : { firstDestinations }),
  });
  for (let wave = 2; ; wave++) {
    const acted = outcome.moves;
    if (wave > limits.waves + 1) return end('wave limit');
    if (overLimit()) return end('work limit');
    let waitedFor: string | undefined;
    if (acted.length === 0) {
      // Nothing to carry out. A change freeze (a scheduled budget of zero) is not the end: the pass
      // after it ends decides again on the same cluster.
      const freeze = waits < MAX_FREEZE_WAITS ? freezeEnd(input, nowMs) : undefined;
      if (!freeze) return end('settled');
      waits += 1;
      waitedFor = freeze.text;
      nowMs = freeze.endMs;
      justMoved = new Set();
    } else {
      const ctx: SchedulerCheckContext = {
        nodePools: input.nodePools,
        pools,
        catalog: input.catalog,
        nowMs,
        ...(input.simulatorFactory ? { simulatorFactory: input.simulatorFactory } : {}),
      };
      const before = new Set(cluster.nodes.map((n) => n.name));
      const carried = carryOutPlan(ctx, cluster, acted);
      work += carried.work;
      // Where the pods of the wave just carried out landed: the pass's own decisions, or the last wave's.
      const previous = waves[waves.length - 1];
      if (previous === undefined) firstDestinations = carried.destinations;
      else waves[waves.length - 1] = { ...previous, decisions: withExpectedDestinations(previous.decisions, carried.destinations) };
      if (carried.pending.length > 0) return end('pods would stay Pending', carried.pending.length);
      if (overLimit()) return end('work limit');
      for (const name of carried.touched) lastEventAt.set(name, nowMs);
      for (const n of carried.cluster.nodes) if (!before.has(n.name)) launchedAt.set(n.name, nowMs);
      justMoved = new Set(acted.flatMap((m) => m.proposal.candidates.flatMap((c) => c.pods.map(podKey))));
      cluster = carried.cluster;
      nowMs += settleMs;
    }
    const baseTiming = input.timing;
    outcome = runConsolidationPass({
      ...input,
      cluster,
      nowMs,
      verdicts: undefined,
      inFlight: stillThere(input.inFlight, cluster.nodes),
      // A node the model moved pods to (or launched) had its last pod event then; the others keep
      // their history, without grace protection (the projection shows where later passes go, not when).
      timing: (node: Node, pods: readonly Pod[]) => {
        const at = lastEventAt.get(node.name);
        if (at !== undefined) return { lastPodEventAt: at };
        return { lastPodEventAt: (baseTiming ?? snapshotTiming)(node, pods).lastPodEventAt };
      },
      extraReasons: (node: Node) => (original.has(node.name) ? (input.extraReasons?.(node) ?? []) : []),
      replacementPrefix: `wave${wave}-replacement`,
      ...(limits.work === undefined ? {} : { workLimit: limits.work - work }),
    });
    work += workUnits(outcome.work);
    // A wave the work limit stopped before it decided anything says so, rather than "settled"; one that
    // meets a change freeze waits for it (the loop's next turn).
    if (outcome.decisions.length === 0) {
      if (overLimit()) return end('work limit');
      wave -= 1;
      continue;
    }
    waits = 0;
    const disrupted = outcome.decisions.flatMap((d) => d.nodes);
    const relaunched = disrupted.filter((n) => launchedAt.has(n)).map((node) => ({ node, launchedAtMs: launchedAt.get(node)! }));
    const evictedAgain = outcome.decisions.flatMap((d) => d.evictedPods).filter((p) => justMoved.has(p));
    waves.push({
      wave,
      atMs: nowMs,
      decisions: outcome.decisions,
      ...(waitedFor !== undefined ? { waitedFor } : {}),
      ...(relaunched.length > 0 ? { relaunched } : {}),
      ...(evictedAgain.length > 0 ? { evictedAgain } : {}),
    });
  }
}

/** Each decision with where the carried-out model placed its pods (`expectedDestinations`). */
export function withExpectedDestinations(decisions: readonly Decision[], destinations: readonly Readonly<Record<string, string>>[]): Decision[] {
  return decisions.map((d, i) => {
    const placed = destinations[i];
    // A decision that moves no pod has nothing to say.
    return placed === undefined || d.evictedPods.length === 0 ? d : { ...d, expectedDestinations: placed };
  });
}

/** The in-flight nodes the carried-out cluster still has (their commands are not this plan's). */
function stillThere(inFlight: ReadonlySet<string> | undefined, nodes: readonly Node[]): Set<string> {
  if (!inFlight || inFlight.size === 0) return new Set();
  return new Set(nodes.filter((n) => inFlight.has(n.name)).map((n) => n.name));
}
