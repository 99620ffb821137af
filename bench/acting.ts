// A dry run and a real run of the same pass on a generated cluster served by the test's fake Kubernetes
// API with Karpenter's stand-in (every node has a NodeClaim; the NodePool is handed over), at a 100%
// budget: does the real run carry out exactly the decisions the dry run shows, through NodeClaims, with
// no command larger than MAX_NODES_PER_COMMAND? Prints one JSON line.
//
//   node --import tsx bench/acting.ts [nodes=1000] [podsPerNode=30]
import { performance } from 'node:perf_hooks';
import { parse } from 'yaml';
import { bundledCatalogPath } from '../src/adapters/catalog/bundledPaths.ts';
import { DynamoStateStore } from '../src/adapters/dynamodb/dynamoStateStore.ts';
import { createStateTable } from '../src/adapters/dynamodb/tableSchema.ts';
import { readCatalogFile } from '../src/adapters/files/index.ts';
import { kubeConfigFromEndpoint } from '../src/adapters/kubernetes/kubeClient.ts';
import { LiveClusterSource } from '../src/adapters/kubernetes/liveClusterSource.ts';
import { KubeNodeClaims } from '../src/adapters/kubernetes/nodeClaims.ts';
import { KubeNodeOperations } from '../src/adapters/kubernetes/nodeOperations.ts';
import { Ec2InstanceLauncher } from '../src/adapters/aws/ec2Launcher.ts';
import { makeActor, resumeCommands, type ActDeps, type ExecutionReport } from '../src/app/act/executeCommands.ts';
import { runPass, type PassDependencies, type PassSettings } from '../src/app/runPass.ts';
import { readNodePoolsFromKubernetes } from '../src/app/wiring.ts';
import { DEFAULT_MAX_NODES_PER_COMMAND } from '../src/core/disruption/commandCap.ts';
import { EC2Client } from '@aws-sdk/client-ec2';
import { KARPENTER_NODE_LABELS, nodeClaimFor } from '../test/act/harness.ts';
import { startDynalite, uniqueTableName } from '../test/support/dynalite.ts';
import { attachKarpenter } from '../test/support/fakeKarpenter.ts';
import { startFakeKubeApi } from '../test/support/fakeKubeApi.ts';
import { BENCH_NOW, generateCluster, generateNodePools } from './generate.ts';

const [nodesArg = '1000', podsArg = '30'] = process.argv.slice(2);
const nodes = Number(nodesArg);
const podsPerNode = Number(podsArg);

const list = generateCluster({ nodes, podsPerNode, seed: 7 });
const objects = list.items.map((item) => {
  if (item['kind'] !== 'Node') return item;
  const meta = item['metadata'] as { labels?: Record<string, string> };
  return { ...item, metadata: { ...meta, labels: { ...meta.labels, ...KARPENTER_NODE_LABELS } } };
});
const pool = parse(generateNodePools('100%')) as Record<string, Record<string, unknown>>;
const handedOver = {
  ...pool,
  metadata: { ...pool['metadata'], annotations: { 'eks-consolidator.io/disruption': JSON.stringify(pool['spec']!['disruption']) } },
  spec: { ...pool['spec'], disruption: { consolidateAfter: 'Never' } },
};

const clock = { nowMs: Date.parse(BENCH_NOW) };
const api = await startFakeKubeApi({ objects, karpenterCrds: true });
api.store.put(handedOver);
for (const object of objects) if (object['kind'] === 'Node') api.store.put(nodeClaimFor(object));
// Karpenter's controllers run on their own loop: here at each poll of the actuator (10 s of its clock)
// and between invocations, not before every request (at 1,000 NodeClaims that would dominate the run).
const karpenter = attachKarpenter(api, { now: () => clock.nowMs, reconcileOnRequest: false });
const db = await startDynalite();
const tableName = uniqueTableName('bench');
await createStateTable(db.client, tableName);
const store = new DynamoStateStore({ client: db.client, tableName, clusterName: 'bench', clock: () => clock.nowMs });
const kubeConfig = kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: api.token });
const live = new LiveClusterSource(kubeConfig);
const catalog = await readCatalogFile(bundledCatalogPath);
const deps: PassDependencies = {
  readCluster: () => live.read(),
  loadNodePools: () => readNodePoolsFromKubernetes(kubeConfig),
  loadCatalog: async () => ({ catalog, warnings: [] }),
  state: store,
};
const settings = (dryRun: boolean): PassSettings => ({
  nowMs: clock.nowMs,
  gates: { spotToSpotConsolidation: false },
  dryRun,
  persistState: !dryRun,
  scope: 'consolidation',
  owner: `bench-${dryRun ? 'dry' : 'real'}`,
  leaseTtlMs: 3_600_000,
  karpenterPresence: 'auto',
  nodePoolsFromCluster: true,
  actuator: 'auto',
  maxNodesPerCommand: DEFAULT_MAX_NODES_PER_COMMAND,
  planWaves: 0,
});

const t0 = performance.now();
const dry = await runPass(deps, settings(true));
const t1 = performance.now();

const actDeps: ActDeps = {
  store,
  nodes: new KubeNodeOperations(kubeConfig, { now: () => clock.nowMs }),
  instances: new Ec2InstanceLauncher({ client: new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 }), clusterName: 'bench' }),
  nodeClaims: new KubeNodeClaims(kubeConfig),
  readWorld: async () => ({ cluster: await live.read(), nodePools: await deps.loadNodePools(), catalog }),
  now: () => clock.nowMs,
  remainingMs: () => 600_000,
  sleep: async (ms) => {
    clock.nowMs += ms;
    karpenter.reconcile();
  },
};
const options = { pollIntervalMs: 10_000, maxWaitMs: 10 * 60_000, marginMs: 30_000 };
const actor = makeActor(actDeps, options);
const real = await runPass(deps, settings(false), actor);
const reports: ExecutionReport[] = [actor.report()];
for (let invocation = 1; invocation < 10; invocation += 1) {
  const commands = await store.listCommands(clock.nowMs);
  if (commands.every((c) => ['done', 'rolledBack', 'abandoned'].includes(c.step))) break;
  clock.nowMs += 5 * 60_000;
  karpenter.reconcile();
  reports.push(await resumeCommands(actDeps, options));
}
const t2 = performance.now();

const commands = await store.listCommands(clock.nowMs);
const key = (nodes: readonly string[]) => [...nodes].sort().join(',');
const dryKeys = dry.plan.decisions.map((d) => key(d.nodes));
const realKeys = real.plan.decisions.map((d) => key(d.nodes));
const startedKeys = new Set(commands.map((c) => key(c.nodes)));
const steps: Record<string, number> = {};
for (const c of commands) steps[c.step] = (steps[c.step] ?? 0) + 1;
const ended = commands.filter((c) => c.step !== 'done').map((c) => ({ nodes: c.nodes.length, step: c.step, note: JSON.parse(c.detail ?? '{}').note }));
console.log(
  JSON.stringify({
    nodes,
    pods: list.items.filter((i) => i['kind'] === 'Pod').length,
    budget: '100%',
    maxNodesPerCommand: DEFAULT_MAX_NODES_PER_COMMAND,
    decisions: dry.plan.decisions.length,
    largestDecisionNodes: Math.max(0, ...dry.plan.decisions.map((d) => d.nodes.length)),
    cappedDecisions: dry.plan.decisions.filter((d) => d.cappedAt !== undefined).length,
    actuators: dry.plan.actuators,
    realRunSameDecisions: JSON.stringify(dryKeys) === JSON.stringify(realKeys),
    everyDecisionStarted: realKeys.every((k) => startedKeys.has(k)),
    skipped: reports.flatMap((r) => r.skipped).map((s) => s.why),
    commandSteps: steps,
    notDone: ended,
    evicted: reports.flatMap((r) => r.commands).reduce((n, c) => n + c.evicted, 0),
    nodeClaimsCreated: karpenter.launchedInstances.length,
    instancesTerminatedByKarpenter: karpenter.terminatedInstances.length,
    leakedClaims: karpenter.leakedClaims().length,
    dryRunSeconds: Math.round((t1 - t0) / 100) / 10,
    realRunSeconds: Math.round((t2 - t1) / 100) / 10,
  }),
);
await api.close();
await db.stop();
