// One benchmark pass in its own process (so peak memory is this pass's alone): read a generated
// kubectl-sized cluster file the way the CLI does (src/adapters/files), plan one full pass against the
// full bundled catalog, print one JSON line. Run through `npm run bench`, which writes the files and runs
// every size.
//
//   node --import tsx bench/one.ts <cluster.json> <budget: 100% | default | 10% ...>
import { performance } from 'node:perf_hooks';
import { parse } from 'yaml';
import { readCatalogFile, readClusterFile } from '../src/adapters/files/index.ts';
import { bundledCatalogPath } from '../src/adapters/catalog/bundledPaths.ts';
import { runConsolidationPass } from '../src/core/disruption/pass.ts';
import { goDurationOrNull } from '../src/core/input/duration.ts';
import { parseNodePools } from '../src/core/input/nodePools.ts';
import { createSimulator } from '../src/core/scheduling/simulator.ts';
import type { Simulator, SimulatorInput } from '../src/core/scheduling/types.ts';
import { BENCH_NOW, generateNodePools } from './generate.ts';

const [file, budget = '100%'] = process.argv.slice(2);
if (!file) throw new Error('usage: one.ts <cluster.json> [budget]');

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

let simulations = 0;
let podsPlaced = 0;
let simulationMs = 0;
const timedFactory = (input: SimulatorInput): Simulator => {
  const inner = createSimulator(input);
  return {
    simulate(request) {
      const s = performance.now();
      const result = inner.simulate(request);
      simulationMs += performance.now() - s;
      simulations++;
      podsPlaced += result.placements.length;
      return result;
    },
  };
};

const outcome = runConsolidationPass({
  cluster,
  nodePools,
  catalog,
  nowMs: Date.parse(BENCH_NOW),
  gates: { spotToSpotConsolidation: false },
  parseDuration: goDurationOrNull,
  simulatorFactory: timedFactory,
});
const t2 = performance.now();

// BENCH_DECISIONS=<file>: also write the decisions, to check that a change plans exactly as before.
if (process.env['BENCH_DECISIONS']) {
  const { writeFileSync } = await import('node:fs');
  writeFileSync(process.env['BENCH_DECISIONS'], JSON.stringify(outcome.decisions, null, 1));
}

const byMethod: Record<string, number> = {};
for (const d of outcome.decisions) byMethod[`${d.method}/${d.action}`] = (byMethod[`${d.method}/${d.action}`] ?? 0) + 1;
console.log(
  JSON.stringify({
    nodes: cluster.nodes.length,
    pods: cluster.pods.length,
    budget,
    readSeconds: (t1 - t0) / 1000,
    planSeconds: (t2 - t1) / 1000,
    passSeconds: (t2 - t0) / 1000,
    simulations,
    podsPlaced,
    simulationSeconds: simulationMs / 1000,
    podsPlacedPerSecond: simulationMs > 0 ? Math.round(podsPlaced / (simulationMs / 1000)) : 0,
    decisions: outcome.decisions.length,
    disrupted: outcome.disruptedBy.size,
    byMethod,
    savingsPerHour: Math.round(outcome.decisions.reduce((s, d) => s + (d.savingsPerHour ?? 0), 0) * 1e4) / 1e4,
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
