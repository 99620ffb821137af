// Builds the embedded demo: demo/cluster.json (a kubectl `List`, as printed by
// `kubectl get nodes,pods,poddisruptionbudgets,daemonsets -A -o json`, plus the Deployments and the
// StatefulSet), demo/nodepools.yaml (karpenter.sh/v1 NodePools) and demo/README.md (which node shows
// which case, with the arithmetic).
//
//   node --import tsx scripts/build-demo.ts [catalog.json]
//
// Deterministic: every name, id and timestamp comes from a fixed-seed PRNG or from the tables below.
// The script checks its own arithmetic (fits, free room, cheapest replacements) against the catalog and
// fails when a node would not show the case it is meant to show, so a tweak that breaks the story is
// caught here rather than in the plan.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../src/core/random.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The demo is meant to be planned at this instant (`--now`). */
export const DEMO_NOW = '2026-11-21T12:00:00Z';
const NOW = Date.parse(DEMO_NOW);
const MIN = 60_000;
const HOUR = 60 * MIN;
const ZONE = { a: 'us-east-1a', b: 'us-east-1b', c: 'us-east-1c' } as const;
type ZoneKey = keyof typeof ZONE;
const ZONE_ID: Record<string, string> = { 'us-east-1a': 'use1-az6', 'us-east-1b': 'use1-az1', 'us-east-1c': 'use1-az2' };

// ---------------------------------------------------------------------------------------------------
// Deterministic randomness

const SEED = 20261121;
let rand = mulberry32(SEED);
const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
const hex = (n: number): string => Array.from({ length: n }, () => '0123456789abcdef'[int(0, 15)]).join('');
/** The alphabet Kubernetes uses for generated name suffixes. */
const k8sChars = (n: number): string => Array.from({ length: n }, () => 'bcdfghjklmnpqrstvwxz2456789'[int(0, 26)]).join('');
const uuid = (): string => `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[int(0, 3)]}${hex(3)}-${hex(12)}`;
const iso = (ms: number): string => new Date(Math.round(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

// ---------------------------------------------------------------------------------------------------
// Catalog

export interface CatalogType {
  name: string;
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  labels: Record<string, string>;
  offerings: { zone: string; capacityType: 'on-demand' | 'spot'; price: number }[];
}

function cpuMilli(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000;
}
function memMi(q: string): number {
  if (q.endsWith('Mi')) return Number(q.slice(0, -2));
  if (q.endsWith('Gi')) return Number(q.slice(0, -2)) * 1024;
  if (q.endsWith('Ki')) return Number(q.slice(0, -2)) / 1024;
  throw new Error(`unexpected memory quantity ${q}`);
}

// ---------------------------------------------------------------------------------------------------
// The story: daemonsets, workloads, nodes

interface DaemonSetSpec {
  name: string;
  namespace: string;
  cpu: number;
  mem: number;
  image: string;
  priorityClassName?: string;
  priority?: number;
}

/** Every node runs one pod of each: 175m cpu and 140Mi in total. */
const DAEMONSETS: DaemonSetSpec[] = [
  { name: 'aws-node', namespace: 'kube-system', cpu: 25, mem: 40, image: '602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni:v1.20.4-eksbuild.1', priorityClassName: 'system-node-critical', priority: 2000001000 },
  { name: 'kube-proxy', namespace: 'kube-system', cpu: 100, mem: 40, image: '602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy:v1.33.3-minimal-eksbuild.6', priorityClassName: 'system-node-critical', priority: 2000001000 },
  { name: 'fluent-bit', namespace: 'logging', cpu: 50, mem: 60, image: 'public.ecr.aws/aws-observability/aws-for-fluent-bit:3.0.0' },
];
const DS_CPU = DAEMONSETS.reduce((s, d) => s + d.cpu, 0);
const DS_MEM = DAEMONSETS.reduce((s, d) => s + d.mem, 0);

type Kind = 'Deployment' | 'StatefulSet' | 'Job' | 'None';
type Pin = 'on-demand' | 'spot' | 'batch' | 'none';

interface WorkloadSpec {
  name: string;
  namespace: string;
  kind: Kind;
  cpu: number;
  /** Mi */
  mem: number;
  image: string;
  /** on-demand / spot: `karpenter.sh/capacity-type` selector; batch: the batch pool's label and taint. */
  pin: Pin;
  /** Required node affinity on one zone (batch workloads read zonal data). */
  zone?: ZoneKey;
  spreadOnZone?: boolean;
  antiAffinityOnHost?: boolean;
  priorityClassName?: string;
  priority?: number;
  annotations?: Record<string, string>;
  /** PodDisruptionBudget: `maxUnavailable: 1` unless `pdbMinAvailableAll` (then minAvailable = replicas, allowing 0). */
  pdb?: 'maxUnavailable1' | 'minAvailableAll';
  pvc?: boolean;
}

const ECR = '123456789012.dkr.ecr.us-east-1.amazonaws.com';
const W = (w: Omit<WorkloadSpec, 'image' | 'namespace' | 'kind' | 'pin'> & Partial<WorkloadSpec>): WorkloadSpec => ({
  namespace: 'shop',
  kind: 'Deployment',
  pin: 'on-demand',
  image: `${ECR}/${w.name}:1.${w.name.length}.${w.name.charCodeAt(0) % 10}`,
  ...w,
});

const WORKLOADS: Record<string, WorkloadSpec> = Object.fromEntries(
  [
    // Stateless services on on-demand capacity.
    W({ name: 'api', cpu: 600, mem: 1024, spreadOnZone: true, antiAffinityOnHost: true, pdb: 'maxUnavailable1' }),
    W({ name: 'product-catalog', cpu: 400, mem: 1024, spreadOnZone: true, pdb: 'maxUnavailable1' }),
    W({ name: 'orders', cpu: 750, mem: 2048, pdb: 'maxUnavailable1' }),
    W({ name: 'checkout', cpu: 500, mem: 1024, pdb: 'maxUnavailable1' }),
    W({ name: 'cart', cpu: 300, mem: 512 }),
    W({ name: 'pricing', cpu: 800, mem: 1536 }),
    // Big pods ("anchors"): no other node has room for one of them, so a node hosting them can only be
    // replaced by a node that holds them all, and each well used node's anchors need its full size.
    W({ name: 'pdf-render', cpu: 2000, mem: 1024 }),
    W({ name: 'inventory', cpu: 1000, mem: 5120, pdb: 'maxUnavailable1' }),
    W({ name: 'ledger', cpu: 1200, mem: 5120, pdb: 'maxUnavailable1' }),
    W({ name: 'session-store', cpu: 500, mem: 5632 }),
    W({ name: 'search', cpu: 1200, mem: 6144, antiAffinityOnHost: true, pdb: 'maxUnavailable1' }),
    W({ name: 'analytics-cache', namespace: 'data', cpu: 400, mem: 29696 }),
    W({ name: 'db', namespace: 'data', kind: 'StatefulSet', cpu: 1500, mem: 22528, pvc: true, pdb: 'maxUnavailable1', image: 'public.ecr.aws/docker/library/postgres:17.6' }),
    // The merge group: three single-replica caches of 4.5Gi each.
    W({ name: 'recommender', namespace: 'ml', cpu: 400, mem: 4608 }),
    W({ name: 'feature-store', namespace: 'ml', cpu: 400, mem: 4608 }),
    W({ name: 'geo-cache', cpu: 400, mem: 4608 }),
    // Small services on the lightly loaded nodes.
    W({ name: 'notifications', namespace: 'platform', cpu: 120, mem: 200, pdb: 'maxUnavailable1' }),
    W({ name: 'audit-log', namespace: 'platform', cpu: 120, mem: 200 }),
    W({ name: 'feature-flags', namespace: 'platform', cpu: 120, mem: 200, pdb: 'maxUnavailable1' }),
    W({ name: 'email-renderer', namespace: 'platform', cpu: 120, mem: 200 }),
    // Blockers.
    W({ name: 'payments', cpu: 250, mem: 384, pdb: 'minAvailableAll' }),
    W({ name: 'model-training', namespace: 'ml', kind: 'Job', cpu: 600, mem: 1536, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
    W({ name: 'debug-shell', namespace: 'default', kind: 'None', cpu: 100, mem: 128, image: 'public.ecr.aws/docker/library/busybox:1.37' }),
    // Spot-tolerant web tier.
    W({ name: 'web', pin: 'spot', cpu: 500, mem: 1024, pdb: 'maxUnavailable1' }),
    W({ name: 'image-resizer', pin: 'spot', cpu: 1000, mem: 5120 }),
    // Batch pool workloads, each tied to one zone.
    W({ name: 'etl-loader', namespace: 'batch', pin: 'batch', zone: 'a', cpu: 500, mem: 1280 }),
    W({ name: 'report-builder', namespace: 'batch', pin: 'batch', zone: 'b', cpu: 450, mem: 1024 }),
    W({ name: 'transcoder', namespace: 'batch', pin: 'batch', zone: 'b', cpu: 1500, mem: 3328 }),
    W({ name: 'queue-worker', namespace: 'batch', pin: 'batch', zone: 'c', cpu: 1500, mem: 2560 }),
    // Cluster add-ons on the unmanaged node group.
    W({ name: 'coredns', namespace: 'kube-system', pin: 'none', cpu: 100, mem: 70, priorityClassName: 'system-cluster-critical', priority: 2000000000, pdb: 'maxUnavailable1', image: '602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns:v1.12.3-eksbuild.1' }),
    W({ name: 'karpenter', namespace: 'kube-system', pin: 'none', cpu: 1000, mem: 1024, antiAffinityOnHost: true, priorityClassName: 'system-cluster-critical', priority: 2000000000, pdb: 'maxUnavailable1', image: 'public.ecr.aws/karpenter/controller:1.14.1' }),
    W({ name: 'metrics-server', namespace: 'kube-system', pin: 'none', cpu: 100, mem: 200, priorityClassName: 'system-cluster-critical', priority: 2000000000, image: 'registry.k8s.io/metrics-server/metrics-server:v0.8.0' }),
    W({ name: 'ebs-csi-controller', namespace: 'kube-system', pin: 'none', cpu: 60, mem: 240, priorityClassName: 'system-cluster-critical', priority: 2000000000, image: 'public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.48.0' }),
    W({ name: 'grafana', namespace: 'monitoring', pin: 'none', cpu: 250, mem: 512 }),
    W({ name: 'prometheus', namespace: 'monitoring', kind: 'StatefulSet', pin: 'none', cpu: 1000, mem: 10240, pvc: true }),
    W({ name: 'loki', namespace: 'monitoring', kind: 'StatefulSet', pin: 'none', cpu: 500, mem: 8192, pvc: true }),
  ].map((w) => [w.name, w]),
);

/** The role a node plays in the demo (what a consolidator is expected to do with it). */
type Case =
  | 'empty'
  | 'delete'
  | 'merge'
  | 'replace'
  | 'threshold'
  | 'memory-bound'
  | 'busy'
  | 'spot-busy'
  | 'pdb'
  | 'do-not-disrupt-pod'
  | 'do-not-disrupt-node'
  | 'bare-pod'
  | 'not-ready'
  | 'unmanaged';

interface NodeSpec {
  id: string;
  type: string;
  zone: ZoneKey;
  capacityType: 'on-demand' | 'spot';
  /** undefined: the unmanaged managed-node-group nodes. */
  pool?: 'default' | 'batch';
  case: Case;
  /** Workload name, repeated for several replicas on the node. */
  pods: string[];
  annotations?: Record<string, string>;
  notReady?: boolean;
}

const rep = (name: string, n: number): string[] => Array.from({ length: n }, () => name);

const NODES: NodeSpec[] = [
  // (a) empty: daemonset pods only.
  { id: 'E1', type: 'c6i.large', zone: 'a', capacityType: 'on-demand', pool: 'default', case: 'empty', pods: [] },
  { id: 'E2', type: 'c6i.large', zone: 'c', capacityType: 'spot', pool: 'default', case: 'empty', pods: [] },
  // (d) merge group: each holds one 4.5Gi cache that fits on no other node.
  { id: 'G1', type: 'm5.large', zone: 'a', capacityType: 'on-demand', pool: 'default', case: 'merge', pods: ['recommender'] },
  { id: 'G2', type: 'm5.large', zone: 'b', capacityType: 'on-demand', pool: 'default', case: 'merge', pods: ['feature-store'] },
  { id: 'G3', type: 'm5.large', zone: 'c', capacityType: 'on-demand', pool: 'default', case: 'merge', pods: ['geo-cache'] },
  // Idle by CPU, full by memory: neither removable nor replaceable.
  { id: 'M1', type: 'r6i.2xlarge', zone: 'b', capacityType: 'on-demand', pool: 'default', case: 'memory-bound', pods: rep('analytics-cache', 2) },
  // (b) lightly loaded: the pods fit in the others' free room.
  { id: 'L1', type: 'c6i.large', zone: 'a', capacityType: 'on-demand', pool: 'default', case: 'delete', pods: ['notifications', 'audit-log', 'feature-flags', 'email-renderer'] },
  { id: 'L2', type: 'c6i.large', zone: 'c', capacityType: 'on-demand', pool: 'default', case: 'delete', pods: ['notifications', 'audit-log', 'feature-flags', 'email-renderer'] },
  // (e) blocked, but otherwise as removable as L1/L2.
  { id: 'P1', type: 'c6i.large', zone: 'b', capacityType: 'on-demand', pool: 'default', case: 'pdb', pods: rep('payments', 2) },
  { id: 'D1', type: 'c6i.large', zone: 'c', capacityType: 'on-demand', pool: 'default', case: 'do-not-disrupt-pod', pods: ['model-training'] },
  { id: 'D2', type: 'c6i.large', zone: 'a', capacityType: 'on-demand', pool: 'default', case: 'do-not-disrupt-node', pods: rep('cart', 2), annotations: { 'karpenter.sh/do-not-disrupt': 'true' } },
  { id: 'B1', type: 'c6i.large', zone: 'b', capacityType: 'on-demand', pool: 'default', case: 'bare-pod', pods: ['debug-shell', 'cart'] },
  // Spot web tier, well used.
  { id: 'S1', type: 'm6i.xlarge', zone: 'a', capacityType: 'spot', pool: 'default', case: 'spot-busy', pods: ['image-resizer', ...rep('web', 4)] },
  { id: 'S2', type: 'c6i.2xlarge', zone: 'b', capacityType: 'spot', pool: 'default', case: 'spot-busy', pods: ['image-resizer', ...rep('web', 8)] },
  // Well used on-demand nodes (60-85% cpu requested, little free memory).
  { id: 'W1', type: 'm5.2xlarge', zone: 'a', capacityType: 'on-demand', pool: 'default', case: 'busy', pods: ['search', 'inventory', 'ledger', 'session-store', 'api', 'product-catalog', 'cart', 'pricing'] },
  { id: 'W2', type: 'm6i.xlarge', zone: 'a', capacityType: 'on-demand', pool: 'default', case: 'busy', pods: ['inventory', 'ledger', 'api', 'cart'] },
  { id: 'W3', type: 'r6i.xlarge', zone: 'a', capacityType: 'on-demand', pool: 'default', case: 'busy', pods: ['db', 'orders', 'product-catalog'] },
  { id: 'W4', type: 'c6i.2xlarge', zone: 'a', capacityType: 'on-demand', pool: 'default', case: 'busy', pods: ['pdf-render', 'pdf-render', 'session-store', 'orders', 'orders', 'checkout'] },
  { id: 'W5', type: 'm5.2xlarge', zone: 'b', capacityType: 'on-demand', pool: 'default', case: 'busy', pods: ['search', 'inventory', 'ledger', 'session-store', 'api', 'product-catalog', 'cart', 'pricing'] },
  { id: 'W6', type: 'm6i.xlarge', zone: 'b', capacityType: 'on-demand', pool: 'default', case: 'busy', pods: ['inventory', 'ledger', 'api', 'cart'] },
  { id: 'W7', type: 'r6i.xlarge', zone: 'b', capacityType: 'on-demand', pool: 'default', case: 'busy', pods: ['db', 'orders', 'product-catalog'] },
  { id: 'W8', type: 'c6i.xlarge', zone: 'b', capacityType: 'on-demand', pool: 'default', case: 'busy', pods: ['pdf-render', 'inventory'] },
  { id: 'W9', type: 'm6i.2xlarge', zone: 'c', capacityType: 'on-demand', pool: 'default', case: 'busy', pods: ['search', 'inventory', 'ledger', 'session-store', 'api', 'product-catalog', 'cart', 'pricing'] },
  { id: 'W10', type: 'm5.xlarge', zone: 'c', capacityType: 'on-demand', pool: 'default', case: 'busy', pods: ['inventory', 'ledger', 'api', 'cart'] },
  { id: 'W11', type: 'r6i.xlarge', zone: 'c', capacityType: 'on-demand', pool: 'default', case: 'busy', pods: ['db', 'orders', 'product-catalog'] },
  { id: 'W12', type: 'c6i.2xlarge', zone: 'c', capacityType: 'on-demand', pool: 'default', case: 'busy', pods: ['pdf-render', 'pdf-render', 'session-store', 'orders', 'orders', 'checkout'] },
  // Batch pool.
  { id: 'X1', type: 'm5.4xlarge', zone: 'a', capacityType: 'on-demand', pool: 'batch', case: 'replace', pods: rep('etl-loader', 3) },
  { id: 'T1', type: 'm5.large', zone: 'b', capacityType: 'on-demand', pool: 'batch', case: 'threshold', pods: rep('report-builder', 2) },
  { id: 'Q1', type: 'c6i.2xlarge', zone: 'b', capacityType: 'on-demand', pool: 'batch', case: 'busy', pods: rep('transcoder', 4) },
  { id: 'Q2', type: 'c6i.2xlarge', zone: 'c', capacityType: 'on-demand', pool: 'batch', case: 'busy', pods: rep('queue-worker', 4) },
  { id: 'N1', type: 'm5.xlarge', zone: 'c', capacityType: 'on-demand', pool: 'batch', case: 'not-ready', pods: [], notReady: true },
  // Unmanaged EKS managed node group "system" (runs Karpenter itself and the cluster add-ons).
  { id: 'U1', type: 'm5.xlarge', zone: 'a', capacityType: 'on-demand', case: 'unmanaged', pods: ['karpenter', 'coredns', 'metrics-server', 'ebs-csi-controller', 'prometheus'] },
  { id: 'U2', type: 'm5.xlarge', zone: 'b', capacityType: 'on-demand', case: 'unmanaged', pods: ['karpenter', 'coredns', 'loki', 'grafana'] },
];

/** What each pool may launch (mirrors demo/nodepools.yaml; used by the self-check). */
const POOLS = {
  default: { families: ['m5', 'm6i', 'c6i', 'r6i', 'm7i'], capacityTypes: ['on-demand', 'spot'], thresholdCents: 0 },
  batch: { families: ['c6i', 'm5', 'm6i'], capacityTypes: ['on-demand'], thresholdCents: 1 },
} as const;

const NODEPOOLS_YAML = `# NodePools for the embedded demo (karpenter.sh/v1). Generated by scripts/build-demo.ts.
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  weight: 10
  template:
    metadata:
      labels:
        workload-class: general
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
    budgets:
      # At most a fifth of the pool's nodes in disruption at any time.
      - nodes: "20%"
      # A change freeze: no voluntary disruption on New Year's Day (UTC). (The demo plans the same on any
      # other day: its cluster's times are replayed relative to the clock.)
      - nodes: "0"
        schedule: "0 0 1 1 *"
        duration: 24h
  limits:
    cpu: "400"
    memory: 1600Gi
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: batch
spec:
  template:
    metadata:
      labels:
        workload-class: batch
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      expireAfter: 720h
      taints:
        - key: workload
          value: batch
          effect: NoSchedule
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["c6i", "m5", "m6i"]
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
        - key: topology.kubernetes.io/zone
          operator: In
          values: ["us-east-1a", "us-east-1b", "us-east-1c"]
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 10m
    # Require 1 cent/hour of savings per unit of disruption cost (about one cent per evicted pod).
    consolidationSavingsThresholdCents: "1"
    budgets:
      - nodes: "2"
`;

// ---------------------------------------------------------------------------------------------------
// Building the Kubernetes objects

type Obj = Record<string, unknown>;

interface BuiltNode {
  spec: NodeSpec;
  name: string;
  type: CatalogType;
  price: number;
  labels: Record<string, string>;
  taints: { key: string; value?: string; effect: string }[];
  createdAt: number;
  object: Obj;
  pods: BuiltPod[];
}

interface BuiltPod {
  workload: WorkloadSpec | DaemonSetSpec;
  isDaemon: boolean;
  key: string;
  node: BuiltNode;
  cpu: number;
  mem: number;
  object: Obj;
}

const DEFAULT_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];
const BATCH_TOLERATION = { key: 'workload', operator: 'Equal', value: 'batch', effect: 'NoSchedule' };

function nodeSelectorFor(w: WorkloadSpec): Record<string, string> | undefined {
  if (w.pin === 'on-demand') return { 'karpenter.sh/capacity-type': 'on-demand' };
  if (w.pin === 'spot') return { 'karpenter.sh/capacity-type': 'spot' };
  if (w.pin === 'batch') return { 'workload-class': 'batch' };
  return undefined;
}

function podTemplateSpec(w: WorkloadSpec): Obj {
  const spec: Obj = {
    containers: [
      {
        name: w.kind === 'StatefulSet' && w.name === 'db' ? 'postgres' : 'main',
        image: w.image,
        resources: { requests: { cpu: `${w.cpu}m`, memory: `${w.mem}Mi` }, limits: { memory: `${w.mem}Mi` } },
      },
    ],
  };
  const selector = nodeSelectorFor(w);
  if (selector) spec['nodeSelector'] = selector;
  const affinity: Obj = {};
  if (w.zone) {
    affinity['nodeAffinity'] = {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [ZONE[w.zone]] }] }],
      },
    };
  }
  if (w.antiAffinityOnHost) {
    affinity['podAntiAffinity'] = {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { labelSelector: { matchLabels: { app: w.name } }, topologyKey: 'kubernetes.io/hostname' },
      ],
    };
  }
  if (Object.keys(affinity).length) spec['affinity'] = affinity;
  if (w.spreadOnZone) {
    spec['topologySpreadConstraints'] = [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: w.name } } },
    ];
  }
  if (w.pin === 'batch') spec['tolerations'] = [BATCH_TOLERATION];
  if (w.priorityClassName) spec['priorityClassName'] = w.priorityClassName;
  return spec;
}

function build(catalog: Map<string, CatalogType>) {
  const usedIps = new Set<string>();
  const ipFor = (zone: ZoneKey): [number, number] => {
    const base = { a: 0, b: 32, c: 64 }[zone];
    for (;;) {
      const third = base + int(0, 31);
      const fourth = int(4, 250);
      const key = `${third}.${fourth}`;
      if (!usedIps.has(key)) {
        usedIps.add(key);
        return [third, fourth];
      }
    }
  };

  // Controllers first, so pods can point at their uids.
  const rsHash = new Map<string, string>();
  const ownerUid = new Map<string, string>();
  for (const w of Object.values(WORKLOADS)) {
    ownerUid.set(w.name, uuid());
    if (w.kind === 'Deployment') rsHash.set(w.name, k8sChars(10));
  }
  const dsUid = new Map(DAEMONSETS.map((d) => [d.name, uuid()]));

  const nodes: BuiltNode[] = [];
  for (const [index, spec] of NODES.entries()) {
    const type = catalog.get(spec.type);
    if (!type) throw new Error(`${spec.id}: ${spec.type} is not in the catalog`);
    const zone = ZONE[spec.zone];
    const offering = type.offerings.find((o) => o.zone === zone && o.capacityType === spec.capacityType);
    if (!offering) throw new Error(`${spec.id}: no ${spec.capacityType} offering of ${spec.type} in ${zone}`);
    const [third, fourth] = ipFor(spec.zone);
    const name = `ip-10-0-${third}-${fourth}.ec2.internal`;
    const instanceId = `i-0${hex(16)}`;
    // Launched about two days before the demo instant, a few minutes apart.
    const createdAt = NOW - 48 * HOUR - 3 * HOUR + index * 7 * MIN + int(0, 240) * 1000;
    const readyAt = createdAt + int(40, 75) * 1000;

    const labels: Record<string, string> = {};
    if (spec.pool) {
      for (const [k, v] of Object.entries(type.labels)) labels[k] = v;
      labels['karpenter.k8s.aws/ec2nodeclass'] = 'default';
      labels['karpenter.sh/capacity-type'] = spec.capacityType;
      labels['karpenter.sh/initialized'] = 'true';
      labels['karpenter.sh/nodepool'] = spec.pool;
      labels['karpenter.sh/registered'] = 'true';
      labels['workload-class'] = spec.pool === 'batch' ? 'batch' : 'general';
    } else {
      labels['eks.amazonaws.com/capacityType'] = 'ON_DEMAND';
      labels['eks.amazonaws.com/nodegroup'] = 'system';
      labels['eks.amazonaws.com/nodegroup-image'] = 'ami-0c1f3e5a7b9d24680';
    }
    Object.assign(labels, {
      'kubernetes.io/arch': type.labels['kubernetes.io/arch'] ?? 'amd64',
      'kubernetes.io/hostname': name,
      'kubernetes.io/os': 'linux',
      'node.kubernetes.io/instance-type': spec.type,
      'topology.k8s.aws/zone-id': ZONE_ID[zone]!,
      'topology.kubernetes.io/region': 'us-east-1',
      'topology.kubernetes.io/zone': zone,
    });
    const sortedLabels = Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));

    const taints: { key: string; value?: string; effect: string; timeAdded?: string }[] = [];
    if (spec.pool === 'batch') taints.push({ key: 'workload', value: 'batch', effect: 'NoSchedule' });
    if (spec.notReady) {
      const lost = iso(NOW - 42 * MIN);
      taints.push({ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule', timeAdded: lost });
      taints.push({ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: iso(NOW - 41 * MIN) });
    }

    const annotations: Record<string, string> = {
      'alpha.kubernetes.io/provided-node-ip': `10.0.${third}.${fourth}`,
      'node.alpha.kubernetes.io/ttl': '0',
      'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      ...(spec.pool ? { 'karpenter.k8s.aws/ec2nodeclass-hash': '7521389245361180543', 'karpenter.sh/nodepool-hash': spec.pool === 'batch' ? '4208817410266410193' : '11692510938479152735' } : {}),
      ...spec.annotations,
    };

    const allocatable = {
      cpu: type.allocatable['cpu']!,
      'ephemeral-storage': type.allocatable['ephemeral-storage'] ?? '17Gi',
      memory: type.allocatable['memory']!,
      pods: type.allocatable['pods']!,
    };
    const capacity = {
      cpu: type.capacity['cpu']!,
      'ephemeral-storage': '20959212Ki',
      memory: type.capacity['memory']!,
      pods: type.capacity['pods']!,
    };
    const conditions = spec.notReady
      ? ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map((t) => ({
          type: t,
          status: 'Unknown',
          lastHeartbeatTime: iso(NOW - 43 * MIN),
          lastTransitionTime: iso(NOW - 42 * MIN),
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
        }))
      : [
          ...['MemoryPressure', 'DiskPressure', 'PIDPressure'].map((t) => ({
            type: t,
            status: 'False',
            lastHeartbeatTime: iso(NOW - int(5, 50) * 1000),
            lastTransitionTime: iso(readyAt - 20_000),
            reason: `KubeletHas${t === 'MemoryPressure' ? 'SufficientMemory' : t === 'DiskPressure' ? 'NoDiskPressure' : 'SufficientPID'}`,
          })),
          {
            type: 'Ready',
            status: 'True',
            lastHeartbeatTime: iso(NOW - int(5, 50) * 1000),
            lastTransitionTime: iso(readyAt),
            reason: 'KubeletReady',
            message: 'kubelet is posting ready status',
          },
        ];
    const object: Obj = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, uid: uuid(), labels: sortedLabels, annotations, creationTimestamp: iso(createdAt) },
      spec: { providerID: `aws:///${zone}/${instanceId}`, ...(taints.length ? { taints } : {}) },
      status: {
        capacity,
        allocatable,
        conditions,
        addresses: [
          { type: 'InternalIP', address: `10.0.${third}.${fourth}` },
          { type: 'InternalDNS', address: name },
          { type: 'Hostname', address: name },
        ],
        nodeInfo: {
          architecture: labels['kubernetes.io/arch'],
          containerRuntimeVersion: 'containerd://2.0.5',
          kernelVersion: '6.12.40-63.114.amzn2023.x86_64',
          kubeletVersion: 'v1.33.4-eks-e386d34',
          operatingSystem: 'linux',
          osImage: 'Amazon Linux 2023.8.20250915',
        },
      },
    };
    nodes.push({ spec, name, type, price: offering.price, labels: sortedLabels, taints, createdAt, object, pods: [] });
  }

  // Pods. Deployment pods share their ReplicaSet's hash; StatefulSet pods are numbered.
  const ordinal = new Map<string, number>();
  const pods: BuiltPod[] = [];
  const podIp = () => `10.0.${int(96, 127)}.${int(2, 254)}`;
  for (const node of nodes) {
    const ready = !node.spec.notReady;
    const hostIP = (node.object['status'] as { addresses: { address: string }[] }).addresses[0]!.address;
    for (const d of DAEMONSETS) {
      const created = node.createdAt + int(5, 30) * 1000;
      const name = `${d.name}-${k8sChars(5)}`;
      const object: Obj = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          namespace: d.namespace,
          uid: uuid(),
          labels: { app: d.name, 'controller-revision-hash': '6b9c7d5f8', 'pod-template-generation': '1' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: d.name, uid: dsUid.get(d.name), controller: true, blockOwnerDeletion: true }],
          creationTimestamp: iso(created),
        },
        spec: {
          nodeName: node.name,
          containers: [{ name: d.name, image: d.image, resources: { requests: { cpu: `${d.cpu}m`, memory: `${d.mem}Mi` } } }],
          ...(d.name === 'fluent-bit' ? {} : { hostNetwork: true }),
          ...(d.priorityClassName ? { priorityClassName: d.priorityClassName } : {}),
          priority: d.priority ?? 0,
          serviceAccountName: d.name,
          tolerations: [{ operator: 'Exists' }],
        },
        status: podStatus(d.name, created, ready, hostIP, d.name === 'fluent-bit' ? podIp() : hostIP),
      };
      const built: BuiltPod = { workload: d, isDaemon: true, key: `${d.namespace}/${name}`, node, cpu: d.cpu, mem: d.mem, object };
      node.pods.push(built);
      pods.push(built);
    }
    for (const wname of node.spec.pods) {
      const w = WORKLOADS[wname];
      if (!w) throw new Error(`${node.spec.id}: unknown workload ${wname}`);
      // Pods arrived with or after their node, and at least 2 hours before the demo instant.
      const created = Math.min(node.createdAt + int(2, 600) * 60_000, NOW - 2 * HOUR - int(0, 600) * 60_000);
      let name: string;
      let ownerReferences: Obj[] | undefined;
      if (w.kind === 'Deployment') {
        name = `${w.name}-${rsHash.get(w.name)}-${k8sChars(5)}`;
        ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${w.name}-${rsHash.get(w.name)}`, uid: ownerUid.get(w.name), controller: true, blockOwnerDeletion: true }];
      } else if (w.kind === 'StatefulSet') {
        const n = ordinal.get(w.name) ?? 0;
        ordinal.set(w.name, n + 1);
        name = `${w.name}-${n}`;
        ownerReferences = [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: w.name, uid: ownerUid.get(w.name), controller: true, blockOwnerDeletion: true }];
      } else if (w.kind === 'Job') {
        name = `${w.name}-29384710-${k8sChars(5)}`;
        ownerReferences = [{ apiVersion: 'batch/v1', kind: 'Job', name: `${w.name}-29384710`, uid: ownerUid.get(w.name), controller: true, blockOwnerDeletion: true }];
      } else {
        name = w.name;
      }
      const spec: Obj = {
        nodeName: node.name,
        ...podTemplateSpec(w),
        priority: w.priority ?? 0,
        schedulerName: 'default-scheduler',
        serviceAccountName: 'default',
        terminationGracePeriodSeconds: 30,
      };
      spec['tolerations'] = [...((spec['tolerations'] as Obj[] | undefined) ?? []), ...DEFAULT_TOLERATIONS];
      if (w.kind === 'StatefulSet') {
        spec['hostname'] = name;
        spec['volumes'] = [{ name: 'data', persistentVolumeClaim: { claimName: `data-${name}` } }];
      }
      const labels: Record<string, string> = { app: w.name };
      if (w.kind === 'Deployment') labels['pod-template-hash'] = rsHash.get(w.name)!;
      if (w.kind === 'StatefulSet') labels['statefulset.kubernetes.io/pod-name'] = name;
      if (w.kind === 'Job') labels['batch.kubernetes.io/job-name'] = `${w.name}-29384710`;
      const metadata: Obj = { name, namespace: w.namespace, uid: uuid(), labels };
      if (w.annotations) metadata['annotations'] = { ...w.annotations };
      if (ownerReferences) metadata['ownerReferences'] = ownerReferences;
      metadata['creationTimestamp'] = iso(created);
      const object: Obj = { apiVersion: 'v1', kind: 'Pod', metadata, spec, status: podStatus('main', created, ready, hostIP, podIp()) };
      const built: BuiltPod = { workload: w, isDaemon: false, key: `${w.namespace}/${name}`, node, cpu: w.cpu, mem: w.mem, object };
      node.pods.push(built);
      pods.push(built);
    }
  }
  // StatefulSet container name fix-up for the status block.
  for (const p of pods) {
    const spec = p.object['spec'] as { containers: { name: string }[] };
    const status = p.object['status'] as { containerStatuses: { name: string }[] };
    status.containerStatuses[0]!.name = spec.containers[0]!.name;
  }

  // Controllers, PDBs, daemonsets.
  const replicas = new Map<string, number>();
  for (const p of pods) if (!p.isDaemon) replicas.set(p.workload.name, (replicas.get(p.workload.name) ?? 0) + 1);
  const pdbs: Obj[] = [];
  const controllers: Obj[] = [];
  for (const w of Object.values(WORKLOADS)) {
    const n = replicas.get(w.name) ?? 0;
    if (n === 0) throw new Error(`workload ${w.name} has no pods`);
    if (w.pdb) {
      const allowed = w.pdb === 'minAvailableAll' ? 0 : 1;
      pdbs.push({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: w.name, namespace: w.namespace, uid: uuid(), generation: 1, creationTimestamp: iso(NOW - 40 * 24 * HOUR) },
        spec: { ...(w.pdb === 'minAvailableAll' ? { minAvailable: n } : { maxUnavailable: 1 }), selector: { matchLabels: { app: w.name } } },
        status: { currentHealthy: n, desiredHealthy: n - allowed, disruptionsAllowed: allowed, expectedPods: n, observedGeneration: 1 },
      });
    }
    if (w.kind === 'Deployment' || w.kind === 'StatefulSet') {
      const template = { metadata: { labels: { app: w.name } }, spec: podTemplateSpec(w) };
      controllers.push({
        apiVersion: 'apps/v1',
        kind: w.kind,
        metadata: { name: w.name, namespace: w.namespace, uid: ownerUid.get(w.name), generation: 3, creationTimestamp: iso(NOW - 40 * 24 * HOUR) },
        spec: {
          replicas: n,
          selector: { matchLabels: { app: w.name } },
          ...(w.kind === 'StatefulSet' ? { serviceName: w.name, volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'gp3', resources: { requests: { storage: '100Gi' } } } }] } : {}),
          template: JSON.parse(JSON.stringify(template)),
        },
        status:
          w.kind === 'Deployment'
            ? { observedGeneration: 3, replicas: n, updatedReplicas: n, readyReplicas: n, availableReplicas: n }
            : { observedGeneration: 3, replicas: n, currentReplicas: n, updatedReplicas: n, readyReplicas: n, availableReplicas: n },
      });
    }
  }
  const readyNodes = nodes.filter((n) => !n.spec.notReady).length;
  const daemonSets: Obj[] = DAEMONSETS.map((d) => ({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: d.name, namespace: d.namespace, uid: dsUid.get(d.name), generation: 1, creationTimestamp: iso(NOW - 40 * 24 * HOUR) },
    spec: {
      selector: { matchLabels: { app: d.name } },
      template: {
        metadata: { labels: { app: d.name } },
        spec: {
          containers: [{ name: d.name, image: d.image, resources: { requests: { cpu: `${d.cpu}m`, memory: `${d.mem}Mi` } } }],
          ...(d.name === 'fluent-bit' ? {} : { hostNetwork: true }),
          ...(d.priorityClassName ? { priorityClassName: d.priorityClassName } : {}),
          serviceAccountName: d.name,
          tolerations: [{ operator: 'Exists' }],
        },
      },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
    },
    status: {
      currentNumberScheduled: nodes.length,
      desiredNumberScheduled: nodes.length,
      numberAvailable: readyNodes,
      numberMisscheduled: 0,
      numberReady: readyNodes,
      numberUnavailable: nodes.length - readyNodes,
      observedGeneration: 1,
      updatedNumberScheduled: nodes.length,
    },
  }));

  const byKey = (a: Obj, b: Obj): number => {
    const ma = a['metadata'] as { namespace?: string; name: string };
    const mb = b['metadata'] as { namespace?: string; name: string };
    const ka = `${ma.namespace ?? ''}/${ma.name}`;
    const kb = `${mb.namespace ?? ''}/${mb.name}`;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  };
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      ...nodes.map((n) => n.object).sort(byKey),
      ...pods.map((p) => p.object).sort(byKey),
      ...pdbs.sort(byKey),
      ...daemonSets.sort(byKey),
      ...controllers.sort(byKey),
    ],
    metadata: { resourceVersion: '' },
  };
  return { nodes, pods, list };
}

function podStatus(container: string, created: number, ready: boolean, hostIP: string, podIP: string): Obj {
  const started = created + int(2, 20) * 1000;
  const running = started + int(1, 15) * 1000;
  return {
    phase: 'Running',
    conditions: [
      { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: iso(running) },
      { type: 'Initialized', status: 'True', lastTransitionTime: iso(started) },
      ready
        ? { type: 'Ready', status: 'True', lastTransitionTime: iso(running + 5000) }
        : { type: 'Ready', status: 'False', lastTransitionTime: iso(NOW - 41 * MIN) },
      { type: 'ContainersReady', status: ready ? 'True' : 'False', lastTransitionTime: iso(ready ? running + 5000 : NOW - 41 * MIN) },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: iso(created) },
    ],
    hostIP,
    podIP,
    startTime: iso(started),
    containerStatuses: [{ name: container, ready, restartCount: 0, started: true, state: { running: { startedAt: iso(running) } } }],
    qosClass: 'Burstable',
  };
}

// ---------------------------------------------------------------------------------------------------
// Self-check: the arithmetic behind each node's intended case

interface Room {
  cpu: number;
  mem: number;
  pods: number;
}

function allocOf(t: CatalogType): Room {
  return { cpu: cpuMilli(t.allocatable['cpu']!), mem: memMi(t.allocatable['memory']!), pods: Number(t.allocatable['pods']) };
}

function usedOf(node: BuiltNode): Room {
  return node.pods.reduce((r, p) => ({ cpu: r.cpu + p.cpu, mem: r.mem + p.mem, pods: r.pods + 1 }), { cpu: 0, mem: 0, pods: 0 });
}

function podAllowedOn(p: BuiltPod, n: BuiltNode): boolean {
  if (p.isDaemon) return true;
  const w = p.workload as WorkloadSpec;
  if (n.spec.notReady) return false;
  const selector = nodeSelectorFor(w) ?? {};
  for (const [k, v] of Object.entries(selector)) if (n.labels[k] !== v) return false;
  for (const t of n.taints) {
    if (t.effect === 'PreferNoSchedule') continue;
    const tolerated = w.pin === 'batch' && t.key === 'workload' && t.value === 'batch';
    if (!tolerated) return false;
  }
  if (w.zone && n.labels['topology.kubernetes.io/zone'] !== ZONE[w.zone]) return false;
  if (w.antiAffinityOnHost && n.pods.some((q) => q !== p && q.workload.name === w.name)) return false;
  return true;
}

/** First-fit-decreasing of `node`'s movable pods into the other nodes' free room. */
function tryDelete(node: BuiltNode, all: readonly BuiltNode[], gone: ReadonlySet<string>): { ok: true } | { ok: false; pod: BuiltPod; bestFreeMem: number } {
  const free = new Map<string, Room>();
  for (const n of all) {
    if (n === node || gone.has(n.spec.id)) continue;
    const a = allocOf(n.type);
    const u = usedOf(n);
    free.set(n.spec.id, { cpu: a.cpu - u.cpu, mem: a.mem - u.mem, pods: a.pods - u.pods });
  }
  const movable = node.pods.filter((p) => !p.isDaemon).sort((a, b) => b.mem - a.mem || b.cpu - a.cpu);
  for (const p of movable) {
    let placed = false;
    let bestFreeMem = 0;
    for (const n of all) {
      const f = free.get(n.spec.id);
      if (!f || !podAllowedOn(p, n)) continue;
      bestFreeMem = Math.max(bestFreeMem, f.mem);
      if (f.cpu >= p.cpu && f.mem >= p.mem && f.pods >= 1) {
        f.cpu -= p.cpu;
        f.mem -= p.mem;
        f.pods -= 1;
        placed = true;
        break;
      }
    }
    if (!placed) return { ok: false, pod: p, bestFreeMem };
  }
  return { ok: true };
}

/**
 * Pods that fit on no other node even alone ("anchors"). Any replacement must put all of them on the one
 * new node, so when they alone need the node's own size, no replacement (existing room + one new node)
 * can be cheaper.
 */
function anchorsOf(node: BuiltNode, all: readonly BuiltNode[]): BuiltPod[] {
  return node.pods.filter((p) => {
    if (p.isDaemon) return false;
    return !all.some((n) => {
      if (n === node || !podAllowedOn(p, n)) return false;
      const a = allocOf(n.type);
      const u = usedOf(n);
      return a.cpu - u.cpu >= p.cpu && a.mem - u.mem >= p.mem && a.pods - u.pods >= 1;
    });
  });
}

interface Option {
  type: string;
  price: number;
  capacityType: string;
  zones: string[];
}

/** The cheapest offerings that could take all of `pods` plus the daemonsets on one new node of `pool`. */
function replacementOptions(pods: readonly BuiltPod[], poolName: 'default' | 'batch', catalog: Map<string, CatalogType>): Option[] {
  const pool = POOLS[poolName];
  const movable = pods.filter((p) => !p.isDaemon);
  const need = movable.reduce((r, p) => ({ cpu: r.cpu + p.cpu, mem: r.mem + p.mem, pods: r.pods + 1 }), { cpu: DS_CPU, mem: DS_MEM, pods: DAEMONSETS.length });
  let capacityTypes: string[] = [...pool.capacityTypes];
  let zones = Object.values(ZONE) as string[];
  for (const p of movable) {
    const w = p.workload as WorkloadSpec;
    if (w.pin === 'on-demand' || w.pin === 'spot') capacityTypes = capacityTypes.filter((c) => c === w.pin);
    if (w.zone) zones = zones.filter((z) => z === ZONE[w.zone!]);
  }
  const out: Option[] = [];
  for (const t of catalog.values()) {
    if (!(pool.families as readonly string[]).includes(t.labels['karpenter.k8s.aws/instance-family'] ?? '')) continue;
    if (t.labels['kubernetes.io/arch'] !== 'amd64') continue;
    const a = allocOf(t);
    if (a.cpu < need.cpu || a.mem < need.mem || a.pods < need.pods) continue;
    for (const ct of capacityTypes) {
      const offers = t.offerings.filter((o) => o.capacityType === ct && zones.includes(o.zone));
      if (!offers.length) continue;
      const price = Math.min(...offers.map((o) => o.price));
      out.push({ type: t.name, price, capacityType: ct, zones: offers.filter((o) => o.price === price).map((o) => o.zone) });
    }
  }
  return out.sort((a, b) => a.price - b.price || (a.type < b.type ? -1 : 1));
}

const money = (x: number): string => `$${x.toFixed(4).replace(/0{1,2}$/, '')}`;

interface Check {
  node: BuiltNode;
  used: Room;
  alloc: Room;
  deletable: boolean;
  blockingPod?: BuiltPod;
  bestFreeMem?: number;
  cheapest?: Option;
  anchors: BuiltPod[];
  /** Cheapest new node, cheaper than this one, that holds the anchors (the least a replacement must hold). */
  cheapestForAnchors?: Option;
}

function selfCheck(nodes: BuiltNode[], catalog: Map<string, CatalogType>) {
  const problems: string[] = [];
  const byId = new Map(nodes.map((n) => [n.spec.id, n]));
  const empties = new Set(nodes.filter((n) => n.spec.case === 'empty').map((n) => n.spec.id));
  const checks: Check[] = [];
  for (const node of nodes) {
    const used = usedOf(node);
    const alloc = allocOf(node.type);
    if (used.cpu > alloc.cpu || used.mem > alloc.mem || used.pods > alloc.pods) {
      problems.push(`${node.spec.id}: requests ${used.cpu}m/${used.mem}Mi/${used.pods} pods exceed allocatable ${alloc.cpu}m/${alloc.mem}Mi/${alloc.pods}`);
    }
    for (const p of node.pods) if (!podAllowedOn(p, node) && !node.spec.notReady) problems.push(`${node.spec.id}: pod ${p.key} could not have been scheduled here`);
    // Removal is judged with the empty nodes still present, the harder test for "cannot move".
    const del = tryDelete(node, nodes, new Set());
    const delAfterEmpties = tryDelete(node, nodes, empties);
    const options = node.spec.pool ? replacementOptions(node.pods, node.spec.pool, catalog) : [];
    const cheaper = options.filter((o) => o.price < node.price - 1e-9);
    const anchors = anchorsOf(node, nodes);
    const forAnchors = node.spec.pool ? replacementOptions(anchors, node.spec.pool, catalog).filter((o) => o.price < node.price - 1e-9) : [];
    const check: Check = { node, used, alloc, deletable: del.ok, cheapest: cheaper[0], anchors, cheapestForAnchors: forAnchors[0] };
    if (!del.ok) {
      check.blockingPod = del.pod;
      check.bestFreeMem = del.bestFreeMem;
    }
    checks.push(check);
    const movable = node.pods.filter((p) => !p.isDaemon).length;
    const cpuPct = used.cpu / alloc.cpu;
    const c = node.spec.case;
    const fail = (why: string) => problems.push(`${node.spec.id} (${c}): ${why}`);
    switch (c) {
      case 'empty':
        if (movable) fail('has non-daemonset pods');
        break;
      case 'delete':
        if (!delAfterEmpties.ok) fail('pods do not fit in the remaining nodes');
        break;
      case 'merge':
      case 'replace':
      case 'threshold':
      case 'memory-bound':
      case 'busy':
      case 'spot-busy':
        if (del.ok) fail('pods fit elsewhere, so the node could simply be deleted');
        break;
      default:
        break;
    }
    if ((c === 'merge' || c === 'memory-bound' || c === 'busy') && forAnchors.length) {
      fail(`its anchors (${anchors.map((p) => p.workload.name).join(', ') || 'none'}) fit a cheaper node: ${forAnchors[0]!.type} ${forAnchors[0]!.capacityType} ${money(forAnchors[0]!.price)}`);
    }
    if ((c === 'replace' || c === 'threshold' || c === 'merge') && anchors.length !== movable) fail('some of its pods could move to existing nodes');
    if (c === 'spot-busy' && cheaper.some((o) => o.capacityType === 'on-demand')) fail('a cheaper on-demand replacement exists');
    if (c === 'replace' && !(cheaper[0] && cheaper[0].price < node.price / 4)) fail('no much cheaper replacement');
    if (c === 'threshold') {
      const savingsCents = cheaper[0] ? (node.price - cheaper[0].price) * 100 : 0;
      // Karpenter's savings-threshold design: required savings = threshold x (1 + pods) x lifetime
      // remaining (about 0.93 here).
      const requiredCents = POOLS.batch.thresholdCents * (1 + movable) * 0.9;
      if (!(savingsCents > 0 && savingsCents < requiredCents)) fail(`savings ${savingsCents.toFixed(2)} cents/h vs required ${requiredCents.toFixed(2)}`);
    }
    if ((c === 'busy' || c === 'spot-busy') && (cpuPct < 0.6 || cpuPct > 0.85)) {
      fail(`cpu requested ${(cpuPct * 100).toFixed(0)}% is outside 60-85%`);
    }
  }

  // The group together: one new node, cheaper than the three.
  const group = nodes.filter((n) => n.spec.case === 'merge');
  const groupPods = group.flatMap((n) => n.pods);
  const groupPrice = group.reduce((s, n) => s + n.price, 0);
  const merged = replacementOptions(groupPods, 'default', catalog);
  if (!merged[0] || merged[0].price >= groupPrice) problems.push('merge group: no single node cheaper than the group');
  // Adding the memory-bound node to the group must not pay off (so a multi-node search stops at the group).
  const m1 = byId.get('M1')!;
  const withM1 = replacementOptions([...groupPods, ...m1.pods], 'default', catalog);
  if (withM1[0] && withM1[0].price < groupPrice + m1.price) problems.push(`group + M1 would merge into ${withM1[0].type}`);
  return { checks, problems, group, groupPrice, merged, withM1 };
}

// ---------------------------------------------------------------------------------------------------
// README

function readme(nodes: BuiltNode[], r: ReturnType<typeof selfCheck>, podCount: number, catalog: Map<string, CatalogType>): string {
  const ids = (c: Case) => nodes.filter((n) => n.spec.case === c);
  const nm = (id: string) => nodes.find((n) => n.spec.id === id)!;
  const short = (n: BuiltNode) => n.name.replace('.ec2.internal', '');
  const pct = (a: number, b: number) => `${Math.round((100 * a) / b)}%`;
  const check = (n: BuiltNode) => r.checks.find((c) => c.node === n)!;
  const caseText: Record<Case, string> = {
    empty: '(a) empty: only daemonset pods, deleted by emptiness',
    delete: '(b) lightly loaded: its pods fit in other nodes\' free room, delete',
    merge: '(d) merge group: cannot go alone, the three fit one cheaper node',
    replace: '(c) oversized: replace with a much cheaper node',
    threshold: 'savings below the batch pool\'s threshold',
    'memory-bound': 'full by memory, idle by cpu: nothing cheaper holds it',
    busy: 'well used: not worth touching',
    'spot-busy': 'spot, well used: no delete; spot-to-spot replacement is gated',
    pdb: '(e) PDB `payments` allows 0 disruptions',
    'do-not-disrupt-pod': '(e) pod annotated `karpenter.sh/do-not-disrupt`',
    'do-not-disrupt-node': '(e) node annotated `karpenter.sh/do-not-disrupt`',
    'bare-pod': '(e) bare pod `default/debug-shell` has no controller',
    'not-ready': '(e) NotReady (kubelet stopped reporting 42 minutes ago)',
    unmanaged: '(e) unmanaged: EKS managed node group, no `karpenter.sh/nodepool`',
  };
  const rows = nodes.map((n) => {
    const c = check(n);
    const movable = n.pods.filter((p) => !p.isDaemon).length;
    return `| ${n.spec.id} | \`${short(n)}\` | ${n.spec.pool ?? '(none)'} | ${n.spec.type} | ${n.labels['topology.kubernetes.io/zone']!.slice(-2)} | ${n.spec.capacityType} | ${money(n.price)} | ${c.used.cpu}m / ${c.alloc.cpu}m (${pct(c.used.cpu, c.alloc.cpu)}) | ${c.used.mem}Mi / ${c.alloc.mem}Mi (${pct(c.used.mem, c.alloc.mem)}) | ${movable} + 3 | ${caseText[n.spec.case]} |`;
  });
  const g = r.group;
  const gp = g[0]!.pods.find((p) => !p.isDaemon)!;
  const defaultOdFree = nodes
    .filter((n) => n.spec.pool === 'default' && n.spec.capacityType === 'on-demand' && n.spec.case !== 'merge' && n.spec.case !== 'empty')
    .map((n) => ({ n, free: allocOf(n.type).mem - usedOf(n).mem }))
    .sort((a, b) => b.free - a.free);
  const x1 = nm('X1');
  const x1c = check(x1);
  const t1 = nm('T1');
  const t1c = check(t1);
  const t1Savings = t1.price - t1c.cheapest!.price;
  const m1 = nm('M1');
  const l = ids('delete');
  const lPods = l[0]!.pods.filter((p) => !p.isDaemon);
  const e = ids('empty');
  const defaultCount = nodes.filter((n) => n.spec.pool === 'default').length;
  const batchCount = nodes.filter((n) => n.spec.pool === 'batch').length;
  const mergedNeedCpu = g.reduce((s, n) => s + n.pods.filter((p) => !p.isDaemon).reduce((a, p) => a + p.cpu, 0), 0) + DS_CPU;
  const mergedNeedMem = g.reduce((s, n) => s + n.pods.filter((p) => !p.isDaemon).reduce((a, p) => a + p.mem, 0), 0) + DS_MEM;
  const mergedType = r.merged[0]!;
  const mergedAlloc = allocOf(catalog.get(mergedType.type)!);
  const busyFree = nodes
    .filter((n) => n.spec.pool === 'default' && n.spec.case === 'busy')
    .map((n) => ({ cpu: allocOf(n.type).cpu - usedOf(n).cpu, mem: allocOf(n.type).mem - usedOf(n).mem }));
  const range = (xs: number[], unit: string) => `${Math.min(...xs)}-${Math.max(...xs)}${unit}`;
  // One line per distinct node shape among the nodes that are not worth touching.
  const seen = new Set<string>();
  const anchorLines: string[] = [];
  for (const n of nodes) {
    if (!['busy', 'memory-bound'].includes(n.spec.case) || !n.spec.pool) continue;
    const shape = `${n.spec.pool}|${n.type.capacity['cpu']}|${n.type.capacity['memory']}|${n.spec.pods.join(',')}`;
    const same = nodes.filter((o) => o.spec.pool === n.spec.pool && `${o.spec.pool}|${o.type.capacity['cpu']}|${o.type.capacity['memory']}|${o.spec.pods.join(',')}` === shape);
    if (seen.has(shape)) continue;
    seen.add(shape);
    const c = check(n);
    const names = [...new Set(c.anchors.map((p) => p.workload.name))];
    const needCpu = c.anchors.reduce((a, p) => a + p.cpu, 0) + DS_CPU;
    const needMem = c.anchors.reduce((a, p) => a + p.mem, 0) + DS_MEM;
    const best = replacementOptions(c.anchors, n.spec.pool, catalog)[0]!;
    anchorLines.push(
      `- ${same.map((o) => o.spec.id).join(', ')} (${[...new Set(same.map((o) => o.spec.type))].join('/')}, ${money(n.price)}/h): anchors ${names.join(', ')}; with the daemonsets they need ${needCpu}m / ${needMem}Mi, and the cheapest type that holds that is ${best.type} at ${money(best.price)}/h.`,
    );
  }

  return `# The embedded demo

\`eks-consolidator plan\` with no \`--cluster\`, \`--catalog\` or \`--config\` plans this demo: \`cluster.json\` with
\`nodepools.yaml\` and the bundled catalog. The cluster was recorded at **${DEMO_NOW}** (a Saturday). The CLI
replays its times relative to the pass time (\`--now\`, by default the current time), so the demo plans the same
on any day but one: New Year's Day (UTC), when the default pool's change-freeze budget holds. With
\`--now ${DEMO_NOW}\` the output is exactly the one the tests snapshot (\`test/cli/__snapshots__/demo-table.txt\`):

\`\`\`
node bin/eks-consolidator.mjs plan --now ${DEMO_NOW} -o table               # summary, decisions, every node (120 columns)
node bin/eks-consolidator.mjs plan --now ${DEMO_NOW} -o wide --show-moves   # full names, every type, where each pod goes
node bin/eks-consolidator.mjs plan --now ${DEMO_NOW}                         # the JSON plan
\`\`\`

The plan carries a note per NodePool that a real run would leave the pool to Karpenter: the recorded nodes carry
Karpenter's \`karpenter.sh/registered\` label (Karpenter launched them) and neither pool sets
\`consolidateAfter: Never\`, so a deployed Lambda would not act on them ([README.md, "Handing a pool over"](../README.md#handing-a-pool-over)).
The plan still shows what the pass would decide, which is the point of the demo.

Both files are generated by \`scripts/build-demo.ts\` (fixed-seed, so a rebuild gives the same bytes):

\`\`\`
node --import tsx scripts/build-catalog.ts   # first, if the catalog is missing
node --import tsx scripts/build-demo.ts
\`\`\`

The script also checks the arithmetic below against the catalog and refuses to write files whose nodes
would not show their case. The numbers in this file are printed by it.

## The cluster

${nodes.length} nodes and ${podCount} pods in one \`List\`, shaped like \`kubectl get nodes,pods,poddisruptionbudgets,daemonsets -A -o json\`,
with the Deployment and StatefulSet objects appended (their \`status\` says every replica is ready, so no
stabilization hold applies).

- NodePool \`default\` (${defaultCount} nodes): m5/m6i/c6i/r6i/m7i, on-demand and spot, \`WhenEmptyOrUnderutilized\` after
  5m, budgets \`nodes: "20%"\` (that is ${Math.ceil(defaultCount * 0.2)} nodes at once) plus a change freeze, \`nodes: "0"\` with
  \`schedule: "0 0 1 1 *"\` and \`duration: 24h\` (all of New Year's Day, UTC; inactive on any other day), \`expireAfter: 720h\`,
  \`weight: 10\`, limits 400 cpu / 1600Gi memory.
- NodePool \`batch\` (${batchCount} nodes): c6i/m5/m6i, on-demand only, tainted \`workload=batch:NoSchedule\`, \`WhenEmptyOrUnderutilized\`
  after 10m, \`consolidationSavingsThresholdCents: "1"\`, budget \`nodes: "2"\`.
- Two nodes of the EKS managed node group \`system\` (Karpenter itself, CoreDNS, metrics): no NodePool.
- Three DaemonSets on every node: \`aws-node\` 25m/40Mi, \`kube-proxy\` 100m/40Mi, \`fluent-bit\` 50m/60Mi (${DS_CPU}m / ${DS_MEM}Mi per node).
- Nodes were launched about 2 days before the recording time; every pod is at least 2 hours old, so
  \`consolidateAfter\` has passed everywhere (replayed times keep these ages).
- Most services pin themselves to on-demand capacity (\`nodeSelector: karpenter.sh/capacity-type: on-demand\`);
  only \`web\` and \`image-resizer\` run on spot. Without that pin, every on-demand node of \`default\` would be a
  candidate for an on-demand-to-spot replacement, which would drown the other cases.
- Batch workloads tolerate the batch taint, select \`workload-class: batch\` and are tied to one zone each by
  required node affinity (zonal input data).
- Workload features on show: \`api\` (zone topology spread, maxSkew 1, DoNotSchedule, plus required hostname
  anti-affinity), \`product-catalog\` (zone spread), \`search\` and \`karpenter\` (hostname anti-affinity), \`db-0..2\`
  (StatefulSet with PVCs), \`coredns\`, \`karpenter\`, \`metrics-server\`, \`ebs-csi-controller\` (\`system-cluster-critical\`,
  priority 2000000000), PDBs allowing 1 disruption on most services and 0 on \`payments\`.

## Nodes and the case each one shows

Requests include the three daemonset pods; "pods" is movable pods + daemonset pods. Prices are the catalog's
(spot prices there are estimates).

| id | node | pool | type | zone | capacity | $/h | cpu requested | memory requested | pods | meant to show |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

## Why, with the numbers

**(a) Empty: ${e.map((n) => `${n.spec.id}`).join(', ')}.** Only daemonset pods, so nothing moves; emptiness deletes them and saves
${e.map((n) => money(n.price)).join(' + ')} per hour (${e[1]?.spec.id ?? ''} is spot, at the catalog's estimated price).

**(b) Lightly loaded: ${l.map((n) => n.spec.id).join(', ')}.** Each runs ${lPods.length} pods of ${lPods[0]!.cpu}m / ${lPods[0]!.mem}Mi
(${lPods.reduce((s, p) => s + p.cpu, 0)}m / ${lPods.reduce((s, p) => s + p.mem, 0)}Mi in all). The well used nodes of the pool keep ${range(busyFree.map((f) => f.cpu), 'm')} and ${range(busyFree.map((f) => f.mem), 'Mi')} free each,
so the pods fit elsewhere and the node (${money(l[0]!.price)}/h) can be deleted. The default pool's budget is ${Math.ceil(defaultCount * 0.2)} nodes at a time:
after E1, E2 and the three merge-group nodes only one more fits, so one of ${l.map((n) => n.spec.id).join('/')} is deleted in this pass and the
other is reported as held back by the budget (it goes in the next pass).

**(c) Oversized: X1** (${x1.spec.type}, ${money(x1.price)}/h, batch pool) runs three \`etl-loader\` pods of 500m / 1280Mi tied to us-east-1a.
X1 is the only batch node in that zone, so they cannot move to an existing node. Together with the daemonsets they need
${x1c.used.cpu}m / ${x1c.used.mem}Mi: ${x1c.cheapest!.type} (${x1c.cheapest!.capacityType}, ${money(x1c.cheapest!.price)}/h) fits them (c6i.large's 3114Mi does not), so the
replacement saves ${money(x1.price - x1c.cheapest!.price)}/h. Its disruption cost (Karpenter's savings-threshold design: node base cost 1 plus 1 per evicted pod, times the share
of \`expireAfter\` still ahead, about 0.93 for a two-day-old node) is (1 + 3) x 0.93 = 3.7, so the batch threshold asks for
3.7 cents/h: easily met.

**(d) Merge group: ${g.map((n) => n.spec.id).join(', ')}** (${g[0]!.spec.type}, ${money(g[0]!.price)}/h each, one per zone). Each runs a single
${gp.cpu}m / ${gp.mem}Mi cache (${pct(usedOf(g[0]!).cpu, allocOf(g[0]!.type).cpu)} cpu, ${pct(usedOf(g[0]!).mem, allocOf(g[0]!.type).mem)} memory requested). No other on-demand node of the
pool has ${gp.mem}Mi free: the most is ${defaultOdFree[0]!.free}Mi on ${defaultOdFree[0]!.n.spec.id} (the other group members have
${allocOf(g[0]!.type).mem - usedOf(g[0]!).mem}Mi; E1/E2, being c6i.large, have at most ${allocOf(e[0]!.type).mem - usedOf(e[0]!).mem}Mi), and the cache is pinned to
on-demand, so no node can be deleted alone. Nor replaced alone: the only on-demand type cheaper than m5.large in the pool,
c6i.large (${money(0.085)}), has 3114Mi. Together the three need ${mergedNeedCpu}m / ${mergedNeedMem}Mi with the daemonsets, which
${mergedType.type} (${mergedAlloc.cpu}m / ${mergedAlloc.mem}Mi, ${money(mergedType.price)}/h) holds: one node for ${money(r.groupPrice)}/h of three, saving
${money(r.groupPrice - mergedType.price)}/h.

**Threshold-blocked: T1** (${t1.spec.type}, ${money(t1.price)}/h, batch pool) runs two \`report-builder\` pods (450m / 1Gi, us-east-1b). Q1, the other
batch node there, has ${allocOf(nm('Q1').type).mem - usedOf(nm('Q1')).mem}Mi free, so they cannot move, but a ${t1c.cheapest!.type} (${money(t1c.cheapest!.price)}/h) would hold them: a saving of
${(t1Savings * 100).toFixed(1)} cents/h. Its disruption cost is about (1 + 2) x 0.93 = 2.8, so the pool's threshold of 1 cent per unit asks for
2.8 cents/h: blocked. The penny-shaving swap Karpenter's savings-threshold design was written to stop.

**Not worth it: M1, the W nodes, Q1, Q2.** A replacement may use the free room of existing nodes plus one new node, so
what matters is the pods that fit on no other node even alone (call them anchors: pods of 5Gi or more, since no
on-demand node of the pool has 4.5Gi free, and \`pdf-render\` at 2000m, since none has 2 cpus and 1Gi free; on Q1 and
Q2, every pod, since their pods are tied to a zone where no other batch node has room). Every
replacement must carry a node's anchors, and on these nodes the anchors alone need the node's own price or more:

${anchorLines.join('\n')}

M1 looks idle by cpu (${pct(usedOf(m1).cpu, allocOf(m1.type).cpu)}) but its two \`analytics-cache\` pods hold ${usedOf(m1).mem - DS_MEM}Mi. Adding M1 to the merge group would need ${withM1Text(r)}, so a multi-node search stops at the three caches.

**Spot: S1, S2.** Their \`image-resizer\` pod (1000m / 5Gi, spot only) fits on no other spot node, and replacing spot with
cheaper spot needs the \`SpotToSpotConsolidation\` feature gate (off by default).

**Blocked (e).** P1, D1, D2 and B1 are as light as L1/L2 and would be deleted but for: the \`payments\` PDB at
\`disruptionsAllowed: 0\` (P1), the \`karpenter.sh/do-not-disrupt\` annotation on the \`model-training\` Job pod (D1) or on the
node itself (D2), and the ownerless \`debug-shell\` pod (B1). N1 is NotReady (\`Ready: Unknown\`, unreachable taints), which
also counts against the batch budget, leaving it room for one disruption. U1 and U2 belong to no NodePool: they receive pods in
the simulation but are never disrupted.

## The plan a consolidator should produce

Within the budgets above: emptiness deletes E1 and E2; a multi-node replace merges G1, G2, G3 into one
${mergedType.type}; a single-node replace swaps X1 for one ${x1c.cheapest!.type}; a single-node delete removes one of L1/L2. Everything
else stays, each with its reason: budget (the other L node), threshold (T1), PDB, do-not-disrupt (pod and node), bare pod,
NotReady, unmanaged, no cheaper option (M1, W*, Q*), spot-to-spot gate (S1, S2). An engine that folds deletable nodes into its
multi-node search may take L1/L2 together with the group instead; the savings are the same.

Spot prices come from the bundled catalog, where they are estimates; the on-demand prices are real us-east-1 prices
(aws/karpenter-provider-aws v1.14.1 price table, 2026-07-20). The cluster itself is invented.
`;
}

function withM1Text(r: ReturnType<typeof selfCheck>): string {
  const o = r.withM1[0];
  return o ? `an ${o.type} at ${money(o.price)}/h, more than the four nodes cost` : 'more memory than any allowed type has';
}

export interface DemoFiles {
  readonly clusterJson: string;
  readonly nodePoolsYaml: string;
  readonly readme: string;
  readonly nodeCount: number;
  readonly podCount: number;
  /** One line per node: the self-check's arithmetic. */
  readonly report: string;
  /** Empty when every node shows the case it is meant to show. */
  readonly problems: readonly string[];
}

/**
 * Builds the demo files from a decoded catalog (docs/file-formats.md, "The catalog"). Pure: same
 * catalog, same output.
 */
export function buildDemo(catalogDoc: { instanceTypes: CatalogType[] }): DemoFiles {
  rand = mulberry32(SEED);
  const catalog = new Map(catalogDoc.instanceTypes.map((t) => [t.name, t]));
  const { nodes, pods, list } = build(catalog);
  const result = selfCheck(nodes, catalog);
  const table = result.checks.map((c) => {
    const n = c.node;
    return [
      n.spec.id.padEnd(4),
      n.spec.case.padEnd(20),
      n.spec.type.padEnd(12),
      n.spec.capacityType.padEnd(10),
      money(n.price).padEnd(8),
      `${c.used.cpu}/${c.alloc.cpu}m`.padEnd(14),
      `${((100 * c.used.cpu) / c.alloc.cpu).toFixed(0)}%`.padEnd(5),
      `${c.used.mem}/${c.alloc.mem}Mi`.padEnd(16),
      `free ${c.alloc.mem - c.used.mem}Mi`.padEnd(14),
      c.deletable ? 'deletable'.padEnd(22) : `stuck:${c.blockingPod?.workload.name}`.padEnd(22),
      `anchors:${c.anchors.length}`.padEnd(10),
      `free ${c.alloc.cpu - c.used.cpu}m`.padEnd(11),
      c.cheapestForAnchors ? `cheaper:${c.cheapestForAnchors.type}/${c.cheapestForAnchors.capacityType}/${money(c.cheapestForAnchors.price)}` : '',
    ].join(' ').trimEnd();
  });
  table.push(`merge group ${money(result.groupPrice)} -> ${result.merged[0]?.type} ${money(result.merged[0]?.price ?? 0)}`);
  return {
    clusterJson: `${JSON.stringify(list, null, 1)}\n`,
    nodePoolsYaml: NODEPOOLS_YAML,
    readme: result.problems.length ? '' : readme(nodes, result, pods.length, catalog),
    nodeCount: nodes.length,
    podCount: pods.length,
    report: `${table.join('\n')}\n`,
    problems: result.problems,
  };
}

function main(argv: readonly string[]): void {
  const catalogPath = resolve(repoRoot, argv[0] ?? 'src/adapters/catalog/bundled/catalog.json');
  const demo = buildDemo(JSON.parse(readFileSync(catalogPath, 'utf8')) as { instanceTypes: CatalogType[] });
  process.stdout.write(demo.report);
  if (demo.problems.length) {
    process.stderr.write(`demo self-check failed:\n  ${demo.problems.join('\n  ')}\n`);
    process.exitCode = 1;
    return;
  }
  const outDir = resolve(repoRoot, 'demo');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(resolve(outDir, 'cluster.json'), demo.clusterJson);
  writeFileSync(resolve(outDir, 'nodepools.yaml'), demo.nodePoolsYaml);
  writeFileSync(resolve(outDir, 'README.md'), demo.readme);
  process.stdout.write(
    `wrote demo/cluster.json (${demo.nodeCount} nodes, ${demo.podCount} pods, ${Buffer.byteLength(demo.clusterJson)} bytes), demo/nodepools.yaml, demo/README.md\n`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
