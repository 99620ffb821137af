// The replay runner: pass after pass of the real product (`runPass`, state kept in a StateStore exactly
// as `--state` keeps it) on a simulated cluster (core/replay/world.ts), whose clock it moves between
// passes and on which it carries the decisions out as the Lambda would.
import type { FeatureGates } from '../../core/featureGates.ts';
import type { Catalog, Cluster, NodePool } from '../../core/model/types.ts';
import { createChurn, type ChurnModel, type ChurnSpec } from '../../core/replay/churn.ts';
import { seededRandom } from '../../core/replay/random.ts';
import {
  money,
  REPLAY_REPORT_FORMAT,
  type ReplayConfigResult,
  type ReplayDecisionRow,
  type ReplayPassRow,
  type ReplayReport,
} from '../../core/replay/report.ts';
import type { SchedulerScoring } from '../../core/replay/scheduler.ts';
import { World } from '../../core/replay/world.ts';
import { formatTime } from '../../core/disruption/text.ts';
import type { StateStore } from '../../core/state/ports.ts';
import { recordAction } from '../../core/state/windows.ts';
import { runPass } from '../runPass.ts';

/** The world's clock moves in steps of this much between passes (churn, launches, pending minutes). */
export const REPLAY_STEP_MS = 60_000;

const OWNER = 'eks-consolidator-replay';
const LEASE_TTL_MS = 10 * 60_000;

export interface ReplayConfig {
  readonly name: string;
  readonly nodePools: readonly NodePool[];
}

/** Workload change between passes: a synthetic churn model, or a recording's arrivals and departures. */
export type WorkloadSource =
  | { readonly kind: 'synthetic'; readonly churn: ChurnSpec; readonly text: string }
  | { readonly kind: 'recording' | 'ledger'; readonly text: string; readonly create: (world: World) => ChurnModel };

export interface ReplayInput {
  readonly cluster: Cluster;
  readonly catalog: Catalog;
  readonly configs: readonly ReplayConfig[];
  readonly startMs: number;
  readonly passes: number;
  readonly intervalMs: number;
  readonly scoring: SchedulerScoring;
  readonly workload: WorkloadSource;
  readonly seed: number;
  readonly launchDelayMs: number;
  readonly gates: FeatureGates;
  /** A fresh, empty state store for each config (the CLI gives file stores in a temporary directory). */
  readonly stateStore: (config: ReplayConfig, index: number) => StateStore;
  readonly notes?: readonly string[];
}

export async function runReplay(input: ReplayInput): Promise<ReplayReport> {
  const endMs = input.startMs + input.passes * input.intervalMs;
  const baseline = replayBaseline(input, endMs);
  const configs: ReplayConfigResult[] = [];
  for (const [index, config] of input.configs.entries()) {
    configs.push(await replayConfig(input, config, input.stateStore(config, index), endMs, baseline.totalCostDollars));
  }
  return {
    format: REPLAY_REPORT_FORMAT,
    version: 1,
    startedAt: formatTime(input.startMs),
    endedAt: formatTime(endMs),
    passes: input.passes,
    intervalMs: input.intervalMs,
    launchDelayMs: input.launchDelayMs,
    scheduler: input.scoring,
    churn: input.workload.text,
    seed: input.seed,
    source: input.workload.kind,
    baseline,
    configs,
    notes: input.notes ?? [],
  };
}

function newWorld(input: ReplayInput, nodePools: readonly NodePool[]): { world: World; churn: ChurnModel } {
  // Two random streams: the workload's (the same timeline for every config) and the scheduler's ties.
  const world = new World(input.cluster, input.startMs, {
    nodePools,
    catalog: input.catalog,
    scoring: input.scoring,
    launchDelayMs: input.launchDelayMs,
    random: seededRandom(input.seed * 2 + 1),
  });
  const churn = input.workload.kind === 'synthetic' ? createChurn(input.workload.churn, world, seededRandom(input.seed * 2)) : input.workload.create(world);
  world.settle();
  return { world, churn };
}

/** The same timeline with nothing consolidated (the first config's pools provision for pending pods). */
function replayBaseline(input: ReplayInput, endMs: number): ReplayReport['baseline'] {
  const { world, churn } = newWorld(input, input.configs[0]?.nodePools ?? []);
  world.advanceTo(endMs, REPLAY_STEP_MS, churn.step);
  const hours = (endMs - input.startMs) / 3_600_000;
  return {
    totalCostDollars: money(world.counters.dollars),
    averageCostPerHour: money(hours > 0 ? world.counters.dollars / hours : world.costPerHour()),
    endCostPerHour: money(world.costPerHour()),
  };
}

async function replayConfig(input: ReplayInput, config: ReplayConfig, store: StateStore, endMs: number, baselineDollars: number): Promise<ReplayConfigResult> {
  const { world, churn } = newWorld(input, config.nodePools);
  const startCostPerHour = world.costPerHour();
  const passes: ReplayPassRow[] = [];
  const decisions: ReplayDecisionRow[] = [];
  for (let k = 0; k < input.passes; k++) {
    const nowMs = input.startMs + k * input.intervalMs;
    world.advanceTo(nowMs, REPLAY_STEP_MS, churn.step);
    const costPerHour = world.costPerHour();
    const snapshot = world.snapshot();
    // The product's own pass, as the Lambda runs it (a real run: Karpenter is modelled as absent, so
    // this product is the only consolidator), its state kept in the store between passes.
    const result = await runPass(
      { readCluster: async () => snapshot, loadCatalog: async () => ({ catalog: input.catalog, warnings: [] }), loadNodePools: async () => config.nodePools, state: store },
      { nowMs, gates: input.gates, dryRun: false, persistState: true, scope: 'all', owner: OWNER, leaseTtlMs: LEASE_TTL_MS, karpenterPresence: 'absent', ledger: false },
    );
    if (!result.leaseAcquired) throw new Error(`replay of ${config.name}: the state store's lease is held by another run`);
    // As the Lambda's actuator: every decision of the plan is carried out.
    const planned = result.plan.decisions;
    for (const d of planned) {
      decisions.push({
        pass: k,
        at: formatTime(nowMs),
        method: d.method,
        action: d.action,
        nodes: d.nodes,
        ...(d.replacements[0] ? { replacement: d.replacements[0].instanceTypes[0] } : {}),
        // A node of unknown price (not in the replay's catalog) saves an unknown amount: counted as 0.
        savingsPerHour: d.savingsPerHour ?? 0,
        podsEvicted: d.evictedPods.length,
        regret: world.regretOf(d.nodes),
      });
    }
    passes.push({
      pass: k,
      at: formatTime(nowMs),
      costPerHour: money(costPerHour),
      nodes: world.nodeCount(),
      pods: snapshot.pods.filter((p) => !p.isDaemonSetPod && !p.isMirrorPod && p.phase !== 'Succeeded' && p.phase !== 'Failed').length,
      pendingPods: world.pendingCount(),
      evictions: planned.reduce((sum, d) => sum + d.evictedPods.length, 0),
      decisions: planned.length,
    });
    if (planned.length > 0) {
      world.carryOut(planned);
      await recordActionTaken(store, nowMs);
    }
  }
  world.advanceTo(endMs, REPLAY_STEP_MS, churn.step);
  const hours = (endMs - input.startMs) / 3_600_000;
  const c = world.counters;
  return {
    name: config.name,
    summary: {
      startCostPerHour: money(startCostPerHour),
      endCostPerHour: money(world.costPerHour()),
      averageCostPerHour: money(hours > 0 ? c.dollars / hours : world.costPerHour()),
      totalCostDollars: money(c.dollars),
      savingsDollars: money(baselineDollars - c.dollars),
      podsEvicted: passes.reduce((sum, p) => sum + p.evictions, 0),
      nodesDisrupted: c.nodesDisrupted,
      nodesReplaced: c.nodesReplaced,
      regret: c.regret,
      pendingPodMinutes: Math.round(c.pendingPodMinutes * 10) / 10,
      decisions: decisions.length,
      nodesLaunchedForPending: c.nodesLaunchedForPending,
    },
    passes,
    decisions,
  };
}

/**
 * What the Lambda's actuator records when it acts: the start of the stabilization window (Karpenter's
 * consolidation design).
 */
async function recordActionTaken(store: StateStore, nowMs: number): Promise<void> {
  if (!(await store.acquireLease(OWNER, nowMs, LEASE_TTL_MS))) return;
  try {
    const previous = await store.load(nowMs);
    await store.save({ ...previous, cluster: recordAction(previous.cluster, nowMs) }, previous, nowMs);
  } finally {
    await store.releaseLease(OWNER);
  }
}
