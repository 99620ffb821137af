// A pass, as both entry points run it: take the lease, load the state, read the cluster, observe what
// changed since the last pass, decide, persist, and (for the Lambda) act. The CLI's `plan --state` and
// the Lambda share this code; only the adapters handed in differ.
import { clusterLowerBound } from '../core/efficiency/lowerBound.ts';
import type { ReplacementBound } from '../core/disruption/sizeBound.ts';
import { buildPlan } from '../core/buildPlan.ts';
import { budgetAllowance } from '../core/disruption/budgets.ts';
import { runConsolidationPass, type PassOutcome } from '../core/disruption/pass.ts';
import { limitsFor, projectLaterWaves, type PlanWaves, type WaveProjection } from '../core/disruption/laterWaves.ts';
import { indexCatalog } from '../core/disruption/prices.ts';
import { formatTime } from '../core/disruption/text.ts';
import type { FeatureGates } from '../core/featureGates.ts';
import type { Catalog, Cluster, Node, NodePool } from '../core/model/types.ts';
import type { Plan } from '../core/plan.ts';
import {
  clusterFingerprint,
  graceProtection,
  observeNodes,
  recordEvaluation,
} from '../core/state/observe.ts';
import type { StateStore } from '../core/state/ports.ts';
import { emptyPassState, type NodeState, type PassState } from '../core/state/types.ts';
import { minimumLifetimeOk, noChangeSkip, recordSearch, stabilizationHold } from '../core/state/windows.ts';
import { goDurationOrNull as durationOrNull } from '../core/input/duration.ts';
import { planAroundInFlight, unplacedNote } from '../core/disruption/inFlight.ts';
import { karpenterConflictNotes, karpenterConflicts, type KarpenterPresence } from '../core/disruption/coexistence.ts';
import { actuatorNotes, chooseActuators, withLaunchedLabels, type ActuatorSetting } from '../core/disruption/actuatorChoice.ts';
import { createSimulator } from '../core/scheduling/simulator.ts';
import type { PreferencePolicy } from '../core/scheduling/preferences.ts';
import { orphanPodsNote, unknownPriceNotes, unmanagedClusterNote } from '../core/inputNotes.ts';
import { parseDetail } from './act/commandDetail.ts';
import { ledgerEntryFor } from '../core/state/ledger.ts';

export interface PassDependencies {
  readonly readCluster: () => Promise<Cluster>;
  readonly loadCatalog: (nowMs: number) => Promise<{ readonly catalog: Catalog; readonly warnings: readonly string[] }>;
  readonly loadNodePools: () => Promise<readonly NodePool[]>;
  /** Absent: nothing is remembered between passes (a one-off plan). */
  readonly state?: StateStore;
}

/** Which pools a pass owns: the emptiness-TTL function owns `WhenEmpty` pools, consolidation the rest. */
export type PassScope = 'all' | 'consolidation' | 'emptiness';

export interface PassSettings {
  readonly nowMs: number;
  readonly gates: FeatureGates;
  /** Plan only: the Lambda's dry run changes nothing anywhere, state included. */
  readonly dryRun: boolean;
  /** Write the observed state back (the CLI's `--state` does even though it only plans). */
  readonly persistState: boolean;
  readonly scope: PassScope;
  /** Lease owner id (e.g. the Lambda request id). */
  readonly owner: string;
  readonly leaseTtlMs: number;
  /**
   * The time the lease is measured in, when it differs from the pass time: the CLI plans at any `--now`,
   * but its lease is about processes running now (a run killed with a future `--now` must not block
   * later runs). Default `nowMs`.
   */
  readonly leaseNowMs?: number;
  readonly notes?: readonly string[];
  /** Whether Karpenter runs next to this product (default `auto`: detected). See coexistence.ts. */
  readonly karpenterPresence?: KarpenterPresence;
  /** The NodePools are read from the cluster's API (so Karpenter's CRD is installed). */
  readonly nodePoolsFromCluster?: boolean;
  /** How large a replacement may be (default: 2x the largest node a move removes; null: unbounded). */
  readonly replacementBound?: ReplacementBound | null;
  /**
   * The later waves the plan projects (`PLAN_WAVES`, core/disruption/laterWaves.ts): `default` (20 waves,
   * about twice the pass's own work), a number of waves, or 0 for none. Default 0: the CLI and the
   * handlers pass what `PLAN_WAVES` says; the replay, whose passes are simulated, projects nothing.
   */
  readonly planWaves?: PlanWaves;
  /**
   * Record the pass in the store's ledger (docs/replay.md, "The Lambda's ledger"), when the store keeps
   * one. Default: for real passes (not dry runs). The replay turns it off: its passes are simulated.
   */
  readonly ledger?: boolean;
  /** The most nodes one decision disrupts (`MAX_NODES_PER_COMMAND`; default 100, core/disruption/commandCap.ts). */
  readonly maxNodesPerCommand?: number;
  /** Karpenter's preference policy (`PREFERENCE_POLICY`; default Respect, core/scheduling/preferences.ts). */
  readonly preferencePolicy?: PreferencePolicy;
  /**
   * Which actuator acts on the pools (`ACTUATOR`, default `auto`: Karpenter NodeClaims where Karpenter
   * serves the pool, EC2 launch templates elsewhere; core/disruption/actuatorChoice.ts). The choice per
   * pool is in the plan's `actuators`.
   */
  readonly actuator?: ActuatorSetting;
}

export interface PassResult {
  readonly plan: Plan;
  /** False when another pass holds the lease: nothing was decided. */
  readonly leaseAcquired: boolean;
  readonly outcome?: PassOutcome;
  /** The state as stored at the end of the pass (or as it would be, for a dry run). */
  readonly state: PassState;
  readonly cluster?: Cluster;
  readonly nodePools?: readonly NodePool[];
  readonly catalog?: Catalog;
}

/**
 * Acting (Lambda only), while the lease is held. `resume` runs first, before the pass reads the cluster,
 * the catalog or the NodePools, so that unfinished commands progress or roll back whatever else fails
 * in the pass; `act` runs after the state is saved, with the result, or with undefined when the pass
 * failed before (then it only drives the resumed commands). Neither may throw.
 */
export interface Actor {
  resume(): Promise<void>;
  act(result: PassResult | undefined): Promise<void>;
}

const inScope = (scope: PassScope) => (pool: NodePool) =>
  scope === 'all' || (scope === 'emptiness') === (pool.consolidationPolicy === 'WhenEmpty');

export async function runPass(deps: PassDependencies, settings: PassSettings, actor?: Actor): Promise<PassResult> {
  const { nowMs } = settings;
  const store = deps.state;
  const mutating = !settings.dryRun || settings.persistState;
  if (store && mutating && !(await store.acquireLease(settings.owner, settings.leaseNowMs ?? nowMs, settings.leaseTtlMs))) {
    return {
      leaseAcquired: false,
      state: emptyPassState(),
      plan: {
        dryRun: settings.dryRun,
        evaluatedAt: formatTime(nowMs),
        decisions: [],
        nodes: [],
        notes: ['another pass holds the lease; this pass did nothing'],
      },
    };
  }
  const acting = actor !== undefined && !settings.dryRun ? actor : undefined;
  try {
    if (acting) await acting.resume();
    let result: PassResult;
    try {
      result = await plan(deps, settings);
    } catch (error) {
      // The pass failed (a NodePool refused, the catalog unreachable, ...): resumed commands still run.
      if (acting) await acting.act(undefined);
      throw error;
    }
    if (acting) await acting.act(result);
    return result;
  } finally {
    if (store && mutating) await store.releaseLease(settings.owner);
  }
}

/** Read, observe, decide, save: the pass itself, once the lease is held. */
async function plan(deps: PassDependencies, settings: PassSettings): Promise<PassResult> {
  const { nowMs } = settings;
  const store = deps.state;
  const mutating = !settings.dryRun || settings.persistState;
  {
    const previous = store ? await store.load(nowMs) : emptyPassState();
    const [cluster, catalogLoad, readPools] = await Promise.all([deps.readCluster(), deps.loadCatalog(nowMs), deps.loadNodePools()]);
    const catalog = catalogLoad.catalog;
    // Which actuator carries out each pool's decisions (chosen per pool, from the pool and the nodes).
    const choices = chooseActuators({
      nodePools: readPools,
      nodes: cluster.nodes,
      setting: settings.actuator ?? 'auto',
      presence: settings.karpenterPresence ?? 'auto',
      poolsFromCluster: settings.nodePoolsFromCluster ?? false,
    });
    // A pool launched from its launch template gives its new nodes fewer labels than Karpenter would: the
    // simulation sees every pool as its replacements will really be labelled (launchedLabels.ts).
    const nodePools = withLaunchedLabels(readPools, cluster.nodes, choices);
    const observed = observeNodes(cluster, previous, nowMs);
    const pools = new Map(nodePools.map((p) => [p.name, p]));
    const notes = [
      ...(settings.notes ?? []),
      ...catalogLoad.warnings,
      ...unmanagedClusterNote(cluster, nodePools),
      ...orphanPodsNote(cluster),
      ...unknownPriceNotes(cluster, nodePools, catalog, indexCatalog(catalog)),
    ];

    // Next to Karpenter: a real run leaves alone the pools Karpenter also consolidates (coexistence.ts).
    const conflicts = karpenterConflicts({
      nodePools,
      nodes: cluster.nodes,
      presence: settings.karpenterPresence ?? 'auto',
      poolsFromCluster: settings.nodePoolsFromCluster ?? false,
    });
    notes.push(...karpenterConflictNotes(nodePools.filter(inScope(settings.scope)), conflicts, settings.dryRun));
    // The in-scope pools' actuators: in the plan, for the actuator and a person.
    const scopedPools = nodePools.filter(inScope(settings.scope));
    const actuators = new Map(scopedPools.map((pool) => [pool.name, choices.get(pool.name)!] as const));
    notes.push(...actuatorNotes(scopedPools, actuators));
    const leftToKarpenter = (node: Node) => (!settings.dryRun && node.nodePool !== undefined ? conflicts.get(node.nodePool) : undefined);

    // Unfinished commands: their nodes are in flight, and the pods they are moving are placed first.
    const view = planAroundInFlight({
      cluster,
      commands: previous.commands,
      nodePools,
      catalog,
      nowMs,
      replacementPool: (cmd) => parseDetail(cmd.detail).pool,
      simulatorFactory: createSimulator,
    });
    const unplaced = unplacedNote(view);
    if (unplaced !== undefined) notes.push(unplaced);
    const passInput = {
      cluster: view.cluster,
      nodePools,
      catalog,
      nowMs,
      gates: settings.gates,
      parseDuration: durationOrNull,
      inFlight: view.inFlight,
      timing: (node: Node) => nodeTiming(observed[node.name], node, pools.get(node.nodePool ?? ''), nowMs),
      extraReasons: (node: Node) => [
        ...(node.ready && !minimumLifetimeOk(node, nowMs) ? ['node has been Ready for less than the 5-minute minimum node lifetime'] : []),
        ...(view.nominated.has(node.name) ? [`receives pods of unfinished command ${view.nominated.get(node.name)}, so it is left alone until they settle`] : []),
        ...(view.nominatedForDeleting.has(node.name) ? [`receives pods of node ${view.nominatedForDeleting.get(node.name)}, which is being deleted, so it is left alone until they settle`] : []),
        ...(leftToKarpenter(node) === undefined ? [] : [leftToKarpenter(node)!]),
      ],
      poolFilter: inScope(settings.scope),
      ...(settings.replacementBound === undefined ? {} : { replacementBound: settings.replacementBound }),
      ...(settings.maxNodesPerCommand === undefined ? {} : { maxNodesPerCommand: settings.maxNodesPerCommand }),
      ...(settings.preferencePolicy === undefined ? {} : { preferencePolicy: settings.preferencePolicy }),
      methods: view.unplaced.length > 0 ? ([] as const) : settings.scope === 'emptiness' ? (['emptiness'] as const) : undefined,
    };

    // Karpenter's consolidation design: after an action, wait while pods are pending or controllers are
    // short of ready replicas.
    const hold = stabilizationHold(cluster, previous, nowMs);
    // Polling (Karpenter's consolidation design): nothing changed since a search that found nothing:
    // skip the search. The fingerprint includes which nodes are candidates and what the budgets allow
    // now, so a node crossing consolidateAfter or a budget window opening counts as a change.
    const probe = runConsolidationPass({ ...passInput, methods: [] });
    // Only a pass with a state store compares it or keeps it (the CLI without --state has neither, and
    // hashing every pod is a tenth of reading a 5,000-node cluster).
    const fingerprint = store ? clusterFingerprint(cluster, nodePools, candidateNames(probe), budgetsNow(cluster, nodePools, nowMs)) : undefined;
    const skip = hold.hold || fingerprint === undefined ? { skip: false } : noChangeSkip(fingerprint, previous, nowMs);

    let outcome: PassOutcome;
    let projection: WaveProjection | undefined;
    const heldReasons = new Map<string, string[]>();
    if (hold.hold || skip.skip) {
      outcome = probe;
      const why = hold.hold ? `${hold.why} (until ${formatTime(hold.until!)} at the latest)` : `search skipped: ${skip.why} (searching again by ${formatTime(skip.until!)})`;
      notes.push(why);
      for (const name of probe.evaluated) heldReasons.set(name, [why]);
    } else {
      outcome = runConsolidationPass({ ...passInput, verdicts: probe.verdicts });
      // Where the later passes are expected to go once this plan is carried out (laterWaves.ts).
      const limits = limitsFor(settings.planWaves ?? 0, outcome);
      if (limits) projection = projectLaterWaves(passInput, outcome, limits);
    }

    let nodes: Record<string, NodeState> = observed;
    if (!hold.hold && !skip.skip) {
      nodes = { ...observed };
      for (const name of outcome.examined) {
        const record = nodes[name];
        const pool = pools.get(outcome.verdicts.find((v) => v.node.name === name)?.poolName ?? '');
        if (record) nodes[name] = recordEvaluation(record, { actedOn: outcome.disruptedBy.has(name), moveFound: outcome.worthMoving.has(name) }, pool?.consolidationGracePeriodMs ?? null, nowMs);
      }
    }
    const next: PassState = {
      ...previous,
      nodes,
      cluster: hold.hold || skip.skip || fingerprint === undefined ? previous.cluster : recordSearch(previous.cluster, fingerprint, outcome.decisions.length === 0, nowMs),
    };

    const lowerBound = clusterLowerBound({ cluster: view.cluster, nodePools, catalog, verdicts: outcome.verdicts, inScope: outcome.evaluated });
    let built = buildPlan(outcome, {
      nowMs,
      dryRun: settings.dryRun,
      prices: indexCatalog(catalog),
      notes,
      nodeReasons: heldReasons,
      lowerBound,
      pods: cluster.pods,
      ...(projection ? { projection } : {}),
      actuators,
    });
    const stored = store && mutating ? await store.save(next, previous, nowMs) : next;
    if (store?.appendLedger && (settings.ledger ?? !settings.dryRun)) {
      // Bookkeeping only: a ledger that cannot be written does not fail the pass, it says so.
      try {
        await store.appendLedger(ledgerEntryFor({ plan: built, cluster, catalog, commands: previous.commands, nowMs, ...(previous.cluster.lastSearchAt === undefined ? {} : { finishedAfterMs: previous.cluster.lastSearchAt }) }));
      } catch (error) {
        built = { ...built, notes: [...(built.notes ?? []), `the ledger entry of this pass was not written: ${(error as Error).message}`] };
      }
    }
    return { plan: built, leaseAcquired: true, outcome, state: stored, cluster, nodePools, catalog };
  }
}

/** Timing from the stored node record; without one (or for an unknown pool), the snapshot's view. */
function nodeTiming(record: NodeState | undefined, node: Node, pool: NodePool | undefined, nowMs: number) {
  const lastPodEventAt = record?.lastPodEventAt ?? node.readySince ?? node.createdAt;
  const grace = record ? graceProtection(record, pool?.consolidationGracePeriodMs ?? null, nowMs) : { protected: false };
  return { lastPodEventAt, ...(grace.protected ? { graceProtectedUntil: grace.until } : {}) };
}

function candidateNames(outcome: PassOutcome): string[] {
  return outcome.verdicts.filter((v) => v.candidate !== undefined).map((v) => v.node.name).sort();
}

function budgetsNow(cluster: Cluster, nodePools: readonly NodePool[], nowMs: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const pool of nodePools) {
    const nodes = cluster.nodes.filter((n) => n.nodePool === pool.name);
    for (const reason of ['Empty', 'Underutilized'] as const) {
      out[`${pool.name}/${reason}`] = budgetAllowance(pool, nodes, reason, nowMs, new Set()).allowed;
    }
  }
  return out;
}
