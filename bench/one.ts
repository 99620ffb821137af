// One benchmark plan in its own process (so peak memory is this plan's alone): read a generated
// kubectl-sized cluster file the way the CLI does (src/adapters/files), then plan it the way
// `eks-consolidator plan` does (src/app/runPass.ts, with the CLI's settings when no flag and no variable
// is given) against the full bundled catalog, and print one JSON line. Run through `npm run bench`, which
// writes the files and runs every size.
//
//   node --import tsx --import ./bench/timeSimulations.mjs bench/one.ts <cluster.json> <budget> [waves]
//
// budget: `100%`, `default` (Karpenter's 10%), `10%`, ... . waves: what `PLAN_WAVES` would say; `off`
// (the default here) plans the pass alone, `default` is what the CLI does unless told otherwise (the pass
// and its projection of later waves, core/disruption/laterWaves.ts), `N` projects up to N waves.
//
// BENCH_DECISIONS=<file>: also write the pass's decisions there (and, with later waves, theirs to
// <file>.waves.json), to check decision by decision that a change plans exactly as before.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parse } from 'yaml';
import { readCatalogFile, readClusterFile } from '../src/adapters/files/index.ts';
import { bundledCatalogPath } from '../src/adapters/catalog/bundledPaths.ts';
import { runPass } from '../src/app/runPass.ts';
import { parseActuatorSetting } from '../src/core/disruption/actuatorChoice.ts';
import { parseKarpenterPresence } from '../src/core/disruption/coexistence.ts';
import { parseMaxNodesPerCommand } from '../src/core/disruption/commandCap.ts';
import { parsePlanWaves } from '../src/core/disruption/laterWaves.ts';
import { parseReplacementBound } from '../src/core/disruption/sizeBound.ts';
import { parseFeatureGates } from '../src/core/featureGates.ts';
import { parseNodePools } from '../src/core/input/nodePools.ts';
import { parsePreferencePolicy } from '../src/core/scheduling/preferences.ts';
import * as simulatorModule from '../src/core/scheduling/simulator.ts';
import { BENCH_NOW, generateNodePools } from './generate.ts';
import { simulationTotals } from './timedSimulator.ts';

const [file, budget = '100%', wavesText = 'off'] = process.argv.slice(2);
if (!file) throw new Error('usage: one.ts <cluster.json> [budget] [off | default | N]');
const planWaves = parsePlanWaves(wavesText, 'waves');
// Without bench/timeSimulations.mjs the pass uses the untimed simulator: the plan is the same, but the
// simulation counts and pods placed per second stay at 0.
const timed = 'timedSimulatorModule' in simulatorModule;
if (!timed) console.error('one.ts: run with --import ./bench/timeSimulations.mjs to time the simulations');

const catalog = await readCatalogFile(bundledCatalogPath);
const nodePools = parseNodePools(
  generateNodePools(budget)
    .split(/^---$/m)
    .map((doc) => parse(doc))
    .filter(Boolean),
);

const t0 = performance.now();
const cluster = await readClusterFile(file);
const t1 = performance.now();

// The settings src/cli/main.ts gives `plan` when neither a flag nor a variable says otherwise (each parser
// given nothing returns the default), at the generated cluster's time (`--now`), with no state file.
// Only PLAN_WAVES is this run's own.
const result = await runPass(
  { readCluster: async () => cluster, loadCatalog: async () => ({ catalog, warnings: [] }), loadNodePools: async () => nodePools },
  {
    nowMs: Date.parse(BENCH_NOW),
    gates: parseFeatureGates(undefined),
    replacementBound: parseReplacementBound(undefined),
    planWaves,
    maxNodesPerCommand: parseMaxNodesPerCommand(undefined),
    preferencePolicy: parsePreferencePolicy(undefined),
    actuator: parseActuatorSetting(undefined),
    karpenterPresence: parseKarpenterPresence(undefined),
    nodePoolsFromCluster: false,
    dryRun: true,
    persistState: false,
    scope: 'all',
    owner: 'bench',
    leaseTtlMs: 10 * 60_000,
  },
);
const t2 = performance.now();
const outcome = result.outcome;
if (!outcome) throw new Error('the pass decided nothing: no outcome');
const waves = result.plan.projection?.waves ?? [];

if (process.env['BENCH_DECISIONS']) {
  writeFileSync(process.env['BENCH_DECISIONS'], JSON.stringify(outcome.decisions, null, 1));
  if (result.plan.projection) writeFileSync(`${process.env['BENCH_DECISIONS']}.waves.json`, JSON.stringify(waves, null, 1));
}

const byMethod: Record<string, number> = {};
for (const d of outcome.decisions) byMethod[`${d.method}/${d.action}`] = (byMethod[`${d.method}/${d.action}`] ?? 0) + 1;
const { simulations, podsPlaced, simulationMs } = simulationTotals;
console.log(
  JSON.stringify({
    nodes: cluster.nodes.length,
    pods: cluster.pods.length,
    budget,
    planWaves: String(planWaves),
    readSeconds: (t1 - t0) / 1000,
    planSeconds: (t2 - t1) / 1000,
    passSeconds: (t2 - t0) / 1000,
    // Every simulation of the plan: the pass's, its kube-scheduler checks' and, with waves, the projection's.
    simulations,
    podsPlaced,
    simulationSeconds: simulationMs / 1000,
    podsPlacedPerSecond: simulationMs > 0 ? Math.round(podsPlaced / (simulationMs / 1000)) : 0,
    decisions: outcome.decisions.length,
    // The pass's own decisions in one digest, so that the two kinds of run can be checked to agree.
    decisionsDigest: createHash('sha256').update(JSON.stringify(outcome.decisions)).digest('hex').slice(0, 16),
    disrupted: outcome.disruptedBy.size,
    byMethod,
    savingsPerHour: Math.round(outcome.decisions.reduce((s, d) => s + (d.savingsPerHour ?? 0), 0) * 1e4) / 1e4,
    laterWaves: waves.length,
    laterDecisions: waves.reduce((n, w) => n + w.decisions.length, 0),
    ...(result.plan.projection ? { projectionStop: result.plan.projection.stoppedBecause } : {}),
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
