// Fault injection in an adversarial world: the product's real passes (runPass: lease, resume, read,
// plan, save, then the executor starts and drives commands) every 5 minutes of fake time, against a world
// that does not help:
//
// - a control plane (test/support/fakeScheduler.ts): evicted pods are recreated by their ReplicaSet or
//   StatefulSet and placed by kube-scheduler's filters and LeastAllocated scoring, or stay Pending; the
//   Eviction API enforces PodDisruptionBudgets from the live pods; DaemonSet pods follow the nodes; the
//   pod garbage collector removes pods bound to Nodes that are gone (and we count those pods as lost);
// - pods slow to leave: an evicted pod stays Terminating for its grace period (30 s, or minutes for the
//   "slow" workloads), and a StatefulSet's pod comes back only once its predecessor is gone;
// - PodDisruptionBudgets at maxUnavailable 1 (one eviction at a time), at 0 from the start (those nodes
//   must never be planned), and a "PDB wall": a budget at maxUnavailable 0 that a team adds to a workload
//   of the first node we taint, so that drain can only be given up after the drain timeout;
// - replacements that register late (minutes, several passes), later than the Ready timeout, or never;
// - EC2 eventual consistency: a just-launched instance is unknown to DescribeInstances and
//   TerminateInstances for a while;
// - seeded random faults on both the Kubernetes API and EC2: 429, 500, 403, and timeouts (the connection
//   dropped before the request is served, or after: the write done, its answer lost);
// - a node name reused mid-command: a node we are disrupting dies (its pods with it) and a new machine
//   registers under the same name;
// - the ec2 world's cloud: instances registering as Nodes (NotReady, then Ready), terminated instances'
//   Nodes removed by the cloud node controller; the karpenter world's: Karpenter's stand-in
//   (test/support/fakeKarpenter.ts) launching, registering and terminating NodeClaims.
//
// Each row of a seeded table (cluster shape x fault mix x seed, per actuator) runs up to FAULTY_PASSES
// passes with the faults on (fewer when two passes in a row find nothing to do and nothing is unfinished),
// then quiet passes (no random fault, no lag, replacements launched from then on register within 2
// minutes) until no unfinished command remains. Then, whatever happened:
//   0 pods lost: every pod Running at the start (identified by controller and ordinal, since recreated
//     pods get new names; a bare pod by its name) is Running again, bound to a live node (one Pending at
//     the start may be Pending);
//   0 workload pods on a deleted node (the pod garbage collector found none; the world removes the pods
//     of a machine it kills itself), 0 pods deleted outside the Eviction API;
//   0 instances terminated (or NodeClaims deleted) with a workload pod bound;
//   0 leaked instances (launched by us, neither joined nor terminated) or NodeClaims, at the end, and
//     none left running by a rollback when its command ends (checked after each pass);
//   0 stranded taints, cordons or command annotations; 0 unfinished commands.
// The table also says which outcome each row reached (commands done, rolled back, abandoned, none
// started) and how many evictions the Eviction API accepted. `SHOW_FAULT_TABLE=1` prints it,
// `ADVERSARIAL_ROW=<part of a row id>` runs only the matching rows, `ADV_TRACE=1` prints what happens
// minute by minute (decisions, commands, evictions, bindings, Pending pods).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_ANNOTATION, NODECLAIM_COMMAND_ANNOTATION } from '../../src/core/ports/actuator.ts';
import type { Catalog, NodePool } from '../../src/core/model/types.ts';
import { FINAL_COMMAND_STEPS, type DisruptionCommand } from '../../src/core/state/types.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { attachControlPlane, ORDINAL, type ControlPlane } from '../support/fakeScheduler.ts';
import { kubeNode, type InjectedFailure, type RecordedRequest } from '../support/fakeKubeApi.ts';
import {
  KARPENTER_NODE_LABELS,
  KARPENTER_POOL,
  POOL,
  T0,
  catalog,
  fullPass,
  nodeClaimFor,
  startWorld,
  type Ec2Fault,
} from './harness.ts';

type Json = Record<string, unknown>;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** Passes with the faults on, 5 minutes apart. */
export const FAULTY_PASSES = 6;
/** Then quiet passes until no command is unfinished, at most this many. */
export const MAX_QUIET_PASSES = 16;
const PASS_EVERY_MS = 5 * MINUTE;
/** The invocation's time (the Lambda's remaining time at the start of a pass). */
const INVOCATION_MS = 90 * SECOND;
const ACT = {
  pollIntervalMs: 15 * SECOND,
  marginMs: 30 * SECOND,
  replacementReadyTimeoutMs: 10 * MINUTE,
  maxWaitMs: 30 * SECOND,
  drainTimeoutMs: 20 * MINUTE,
} as const;
const OUR_TAINT = 'eks-consolidator.io/disrupting';
const KARPENTER_TAINT = 'karpenter.sh/disrupted';

export type ActuatorKind = 'ec2' | 'karpenter';

// ---------------------------------------------------------------------------------------------------
// Cluster shapes

export interface NodeSpec {
  readonly name: string;
  readonly type: string;
  readonly zone: 'us-east-1a' | 'us-east-1b';
}

export interface WorkloadSpec {
  readonly name: string;
  /** `bare`: pods with no controller (one per replica), never recreated. */
  readonly kind: 'ReplicaSet' | 'StatefulSet' | 'bare';
  readonly replicas: number;
  readonly cpu: string;
  readonly memory: string;
  readonly nodeSelector?: Record<string, string>;
  /** Required node affinity: one term of these expressions. */
  readonly affinity?: readonly Json[];
  /** A PodDisruptionBudget from the start. */
  readonly pdb?: { readonly maxUnavailable: number };
  /** Its pods take minutes to terminate in the mixes with slow pods. */
  readonly slow?: boolean;
  readonly priority?: number;
}

export interface Shape {
  readonly name: string;
  readonly nodes: readonly NodeSpec[];
  readonly workloads: readonly WorkloadSpec[];
  /** The NodePool's disruption budget, percent of its nodes. */
  readonly budgetPercent: number;
}

const node = (n: number, type: string, zone: 'a' | 'b' = 'a'): NodeSpec => ({ name: `ip-10-0-${n}-${10 + n}.ec2.internal`, type, zone: `us-east-1${zone}` });

export const SHAPES: readonly Shape[] = [
  {
    // Five half-empty m5.large: deletes and replaces, two nodes at a time (40% budget).
    name: 'sparse',
    nodes: [node(1, 'm5.large'), node(2, 'm5.large'), node(3, 'm5.large', 'b'), node(4, 'm5.large', 'b'), node(5, 'm5.large')],
    workloads: [
      { name: 'web', kind: 'ReplicaSet', replicas: 5, cpu: '200m', memory: '512Mi', pdb: { maxUnavailable: 1 } },
      { name: 'api', kind: 'ReplicaSet', replicas: 3, cpu: '250m', memory: '768Mi', slow: true },
      { name: 'cache', kind: 'StatefulSet', replicas: 2, cpu: '300m', memory: '1Gi', slow: true },
      { name: 'worker', kind: 'ReplicaSet', replicas: 2, cpu: '100m', memory: '256Mi', nodeSelector: { 'kubernetes.io/arch': 'amd64' } },
    ],
    budgetPercent: 40,
  },
  {
    // Three big nodes holding little: replacements by cheaper, smaller types (half the pool at once).
    name: 'oversized',
    nodes: [node(1, 'm5.2xlarge'), node(2, 'm5.2xlarge', 'b'), node(3, 'm5.xlarge'), node(4, 'm5.large', 'b')],
    workloads: [
      { name: 'web', kind: 'ReplicaSet', replicas: 5, cpu: '300m', memory: '1Gi', pdb: { maxUnavailable: 1 } },
      { name: 'db', kind: 'StatefulSet', replicas: 2, cpu: '500m', memory: '2Gi', slow: true, affinity: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a', 'us-east-1b'] }] },
      { name: 'batch', kind: 'ReplicaSet', replicas: 4, cpu: '200m', memory: '512Mi', slow: true },
      { name: 'edge', kind: 'ReplicaSet', replicas: 2, cpu: '100m', memory: '128Mi', affinity: [{ key: 'karpenter.sh/capacity-type', operator: 'NotIn', values: ['spot'] }] },
    ],
    budgetPercent: 50,
  },
  {
    // Six mixed nodes, a bare pod (its node is never disrupted), a budget that never allows an
    // eviction from the start (its pods' nodes are never planned), zone-pinned pods, a priority class.
    name: 'mixed',
    nodes: [node(1, 'm5.xlarge'), node(2, 'm5.large'), node(3, 'm5.large', 'b'), node(4, 'm5.xlarge', 'b'), node(5, 'm5.large'), node(6, 'c5.xlarge', 'b')],
    workloads: [
      { name: 'web', kind: 'ReplicaSet', replicas: 6, cpu: '200m', memory: '384Mi', pdb: { maxUnavailable: 1 } },
      { name: 'api', kind: 'ReplicaSet', replicas: 5, cpu: '250m', memory: '512Mi', slow: true, priority: 1000 },
      { name: 'queue', kind: 'StatefulSet', replicas: 3, cpu: '200m', memory: '768Mi', slow: true },
      { name: 'ledger', kind: 'ReplicaSet', replicas: 2, cpu: '300m', memory: '1Gi', pdb: { maxUnavailable: 0 } },
      { name: 'zonal', kind: 'ReplicaSet', replicas: 3, cpu: '150m', memory: '256Mi', affinity: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] },
      { name: 'debug', kind: 'bare', replicas: 1, cpu: '50m', memory: '64Mi' },
      { name: 'tools', kind: 'ReplicaSet', replicas: 2, cpu: '100m', memory: '256Mi', affinity: [{ key: 'example.com/gpu', operator: 'DoesNotExist' }] },
    ],
    budgetPercent: 30,
  },
  {
    // Four m5.large with room for one less: a delete's pods fit only if the scheduler puts them where the
    // plan's proof did (large pods first; LeastAllocated spreads the small ones).
    name: 'tight',
    nodes: [node(1, 'm5.large'), node(2, 'm5.large'), node(3, 'm5.large', 'b'), node(4, 'm5.large', 'b')],
    workloads: [
      { name: 'big', kind: 'ReplicaSet', replicas: 3, cpu: '800m', memory: '2Gi', pdb: { maxUnavailable: 1 } },
      { name: 'small', kind: 'ReplicaSet', replicas: 6, cpu: '250m', memory: '512Mi' },
      { name: 'mem', kind: 'StatefulSet', replicas: 2, cpu: '200m', memory: '2560Mi', slow: true },
    ],
    budgetPercent: 50,
  },
];

// ---------------------------------------------------------------------------------------------------
// Fault mixes

export interface FaultMix {
  readonly name: string;
  /** Share of Kubernetes API requests that fail (429, 500, 403, dropped before or after serving). */
  readonly kubeFaultRate: number;
  /** Share of EC2 calls that fail (throttled, 500, 403, timeout before or after the call). */
  readonly ec2FaultRate: number;
  /** Grace period of the slow workloads' pods (others: 30 s). */
  readonly slowGraceMs: number;
  /** When the k-th replacement (0-based, in launch order) registers after its launch: ms, or never. */
  readonly registerAfter: (k: number) => number | 'never';
  /** EC2 eventual consistency: a launched instance is unknown to DescribeInstances this long. */
  readonly describeLagMs: number;
  /** A PodDisruptionBudget at maxUnavailable 0 appears on a workload of the first node we taint. */
  readonly pdbWall: boolean;
  /** The first node we disrupt dies mid-command and a new machine registers under its name. */
  readonly reuse: boolean;
}

const normal = () => 90 * SECOND;

export const MIXES: readonly FaultMix[] = [
  { name: 'calm', kubeFaultRate: 0, ec2FaultRate: 0, slowGraceMs: 30 * SECOND, registerAfter: normal, describeLagMs: 0, pdbWall: false, reuse: false },
  { name: 'slow', kubeFaultRate: 0, ec2FaultRate: 0, slowGraceMs: 6 * MINUTE, registerAfter: (k) => (k === 0 ? 12 * MINUTE : k === 1 ? 7 * MINUTE : 3 * MINUTE), describeLagMs: 0, pdbWall: false, reuse: false },
  { name: 'never+lag', kubeFaultRate: 0, ec2FaultRate: 0, slowGraceMs: 2 * MINUTE, registerAfter: (k) => (k === 0 ? 'never' : normal()), describeLagMs: 45 * SECOND, pdbWall: false, reuse: false },
  { name: 'pdb-wall', kubeFaultRate: 0, ec2FaultRate: 0, slowGraceMs: 2 * MINUTE, registerAfter: normal, describeLagMs: 0, pdbWall: true, reuse: false },
  { name: 'flaky', kubeFaultRate: 0.08, ec2FaultRate: 0.1, slowGraceMs: 90 * SECOND, registerAfter: normal, describeLagMs: 20 * SECOND, pdbWall: false, reuse: false },
  { name: 'chaos', kubeFaultRate: 0.06, ec2FaultRate: 0.08, slowGraceMs: 4 * MINUTE, registerAfter: (k) => (k === 1 ? 'never' : k === 0 ? 6 * MINUTE : normal()), describeLagMs: 30 * SECOND, pdbWall: true, reuse: true },
  { name: 'reuse', kubeFaultRate: 0.03, ec2FaultRate: 0.03, slowGraceMs: 60 * SECOND, registerAfter: normal, describeLagMs: 0, pdbWall: false, reuse: true },
];

export interface Row {
  readonly id: string;
  readonly actuator: ActuatorKind;
  readonly shape: Shape;
  readonly mix: FaultMix;
  readonly seed: number;
}

/** The table: every shape with a spread of mixes, each with its own seed. */
export function rows(actuator: ActuatorKind): Row[] {
  const plan: [string, string[]][] = [
    ['sparse', ['slow', 'flaky', 'chaos']],
    ['oversized', ['never+lag', 'flaky', 'reuse']],
    ['mixed', ['pdb-wall', 'chaos', 'reuse']],
    ['tight', ['calm', 'slow', 'pdb-wall']],
  ];
  const out: Row[] = [];
  for (const [shapeName, mixes] of plan) {
    const shape = SHAPES.find((s) => s.name === shapeName)!;
    mixes.forEach((mixName, i) => {
      const seed = 1000 * (SHAPES.indexOf(shape) + 1) + 17 * (i + 1) + (actuator === 'ec2' ? 0 : 500);
      out.push({ id: `${actuator}/${shapeName}/${mixName}#${seed}`, actuator, shape, mix: MIXES.find((m) => m.name === mixName)!, seed });
    });
  }
  // `npm test` runs the most hostile row of each shape (the suite must stay under 6 minutes on two
  // cores); `ADVERSARIAL_ALL=1` runs all twelve (the table in docs/safety.md).
  if (process.env['ADVERSARIAL_ALL'] === '1') return out;
  const everyTime = new Set(['sparse/chaos', 'oversized/never+lag', 'mixed/chaos', 'tight/pdb-wall']);
  return out.filter((row) => everyTime.has(`${row.shape.name}/${row.mix.name}`));
}

// ---------------------------------------------------------------------------------------------------
// Deterministic randomness: a hash of the seed and a key, so requests served concurrently (the cluster
// read lists in parallel) get the same draws whatever their order.

function draw(seed: number, key: string): number {
  return createHash('sha256').update(`${seed}\u0000${key}`).digest().readUInt32BE(0) / 2 ** 32;
}

class Dice {
  private readonly counts = new Map<string, number>();
  constructor(private readonly seed: number) {}
  /** The next draw in [0, 1) for `key` (the n-th call with the same key gives the n-th draw). */
  next(key: string): number {
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return draw(this.seed, `${key}#${n}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Building the cluster

function quantityOf(bytes: number): string {
  return `${Math.floor(bytes / 1024)}Ki`;
}

/** Capacity and allocatable of an instance type, as the catalog (and so the plan) has them. */
function shapeOf(cat: Catalog, type: string): { capacity: Record<string, string>; allocatable: Record<string, string>; labels: Record<string, string> } {
  const t = cat.instanceTypes.find((i) => i.name === type);
  if (t === undefined) throw new Error(`adversarial world: no instance type ${type} in the catalog`);
  const resources = (r: Readonly<Record<string, number>>) => ({
    cpu: `${r['cpu'] ?? 0}m`,
    memory: quantityOf(r['memory'] ?? 0),
    pods: String(r['pods'] ?? 110),
    'ephemeral-storage': String(r['ephemeral-storage'] ?? 20 * 1024 ** 3),
  });
  return { capacity: resources(t.capacity), allocatable: resources(t.allocatable), labels: { ...t.labels } };
}

function nodeObject(cat: Catalog, spec: NodeSpec, actuator: ActuatorKind, given: { uid?: string; instanceId?: string; createdAt?: string } = {}): Json {
  const shape = shapeOf(cat, spec.type);
  // Every machine its own instance id (kubeNode's is derived from the name's first characters).
  const overrides = { ...given, instanceId: given.instanceId ?? `i-0${createHash('sha256').update(spec.name).digest('hex').slice(0, 16)}` };
  const base = kubeNode(spec.name, { instanceType: spec.type, zone: spec.zone, ...(actuator === 'karpenter' ? { labels: KARPENTER_NODE_LABELS } : {}), ...(overrides.createdAt === undefined ? {} : { createdAt: overrides.createdAt }) });
  const meta = base['metadata'] as Json;
  const spec_ = base['spec'] as Json;
  return {
    ...base,
    metadata: { ...meta, ...(overrides.uid === undefined ? {} : { uid: overrides.uid }), labels: { ...shape.labels, ...(meta['labels'] as Json) } },
    spec: { ...spec_, providerID: `aws:///${spec.zone}/${overrides.instanceId}` },
    status: { ...(base['status'] as Json), capacity: shape.capacity, allocatable: shape.allocatable },
  };
}

function podTemplate(w: WorkloadSpec, mix: FaultMix): Json {
  const affinity =
    w.affinity === undefined ? {} : { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: w.affinity }] } } } };
  return {
    metadata: { labels: { app: w.name } },
    spec: {
      containers: [{ name: 'main', image: `example/${w.name}:1`, resources: { requests: { cpu: w.cpu, memory: w.memory } } }],
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      terminationGracePeriodSeconds: w.slow === true ? Math.round(mix.slowGraceMs / SECOND) : 30,
      ...(w.nodeSelector === undefined ? {} : { nodeSelector: { ...w.nodeSelector } }),
      ...affinity,
      ...(w.priority === undefined ? {} : { priority: w.priority }),
    },
  };
}

/** Workload objects, PDBs, a DaemonSet, and every pod Pending: the control plane places them at the start. */
function workloadObjects(shape: Shape, mix: FaultMix): Json[] {
  const created = new Date(T0 - 2 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const out: Json[] = [
    {
      kind: 'DaemonSet',
      metadata: { name: 'aws-node', namespace: 'kube-system', uid: 'uid-ds-aws-node', creationTimestamp: created },
      spec: {
        selector: { matchLabels: { app: 'aws-node' } },
        template: {
          metadata: { labels: { app: 'aws-node' } },
          spec: { containers: [{ name: 'aws-node', image: 'example/aws-node:1', resources: { requests: { cpu: '50m', memory: '64Mi' } } }], tolerations: [{ operator: 'Exists' }] },
        },
      },
      status: { currentNumberScheduled: shape.nodes.length, desiredNumberScheduled: shape.nodes.length, numberMisscheduled: 0, numberReady: shape.nodes.length },
    },
  ];
  for (const w of shape.workloads) {
    const template = podTemplate(w, mix);
    if (w.kind === 'bare') {
      for (let i = 0; i < w.replicas; i += 1) {
        out.push({
          kind: 'Pod',
          metadata: { name: `${w.name}-${i}`, namespace: 'default', uid: `uid-bare-${w.name}-${i}`, creationTimestamp: created, labels: { app: w.name }, annotations: { [ORDINAL]: String(i) } },
          spec: structuredClone(template['spec']),
          status: { phase: 'Pending', conditions: [] },
        });
      }
      continue;
    }
    const uid = `uid-${w.kind}-${w.name}`;
    out.push({
      kind: w.kind,
      metadata: { name: w.name, namespace: 'default', uid, creationTimestamp: created, generation: 1 },
      spec: { replicas: w.replicas, selector: { matchLabels: { app: w.name } }, template, ...(w.kind === 'StatefulSet' ? { serviceName: w.name } : {}) },
      status: { replicas: 0 },
    });
    // The first incarnation of each replica, created by its controller two hours ago.
    for (let i = 0; i < w.replicas; i += 1) {
      const name = w.kind === 'StatefulSet' ? `${w.name}-${i}` : `${w.name}-${createHash('sha256').update(`${w.name}${i}`).digest('hex').slice(0, 5)}`;
      out.push({
        kind: 'Pod',
        metadata: {
          name,
          namespace: 'default',
          uid: `uid-pod-${name}`,
          creationTimestamp: created,
          labels: { app: w.name },
          annotations: { [ORDINAL]: String(i) },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: w.kind, name: w.name, uid, controller: true, blockOwnerDeletion: true }],
        },
        spec: structuredClone(template['spec']),
        status: { phase: 'Pending', conditions: [] },
      });
    }
    if (w.pdb !== undefined) out.push(pdbObject(w.name, w.pdb.maxUnavailable, created));
  }
  return out;
}

function pdbObject(app: string, maxUnavailable: number, created: string, name = `${app}-pdb`): Json {
  return {
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: 'default', uid: `uid-pdb-${name}`, creationTimestamp: created, generation: 1 },
    spec: { maxUnavailable, selector: { matchLabels: { app } } },
  };
}

// ---------------------------------------------------------------------------------------------------
// Reading objects

const metaOf = (o: Json): Json => (o['metadata'] ?? {}) as Json;
const specOf = (o: Json): Json => (o['spec'] ?? {}) as Json;
const statusOf = (o: Json): Json => (o['status'] ?? {}) as Json;
const nameOf = (o: Json): string => String(metaOf(o)['name']);
const annotationsOf = (o: Json): Record<string, string> => (metaOf(o)['annotations'] ?? {}) as Record<string, string>;
const ownerOf = (o: Json): { kind: string; name: string } | undefined => {
  const owner = ((metaOf(o)['ownerReferences'] ?? []) as Json[])[0];
  return owner === undefined ? undefined : { kind: String(owner['kind']), name: String(owner['name']) };
};
const taintsOf = (n: Json): { key: string; effect: string }[] => (specOf(n)['taints'] ?? []) as { key: string; effect: string }[];
const instanceOf = (n: Json): string => {
  const id = String(specOf(n)['providerID'] ?? '');
  return id.slice(id.lastIndexOf('/') + 1);
};
const isDeleting = (o: Json): boolean => typeof metaOf(o)['deletionTimestamp'] === 'string';

/** A workload pod: neither a DaemonSet's nor a mirror pod, not finished. */
function countsAsWorkload(pod: Json): boolean {
  const phase = statusOf(pod)['phase'];
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  if (ownerOf(pod)?.kind === 'DaemonSet' || ownerOf(pod)?.kind === 'Node') return false;
  return !('kubernetes.io/config.mirror' in annotationsOf(pod));
}

/** Who a pod is across recreations: its controller and ordinal, or (bare) its name. */
function identityOf(pod: Json): string {
  const owner = ownerOf(pod);
  if (owner === undefined) return `bare/${nameOf(pod)}`;
  return `${owner.kind}/${owner.name}#${annotationsOf(pod)[ORDINAL] ?? nameOf(pod)}`;
}

// ---------------------------------------------------------------------------------------------------
// The world

export interface Outcome {
  readonly row: string;
  readonly passes: number;
  readonly commands: number;
  readonly done: number;
  readonly rolledBack: number;
  readonly abandoned: number;
  readonly evictions: number;
  /** Requests the product sent to the Kubernetes API. */
  readonly requests: number;
  readonly kubeFaults: number;
  readonly ec2Faults: number;
  readonly passErrors: number;
  /** The first few distinct errors passes threw. */
  readonly errorTexts: readonly string[];
  /** What the world did to the product (PDB wall, a name reused, replacements that never registered). */
  readonly worldEvents: readonly string[];
  // Invariants: each must be empty / zero.
  readonly podsLost: readonly string[];
  readonly podsOnDeletedNodes: readonly string[];
  readonly directPodDeletes: readonly string[];
  readonly retiredWithPods: readonly string[];
  readonly leaked: readonly string[];
  readonly stranded: readonly string[];
  readonly unfinished: readonly string[];
  /** How each command ended (id: step, why), for reading a failure. */
  readonly story: readonly string[];
}

export function violations(o: Outcome): number {
  return (
    o.podsLost.length +
    o.podsOnDeletedNodes.length +
    o.directPodDeletes.length +
    o.retiredWithPods.length +
    o.leaked.length +
    o.stranded.length +
    o.unfinished.length
  );
}

/** Runs one row: builds the world, runs the passes, checks the invariants. */
export async function runRow(db: LocalDynamo, row: Row): Promise<Outcome> {
  const cat = await catalog();
  const { shape, mix, actuator } = row;
  const dice = new Dice(row.seed);
  const pool: NodePool = {
    ...(actuator === 'ec2' ? POOL : { ...KARPENTER_POOL, karpenterConsolidates: false, handedOver: true }),
    budgets: [{ nodes: { percent: shape.budgetPercent } }],
  };

  // Faults are on while `faulty`; the quiet passes turn them off.
  let faulty = true;
  const worldEvents: string[] = [];
  const launchIndex = new Map<string, number>();
  const indexOfLaunch = (key: string): number => {
    if (!launchIndex.has(key)) launchIndex.set(key, launchIndex.size);
    return launchIndex.get(key)!;
  };
  const delays = new Map<string, number | 'never'>();
  /** When the replacement `key` (an instance id or a NodeClaim name) registers after its launch; fixed at the first ask. */
  const registerAfter = (key: string): number | 'never' => {
    let delay = delays.get(key);
    if (delay === undefined) {
      const k = indexOfLaunch(key);
      const planned = mix.registerAfter(k);
      // Launched while quiet: the cloud behaves.
      delay = faulty ? planned : Math.min(planned === 'never' ? Infinity : planned, 2 * MINUTE);
      if (delay === 'never') worldEvents.push(`replacement #${k} never registers`);
      else if (delay > ACT.replacementReadyTimeoutMs) worldEvents.push(`replacement #${k} registers after ${delay / MINUTE} min`);
      delays.set(key, delay);
    }
    return delay;
  };
  const claimNames = new Map<string, string>();

  const objects = [...shape.nodes.map((n) => nodeObject(cat, n, actuator)), ...workloadObjects(shape, mix)];
  const w = await startWorld(db, objects, {
    spare: false,
    pool,
    ...(actuator === 'karpenter'
      ? {
          karpenter: {
            launchDelayMs: 20 * SECOND,
            initializeDelayMs: 30 * SECOND,
            registerDelayMs: (claim: Json) => {
              const after = registerAfter(nameOf(claim));
              return after === 'never' ? 0 : after;
            },
            neverRegister: (claim: Json) => registerAfter(nameOf(claim)) === 'never',
            launchChoice: (claim: Json) => {
              const type = firstAllowed(claim, 'node.kubernetes.io/instance-type') ?? 'm5.large';
              const s = shapeOf(cat, type);
              return { instanceType: type, arch: s.labels['kubernetes.io/arch'] ?? 'amd64', capacity: s.capacity, allocatable: s.allocatable };
            },
            nodeOverrides: (claim: Json) => {
              let name = claimNames.get(nameOf(claim));
              if (name === undefined) {
                const h = createHash('sha256').update(nameOf(claim)).digest();
                name = `ip-10-${100 + (h[0]! % 100)}-${h[1]!}-${(h[2]! % 250) + 1}.ec2.internal`;
                claimNames.set(nameOf(claim), name);
              }
              const type = firstAllowed(claim, 'node.kubernetes.io/instance-type') ?? 'm5.large';
              return { name, labels: Object.fromEntries(Object.entries(shapeOf(cat, type).labels).filter(([k]) => k.startsWith('karpenter.k8s.aws/'))) };
            },
          },
        }
      : {}),
  });
  const { api, ec2, clock } = w;
  api.setClock(() => clock.nowMs);
  ec2.clock = () => clock.nowMs;

  // ADV_TRACE=1: what happens, minute by minute (for reading a failure).
  const trace = (text: string) => {
    if (process.env['ADV_TRACE']) console.log(`${((clock.nowMs - T0) / MINUTE).toFixed(2)} min: ${text}`);
  };

  // --- what the world records against the product ---------------------------------------------------
  const podsOnDeletedNodes: string[] = [];
  const retiredWithPods: string[] = [];
  const bound = (nodeName: string) => api.store.peek('Pod').filter((p) => specOf(p)['nodeName'] === nodeName && countsAsWorkload(p));

  // --- the control plane ------------------------------------------------------------------------------
  api.setPodTermination((pod) => Number(specOf(pod)['terminationGracePeriodSeconds'] ?? 30) * SECOND);
  clock.nowMs = T0 - 90 * MINUTE;
  const cp: ControlPlane = attachControlPlane(api, {
    now: () => clock.nowMs,
    tickOnRequest: false,
    readyDelayMs: 20 * SECOND,
    // The world deletes the pods of a machine it kills itself (reuseName): any workload pod the collector
    // finds was left on a Node the product (or the cloud, for an instance the product terminated) removed.
    onPodGc: (pod, nodeName) => {
      if (countsAsWorkload(pod)) podsOnDeletedNodes.push(`${nameOf(pod)} on ${short(nodeName)}`);
    },
  });
  cp.tick();
  clock.nowMs = T0 - 60 * MINUTE;
  cp.tick();
  clock.nowMs = T0;
  const start = new Map<string, string>();
  for (const pod of api.store.list('Pod').filter(countsAsWorkload)) start.set(identityOf(pod), typeof specOf(pod)['nodeName'] === 'string' ? 'Running' : 'Pending');

  // --- the cloud (ec2 world): instances register, and go with their Nodes ---------------------------------
  const registrations = new Map<string, { at: number | 'never'; name: string; ready?: number }>();
  let launches = 0;
  ec2.onLaunch = (id) => {
    launches += 1;
    trace(`launched ${id}`);
    registrations.set(id, { at: ((a) => (a === 'never' ? 'never' : clock.nowMs + a))(registerAfter(id)), name: `ip-10-100-${launches}-${launches + 20}.ec2.internal` });
  };
  const goneSince = new Map<string, number>();
  function ec2Cloud(at: number): void {
    for (const [id, r] of registrations) {
      const instance = ec2.instances.get(id);
      if (instance === undefined) continue;
      if (instance.state === 'pending' && at - instance.launchTime.getTime() >= 30 * SECOND) instance.state = 'running';
      if (instance.state !== 'pending' && instance.state !== 'running') continue;
      // Each event at its own time, even when no request came in between (the clock jumps between passes).
      if (r.at !== 'never' && r.ready === undefined && at >= r.at) {
        const shape = shapeOf(cat, instance.type);
        const registered = nodeObject(cat, { name: r.name, type: instance.type, zone: instance.zone as NodeSpec['zone'] }, 'ec2', {
          uid: `uid-node-${r.name}-${id}`,
          instanceId: id,
          createdAt: new Date(r.at).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        });
        registered['spec'] = { ...specOf(registered), taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] };
        registered['status'] = { ...statusOf(registered), capacity: shape.capacity, allocatable: shape.allocatable, conditions: [readyCondition('False', r.at)] };
        api.store.put(registered);
        trace(`${id} registered as ${r.name} (due ${((r.at - T0) / MINUTE).toFixed(2)} min)`);
        instance.state = 'running';
        r.ready = r.at + 30 * SECOND;
      }
      if (r.ready !== undefined && at >= r.ready) {
        const n = api.store.get('Node', r.name);
        if (n !== undefined && instanceOf(n) === id && taintsOf(n).some((t) => t.key === 'node.kubernetes.io/not-ready')) {
          api.store.put({ ...n, spec: { ...specOf(n), taints: taintsOf(n).filter((t) => t.key !== 'node.kubernetes.io/not-ready') }, status: { ...statusOf(n), conditions: [readyCondition('True', r.ready)] } });
        }
      }
    }
    // Terminated instances: gone after 30 s; their Nodes NotReady, then removed by the cloud node controller.
    for (const n of api.store.peek('Node')) {
      const instance = ec2.instances.get(instanceOf(n));
      if (instance === undefined || (instance.state !== 'shutting-down' && instance.state !== 'terminated')) continue;
      const since = goneSince.get(instance.id) ?? at;
      goneSince.set(instance.id, since);
      if (at - since >= 30 * SECOND) instance.state = 'terminated';
      if (at - since >= 90 * SECOND) api.store.delete('Node', nameOf(n));
      else if (at - since >= 30 * SECOND && (statusOf(n)['conditions'] as Json[] | undefined)?.some((c) => c['type'] === 'Ready' && c['status'] === 'True')) {
        api.store.put({ ...n, status: { ...statusOf(n), conditions: [readyCondition('Unknown', at)] } });
      }
    }
  }

  // --- the world's own moves: a PDB wall, a node name reused -------------------------------------------------
  let wallBuilt = false;
  let wallNode: string | undefined;
  let reused = false;
  const markedSince = new Map<string, number>();
  function adversary(at: number): void {
    const marked = api.store.peek('Node').filter((n) => COMMAND_ANNOTATION in annotationsOf(n) && !isDeleting(n));
    for (const n of marked) if (!markedSince.has(nameOf(n))) markedSince.set(nameOf(n), at);
    if (!faulty) return;
    if (mix.pdbWall && !wallBuilt && marked.length > 0) {
      // A team adds a budget that allows no disruption to a workload on the node we just tainted.
      const target = marked[0]!;
      const apps = new Map<string, number>();
      for (const pod of bound(nameOf(target))) {
        const owner = ownerOf(pod);
        if (owner === undefined || isDeleting(pod)) continue;
        const app = String(((metaOf(pod)['labels'] ?? {}) as Json)['app']);
        if (api.store.peek('PodDisruptionBudget').some((p) => ((specOf(p)['selector'] as Json)['matchLabels'] as Json)['app'] === app)) continue;
        apps.set(app, (apps.get(app) ?? 0) + 1);
      }
      const app = [...apps.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
      if (app !== undefined) {
        api.store.put(pdbObject(app, 0, new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z'), `${app}-wall`));
        worldEvents.push(`PDB wall on ${app} (node ${short(nameOf(target))})`);
        wallBuilt = true;
        wallNode = nameOf(target);
      }
    }
    if (mix.reuse && !reused) {
      // Another node than the one behind the PDB wall, so that both faults have their effect.
      const victim = marked.find((n) => nameOf(n) !== wallNode && at - (markedSince.get(nameOf(n)) ?? at) >= 60 * SECOND);
      if (victim !== undefined) {
        reused = true;
        reuseName(victim, at);
      }
    }
  }

  /** The machine behind `victim` dies (its pods with it); a new machine registers under the same name. */
  function reuseName(victim: Json, at: number): void {
    const name = nameOf(victim);
    for (const pod of api.store.peek('Pod').filter((p) => specOf(p)['nodeName'] === name)) api.store.delete('Pod', nameOf(pod), String(metaOf(pod)['namespace']));
    api.store.delete('Node', name);
    const old = ec2.instances.get(instanceOf(victim));
    if (old !== undefined) old.state = 'terminated';
    const labels = (metaOf(victim)['labels'] ?? {}) as Record<string, string>;
    const spec: NodeSpec = {
      name,
      type: labels['node.kubernetes.io/instance-type'] ?? 'm5.large',
      zone: labels['topology.kubernetes.io/zone'] === 'us-east-1b' ? 'us-east-1b' : 'us-east-1a',
    };
    const instanceId = `i-0reused${createHash('sha256').update(name).digest('hex').slice(0, 9)}`;
    const newcomer = nodeObject(cat, spec, actuator, { uid: `uid-reused-${name}`, instanceId, createdAt: new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z') });
    api.store.put(newcomer);
    ec2.addExisting(instanceId, spec.zone);
    if (actuator === 'karpenter') {
      const claim = nodeClaimFor(newcomer);
      api.store.put({ ...claim, metadata: { ...metaOf(claim), name: `${String(metaOf(claim)['name'])}-reused` } });
    }
    worldEvents.push(`node ${short(name)} died mid-command; a new machine took its name`);
  }

  // The world moves before every request the product sends (after Karpenter's stand-in and the control
  // plane), and once more at each pass boundary.
  function worldTick(): void {
    const at = clock.nowMs;
    w.karpenter?.reconcile();
    if (actuator === 'ec2') ec2Cloud(at);
    adversary(at);
    cp.tick();
  }
  api.beforeRequest(() => worldTick());

  api.afterRequest((r) => {
    if (r.method === 'POST' && r.path.endsWith('/eviction')) trace(`  evict ${r.path.split('/')[6]} -> ${r.status}`);
  });
  // NodeClaims we delete must hold no workload pod (Karpenter's own drain would move them).
  api.afterRequest((r) => {
    if (r.method !== 'DELETE' || !r.path.startsWith('/apis/karpenter.sh/v1/nodeclaims/') || r.status !== 200) return;
    const claim = api.store.get('NodeClaim', decodeURIComponent(r.path.split('/').pop()!));
    const nodeName = claim === undefined ? undefined : ((claim['status'] ?? {}) as Json)['nodeName'];
    if (typeof nodeName !== 'string') return;
    const pods = bound(nodeName).filter((p) => !isDeleting(p));
    if (pods.length > 0) retiredWithPods.push(`NodeClaim of ${short(nodeName)} deleted with ${pods.map(nameOf).join(', ')}`);
  });

  // --- random faults ----------------------------------------------------------------------------------
  let kubeFaults = 0;
  let ec2Faults = 0;
  api.failWith((r: RecordedRequest): InjectedFailure | undefined => {
    if (!faulty || mix.kubeFaultRate === 0) return undefined;
    const key = `${r.method} ${r.path} ${r.query['fieldSelector'] ?? ''} ${r.query['continue'] ?? ''}`;
    // Reads at half the rate: a pass reads nine collections, and one failure fails the whole read.
    if (dice.next(`kube ${key}`) >= (r.method === 'GET' ? mix.kubeFaultRate / 2 : mix.kubeFaultRate)) return undefined;
    kubeFaults += 1;
    const kind = dice.next(`kube-kind ${key}`);
    if (kind < 0.25) return { status: 429, reason: 'TooManyRequests', message: 'the server has received too many requests and has asked us to try again later' };
    if (kind < 0.5) return { status: 500, reason: 'InternalError', message: 'an error on the server ("etcdserver: request timed out") has prevented the request from succeeding' };
    if (kind < 0.65) return { status: 403, reason: 'Forbidden', message: 'admission webhook "policy.example.com" denied the request' };
    return { drop: kind < 0.8 ? 'before' : 'after' };
  });
  ec2.fault = (command: string, input: unknown): Ec2Fault | undefined => {
    if (!faulty || mix.ec2FaultRate === 0) return undefined;
    const key = `${command} ${JSON.stringify(input).length}`;
    if (dice.next(`ec2 ${key}`) >= mix.ec2FaultRate) return undefined;
    ec2Faults += 1;
    const kind = dice.next(`ec2-kind ${key}`);
    const fault = (name: string, status: number, message: string, after = false): Ec2Fault => ({
      error: Object.assign(new Error(message), { name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } }),
      after,
    });
    if (kind < 0.3) return fault('RequestLimitExceeded', 503, 'Request limit exceeded.');
    if (kind < 0.55) return fault('InternalError', 500, 'An internal error has occurred');
    if (kind < 0.7) return fault('UnauthorizedOperation', 403, 'You are not authorized to perform this operation.');
    return fault('TimeoutError', 0, 'Connection timed out after 5000 ms', kind >= 0.85);
  };
  ec2.describeLagMs = mix.describeLagMs;

  // --- a rollback removes what its command launched ------------------------------------------------------
  // Checked when a command is first seen rolled back (after the pass that ended it): every instance tagged
  // with its id, or NodeClaim annotated with it, must be terminating or gone. One left running is a leak
  // at that moment, whatever may clean it up later.
  const leftByRollbacks: string[] = [];
  const rollbacksChecked = new Set<string>();
  function checkRollbacks(commands: readonly DisruptionCommand[]): void {
    for (const c of commands) {
      if (c.step !== 'rolledBack' || rollbacksChecked.has(c.id)) continue;
      rollbacksChecked.add(c.id);
      for (const i of ec2.launched()) {
        const owner = (i.tags['eks-consolidator/command'] ?? '').replace(/#\d+$/, '');
        if (owner === c.id && (i.state === 'pending' || i.state === 'running')) {
          leftByRollbacks.push(`instance ${i.id} still ${i.state} after ${c.id} rolled back (${rollbackWhy(c.detail)})`);
        }
      }
      for (const claim of api.store.peek('NodeClaim')) {
        if (annotationsOf(claim)[NODECLAIM_COMMAND_ANNOTATION] === c.id && !isDeleting(claim)) {
          leftByRollbacks.push(`NodeClaim ${nameOf(claim)} not deleted after ${c.id} rolled back (${rollbackWhy(c.detail)})`);
        }
      }
    }
  }

  // --- the passes -----------------------------------------------------------------------------------------
  let passes = 0;
  let bindingsSeen = 0;
  let passErrors = 0;
  const errorTexts: string[] = [];
  try {
    let quiet = 0;
    // Passes in a row that decided nothing and left no command unfinished: the cluster has converged,
    // the faults have nothing left to hit.
    let idle = 0;
    let unfinished = 0;
    for (;;) {
      if (faulty && (passes >= FAULTY_PASSES || idle >= 2)) {
        faulty = false;
        ec2.describeLagMs = 0;
      }
      if (!faulty) {
        if (quiet > 0 && unfinished === 0) break;
        if (quiet >= MAX_QUIET_PASSES) break;
        quiet += 1;
      }
      clock.nowMs = Math.max(clock.nowMs, T0 + passes * PASS_EVERY_MS);
      worldTick();
      const pass = await fullPass(w, {
        owner: `pass-${passes}`,
        budgetMs: INVOCATION_MS,
        act: ACT,
        actuator,
        karpenterPresence: actuator === 'karpenter' ? 'present' : 'absent',
      });
      const commands = await w.commands();
      checkRollbacks(commands);
      unfinished = commands.filter((c) => !FINAL_COMMAND_STEPS.has(c.step)).length;
      if (process.env['ADV_TRACE']) {
        for (const d of pass.result?.plan.decisions ?? []) trace(`pass ${passes} decided ${d.action} ${d.method} [${d.nodes.map(short).join(' ')}] -> ${d.replacements.map((r) => r.instanceTypes[0]).join(',')}`);
        for (const c of pass.report.commands) trace(`  ${c.id.slice(0, 12)} ${c.from} -> ${c.step} ev ${c.evicted} bl ${c.blocked} ${c.endedBecause ?? ''} ${c.errors.slice(0, 2).join('; ')}`);
        for (const b of cp.bindings.slice(bindingsSeen)) trace(`  bound ${b.pod} -> ${short(b.node)} at ${((b.at - T0) / MINUTE).toFixed(2)}`);
        bindingsSeen = cp.bindings.length;
        trace(`  pending: ${cp.pending().join(', ')}; nodes: ${api.store.peek('Node').map((n) => `${short(nameOf(n))}${specOf(n)['unschedulable'] ? '(c)' : ''}`).join(' ')}`);
      }
      if (pass.error !== undefined) {
        passErrors += 1;
        const text = pass.error instanceof Error ? pass.error.message : String(pass.error);
        if (!errorTexts.includes(text) && errorTexts.length < 5) errorTexts.push(text);
      }
      passes += 1;
      const busy = pass.error !== undefined || (pass.result?.plan.decisions.length ?? 0) > 0 || unfinished > 0;
      idle = busy ? 0 : idle + 1;
    }
    // The world settles: five more minutes (Karpenter's termination, pods terminating, the scheduler).
    for (let i = 0; i < 10; i += 1) {
      clock.nowMs += PASS_EVERY_MS / 10;
      worldTick();
    }
    return { row: row.id, passes, kubeFaults, ec2Faults, passErrors, errorTexts, worldEvents, ...(await inspect()) };
  } finally {
    await w.close();
  }

  async function inspect(): Promise<Omit<Outcome, 'row' | 'passes' | 'kubeFaults' | 'ec2Faults' | 'passErrors' | 'errorTexts' | 'worldEvents'>> {
    const commands = await w.commands();
    const nodes = api.store.list('Node');
    const nodeNames = new Set(nodes.map(nameOf));
    // Pods: every one Running at the start is Running again on a live node.
    const now = new Map<string, string>();
    for (const pod of api.store.list('Pod').filter(countsAsWorkload)) {
      const running = !isDeleting(pod) && statusOf(pod)['phase'] === 'Running' && nodeNames.has(String(specOf(pod)['nodeName']));
      if (running || !now.has(identityOf(pod))) now.set(identityOf(pod), running ? 'Running' : isDeleting(pod) ? 'Terminating' : 'Pending');
    }
    const podsLost = [...start.entries()].filter(([id, was]) => was === 'Running' && now.get(id) !== 'Running').map(([id]) => `${id} (${now.get(id) ?? 'gone'})`);
    const directPodDeletes = api.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/pods/')).map((r) => r.path);
    const registered = new Set(nodes.map(instanceOf));
    w.karpenter?.reconcile();
    const terminatedByKarpenter = new Set(w.karpenter?.terminatedInstances ?? []);
    const leaked = [
      ...leftByRollbacks,
      ...ec2
        .launched()
        .filter((i) => i.state !== 'shutting-down' && i.state !== 'terminated' && !registered.has(i.id))
        .map((i) => `instance ${i.id} (${i.state}, launched ${Math.round((i.launchTime.getTime() - T0) / MINUTE)} min in)`),
      ...(w.karpenter?.launchedInstances ?? []).filter((id) => !terminatedByKarpenter.has(id) && !registered.has(id)).map((id) => `instance ${id} (Karpenter's)`),
      ...(w.karpenter?.leakedClaims() ?? []).map((c) => `NodeClaim ${nameOf(c)} (its Node is gone)`),
      ...api.store
        .list('NodeClaim')
        .filter((c) => NODECLAIM_COMMAND_ANNOTATION in annotationsOf(c) && !isDeleting(c) && typeof statusOf(c)['nodeName'] !== 'string')
        .map((c) => `NodeClaim ${nameOf(c)} (never registered, not deleted)`),
    ];
    const stranded = nodes
      .filter((n) => !isDeleting(n))
      .filter((n) => specOf(n)['unschedulable'] === true || taintsOf(n).some((t) => t.key === OUR_TAINT || t.key === KARPENTER_TAINT) || COMMAND_ANNOTATION in annotationsOf(n))
      .map((n) => short(nameOf(n)));
    const step = (s: string) => commands.filter((c) => c.step === s).length;
    return {
      commands: commands.length,
      done: step('done'),
      rolledBack: step('rolledBack'),
      abandoned: step('abandoned'),
      evictions: api.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/eviction') && r.status === 201).length,
      requests: api.requests.length,
      podsLost,
      podsOnDeletedNodes,
      directPodDeletes,
      retiredWithPods: [...retiredWithPods, ...w.terminatedWithPods.map((t) => `instance ${t.instanceId} terminated with ${t.pods.join(', ')}`)],
      leaked,
      stranded,
      unfinished: commands.filter((c) => !FINAL_COMMAND_STEPS.has(c.step)).map((c) => `${c.id} at ${c.step}`),
      story: commands.map((c) => {
        const detail = JSON.parse(c.detail ?? '{}') as { note?: string };
        return `${c.id} ${c.method} [${c.nodes.map(short).join(' ')}] -> ${c.step}: ${detail.note ?? ''}`;
      }),
    };
  }
}

function rollbackWhy(detail: string | undefined): string {
  const parsed = JSON.parse(detail ?? '{}') as { rollbackWhy?: string };
  return parsed.rollbackWhy ?? 'no reason recorded';
}

function firstAllowed(claim: Json, key: string): string | undefined {
  for (const r of (specOf(claim)['requirements'] ?? []) as Json[]) {
    if (r['key'] === key && r['operator'] === 'In' && Array.isArray(r['values']) && typeof r['values'][0] === 'string') return r['values'][0];
  }
  return undefined;
}

function readyCondition(status: string, at: number): Json {
  const t = new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return { type: 'Ready', status, reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady', message: '', lastHeartbeatTime: t, lastTransitionTime: t };
}

function short(name: string): string {
  return name.replace(/\.ec2\.internal$/, '');
}

// ---------------------------------------------------------------------------------------------------
// The test

/**
 * Registers one test per row of `actuator`'s table, and prints the table with `SHOW_FAULT_TABLE=1`.
 * `ADVERSARIAL_ROW=<part of a row id>` runs only the matching rows.
 */
export function describeAdversarial(actuator: ActuatorKind): void {
  let db: LocalDynamo;
  const outcomes: Outcome[] = [];
  beforeAll(async () => {
    db = await startDynalite();
  });
  afterAll(async () => {
    await db.stop();
    if (process.env['SHOW_FAULT_TABLE']) printTable(outcomes);
  });

  // ADVERSARIAL_ROW=<part of a row id> runs only the matching rows (to reproduce one).
  const only = process.env['ADVERSARIAL_ROW'];
  const table = rows(actuator).filter((row) => only === undefined || row.id.includes(only));
  if (table.length === 0) return;
  describe(`adversarial world, ${actuator} actuator`, () => {
    it.each(table.map((row) => ({ row, id: row.id })))('$id ends with nothing lost, leaked or stranded', async ({ row }) => {
      const outcome = await runRow(db, row);
      outcomes.push(outcome);
      const failed = {
        podsLost: outcome.podsLost,
        podsOnDeletedNodes: outcome.podsOnDeletedNodes,
        directPodDeletes: outcome.directPodDeletes,
        retiredWithPods: outcome.retiredWithPods,
        leaked: outcome.leaked,
        stranded: outcome.stranded,
        unfinished: outcome.unfinished,
      };
      expect(failed, `${row.id}\nworld: ${outcome.worldEvents.join('; ')}\n${outcome.story.join('\n')}`).toEqual({
        podsLost: [],
        podsOnDeletedNodes: [],
        directPodDeletes: [],
        retiredWithPods: [],
        leaked: [],
        stranded: [],
        unfinished: [],
      });
    }, 60_000);
  });
}

function printTable(outcomes: readonly Outcome[]): void {
  const rowsOut = outcomes.map((o) => ({
    row: o.row,
    passes: o.passes,
    commands: o.commands,
    done: o.done,
    rolledBack: o.rolledBack,
    abandoned: o.abandoned,
    outcome: o.commands === 0 ? 'none started' : [o.done && 'done', o.rolledBack && 'rolled back', o.abandoned && 'abandoned'].filter(Boolean).join(' + '),
    evictions: o.evictions,
    faults: `${o.kubeFaults} kube / ${o.ec2Faults} ec2`,
    passErrors: o.passErrors,
    world: o.worldEvents.join('; '),
    violations: violations(o),
  }));
  const sum = (f: (o: Outcome) => number) => outcomes.reduce((a, o) => a + f(o), 0);
  rowsOut.push({
    row: `TOTAL (${outcomes.length} rows)`,
    passes: sum((o) => o.passes),
    commands: sum((o) => o.commands),
    done: sum((o) => o.done),
    rolledBack: sum((o) => o.rolledBack),
    abandoned: sum((o) => o.abandoned),
    outcome: `${outcomes.filter((o) => o.commands === 0).length} rows none started`,
    evictions: sum((o) => o.evictions),
    faults: `${sum((o) => o.kubeFaults)} kube / ${sum((o) => o.ec2Faults)} ec2`,
    passErrors: sum((o) => o.passErrors),
    world: '',
    violations: sum(violations),
  });
  console.table(rowsOut);
}
