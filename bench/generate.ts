// Synthetic clusters for benchmarks: a kubectl `List` shaped like the embedded demo (nodes, pods,
// PodDisruptionBudgets, DaemonSets, Deployments), generated directly as objects so that 5,000 nodes x 30
// pods stays well within a default Node heap (no YAML, no per-pod copies of shared sub-objects).
//
// Deterministic: the same options give the same cluster (mulberry32 seeded PRNG; no clock, no Math.random).
//
// Shape:
// - nodes of assorted m5/m6i/c6i/r6i/m7i types (allocatable from the bundled catalog), zones us-east-1a/b/c in
//   turn, about 15% spot, all in NodePool `default` (see generateNodePools);
// - about `podsPerNode` pods per node (capped by the type's pod limit after the daemonsets), all owned by
//   Deployments with a PodDisruptionBudget allowing 1 disruption; on every node one pod of a zone-spread
//   Deployment (6 replicas, 2 per zone) and, on most nodes, one pod of a hostname anti-affinity Deployment;
// - 3 DaemonSets with a pod on every node;
// - about 20% of the nodes lightly used (10-35% cpu requested), the rest 55-85%, so a fraction of the nodes is
//   consolidatable.
//
// Objects share immutable sub-objects (container lists, affinity, status) between pods: treat the result as
// read-only, or deep-copy it before mutating.

export interface GenerateOptions {
  readonly nodes: number;
  readonly podsPerNode: number;
  readonly seed: number;
  /**
   * Objects as `kubectl get -o json` prints them (managedFields, env, probes, volumes, container
   * statuses, node images: about 4 KB per pod once printed, see kubectlShape.ts) instead of the
   * compact form that carries only what the planner reads.
   */
  readonly kubectl?: boolean;
}

export interface KubeList {
  readonly apiVersion: 'v1';
  readonly kind: 'List';
  readonly items: Record<string, unknown>[];
  readonly metadata: { readonly resourceVersion: string };
}

import { mulberry32 } from '../src/core/random.ts';
import { KubectlShape } from './kubectlShape.ts';

/** The instant the generated cluster is meant to be planned at. */
export const BENCH_NOW = '2026-11-21T12:00:00Z';

export { mulberry32 } from '../src/core/random.ts';

interface TypeShape {
  readonly name: string;
  readonly weight: number;
  readonly cpu: string;
  readonly memory: string;
  /** allocatable cpu in millicores, memory in Mi, pods */
  readonly allocCpu: number;
  readonly allocMem: number;
  readonly pods: number;
}

/** Capacity and allocatable as in the bundled catalog (aws/karpenter-provider-aws v1.14.1 data). */
export const BENCH_TYPES: readonly TypeShape[] = [
  { name: 'm5.large', weight: 1, cpu: '2', memory: '8192Mi', allocCpu: 1930, allocMem: 6903, pods: 29 },
  { name: 'm5.xlarge', weight: 3, cpu: '4', memory: '16384Mi', allocCpu: 3920, allocMem: 14162, pods: 58 },
  { name: 'm5.2xlarge', weight: 3, cpu: '8', memory: '32768Mi', allocCpu: 7910, allocMem: 29317, pods: 58 },
  { name: 'm5.4xlarge', weight: 1, cpu: '16', memory: '65536Mi', allocCpu: 15890, allocMem: 57691, pods: 234 },
  { name: 'm6i.xlarge', weight: 3, cpu: '4', memory: '16384Mi', allocCpu: 3920, allocMem: 14162, pods: 58 },
  { name: 'm6i.2xlarge', weight: 2, cpu: '8', memory: '32768Mi', allocCpu: 7910, allocMem: 29317, pods: 58 },
  { name: 'c6i.large', weight: 1, cpu: '2', memory: '4096Mi', allocCpu: 1930, allocMem: 3114, pods: 29 },
  { name: 'c6i.xlarge', weight: 2, cpu: '4', memory: '8192Mi', allocCpu: 3920, allocMem: 6584, pods: 58 },
  { name: 'c6i.2xlarge', weight: 2, cpu: '8', memory: '16384Mi', allocCpu: 7910, allocMem: 14162, pods: 58 },
  { name: 'c6i.4xlarge', weight: 1, cpu: '16', memory: '32768Mi', allocCpu: 15890, allocMem: 27381, pods: 234 },
  { name: 'r6i.large', weight: 1, cpu: '2', memory: '16384Mi', allocCpu: 1930, allocMem: 14481, pods: 29 },
  { name: 'r6i.xlarge', weight: 2, cpu: '4', memory: '32768Mi', allocCpu: 3920, allocMem: 29317, pods: 58 },
  { name: 'r6i.2xlarge', weight: 1, cpu: '8', memory: '65536Mi', allocCpu: 7910, allocMem: 59627, pods: 58 },
  { name: 'm7i.xlarge', weight: 1, cpu: '4', memory: '16384Mi', allocCpu: 3920, allocMem: 14162, pods: 58 },
];

const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'] as const;

const DAEMONSETS = [
  { name: 'aws-node', namespace: 'kube-system', cpu: 25, mem: 40 },
  { name: 'kube-proxy', namespace: 'kube-system', cpu: 100, mem: 40 },
  { name: 'fluent-bit', namespace: 'logging', cpu: 50, mem: 60 },
] as const;
const DS_CPU = DAEMONSETS.reduce((s, d) => s + d.cpu, 0);
const DS_MEM = DAEMONSETS.reduce((s, d) => s + d.mem, 0);

/** Pod sizes (cpu millicores, memory Mi), smallest first; memory is about 1.3 Mi per millicore. */
const SIZES: readonly (readonly [number, number])[] = [
  [10, 16], [25, 32], [50, 64], [100, 128], [150, 192], [250, 320], [400, 512], [600, 768], [900, 1152], [1300, 1664], [2000, 2560],
];

const SPREAD_REPLICAS = 6;
const ANTI_REPLICAS = 5;
const PLAIN_REPLICAS = 12;

type Obj = Record<string, unknown>;

function iso(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

export function generateCluster(options: GenerateOptions): KubeList {
  const items: Obj[] = [];
  emitCluster(options, (item) => items.push(item));
  return { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } };
}

/**
 * The same cluster as generateCluster, handed out one object at a time (nodes and their pods first, then
 * PDBs, DaemonSets and Deployments) so that a writer can stream 5,000 kubectl-sized nodes to a file
 * without holding them all.
 */
export function emitCluster(options: GenerateOptions, emit: (item: Obj) => void): void {
  const { nodes: nodeCount, podsPerNode, seed } = options;
  const shape = options.kubectl ? new KubectlShape(seed) : undefined;
  if (!Number.isInteger(nodeCount) || nodeCount < 0) throw new Error('nodes must be a non-negative integer');
  if (!Number.isInteger(podsPerNode) || podsPerNode < 0) throw new Error('podsPerNode must be a non-negative integer');
  const rand = mulberry32(seed);
  const pick = (n: number): number => Math.floor(rand() * n);
  const chars = 'bcdfghjklmnpqrstvwxz2456789';
  const suffix = (n: number): string => {
    let s = '';
    for (let i = 0; i < n; i++) s += chars[pick(chars.length)];
    return s;
  };
  // Random suffixes collide at thousands of pods; names must be unique per namespace, as in a cluster.
  const usedNames = new Set<string>();
  const uniqueName = (namespace: string, base: string): string => {
    let name = `${base}-${suffix(5)}`;
    while (usedNames.has(`${namespace}/${name}`)) name = `${base}-${suffix(5)}`;
    usedNames.add(`${namespace}/${name}`);
    return name;
  };
  const hex = (n: number): string => {
    let s = '';
    for (let i = 0; i < n; i++) s += '0123456789abcdef'[pick(16)];
    return s;
  };
  let uidCounter = 0;
  // Unique and cheap: seed-derived prefix plus a counter, in UUID layout.
  const uidPrefix = `${hex(8)}-${hex(4)}-4${hex(3)}`;
  const uid = (): string => `${uidPrefix}-8000-${(++uidCounter).toString(16).padStart(12, '0')}`;

  const now = Date.parse(BENCH_NOW);
  const nodeCreated = iso(now - 49 * 3_600_000);
  const nodeReady = iso(now - 49 * 3_600_000 + 60_000);
  const podCreated = iso(now - 3 * 3_600_000);
  const podStarted = iso(now - 3 * 3_600_000 + 5_000);
  const oldTime = iso(now - 30 * 24 * 3_600_000);

  const totalWeight = BENCH_TYPES.reduce((s, t) => s + t.weight, 0);
  const pickType = (): TypeShape => {
    let r = rand() * totalWeight;
    for (const t of BENCH_TYPES) {
      r -= t.weight;
      if (r < 0) return t;
    }
    return BENCH_TYPES[BENCH_TYPES.length - 1]!;
  };

  // Shared, read-only pieces.
  const podStatus = {
    phase: 'Running',
    conditions: [
      { type: 'Ready', status: 'True', lastTransitionTime: podStarted },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: podCreated },
    ],
    startTime: podStarted,
    qosClass: 'Burstable',
  };
  const defaultTolerations = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ];
  const dsTolerations = [{ operator: 'Exists' }];
  const dsShared = DAEMONSETS.map((d) => {
    const dsUid = uid();
    const containers = [{ name: d.name, image: `bench/${d.name}:1`, resources: { requests: { cpu: `${d.cpu}m`, memory: `${d.mem}Mi` } } }];
    return {
      d,
      labels: { app: d.name },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: d.name, uid: dsUid, controller: true }],
      containers,
      object: {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: d.name, namespace: d.namespace, uid: dsUid, creationTimestamp: oldTime },
        spec: {
          selector: { matchLabels: { app: d.name } },
          template: { metadata: { labels: { app: d.name } }, spec: { containers, tolerations: dsTolerations } },
        },
        status: { desiredNumberScheduled: nodeCount, currentNumberScheduled: nodeCount, numberReady: nodeCount, numberAvailable: nodeCount },
      } as Obj,
    };
  });

  interface Deployment {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    ownerReferences: Obj[];
    spec: Obj;
    replicas: number;
    uid: string;
  }
  const deployments: Deployment[] = [];
  const newDeployment = (kind: 'spread' | 'anti' | 'plain', size: readonly [number, number]): Deployment => {
    const index = deployments.length;
    const name = `${kind}-${index}`;
    const namespace = `team-${index % 20}`;
    const hash = suffix(10);
    const depUid = uid();
    const labels = { app: name, 'pod-template-hash': hash };
    const spec: Obj = {
      containers: [{ name: 'main', image: `bench/${kind}:1`, resources: { requests: { cpu: `${size[0]}m`, memory: `${size[1]}Mi` } } }],
      tolerations: defaultTolerations,
      priority: 0,
    };
    if (kind === 'spread') {
      spec['topologySpreadConstraints'] = [
        { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: name } } },
      ];
    }
    if (kind === 'anti') {
      spec['affinity'] = {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: name } }, topologyKey: 'kubernetes.io/hostname' }],
        },
      };
    }
    const d: Deployment = {
      name,
      namespace,
      labels,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${name}-${hash}`, uid: uid(), controller: true }],
      spec,
      replicas: 0,
      uid: depUid,
    };
    deployments.push(d);
    return d;
  };

  let nodeName = '';
  let nodeIp = '';
  const emitPod = (pod: Obj): void => emit(shape ? shape.pod(pod, nodeIp) : pod);
  const addPod = (d: Deployment): void => {
    d.replicas++;
    emitPod({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: uniqueName(d.namespace, d.ownerReferences[0]!['name'] as string),
        namespace: d.namespace,
        uid: uid(),
        labels: d.labels,
        ownerReferences: d.ownerReferences,
        creationTimestamp: podCreated,
      },
      spec: { ...d.spec, nodeName },
      status: podStatus,
    });
  };

  let spread: Deployment | undefined;
  let anti: Deployment | undefined;
  const plainBySize = new Map<number, Deployment>();
  const smallest = SIZES[3]!;

  for (let i = 0; i < nodeCount; i++) {
    const type = pickType();
    const zone = ZONES[i % 3]!;
    const spot = rand() < 0.15;
    const name = `ip-10-${1 + Math.floor(i / 62_500)}-${Math.floor(i / 250) % 250}-${(i % 250) + 1}.ec2.internal`;
    nodeName = name;
    nodeIp = `10.${1 + Math.floor(i / 62_500)}.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`;
    const instanceId = `i-0${hex(16)}`;
    const node: Obj = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: {
          'karpenter.k8s.aws/instance-family': type.name.split('.')[0],
          'karpenter.k8s.aws/instance-size': type.name.split('.')[1],
          'karpenter.sh/capacity-type': spot ? 'spot' : 'on-demand',
          'karpenter.sh/nodepool': 'default',
          'kubernetes.io/arch': 'amd64',
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'node.kubernetes.io/instance-type': type.name,
          'topology.kubernetes.io/region': 'us-east-1',
          'topology.kubernetes.io/zone': zone,
        },
        annotations: {},
        creationTimestamp: nodeCreated,
      },
      spec: { providerID: `aws:///${zone}/${instanceId}` },
      status: {
        capacity: { cpu: type.cpu, memory: type.memory, pods: String(type.pods) },
        allocatable: { cpu: `${type.allocCpu}m`, memory: `${type.allocMem}Mi`, pods: String(type.pods) },
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: nodeReady }],
      },
    };
    emit(shape ? shape.node(node, nodeIp) : node);
    for (const ds of dsShared) {
      emitPod({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: uniqueName(ds.d.namespace, ds.d.name), namespace: ds.d.namespace, uid: uid(), labels: ds.labels, ownerReferences: ds.ownerReferences, creationTimestamp: podCreated },
        spec: { nodeName: name, containers: ds.containers, tolerations: dsTolerations, priority: 0 },
        status: podStatus,
      });
    }

    // About podsPerNode pods (+-20%), within the type's pod limit.
    const wanted = Math.round(podsPerNode * (0.8 + 0.4 * rand()));
    let count = Math.max(0, Math.min(wanted, type.pods - DAEMONSETS.length));
    const light = rand() < 0.2;
    const target = light ? 0.1 + 0.25 * rand() : 0.55 + 0.3 * rand();
    let budgetCpu = Math.max(0, target * type.allocCpu - DS_CPU);
    let budgetMem = Math.max(0, 0.92 * type.allocMem - DS_MEM);
    const place = (d: Deployment, size: readonly [number, number]): void => {
      addPod(d);
      budgetCpu -= size[0];
      budgetMem -= size[1];
      count--;
    };

    if (count > 0 && budgetCpu >= smallest[0] && budgetMem >= smallest[1]) {
      if (!spread || spread.replicas >= SPREAD_REPLICAS) spread = newDeployment('spread', smallest);
      place(spread, smallest);
    }
    if (count > 0 && rand() < 0.7 && budgetCpu >= smallest[0] && budgetMem >= smallest[1]) {
      // Consecutive nodes are distinct, so the anti-affinity replicas never share a node.
      if (!anti || anti.replicas >= ANTI_REPLICAS) anti = newDeployment('anti', smallest);
      place(anti, smallest);
    }
    while (count > 0) {
      const perPod = budgetCpu / count;
      let s = -1;
      for (let k = 0; k < SIZES.length; k++) if (SIZES[k]![0] <= perPod && SIZES[k]![1] <= budgetMem / count) s = k;
      if (s < 0) break;
      const size = SIZES[s]!;
      let d = plainBySize.get(s);
      if (!d || d.replicas >= PLAIN_REPLICAS) {
        d = newDeployment('plain', size);
        plainBySize.set(s, d);
      }
      place(d, size);
    }
  }

  const deploymentItems: Obj[] = [];
  for (const d of deployments) {
    emit({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: d.name, namespace: d.namespace, creationTimestamp: oldTime },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: d.name } } },
      status: { currentHealthy: d.replicas, desiredHealthy: d.replicas - 1, disruptionsAllowed: 1, expectedPods: d.replicas },
    });
    deploymentItems.push({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: d.name, namespace: d.namespace, uid: d.uid, creationTimestamp: oldTime },
      spec: { replicas: d.replicas, selector: { matchLabels: { app: d.name } }, template: { metadata: { labels: { app: d.name } }, spec: d.spec } },
      status: { replicas: d.replicas, readyReplicas: d.replicas, availableReplicas: d.replicas, updatedReplicas: d.replicas },
    });
  }

  for (const d of dsShared) emit(d.object);
  for (const d of deploymentItems) emit(d);
}

/**
 * The NodePool the generated nodes belong to (`default`), as a karpenter.sh/v1 YAML document. `budget`:
 * the disruption budget's `nodes` (e.g. `100%`), or `default` to leave budgets out (Karpenter's 10%).
 */
export function generateNodePools(budget = '10%'): string {
  const budgets = budget === 'default' ? '' : `    budgets:\n      - nodes: "${budget}"\n`;
  return `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      expireAfter: 720h
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["m5", "m6i", "c6i", "r6i", "m7i"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand", "spot"]
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
        - key: topology.kubernetes.io/zone
          operator: In
          values: ["us-east-1a", "us-east-1b", "us-east-1c"]
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 5m
${budgets}`;
}
