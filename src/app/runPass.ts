// A pass, as both entry points run it: take the lease, load the state, read the cluster, observe what
// changed since the last pass, decide, persist, and (for the Lambda) act. The CLI's `plan --state` and
// the Lambda share this code; only the adapters handed in differ (CONTRACT section 1).
import { buildPlan } from '../core/buildPlan.ts';
import { budgetAllowance } from '../core/disruption/budgets.ts';
import { runConsolidationPass, type PassOutcome } from '../core/disruption/pass.ts';
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
  readonly notes?: readonly string[];
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

/** Acting on the decisions (Lambda only), while the lease is held. */
export type Act = (result: PassResult) => Promise<void>;

const inScope = (scope: PassScope) => (pool: NodePool) =>
  scope === 'all' || (scope === 'emptiness') === (pool.consolidationPolicy === 'WhenEmpty');

export async function runPass(deps: PassDependencies, settings: PassSettings, act?: Act): Promise<PassResult> {
  const { nowMs } = settings;
  const store = deps.state;
  const mutating = !settings.dryRun || settings.persistState;
  if (store && mutating && !(await store.acquireLease(settings.owner, nowMs, settings.leaseTtlMs))) {
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
  try {
    const previous = store ? await store.load(nowMs) : emptyPassState();
    const [cluster, catalogLoad, nodePools] = await Promise.all([deps.readCluster(), deps.loadCatalog(nowMs), deps.loadNodePools()]);
    const catalog = catalogLoad.catalog;
    const observed = observeNodes(cluster, previous, nowMs);
    const pools = new Map(nodePools.map((p) => [p.name, p]));
    const notes = [...(settings.notes ?? []), ...catalogLoad.warnings];

    const passInput = {
      cluster,
      nodePools,
      catalog,
      nowMs,
      gates: settings.gates,
      parseDuration: durationOrNull,
      inFlight: new Set(previous.commands.filter((c) => c.step !== 'done' && c.step !== 'rolledBack').flatMap((c) => c.nodes)),
      timing: (node: Node) => nodeTiming(observed[node.name], node, pools.get(node.nodePool ?? ''), nowMs),
      extraReasons: (node: Node) =>
        node.ready && !minimumLifetimeOk(node, nowMs) ? ['node has been Ready for less than the 5-minute minimum node lifetime'] : [],
      poolFilter: inScope(settings.scope),
      methods: settings.scope === 'emptiness' ? (['emptiness'] as const) : undefined,
    };

    // Seed 000: after an action, wait while pods are pending or controllers are short of ready replicas.
    const hold = stabilizationHold(cluster, previous, nowMs);
    // Seed 000 polling: nothing changed since a search that found nothing: skip the search. The
    // fingerprint includes which nodes are candidates and what the budgets allow now, so a node
    // crossing consolidateAfter or a budget window opening counts as a change.
    const probe = runConsolidationPass({ ...passInput, methods: [] });
    const fingerprint = clusterFingerprint(cluster, nodePools, candidateNames(probe), budgetsNow(cluster, nodePools, nowMs));
    const skip = hold.hold ? { skip: false } : noChangeSkip(fingerprint, previous, nowMs);

    let outcome: PassOutcome;
    const heldReasons = new Map<string, string[]>();
    if (hold.hold || skip.skip) {
      outcome = probe;
      const why = hold.hold ? `${hold.why} (until ${formatTime(hold.until!)} at the latest)` : `search skipped: ${skip.why} (searching again by ${formatTime(skip.until!)})`;
      notes.push(why);
      for (const name of probe.evaluated) heldReasons.set(name, [why]);
    } else {
      outcome = runConsolidationPass({ ...passInput, verdicts: probe.verdicts });
    }

    let nodes: Record<string, NodeState> = observed;
    if (!hold.hold && !skip.skip) {
      nodes = { ...observed };
      for (const name of outcome.examined) {
        const record = nodes[name];
        const pool = pools.get(outcome.verdicts.find((v) => v.node.name === name)?.poolName ?? '');
        if (record) nodes[name] = recordEvaluation(record, { actedOn: outcome.disruptedBy.has(name) }, pool?.consolidationGracePeriodMs ?? null, nowMs);
      }
    }
    const next: PassState = {
      ...previous,
      nodes,
      cluster: hold.hold || skip.skip ? previous.cluster : recordSearch(previous.cluster, fingerprint, outcome.decisions.length === 0, nowMs),
    };

    const plan = buildPlan(outcome, { nowMs, dryRun: settings.dryRun, prices: indexCatalog(catalog), notes, nodeReasons: heldReasons });
    const stored = store && mutating ? await store.save(next, previous, nowMs) : next;
    const result: PassResult = { plan, leaseAcquired: true, outcome, state: stored, cluster, nodePools, catalog };
    if (act && !settings.dryRun) await act(result);
    return result;
  } finally {
    if (store && mutating) await store.releaseLease(settings.owner);
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
