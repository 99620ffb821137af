// One benchmark run in its own process (so peak memory is this size's alone): generate a cluster of N
// nodes, parse it like a `kubectl get -o json` dump, and plan one pass against the full bundled catalog.
// Prints one JSON line. Run through `npm run bench`, which runs every size.
import { performance } from 'node:perf_hooks';
import { parse } from 'yaml';
import { readCatalogFile } from '../src/adapters/files/index.ts';
import { bundledCatalogPath } from '../src/adapters/catalog/bundledPaths.ts';
import { runConsolidationPass } from '../src/core/disruption/pass.ts';
import { goDurationOrNull } from '../src/core/input/duration.ts';
import { parseClusterObjects } from '../src/core/input/cluster.ts';
import { parseNodePools } from '../src/core/input/nodePools.ts';
import { createSimulator } from '../src/core/scheduling/simulator.ts';
import type { Simulator, SimulatorInput } from '../src/core/scheduling/types.ts';
import { BENCH_NOW, generateCluster, generateNodePools } from './generate.ts';

const nodes = Number(process.argv[2] ?? 100);
const podsPerNode = Number(process.argv[3] ?? 30);

const t0 = performance.now();
const list = generateCluster({ nodes, podsPerNode, seed: 42 });
const cluster = parseClusterObjects(list.items);
const nodePools = parseNodePools(
  String(generateNodePools())
    .split(/^---$/m)
    .map((doc) => parse(doc))
    .filter(Boolean),
);
const catalog = await readCatalogFile(bundledCatalogPath);
const t1 = performance.now();

let simulations = 0;
let podsPlaced = 0;
let simulationMs = 0;
let buildMs = 0;
const timedFactory = (input: SimulatorInput): Simulator => {
  const start = performance.now();
  const inner = createSimulator(input);
  buildMs += performance.now() - start;
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

const t2 = performance.now();
const outcome = runConsolidationPass({
  cluster,
  nodePools,
  catalog,
  nowMs: Date.parse(BENCH_NOW),
  gates: { spotToSpotConsolidation: false },
  parseDuration: goDurationOrNull,
  simulatorFactory: timedFactory,
});
const t3 = performance.now();

const byMethod: Record<string, number> = {};
for (const d of outcome.decisions) byMethod[`${d.method}/${d.action}`] = (byMethod[`${d.method}/${d.action}`] ?? 0) + 1;
console.log(
  JSON.stringify({
    nodes: cluster.nodes.length,
    pods: cluster.pods.length,
    instanceTypes: catalog.instanceTypes.length,
    loadSeconds: (t1 - t0) / 1000,
    passSeconds: (t3 - t2) / 1000,
    simulations,
    simulationSeconds: simulationMs / 1000,
    simulatorBuildSeconds: buildMs / 1000,
    podsPlacedPerSecond: simulationMs > 0 ? Math.round(podsPlaced / (simulationMs / 1000)) : 0,
    decisions: outcome.decisions.length,
    byMethod,
    savingsPerHour: Math.round(outcome.decisions.reduce((s, d) => s + (d.savingsPerHour ?? 0), 0) * 1e4) / 1e4,
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
);
