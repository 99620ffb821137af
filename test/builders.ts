// Test builders: every model object with sensible defaults, overridable field by field.
// Units as in the model: cpu millicores, memory bytes, times epoch ms, prices $/hour.
import type {
  Catalog,
  Cluster,
  DaemonSet,
  InstanceType,
  Node,
  NodePool,
  Offering,
  Pod,
  PodDisruptionBudget,
  Resources,
  WorkloadStatus,
} from '../src/core/model/types.ts';
import type { NodeState } from '../src/core/state/types.ts';
import type { Candidate } from '../src/core/disruption/candidates.ts';
import type { Proposal } from '../src/core/disruption/methods/types.ts';

export const Gi = 1024 ** 3;
export const Mi = 1024 ** 2;
export const T0 = Date.parse('2026-11-21T12:00:00Z');
export const minutes = (n: number): number => n * 60_000;
export const hours = (n: number): number => n * 3_600_000;

let seq = 0;
const nextId = (): number => ++seq;

export function pod(overrides: Partial<Pod> & { name?: string } = {}): Pod {
  const n = nextId();
  const name = overrides.name ?? `pod-${n}`;
  const namespace = overrides.namespace ?? 'default';
  return {
    uid: `uid-${namespace}-${name}-${n}`,
    namespace,
    name,
    labels: { app: name },
    annotations: {},
    ownerReferences: [{ kind: 'ReplicaSet', name: `${name}-rs`, controller: true }],
    phase: 'Running',
    priority: 0,
    createdAt: T0 - hours(3),
    startedAt: T0 - hours(3),
    terminating: false,
    isDaemonSetPod: false,
    isMirrorPod: false,
    requests: { cpu: 100, memory: 128 * Mi },
    nodeSelector: {},
    requiredNodeAffinity: [],
    tolerations: [],
    podAffinity: [],
    podAntiAffinity: [],
    topologySpread: [],
    hostPorts: [],
    ...overrides,
  };
}

export function daemonSetPod(nodeName: string, overrides: Partial<Pod> = {}): Pod {
  return pod({
    name: `ds-${nodeName}`,
    namespace: 'kube-system',
    nodeName,
    isDaemonSetPod: true,
    ownerReferences: [{ kind: 'DaemonSet', name: 'ds', controller: true }],
    requests: { cpu: 50, memory: 64 * Mi },
    ...overrides,
  });
}

export function node(overrides: Partial<Node> & { name?: string } = {}): Node {
  const name = overrides.name ?? `node-${nextId()}`;
  const zone = overrides.zone ?? 'us-east-1a';
  const instanceType = overrides.instanceType ?? 'm5.large';
  const capacityType = overrides.capacityType ?? 'on-demand';
  const nodePool = 'nodePool' in overrides ? overrides.nodePool : 'default';
  const labels: Record<string, string> = {
    'kubernetes.io/hostname': name,
    'topology.kubernetes.io/zone': zone,
    'node.kubernetes.io/instance-type': instanceType,
    'karpenter.sh/capacity-type': capacityType,
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/os': 'linux',
    ...(nodePool ? { 'karpenter.sh/nodepool': nodePool } : {}),
    ...(overrides.labels ?? {}),
  };
  return {
    name,
    annotations: {},
    createdAt: T0 - hours(24),
    taints: [],
    unschedulable: false,
    providerId: `aws:///${zone}/i-${name}`,
    instanceId: `i-${name}`,
    allocatable: { cpu: 1930, memory: 7134 * Mi, pods: 29 },
    capacity: { cpu: 2000, memory: 8 * Gi, pods: 29 },
    ready: true,
    readySince: T0 - hours(24),
    deleting: false,
    ...overrides,
    zone,
    instanceType,
    capacityType,
    nodePool,
    labels,
  };
}

export function offering(overrides: Partial<Offering> = {}): Offering {
  return { zone: 'us-east-1a', capacityType: 'on-demand', pricePerHour: 0.096, available: true, ...overrides };
}

/** An instance type offered on-demand (and spot at 35% when `spot` is set) in the given zones. */
export function instanceType(
  name: string,
  allocatable: Resources,
  onDemandPricePerHour: number,
  options: { zones?: string[]; spotPricePerHour?: number; labels?: Record<string, string>; capacity?: Resources } = {},
): InstanceType {
  const zones = options.zones ?? ['us-east-1a', 'us-east-1b', 'us-east-1c'];
  const offerings: Offering[] = zones.flatMap((zone) => [
    offering({ zone, capacityType: 'on-demand', pricePerHour: onDemandPricePerHour }),
    ...(options.spotPricePerHour !== undefined
      ? [offering({ zone, capacityType: 'spot', pricePerHour: options.spotPricePerHour })]
      : []),
  ]);
  return {
    name,
    capacity: options.capacity ?? allocatable,
    allocatable,
    labels: {
      'node.kubernetes.io/instance-type': name,
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
      ...(options.labels ?? {}),
    },
    offerings,
  };
}

/** A small m5 family catalog (real allocatable and us-east-1 on-demand prices). */
export function m5Catalog(): Catalog {
  return {
    region: 'us-east-1',
    instanceTypes: [
      instanceType('m5.large', { cpu: 1930, memory: 6903 * Mi, pods: 29 }, 0.096, { spotPricePerHour: 0.035 }),
      instanceType('m5.xlarge', { cpu: 3920, memory: 14162 * Mi, pods: 58 }, 0.192, { spotPricePerHour: 0.07 }),
      instanceType('m5.2xlarge', { cpu: 7910, memory: 28783 * Mi, pods: 58 }, 0.384, { spotPricePerHour: 0.14 }),
      instanceType('m5.4xlarge', { cpu: 15890, memory: 58025 * Mi, pods: 234 }, 0.768, { spotPricePerHour: 0.28 }),
    ],
  };
}

/** A catalog of on-demand types, each `[name, cpu millis, memory bytes, pod slots, price per hour]`. */
export function catalogOf(...types: readonly (readonly [string, number, number, number, number])[]): Catalog {
  return { region: 'us-east-1', instanceTypes: types.map(([name, cpu, memory, pods, price]) => instanceType(name, { cpu, memory, pods }, price)) };
}

/**
 * Four small types of 2 to 5 cores priced about alike per core, and a 16-core `huge` at `hugePricePerHour`:
 * the catalog of the tests where a move's pods overflow its new nodes into small holes on kept `e4` nodes.
 */
export function overflowCatalog(hugePricePerHour: number): Catalog {
  return {
    region: 'us-east-1',
    instanceTypes: [
      instanceType('tiny', { cpu: 2000, memory: 16 * Gi, pods: 58 }, 0.1),
      instanceType('mid3', { cpu: 3000, memory: 16 * Gi, pods: 58 }, 0.16),
      instanceType('e4', { cpu: 4000, memory: 16 * Gi, pods: 58 }, 0.22),
      instanceType('mid5', { cpu: 5000, memory: 16 * Gi, pods: 58 }, 0.26),
      instanceType('huge', { cpu: 16000, memory: 64 * Gi, pods: 110 }, hugePricePerHour),
    ],
  };
}

/**
 * The cluster of those tests: three kept (do-not-disrupt) `e4` nodes, each with a hole of `holeMillis`,
 * and `c`, a `huge`, holding `large` pods of 900m (`large-1`, ...) and `small` ones of 100m (`small-0`, ...).
 */
export function overflowCluster(holeMillis: number, large: number, small: number): Cluster {
  const kept = ['e1', 'e2', 'e3'].map((name) =>
    node({ name, instanceType: 'e4', allocatable: { cpu: 4000, memory: 16 * Gi, pods: 58 }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
  );
  const c = node({ name: 'c', instanceType: 'huge', allocatable: { cpu: 16000, memory: 64 * Gi, pods: 110 } });
  return cluster({
    nodes: [...kept, c],
    pods: [
      ...kept.flatMap((n) => on(n.name, pod({ requests: { cpu: 4000 - holeMillis, memory: 16 * Mi } }))),
      ...on('c', ...Array.from({ length: large }, (_, i) => pod({ name: `large-${i + 1}`, requests: { cpu: 900, memory: 16 * Mi } }))),
      ...on('c', ...Array.from({ length: small }, (_, i) => pod({ name: `small-${i}`, requests: { cpu: 100, memory: 16 * Mi } }))),
    ],
  });
}

export function nodePool(overrides: Partial<NodePool> = {}): NodePool {
  return {
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
    budgets: [{ nodes: { percent: 100 } }],
    limits: {},
    ...overrides,
  };
}

export function pdb(overrides: Partial<PodDisruptionBudget> = {}): PodDisruptionBudget {
  return {
    namespace: 'default',
    name: `pdb-${nextId()}`,
    selector: { matchLabels: { app: 'web' } },
    disruptionsAllowed: 1,
    ...overrides,
  };
}

export function daemonSet(overrides: Partial<DaemonSet> = {}): DaemonSet {
  return {
    namespace: 'kube-system',
    name: `ds-${nextId()}`,
    template: {
      labels: { app: 'ds' },
      requests: { cpu: 50, memory: 64 * Mi },
      nodeSelector: {},
      requiredNodeAffinity: [],
      tolerations: [{ operator: 'Exists' }],
      podAffinity: [],
      podAntiAffinity: [],
      topologySpread: [],
      hostPorts: [],
    },
    ...overrides,
  };
}

export function cluster(overrides: Partial<Cluster> = {}): Cluster {
  return { nodes: [], pods: [], pdbs: [], daemonSets: [], workloads: [], namespaces: [], ...overrides };
}

/** Bind pods to a node by name. */
export function on(nodeName: string, ...pods: Pod[]): Pod[] {
  return pods.map((p) => ({ ...p, nodeName }));
}

// --- added for the state tests (test/state) --------------------------------------------------------

/** A workload controller's readiness (stabilization window). */
export function workload(overrides: Partial<WorkloadStatus> = {}): WorkloadStatus {
  return { kind: 'Deployment', namespace: 'default', name: `deploy-${nextId()}`, desiredReplicas: 3, readyReplicas: 3, ...overrides };
}

/** A stored node record, as `observeNodes` would write it for a quiet node. */
export function nodeState(overrides: Partial<NodeState> & { name?: string } = {}): NodeState {
  return {
    name: overrides.name ?? `node-${nextId()}`,
    podSetFingerprint: 'fp-0',
    podCount: 1,
    lastPodEventAt: T0 - hours(3),
    version: 1,
    expiresAt: T0 + hours(24 * 7),
    ...overrides,
  };
}

/**
 * A move that replaces `node` (its `pods` moved) with one new node of `type` from `pool`: what a method
 * hands the kube-scheduler checks (its simulation's new node offers `type` only).
 */
export function replacementProposal(node: Node, pods: readonly Pod[], type: InstanceType, pool: NodePool, currentPricePerHour: number): Proposal {
  const candidate: Candidate = { node, pool, pricePerHour: currentPricePerHour, pods, disruptionCost: 1 + pods.length, methods: new Set(['single-node']) };
  const pricePerHour = Math.min(...type.offerings.filter((o) => o.capacityType === 'on-demand').map((o) => o.pricePerHour));
  const zones = [...new Set(type.offerings.map((o) => o.zone))];
  return {
    method: 'single-node',
    reason: 'Underutilized',
    candidates: [candidate],
    replacements: [{ instanceTypes: [type.name], capacityType: 'on-demand', zones, pricePerHour, worstPricePerHour: pricePerHour, nodePool: pool.name }],
    savingsPerHour: currentPricePerHour - pricePerHour,
    simulation: { allScheduled: true, placements: [], unschedulable: [], newNodes: [{ nodePool: pool.name, pods: [], requirements: [], options: [{ instanceType: type, offerings: type.offerings, cheapestPricePerHour: pricePerHour }] }] },
  };
}
