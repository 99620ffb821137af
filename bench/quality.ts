// `npm run bench:quality`: how good are the decisions? Generated clusters (100 and 500 nodes,
// 30-50% of cpu requested) are planned pass after pass until nothing more is decided. After each pass its
// decisions are carried out here the way the actuator and kube-scheduler carry them out: every command at
// once (every decided node tainted first), a delete's pods evicted at once, each replacement (its cheapest
// type) Ready in a seeded random order and its command's pods evicted then, each evicted pod recreated and
// bound one at a time to the least allocated node that takes it (kube-scheduler's LeastAllocated), in a
// shuffled order; pods that find no node stay Pending and are tried again after every later pass. The
// catalog is the bundled one (1,345 types; QUALITY_CATALOG=small: 11 m5/c6i/r6i types). Printed per
// run: start and end cost, the LP lower bound of the start cluster (no plan can end below it), a
// first-fit-decreasing repack of all pods (FFD: the best single type, each bin then shrunk to the cheapest
// type holding it), the same repack with every node keeping room for the largest pod once it holds one
// (FFD-kept: a packing kube-scheduler's spreading can bind in any order), the ratios, pods Pending at the end, evictions and passes.
//
// Modes:
//   karpenter  - Karpenter's methods only (emptiness, multi-node, single-node), no replacement size
//                bound, no kube-scheduler check: how the project decided before the additions below;
//   issue-11   - everything: m-to-n repacks, size bound, kube-scheduler check, Karpenter's launch prices
//                (every decision is carried out, as the actuator does: a move's replacements are all
//                launched before any eviction).
//
// Deterministic (seeded PRNG, fixed clock). Figures are printed, never asserted. QUALITY_DEBUG=1 prints
// each pass's decisions; QUALITY_NOTES=<pass> prints that pass's most frequent notes (why nodes stayed);
// QUALITY_MAX_PASSES caps the passes (default 250: runs go on to convergence, as the outside measure does;
// the slowest seen, the small catalog at 500 nodes and a 10% budget, settled after 189); QUALITY_PROJECT=0 skips the projection;
// QUALITY_SHAPES=mixed generates pods whose cpu and memory differ in proportion; QUALITY_ORDERS=N carries
// each pass out in N further random orders and prints how many leave a pod Pending (the pass's risk,
// beside the one order the run goes on with); QUALITY_INTERLEAVE=1 brings the deletes' pods back
// interleaved across the deletes (`probe`: only in those further orders); QUALITY_SCHED=int carries
// every pass out with a second scheduler model written apart from the project's simulator
// (kubeBinder.ts: kube-scheduler's whole points, ties drawn at random); QUALITY_TOGETHER=1 has every new
// node Ready from the start and binds every evicted pod, the deletes' among the replacements', in one
// shuffled order (`probe`: only in the QUALITY_ORDERS probes); QUALITY_WAIT=1 has a delete
// whose pods are planned onto a new node wait for it; QUALITY_PENDING=1 prints the
// Pending pods of each carrying-out; QUALITY_DEBUG=nodes also prints each end node's fill;
// QUALITY_FFD_ORDERS=N binds every pod onto the two repacks' own nodes in N random orders (bindRepack).
// The first pass's plan is projected (laterWaves.ts) with up to 40 later waves, or with the CLI's
// default limits when QUALITY_WAVES=default; printed: where it leads (1st-plan/bound), its waves, and the
// share of the start nodes it removes that the passes really removed (followed).
import { defaultLimits, projectLaterWaves } from '../src/core/disruption/laterWaves.ts';
import { runConsolidationPass, type PassInput } from '../src/core/disruption/pass.ts';
import { clusterLowerBound } from '../src/core/efficiency/lowerBound.ts';
import { goDurationOrNull } from '../src/core/input/duration.ts';
import type { Catalog, Cluster, DaemonSet, InstanceType, Node, NodePool, Pod } from '../src/core/model/types.ts';
import type { Decision } from '../src/core/plan.ts';
import { createSimulator } from '../src/core/scheduling/simulator.ts';
import { readFileSync } from 'node:fs';
import { bundledCatalogPath } from '../src/adapters/catalog/bundledPaths.ts';
import { parseCatalog } from '../src/core/input/catalog.ts';
import { mulberry32 } from './generate.ts';
import { bindWithIntegerScores } from './kubeBinder.ts';

const Mi = 1024 ** 2;
const T0 = Date.parse('2026-11-21T12:00:00Z');
const HOUR = 3_600_000;
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

// Allocatable as in the bundled catalog, us-east-1 on-demand prices.
const TYPES: readonly { name: string; cpu: number; memMi: number; pods: number; price: number; weight: number }[] = [
  { name: 'm5.large', cpu: 1930, memMi: 6903, pods: 29, price: 0.096, weight: 1 },
  { name: 'm5.xlarge', cpu: 3920, memMi: 14162, pods: 58, price: 0.192, weight: 3 },
  { name: 'm5.2xlarge', cpu: 7910, memMi: 29317, pods: 58, price: 0.384, weight: 3 },
  { name: 'm5.4xlarge', cpu: 15890, memMi: 57691, pods: 234, price: 0.768, weight: 1 },
  { name: 'c6i.large', cpu: 1930, memMi: 3114, pods: 29, price: 0.085, weight: 1 },
  { name: 'c6i.xlarge', cpu: 3920, memMi: 6584, pods: 58, price: 0.17, weight: 2 },
  { name: 'c6i.2xlarge', cpu: 7910, memMi: 14162, pods: 58, price: 0.34, weight: 2 },
  { name: 'c6i.4xlarge', cpu: 15890, memMi: 27381, pods: 234, price: 0.68, weight: 1 },
  { name: 'r6i.large', cpu: 1930, memMi: 14481, pods: 29, price: 0.126, weight: 1 },
  { name: 'r6i.xlarge', cpu: 3920, memMi: 29317, pods: 58, price: 0.252, weight: 2 },
  { name: 'r6i.2xlarge', cpu: 7910, memMi: 59627, pods: 58, price: 0.504, weight: 1 },
];
/**
 * Pod sizes (cpu millis, memory MiB), picked at random. QUALITY_SHAPES=mixed: cpu and memory in unlike
 * proportions (memory-heavy caches, cpu-heavy workers, a few large pods), so that the pass's checks meet
 * pods that strand on memory as well as on cpu.
 */
const SIZES: readonly (readonly [number, number])[] =
  process.env['QUALITY_SHAPES'] === 'mixed'
    ? [[50, 64], [100, 1024], [250, 256], [250, 2048], [500, 4096], [1000, 1024], [1500, 512], [2000, 3072], [200, 3072], [3000, 6144]]
    : [[50, 64], [100, 128], [250, 320], [400, 512], [600, 768], [900, 1152], [1300, 1664]];

const smallCatalog: Catalog = {
  region: 'us-east-1',
  instanceTypes: TYPES.map((t): InstanceType => ({
    name: t.name,
    capacity: { cpu: t.cpu, memory: t.memMi * Mi, pods: t.pods },
    allocatable: { cpu: t.cpu, memory: t.memMi * Mi, pods: t.pods },
    labels: { 'node.kubernetes.io/instance-type': t.name, 'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux' },
    offerings: ZONES.map((zone) => ({ zone, capacityType: 'on-demand' as const, pricePerHour: t.price, available: true })),
  })),
};
// The generated nodes are the same types either way; with the bundled catalog they carry its allocatable
// and prices, and replacements may be any of its 1,345 types.
const catalog: Catalog = process.env['QUALITY_CATALOG'] === 'small' ? smallCatalog : parseCatalog(JSON.parse(readFileSync(bundledCatalogPath, 'utf8')));
const typeByName = new Map(catalog.instanceTypes.map((t) => [t.name, t]));
/** A type's on-demand price per hour (its cheapest on-demand offering). */
const priceOf = (name: string): number => {
  const type = typeByName.get(name)!;
  return Math.min(...type.offerings.filter((o) => o.capacityType === 'on-demand').map((o) => o.pricePerHour));
};

const daemonSet: DaemonSet = {
  namespace: 'kube-system',
  name: 'node-agent',
  template: {
    labels: { app: 'node-agent' },
    requests: { cpu: 100, memory: 128 * Mi },
    nodeSelector: {},
    requiredNodeAffinity: [],
    tolerations: [{ operator: 'Exists' }],
    podAffinity: [],
    podAntiAffinity: [],
    topologySpread: [],
    hostPorts: [],
  },
};

function makeNode(name: string, typeName: string, zone: string, createdAt: number): Node {
  const type = typeByName.get(typeName)!;
  return {
    name,
    labels: {
      'kubernetes.io/hostname': name,
      'topology.kubernetes.io/zone': zone,
      'node.kubernetes.io/instance-type': typeName,
      'karpenter.sh/capacity-type': 'on-demand',
      'karpenter.sh/nodepool': 'default',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
    },
    annotations: {},
    createdAt,
    taints: [],
    unschedulable: false,
    providerId: `aws:///${zone}/i-${name}`,
    instanceId: `i-${name}`,
    allocatable: type.allocatable,
    capacity: type.capacity,
    ready: true,
    readySince: createdAt,
    deleting: false,
    zone,
    instanceType: typeName,
    capacityType: 'on-demand',
    nodePool: 'default',
  };
}

function basePod(uid: string, namespace: string, name: string, nodeName: string | undefined, cpu: number, memMi: number, owner: { kind: string; name: string }): Pod {
  return {
    uid,
    namespace,
    name,
    labels: { app: owner.name },
    annotations: {},
    ownerReferences: [{ ...owner, controller: true }],
    ...(nodeName === undefined ? {} : { nodeName }),
    phase: nodeName === undefined ? 'Pending' : 'Running',
    priority: 0,
    createdAt: T0 - 3 * HOUR,
    startedAt: T0 - 3 * HOUR,
    terminating: false,
    isDaemonSetPod: owner.kind === 'DaemonSet',
    isMirrorPod: false,
    requests: { cpu, memory: memMi * Mi },
    nodeSelector: {},
    requiredNodeAffinity: [],
    tolerations: owner.kind === 'DaemonSet' ? [{ operator: 'Exists' }] : [],
    podAffinity: [],
    podAntiAffinity: [],
    topologySpread: [],
    hostPorts: [],
  };
}

const dsPod = (nodeName: string): Pod => basePod(`ds-${nodeName}`, 'kube-system', `node-agent-${nodeName}`, nodeName, 100, 128, { kind: 'DaemonSet', name: 'node-agent' });

/** N nodes of assorted types, each with pods until 30-50% of its cpu is requested. */
function generate(nodeCount: number, seed: number): Cluster {
  const rand = mulberry32(seed);
  const total = TYPES.reduce((s, t) => s + t.weight, 0);
  const pickType = () => {
    let r = rand() * total;
    for (const t of TYPES) if ((r -= t.weight) < 0) return t;
    return TYPES[TYPES.length - 1]!;
  };
  const nodes: Node[] = [];
  const pods: Pod[] = [];
  let podCounter = 0;
  for (let i = 0; i < nodeCount; i++) {
    const t = pickType();
    const name = `n${String(i).padStart(4, '0')}`;
    nodes.push(makeNode(name, t.name, ZONES[i % 3]!, T0 - 48 * HOUR));
    pods.push(dsPod(name));
    const allocatable = typeByName.get(t.name)!.allocatable;
    const typeCpu = allocatable['cpu']!;
    const typeMemMi = allocatable['memory']! / Mi;
    const typePods = allocatable['pods']!;
    const target = (0.3 + rand() * 0.2) * typeCpu;
    let cpu = 100;
    let mem = 128;
    let count = 1;
    for (let tries = 0; tries < 50 && cpu < target; tries++) {
      const [c, m] = SIZES[Math.floor(rand() * SIZES.length)]!;
      if (cpu + c > target + 100 || mem + m > typeMemMi * 0.9 || count + 1 > typePods) continue;
      const workload = `app-${Math.floor(rand() * 40)}`;
      const n = ++podCounter;
      pods.push(basePod(`p${n}`, 'default', `${workload}-${n}`, name, c, m, { kind: 'ReplicaSet', name: workload }));
      cpu += c;
      mem += m;
      count += 1;
    }
  }
  return { nodes, pods, pdbs: [], daemonSets: [daemonSet], workloads: [], namespaces: [] };
}

const pool = (budgetPercent: number): NodePool => ({
  name: 'default',
  weight: 0,
  templateLabels: {},
  templateTaints: [],
  requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
  expireAfterMs: null,
  consolidationPolicy: 'WhenEmptyOrUnderutilized',
  consolidateAfterMs: 0,
  consolidationGracePeriodMs: null,
  savingsThresholdCents: 0,
  budgets: [{ nodes: { percent: budgetPercent } }],
  limits: {},
});

const cost = (c: Cluster) => c.nodes.reduce((s, n) => s + priceOf(n.instanceType!), 0);

/** Binds pods the way kube-scheduler would (least allocated first, in the order given); the rest stay Pending. */
function bindLeastAllocated(cluster: Cluster, pods: readonly Pod[], pools: readonly NodePool[]): Cluster {
  if (pods.length === 0) return cluster;
  const moving = new Set(pods.map((p) => p.uid));
  const rest = { ...cluster, pods: cluster.pods.filter((p) => !moving.has(p.uid)) };
  const unbound = pods.map(({ nodeName: _n, ...p }) => ({ ...p, phase: 'Pending' as const }));
  const result = createSimulator({ cluster: rest, nodePools: pools, catalog }).simulate({
    excludedNodes: new Set(),
    pods: unbound,
    maxNewNodes: 0,
    placement: 'least-allocated',
    podOrder: 'as-given',
  });
  const placed = new Map(result.placements.map((p) => [p.pod.uid, p.nodeName]));
  const bound = unbound.map((p) => (placed.has(p.uid) ? { ...p, nodeName: placed.get(p.uid)!, phase: 'Running' as const } : p));
  return { ...rest, pods: [...rest.pods, ...bound] };
}

/** The second scheduler model (QUALITY_SCHED=int, kubeBinder.ts) in the simulator's result shape. */
function integerScored(cluster: Cluster, queue: readonly Pod[], excluded: ReadonlySet<string>, availableFrom: ReadonlyMap<string, number>, rand: () => number) {
  const { placed, pending } = bindWithIntegerScores(cluster, queue, excluded, availableFrom, rand);
  return {
    placements: queue.filter((p) => placed.has(p.uid)).map((pod) => ({ pod, nodeName: placed.get(pod.uid)! })),
    unschedulable: pending.map((pod) => ({ pod, reason: 'no node with room (integer scores)' })),
  };
}

/** A seeded shuffle (the carrying-out order is not the plan's to choose). */
function shuffle<T>(items: readonly T[], rand: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * Carries out a pass's decisions as the actuator does: every command is started at once, so every decided
 * node is tainted first (no pod is scheduled onto it any more). A decision whose planned pod destinations
 * name a replacement of a decision not started is skipped, as the actuator skips it (none is, here: every
 * decision starts). A delete evicts as soon as its command starts; a replacement's command launches its
 * nodes (the cheapest type of each) and evicts once they are Ready, and they become Ready in a random
 * order: a command's pods may land on any new node Ready by then. Each evicted pod is bound one at a time
 * the way kube-scheduler does (least allocated first), in a shuffled order within its command. Pods
 * Pending from before are tried again at the end.
 */
function carryOut(cluster: Cluster, decisions: readonly Decision[], passNumber: number, pools: readonly NodePool[], nowMs: number, rand: () => number, probing = false): { cluster: Cluster; evicted: number; pending?: number } {
  if (!probing && process.env['QUALITY_ORDERS']) {
    let bad = 0;
    const n = Number(process.env['QUALITY_ORDERS']);
    for (let k = 0; k < n; k++) if ((carryOut(cluster, decisions, passNumber, pools, nowMs, mulberry32(1000 + k), true).pending ?? 0) > 0) bad++;
    console.error(`  pass ${passNumber}: ${bad} of ${n} carrying-out orders leave a pod Pending`);
  }
  const tainted = new Set(decisions.flatMap((d) => d.nodes));
  const indexed = [...decisions.entries()];
  // QUALITY_WAIT=1: a delete whose pods the plan places on a new node of the pass waits for that node
  // (the actuator proves a command's pods have a place before its first eviction, and without the node
  // they may have none): its pods come back right after that replacement's command's.
  const waitsFor = new Map<number, Set<number>>();
  if (process.env['QUALITY_WAIT']) {
    for (const [i, d] of decisions.entries()) {
      if (d.replacements.length > 0) continue;
      for (const to of Object.values(d.podDestinations ?? {})) {
        const match = /^replacement-(\d+)/.exec(to);
        if (match) waitsFor.set(i, (waitsFor.get(i) ?? new Set()).add(Number(match[1]) - 1));
      }
    }
  }
  // Deletes first (at once), then the replacements' commands in the order their nodes become Ready.
  const order = [...indexed.filter(([i, d]) => d.replacements.length === 0 && !waitsFor.has(i)), ...shuffle(indexed.filter(([, d]) => d.replacements.length > 0), rand)];
  const added: Node[] = [];
  const queue: Pod[] = [];
  const availableFrom = new Map<string, number>();
  const enqueue = (d: Decision): void => {
    const removed = new Set(d.nodes);
    const onNodes = cluster.pods.filter((p) => p.nodeName !== undefined && removed.has(p.nodeName) && !p.isDaemonSetPod);
    queue.push(...shuffle(onNodes, rand).map(({ nodeName: _n, ...p }) => ({ ...p, phase: 'Pending' as const })));
  };
  const ready = new Set<number>();
  let deletePods = 0;
  for (const [i, d] of order) {
    for (const [k, r] of d.replacements.entries()) {
      const cheapest = [...r.instanceTypes].filter((t) => typeByName.has(t)).sort((a, b) => priceOf(a) - priceOf(b))[0]!;
      const replacement = makeNode(`r${passNumber}-${i + 1}-${k + 1}`, cheapest, r.zones[0] ?? ZONES[0]!, nowMs);
      added.push(replacement);
      availableFrom.set(replacement.name, queue.length);
    }
    enqueue(d);
    if (d.replacements.length === 0) deletePods = queue.length;
    else {
      ready.add(i);
      for (const [k, needs] of waitsFor) {
        if (![...needs].every((j) => ready.has(j))) continue;
        waitsFor.delete(k);
        enqueue(decisions[k]!);
      }
    }
  }
  for (const k of waitsFor.keys()) enqueue(decisions[k]!); // (a new node no decision launches: none)
  // QUALITY_INTERLEAVE=1: the deletes' pods come back interleaved across the deletes (their commands
  // evict at once), not one delete's after another's; `probe`: only in the QUALITY_ORDERS probes (the
  // run goes on as without it, so the same plans are probed both ways).
  const interleave = process.env['QUALITY_INTERLEAVE'];
  if (interleave === '1' || (interleave === 'probe' && probing)) {
    queue.splice(0, deletePods, ...shuffle(queue.slice(0, deletePods), rand));
  }
  // QUALITY_TOGETHER=1 (or `probe`): every new node Ready from the start and every evicted pod, the
  // deletes' with the replacements', bound in one shuffled order (a world where launches are instant).
  const together = process.env['QUALITY_TOGETHER'];
  if (together === '1' || (together === 'probe' && probing)) {
    const all = shuffle(queue, rand);
    queue.splice(0, queue.length, ...all);
    for (const name of availableFrom.keys()) availableFrom.set(name, 0);
  }
  const queued = new Set(queue.map((p) => p.uid));
  const laidOut: Cluster = {
    ...cluster,
    nodes: [...cluster.nodes, ...added],
    pods: [...cluster.pods.filter((p) => !queued.has(p.uid)), ...added.map((n) => dsPod(n.name))],
  };
  const result =
    process.env['QUALITY_SCHED'] === 'int'
      ? integerScored(laidOut, queue, tainted, availableFrom, rand)
      : createSimulator({ cluster: laidOut, nodePools: pools, catalog }).simulate({
          excludedNodes: tainted,
          pods: queue,
          maxNewNodes: 0,
          placement: 'least-allocated',
          podOrder: 'as-given',
          availableFrom,
        });
  const placed = new Map(result.placements.map((p) => [p.pod.uid, p.nodeName]));
  if (process.env['QUALITY_PENDING'] && result.unschedulable.length > 0) {
    console.error(`  pass ${passNumber}: ${result.unschedulable.length} pod(s) Pending: ${result.unschedulable.slice(0, 3).map((u) => `${u.pod.name} ${u.pod.requests['cpu']}m (${u.reason})`).join(', ')}`);
  }
  const rebound = queue.map((p) => (placed.has(p.uid) ? { ...p, nodeName: placed.get(p.uid)!, phase: 'Running' as const } : p));
  const after: Cluster = {
    ...laidOut,
    nodes: laidOut.nodes.filter((n) => !tainted.has(n.name)),
    pods: [...laidOut.pods.filter((p) => p.nodeName === undefined || !tainted.has(p.nodeName)), ...rebound],
  };
  return { cluster: bindLeastAllocated(after, after.pods.filter((p) => p.nodeName === undefined), pools), evicted: queue.length, pending: result.unschedulable.length };
}

// The pods a repack moves: every bound pod but the daemonsets' (each node brings its own).
const movablePods = (cluster: Cluster) => cluster.pods.filter((p) => !p.isDaemonSetPod && p.nodeName !== undefined);

/**
 * A first-fit-decreasing repack of every pod (daemonset overhead on each node): for each of the types
 * cheapest per unit of what the pods ask, pods largest first into the first node with room, then each
 * node shrunk to the cheapest type that holds what it got; the cheapest result, its cost and its nodes'
 * types.
 */
function ffdRepack(cluster: Cluster, keepRoomForLargest = false): { cost: number; types: string[] } {
  const pods = movablePods(cluster);
  const totalCpu = pods.reduce((s, p) => s + p.requests['cpu']!, 0);
  const totalMem = pods.reduce((s, p) => s + p.requests['memory']!, 0);
  const ds = daemonSet.template.requests;
  const types = catalog.instanceTypes
    .filter((t) => t.offerings.some((o) => o.capacityType === 'on-demand' && o.available))
    .map((t) => ({ name: t.name, cpu: t.allocatable['cpu']! - ds['cpu']!, mem: t.allocatable['memory']! - ds['memory']!, pods: (t.allocatable['pods'] ?? 110) - 1, price: priceOf(t.name) }))
    .filter((t) => t.cpu > 0 && t.mem > 0 && t.pods > 0);
  // With `keepRoomForLargest`, each node past its first pod keeps room for the largest pod (what
  // kube-scheduler's spreading needs to place every pod in any order; see costEfficientTypes.ts).
  const reserveCpu = keepRoomForLargest ? Math.max(...pods.map((p) => p.requests['cpu']!)) : 0;
  const reserveMem = keepRoomForLargest ? Math.max(...pods.map((p) => p.requests['memory']!)) : 0;
  const perUnit = (t: (typeof types)[number]) => t.price / Math.max(0, Math.min((t.cpu - reserveCpu) / totalCpu, (t.mem - reserveMem) / totalMem));
  const trial = [...types].sort((a, b) => perUnit(a) - perUnit(b)).slice(0, 12);
  const share = (p: Pod) => Math.max(p.requests['cpu']! / totalCpu, p.requests['memory']! / totalMem);
  const sorted = [...pods].sort((a, b) => share(b) - share(a));
  const byPrice = [...types].sort((a, b) => a.price - b.price);
  let best = { cost: Number.POSITIVE_INFINITY, types: [] as string[] };
  for (const t of trial) {
    const bins: { cpu: number; mem: number; pods: number }[] = [];
    let fits = true;
    for (const p of sorted) {
      const c = p.requests['cpu']!;
      const m = p.requests['memory']!;
      let bin = bins.find((b) => b.cpu + c <= t.cpu - reserveCpu && b.mem + m <= t.mem - reserveMem && b.pods + 1 <= t.pods);
      if (!bin) {
        if (c > t.cpu || m > t.mem) { fits = false; break; }
        bin = { cpu: 0, mem: 0, pods: 0 };
        bins.push(bin);
      }
      bin.cpu += c;
      bin.mem += m;
      bin.pods += 1;
    }
    if (!fits) continue;
    const chosen = bins.map((b) => byPrice.find((u) => u.cpu >= b.cpu + (b.pods > 1 ? reserveCpu : 0) && u.mem >= b.mem + (b.pods > 1 ? reserveMem : 0) && u.pods >= b.pods)!);
    const total = chosen.reduce((s, u) => s + u.price, 0);
    if (total < best.cost) best = { cost: total, types: chosen.map((u) => u.name) };
  }
  return best;
}

const typeCounts = (types: readonly string[]): string => {
  const counts = new Map<string, number>();
  for (const t of types) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts].map(([t, n]) => `${n} ${t}`).join(', ');
};

/**
 * QUALITY_FFD_ORDERS=N: the repack's nodes all Ready and empty but for their daemonset pod, every pod
 * bound onto them in N random orders, one at a time, in kube-scheduler's whole points (kubeBinder.ts):
 * in how many orders a pod is left Pending, and how many pods on average in those. It shows whether a
 * packing can be carried out by kube-scheduler at all, whatever order the pods come back in.
 */
function bindRepack(cluster: Cluster, types: readonly string[], orders: number, rand: () => number): { stranding: number; pendingPods: number } {
  const nodes = types.map((t, i) => makeNode(`ffd-${i}`, t, ZONES[i % ZONES.length]!, T0));
  const pods = movablePods(cluster).map((p) => ({ ...p, nodeName: undefined }));
  const target: Cluster = { ...cluster, nodes, pods: [...nodes.map((n) => dsPod(n.name)), ...pods] };
  let stranding = 0;
  let pendingPods = 0;
  for (let i = 0; i < orders; i++) {
    const { pending } = bindWithIntegerScores(target, shuffle(pods, rand), new Set(), new Map(), rand);
    if (pending.length > 0) {
      stranding += 1;
      pendingPods += pending.length;
    }
  }
  return { stranding, pendingPods: stranding === 0 ? 0 : pendingPods / stranding };
}

type Mode = 'karpenter' | 'issue-11';

function run(nodes: number, seed: number, budgetPercent: number, mode: Mode) {
  let cluster = generate(nodes, seed);
  const pools = [pool(budgetPercent)];
  const options: Partial<PassInput> =
    mode === 'karpenter' ? { methods: ['emptiness', 'multi-node', 'single-node'], replacementBound: null, schedulerCheck: false, reopenReceivers: false } : {};
  const base = { nodePools: pools, catalog, gates: { spotToSpotConsolidation: false }, parseDuration: goDurationOrNull, ...options };
  const startCost = cost(cluster);
  const repack = ffdRepack(cluster);
  const repackKept = ffdRepack(cluster, true);
  const ffd = repack.cost;
  const ffdKept = repackKept.cost;
  const ffdOrders = Number(process.env['QUALITY_FFD_ORDERS'] ?? 0);
  if (ffdOrders > 0) {
    const bindRand = mulberry32(seed * 104_729);
    for (const [name, r] of [['FFD', repack], ['FFD-kept', repackKept]] as const) {
      const { stranding, pendingPods } = bindRepack(cluster, r.types, ffdOrders, bindRand);
      console.log(`  ${name} repack of seed ${seed}: $${r.cost.toFixed(3)}/h on ${r.types.length} nodes (${typeCounts(r.types)}); bound in one go, ${stranding} of ${ffdOrders} random orders left a pod Pending (${pendingPods.toFixed(1)} pods each)`);
    }
  }
  const rand = mulberry32(seed * 7919 + budgetPercent);
  const first = runConsolidationPass({ ...base, cluster, nowMs: T0, methods: [] });
  const bound = clusterLowerBound({ cluster, nodePools: pools, catalog, verdicts: first.verdicts }).lowerBoundPerHour!;
  let evictions = 0;
  let passes = 0;
  let firstPassEnd = startCost;
  let firstPlanEnd = startCost;
  let plannedWaves = 0;
  let projectionSeconds = 0;
  let plannedRemoved = new Set<string>();
  const startNodes = new Set(cluster.nodes.map((n) => n.name));
  const started = performance.now();
  for (let pass = 1; pass <= Number(process.env["QUALITY_MAX_PASSES"] ?? 250); pass++) {
    const nowMs = T0 + pass * HOUR;
    const passStarted = performance.now();
    const outcome = runConsolidationPass({ ...base, cluster, nowMs });
    const passSeconds = (performance.now() - passStarted) / 1000;
    const acted = outcome.decisions;
    if (pass === 1 && process.env['QUALITY_PROJECT'] === '0') {
      firstPassEnd = startCost - outcome.decisions.reduce((s, d) => s + (d.savingsPerHour ?? 0), 0);
    } else if (pass === 1) {
      firstPassEnd = startCost - outcome.decisions.reduce((s, d) => s + (d.savingsPerHour ?? 0), 0);
      // The first pass's whole plan: its own decisions and the later waves it projects (laterWaves.ts),
      // counting what the actuator carries out.
      const projectionStarted = performance.now();
      const projection = projectLaterWaves({ ...base, cluster, nowMs }, outcome, process.env["QUALITY_WAVES"] === "default" ? defaultLimits(outcome) : { waves: 40 });
      projectionSeconds = (performance.now() - projectionStarted) / 1000;
      const planned = [outcome.decisions, ...projection.waves.map((w) => w.decisions)].flat();
      firstPlanEnd = startCost - planned.reduce((s, d) => s + (d.savingsPerHour ?? 0), 0);
      plannedWaves = 1 + projection.waves.filter((w) => w.decisions.length > 0).length;
      plannedRemoved = new Set(planned.flatMap((d) => d.nodes).filter((n) => startNodes.has(n)));
    }
    if (process.env['QUALITY_NOTES'] && acted.length === 0) {
      const cut = [...outcome.notes.values()].flat().find((n) => n.includes('carried out together'));
      if (cut) console.error(`pass ${pass}: no decision; ${cut}`);
      if (process.env['QUALITY_NOTES'] === 'last') console.error(noteHistogram(outcome.notes));
    }
    if (acted.length === 0) break;
    passes = pass;
    const done = carryOut(cluster, acted, pass, pools, nowMs, rand);
    cluster = done.cluster;
    evictions += done.evicted;
    if (process.env['QUALITY_NOTES'] && pass === Number(process.env['QUALITY_NOTES'])) {
      console.error(noteHistogram(outcome.notes));
    }
    if (process.env['QUALITY_DEBUG']) {
      const pendingNow = cluster.pods.filter((p) => p.nodeName === undefined).length;
      console.error(`pass ${pass}: ${acted.length} decisions (${acted.map((d) => `${d.method}${d.move ? '/m-to-n' : ''}:${d.action}:${d.nodes.length}->${d.replacements.length}`).join(' ')}), pending ${pendingNow}, ${passSeconds.toFixed(2)} s`);
    }
  }
  const endCost = cost(cluster);
  if (process.env['QUALITY_DEBUG']) {
    const sum = (c: Cluster, f: (p: Pod) => number) => c.pods.filter((p) => !p.isDaemonSetPod).reduce((s, p) => s + f(p), 0);
    const start = generate(nodes, seed);
    console.error(`pods ${sum(start, () => 1)} -> ${sum(cluster, () => 1)}, cpu ${sum(start, (p) => p.requests['cpu']!)} -> ${sum(cluster, (p) => p.requests['cpu']!)}, nodes ${start.nodes.length} -> ${cluster.nodes.length}; end bound ${clusterLowerBound({ cluster, nodePools: pools, catalog, verdicts: runConsolidationPass({ ...base, cluster, nowMs: T0, methods: [] }).verdicts }).lowerBoundPerHour}`);
    const byType = new Map<string, number>();
    for (const n of cluster.nodes) byType.set(n.instanceType!, (byType.get(n.instanceType!) ?? 0) + 1);
    console.error(JSON.stringify([...byType]));
    if (process.env['QUALITY_DEBUG'] === 'nodes') {
      // Each end node: its type, price, and how full it is (cpu and memory requested of allocatable, pods).
      for (const n of cluster.nodes) {
        const pods = cluster.pods.filter((p) => p.nodeName === n.name);
        const req = (r: string) => pods.reduce((s, p) => s + (p.requests[r] ?? 0), 0);
        console.error(`${n.name} ${n.instanceType} $${priceOf(n.instanceType!).toFixed(3)} cpu ${req('cpu')}/${n.allocatable['cpu']} mem ${(req('memory') / Mi).toFixed(0)}/${((n.allocatable['memory'] ?? 0) / Mi).toFixed(0)}Mi pods ${pods.length}/${n.allocatable['pods']}`);
      }
    }
  }
  return {
    nodes,
    seed,
    budgetPercent,
    mode,
    startCost,
    endCost,
    bound,
    ratio: endCost / bound,
    ffd,
    ffdRatio: endCost / ffd,
    ffdKeptRatio: endCost / ffdKept,
    firstPassRatio: firstPassEnd / bound,
    firstPlanRatio: firstPlanEnd / bound,
    plannedWaves,
    projectionSeconds,
    // Of the start nodes the first plan (all its waves) removes, the share the passes really removed.
    planFollowed: plannedRemoved.size === 0 ? 1 : [...plannedRemoved].filter((n) => !cluster.nodes.some((m) => m.name === n)).length / plannedRemoved.size,
    pending: cluster.pods.filter((p) => p.nodeName === undefined).length,
    evictions,
    passes,
    seconds: (performance.now() - started) / 1000,
  };
}

if (process.env['QUALITY_PROFILE']) {
  const c = generate(500, 1);
  const pools = [pool(10)];
  for (const [name, extra] of [['karpenter', { methods: ['emptiness', 'multi-node', 'single-node'] as const, replacementBound: null, schedulerCheck: false }], ['+bound', { methods: ['emptiness', 'multi-node', 'single-node'] as const, schedulerCheck: false }], ['+check', { methods: ['emptiness', 'multi-node', 'single-node'] as const }], ['+m-to-n', {}]] as const) {
    const t = performance.now();
    const out = runConsolidationPass({ cluster: c, nodePools: pools, catalog, gates: { spotToSpotConsolidation: false }, parseDuration: goDurationOrNull, nowMs: T0, ...(extra as Partial<PassInput>) });
    console.log(name, ((performance.now() - t) / 1000).toFixed(2), 's', out.decisions.length, 'decisions');
  }
  process.exit(0);
}
/** A comma-separated list of numbers (a budget may be written `10%`); anything else stops the run. */
function numbers(arg: string, what: string, percent = false): number[] {
  return arg.split(',').map((item) => {
    const value = Number(percent ? item.replace(/%$/, '') : item);
    if (item.trim() === '' || !Number.isFinite(value)) {
      console.error(`bench:quality: ${what} must be numbers separated by commas${percent ? ' (10 or 10%)' : ''}, got "${item}" in "${arg}"`);
      process.exit(2);
    }
    return value;
  });
}

const sizes = numbers(process.argv[2] ?? '100,500', 'sizes');
const seeds = numbers(process.argv[3] ?? '1,2,3', 'seeds');
const budgets = numbers(process.argv[4] ?? '10,100', 'budgets', true);
const modes = (process.argv[5] ?? "karpenter,issue-11").split(",") as Mode[];
const rows: ReturnType<typeof run>[] = [];
console.log(`catalog: ${process.env['QUALITY_CATALOG'] === 'small' ? 'small (11 types)' : `bundled (${catalog.instanceTypes.length} types)`}; commands carried out together, pods bound one at a time, least allocated first`);
console.log('nodes seed budget mode       start$/h   end$/h  bound$/h   ffd$/h  end/bound  end/ffd  end/ffd-kept  1st-pass/bound  1st-plan/bound  waves  followed  pending  evictions  passes  seconds  projection-s');
for (const nodes of sizes) {
  for (const seed of seeds) {
    for (const budget of budgets) {
      for (const mode of modes) {
        const r = run(nodes, seed, budget, mode);
        rows.push(r);
        console.log(
          `${String(nodes).padStart(5)} ${String(seed).padStart(4)} ${`${budget}%`.padStart(6)} ${mode.padEnd(9)} ${r.startCost.toFixed(3).padStart(9)} ${r.endCost.toFixed(3).padStart(8)} ${r.bound.toFixed(3).padStart(9)} ${r.ffd.toFixed(3).padStart(8)} ${r.ratio.toFixed(3).padStart(10)} ${r.ffdRatio.toFixed(3).padStart(8)} ${r.ffdKeptRatio.toFixed(3).padStart(13)} ${r.firstPassRatio.toFixed(3).padStart(15)} ${r.firstPlanRatio.toFixed(3).padStart(15)} ${String(r.plannedWaves).padStart(6)} ${`${(r.planFollowed * 100).toFixed(1)}%`.padStart(9)} ${String(r.pending).padStart(8)} ${String(r.evictions).padStart(10)} ${String(r.passes).padStart(7)} ${r.seconds.toFixed(1).padStart(8)} ${r.projectionSeconds.toFixed(1).padStart(13)}`,
        );
      }
    }
  }
}
console.log('\nsummary by mode (all runs): mean end/bound, worst end/bound, mean end/ffd, mean end/ffd-kept, runs with Pending pods (pods), mean evictions');
for (const mode of modes) {
  const of = rows.filter((r) => r.mode === mode);
  const mean = of.reduce((s, r) => s + r.ratio, 0) / of.length;
  const worst = Math.max(...of.map((r) => r.ratio));
  const withPending = of.filter((r) => r.pending > 0).length;
  const pendingPods = of.reduce((s, r) => s + r.pending, 0);
  const ffdMean = of.reduce((s, r) => s + r.ffdRatio, 0) / of.length;
  const ffdKeptMean = of.reduce((s, r) => s + r.ffdKeptRatio, 0) / of.length;
  const evictions = of.reduce((s, r) => s + r.evictions, 0) / of.length;
  console.log(`${mode.padEnd(9)} mean ${mean.toFixed(3)}x  worst ${worst.toFixed(3)}x  end/ffd ${ffdMean.toFixed(3)}x  end/ffd-kept ${ffdKeptMean.toFixed(3)}x  pending in ${withPending}/${of.length} runs (${pendingPods} pods)  evictions ${evictions.toFixed(0)}`);
}

/** The notes of a pass's nodes, numbers blanked, counted: what held the most nodes back. */
function noteHistogram(notes: ReadonlyMap<string, readonly string[]>): string {
  const hist = new Map<string, number>();
  for (const list of notes.values()) for (const n of list) { const k = n.replace(/[0-9.]+/g, '#').slice(0, 160); hist.set(k, (hist.get(k) ?? 0) + 1); }
  return [...hist].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${v} ${k}`).join('\n');
}
