// Kubernetes objects (`kubectl get ... -o json` items, or YAML documents) -> the model's Cluster
// (docs/file-formats.md, "The cluster"). Reads Node, Pod, PodDisruptionBudget, DaemonSet,
// Deployment/StatefulSet/ReplicaSet (readiness for the stabilization window), Namespace,
// PersistentVolume and PersistentVolumeClaim (volume zones). Other kinds are ignored; `List`s are flattened.
//
// Errors name the object as `Pod default/web-0` or `Node "a"` and the field with its indexes.
import { InputError } from '../errors.ts';
import type {
  CapacityType,
  Cluster,
  DaemonSet,
  LabelSelector,
  Namespace,
  Node,
  OwnerReference,
  Pod,
  PodDisruptionBudget,
  PodPhase,
  WorkloadStatus,
} from '../model/types.ts';
import { Annotations, LabelKeys } from '../model/types.ts';
import { parseResources } from '../quantity.ts';
import { Fields, isRecord, show, type JsonRecord } from './fields.ts';
import { parseSchedulingSpec } from './podSpec.ts';
import { parseLabelSelector, parseTaints } from './selectors.ts';

/** An object from the input, with where it was found (for errors about unnamed objects). */
interface Item {
  readonly kind: string;
  readonly raw: JsonRecord;
  readonly where: string;
}

const WORKLOAD_KINDS = ['Deployment', 'StatefulSet', 'ReplicaSet'] as const;
const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;
const NODE_REQUIRED_RESOURCES = ['cpu', 'memory'] as const;
const POD_PHASES: readonly PodPhase[] = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];
/** Labels that carry a volume's or node's zone, newest first. */
const ZONE_KEYS = [LabelKeys.zone, 'topology.ebs.csi.aws.com/zone', 'failure-domain.beta.kubernetes.io/zone'];
const INSTANCE_TYPE_KEYS = [LabelKeys.instanceType, 'beta.kubernetes.io/instance-type'];
/** `aws:///us-east-1a/i-0123456789abcdef0` (the zone part can be empty on some providers). */
const AWS_PROVIDER_ID = /^aws:\/\/\/([^/]*)\/(i-[0-9a-zA-Z]+)$/;

/**
 * Yields every object, descending into Lists. `where` locates an object for errors about unnamed ones:
 * `items[3]` in a single List, `document 2` or `document 2.items[3]` in a YAML stream.
 */
function* flatten(objects: readonly unknown[], locate: (i: number) => string, itemKind?: string, inList = false): Generator<Item> {
  for (const [i, raw] of objects.entries()) {
    const where = locate(i);
    // Empty YAML documents are skipped; an empty entry in a List's items is a broken dump.
    if ((raw === null || raw === undefined) && !inList) continue;
    if (!isRecord(raw)) throw new InputError(where || 'document 1', '', `must be an object, got ${show(raw)}`);
    // Typed lists from the API (`PodList`) leave out their items' kind.
    const kind = typeof raw['kind'] === 'string' && raw['kind'] !== '' ? raw['kind'] : itemKind;
    if (kind === undefined) throw new InputError(where || 'document 1', 'kind', 'is required');
    // A List whose items are missing or not a list would otherwise read as an empty cluster.
    if (kind.endsWith('List') && (Object.hasOwn(raw, 'items') || kind === 'List') && !Array.isArray(raw['items'])) {
      throw new InputError(where || 'document 1', 'items', raw['items'] === undefined ? `is required in a ${kind}` : `must be a list, got ${show(raw['items'])}`);
    }
    if (kind.endsWith('List') && Array.isArray(raw['items'])) {
      const inner = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
      yield* flatten(raw['items'], (j) => (where === '' ? `items[${j}]` : `${where}.items[${j}]`), inner, true);
    } else {
      yield { kind, raw, where: where || 'document 1' };
    }
  }
}

/** The object's name for errors: `Pod default/web-0`, `Node "a"`, or where it is when it has no name. */
function objectName(item: Item, namespaced: boolean): string {
  const metadata = isRecord(item.raw['metadata']) ? item.raw['metadata'] : {};
  const name = metadata['name'];
  if (typeof name !== 'string' || name === '') return `${item.kind} at ${item.where}`;
  if (!namespaced) return `${item.kind} "${name}"`;
  const namespace = typeof metadata['namespace'] === 'string' && metadata['namespace'] !== '' ? metadata['namespace'] : 'default';
  return `${item.kind} ${namespace}/${name}`;
}

interface Meta {
  readonly name: string;
  /** `default` when absent, as kubectl applies it. */
  readonly namespace: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly uid?: string;
  readonly createdAt?: number;
  readonly deleting: boolean;
  readonly deletingSince?: number;
}

function readMeta(f: Fields, raw: JsonRecord): Meta {
  const m = f.record(raw['metadata'], 'metadata');
  const uid = f.optString(m['uid'], 'metadata.uid');
  const createdAt = f.optTimestamp(m['creationTimestamp'], 'metadata.creationTimestamp');
  const deletingSince = f.optTimestamp(m['deletionTimestamp'], 'metadata.deletionTimestamp');
  return {
    name: f.string(m['name'], 'metadata.name'),
    namespace: f.optString(m['namespace'], 'metadata.namespace') || 'default',
    labels: f.stringMap(m['labels'], 'metadata.labels'),
    annotations: f.stringMap(m['annotations'], 'metadata.annotations'),
    ...(uid ? { uid } : {}),
    ...(createdAt === undefined ? {} : { createdAt }),
    deleting: deletingSince !== undefined,
    ...(deletingSince === undefined ? {} : { deletingSince }),
  };
}

function firstLabel(labels: Record<string, string>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = labels[key];
    if (value) return value;
  }
  return undefined;
}

/**
 * Karpenter's `karpenter.sh/capacity-type`, else EKS managed node groups' `eks.amazonaws.com/capacityType`.
 * A value neither knows (Karpenter's newer `reserved`, say) leaves it unknown: such a node is never
 * priced, so never replaced, but is not an input error.
 */
function capacityTypeOf(labels: Record<string, string>): CapacityType | undefined {
  const karpenter = labels[LabelKeys.capacityType];
  if (karpenter === 'on-demand' || karpenter === 'spot') return karpenter;
  const eks = labels['eks.amazonaws.com/capacityType'];
  if (eks === 'ON_DEMAND') return 'on-demand';
  if (eks === 'SPOT') return 'spot';
  return undefined;
}

function parseNode(item: Item): Node {
  const f: Fields = new Fields(objectName(item, false));
  const meta = readMeta(f, item.raw);
  if (meta.createdAt === undefined) f.fail('metadata.creationTimestamp', 'is required');
  const spec = f.optRecord(item.raw['spec'], 'spec') ?? {};
  const status = f.optRecord(item.raw['status'], 'status') ?? {};

  const providerId = f.optString(spec['providerID'], 'spec.providerID') || undefined;
  const aws = providerId ? AWS_PROVIDER_ID.exec(providerId) : null;
  const zone = firstLabel(meta.labels, ZONE_KEYS) ?? (aws?.[1] || undefined);
  const instanceType = firstLabel(meta.labels, INSTANCE_TYPE_KEYS);
  const capacityType = capacityTypeOf(meta.labels);
  const nodePool = meta.labels[LabelKeys.nodePool] || undefined;

  // Both are always present on a live node; a hand-written one may give just one of them.
  const hasAllocatable = status['allocatable'] !== undefined && status['allocatable'] !== null;
  const hasCapacity = status['capacity'] !== undefined && status['capacity'] !== null;
  if (!hasAllocatable && !hasCapacity) f.fail('status.allocatable', 'is required');
  const allocatablePath = hasAllocatable ? 'status.allocatable' : 'status.capacity';
  const allocatable = parseResources(hasAllocatable ? status['allocatable'] : status['capacity'], allocatablePath, f.object);
  const capacity = parseResources(hasCapacity ? status['capacity'] : status['allocatable'], hasCapacity ? 'status.capacity' : 'status.allocatable', f.object);
  // The kubelet always reports both. Without them the node would read as one with no room at all, and
  // every pod on it as one that fits nowhere; a pod count left out means no pod limit, as before.
  for (const resource of NODE_REQUIRED_RESOURCES) {
    if (allocatable[resource] === undefined) f.fail(`${allocatablePath}.${resource}`, 'is required');
  }

  let ready = false;
  let readySince: number | undefined;
  f.optArray(status['conditions'], 'status.conditions').forEach((c, i) => {
    const p = `status.conditions[${i}]`;
    const condition = f.record(c, p);
    if (condition['type'] !== 'Ready') return;
    // Anything but the three strings is a broken dump, not a node that is simply not ready.
    ready = f.oneOf(condition['status'], `${p}.status`, CONDITION_STATUSES) === 'True';
    const since = f.optTimestamp(condition['lastTransitionTime'], `${p}.lastTransitionTime`);
    readySince = ready ? since : undefined;
  });

  return {
    name: meta.name,
    ...(meta.uid ? { uid: meta.uid } : {}),
    labels: meta.labels,
    annotations: meta.annotations,
    createdAt: meta.createdAt,
    taints: parseTaints(f, spec['taints'], 'spec.taints'),
    unschedulable: f.optBoolean(spec['unschedulable'], 'spec.unschedulable') ?? false,
    ...(providerId ? { providerId } : {}),
    ...(aws?.[2] ? { instanceId: aws[2] } : {}),
    ...(zone ? { zone } : {}),
    ...(instanceType ? { instanceType } : {}),
    ...(capacityType ? { capacityType } : {}),
    ...(nodePool ? { nodePool } : {}),
    allocatable,
    capacity,
    ready,
    ...(readySince === undefined ? {} : { readySince }),
    deleting: meta.deleting,
  };
}

function parseOwnerReferences(f: Fields, raw: unknown): OwnerReference[] {
  return f.optArray(raw, 'metadata.ownerReferences').map((o, i) => {
    const p = `metadata.ownerReferences[${i}]`;
    const r = f.record(o, p);
    const uid = f.optString(r['uid'], `${p}.uid`);
    const apiVersion = f.optString(r['apiVersion'], `${p}.apiVersion`);
    return {
      kind: f.string(r['kind'], `${p}.kind`),
      name: f.string(r['name'], `${p}.name`),
      ...(uid ? { uid } : {}),
      ...(apiVersion ? { apiVersion } : {}),
      controller: f.optBoolean(r['controller'], `${p}.controller`) ?? false,
    };
  });
}

/** Persistent volumes and claims, indexed for resolving a pod's volumes to zones. */
interface VolumeIndex {
  /** `namespace/claim` -> bound PV name ('' when the claim is not bound yet). */
  readonly claims: ReadonlyMap<string, string>;
  /** PV name -> the zones it lives in, or null when it is not zonal (EFS, say). */
  readonly volumes: ReadonlyMap<string, readonly string[] | null>;
  /** PV name -> the hosts it is bound to, for a volume pinned to nodes (persistentVolumeHosts). */
  readonly volumeHosts: ReadonlyMap<string, readonly string[]>;
  readonly nodeZones: ReadonlyMap<string, string>;
}

/**
 * A PV's zones: from `spec.nodeAffinity` (what the CSI driver sets; terms are ORed, so every term must
 * name zones for the volume to be zonal), else from its zone label. Null when neither says.
 */
function persistentVolumeZones(item: Item): readonly string[] | null {
  const f: Fields = new Fields(objectName(item, false));
  const labels = f.stringMap(isRecord(item.raw['metadata']) ? item.raw['metadata']['labels'] : undefined, 'metadata.labels');
  const spec = f.optRecord(item.raw['spec'], 'spec') ?? {};
  const nodeAffinity = f.optRecord(spec['nodeAffinity'], 'spec.nodeAffinity');
  const required = f.optRecord(nodeAffinity?.['required'], 'spec.nodeAffinity.required');
  const terms = f.optArray(required?.['nodeSelectorTerms'], 'spec.nodeAffinity.required.nodeSelectorTerms');
  if (terms.length > 0) {
    const zones = new Set<string>();
    let everyTermZonal = true;
    terms.forEach((t, i) => {
      const p = `spec.nodeAffinity.required.nodeSelectorTerms[${i}]`;
      const expressions = f.optArray(f.record(t, p)['matchExpressions'], `${p}.matchExpressions`);
      const j = expressions.findIndex(
        (e) => isRecord(e) && typeof e['key'] === 'string' && ZONE_KEYS.includes(e['key']) && e['operator'] === 'In',
      );
      const zonal = expressions[j];
      if (j < 0 || !isRecord(zonal)) everyTermZonal = false;
      else for (const z of f.stringList(zonal['values'], `${p}.matchExpressions[${j}].values`)) zones.add(z);
    });
    if (everyTermZonal) return [...zones];
  }
  const zone = firstLabel(labels, ZONE_KEYS);
  return zone ? [zone] : null;
}

/**
 * The hosts a PV's node affinity pins it to, when every term names hosts (`kubernetes.io/hostname In`),
 * else null. A `local` or `hostPath` volume pins nothing: as Karpenter's volume topology does, its
 * hostname terms are dropped, since moving such a pod means leaving that data behind anyway (Karpenter's
 * "should ignore hostname affinity scheduling when using local path volumes"). Any other volume keeps
 * them: its pod can start on no other node ("should not ignore hostname affinity when using non-local
 * path volumes").
 */
function persistentVolumeHosts(item: Item): readonly string[] | null {
  const f: Fields = new Fields(objectName(item, false));
  const spec = f.optRecord(item.raw['spec'], 'spec') ?? {};
  if (isRecord(spec['local']) || isRecord(spec['hostPath'])) return null;
  const nodeAffinity = f.optRecord(spec['nodeAffinity'], 'spec.nodeAffinity');
  const required = f.optRecord(nodeAffinity?.['required'], 'spec.nodeAffinity.required');
  const terms = f.optArray(required?.['nodeSelectorTerms'], 'spec.nodeAffinity.required.nodeSelectorTerms');
  if (terms.length === 0) return null;
  const hosts = new Set<string>();
  for (const [i, t] of terms.entries()) {
    const p = `spec.nodeAffinity.required.nodeSelectorTerms[${i}]`;
    const expressions = f.optArray(f.record(t, p)['matchExpressions'], `${p}.matchExpressions`);
    const j = expressions.findIndex((e) => isRecord(e) && e['key'] === LabelKeys.hostname && e['operator'] === 'In');
    const pinned = expressions[j];
    if (j < 0 || !isRecord(pinned)) return null;
    for (const host of f.stringList(pinned['values'], `${p}.matchExpressions[${j}].values`)) hosts.add(host);
  }
  return [...hosts];
}

/** The input's PersistentVolumeClaims and PersistentVolumes (`items`), and the nodes' zones, indexed. */
function indexVolumes(items: readonly Item[], nodes: readonly Node[]): VolumeIndex {
  const claims = new Map<string, string>();
  const volumes = new Map<string, readonly string[] | null>();
  const volumeHosts = new Map<string, readonly string[]>();
  for (const item of items) {
    if (item.kind === 'PersistentVolumeClaim') {
      const f: Fields = new Fields(objectName(item, true));
      const meta = readMeta(f, item.raw);
      const spec = f.optRecord(item.raw['spec'], 'spec') ?? {};
      claims.set(`${meta.namespace}/${meta.name}`, f.optString(spec['volumeName'], 'spec.volumeName') ?? '');
    } else if (item.kind === 'PersistentVolume') {
      const f: Fields = new Fields(objectName(item, false));
      const name = readMeta(f, item.raw).name;
      volumes.set(name, persistentVolumeZones(item));
      const hosts = persistentVolumeHosts(item);
      if (hosts) volumeHosts.set(name, hosts);
    }
  }
  const nodeZones = new Map<string, string>();
  for (const node of nodes) if (node.zone) nodeZones.set(node.name, node.zone);
  return { claims, volumes, volumeHosts, nodeZones };
}

/**
 * The claims a pod's volumes use: `persistentVolumeClaim.claimName`, and generic ephemeral volumes,
 * whose claims are named `<pod>-<volume>`.
 */
function podClaims(f: Fields, spec: JsonRecord, podName: string): readonly string[] {
  let claims: string[] | undefined;
  f.optArray(spec['volumes'], 'spec.volumes').forEach((v, i) => {
    const p = `spec.volumes[${i}]`;
    const volume = f.record(v, p);
    const pvc = f.optRecord(volume['persistentVolumeClaim'], `${p}.persistentVolumeClaim`);
    if (pvc) (claims ??= []).push(f.string(pvc['claimName'], `${p}.persistentVolumeClaim.claimName`));
    else if (f.optRecord(volume['ephemeral'], `${p}.ephemeral`)) (claims ??= []).push(`${podName}-${f.string(volume['name'], `${p}.name`)}`);
  });
  return claims ?? NO_CLAIMS;
}

const NO_CLAIMS: readonly string[] = [];

/**
 * Zones the pod's claims pin it to. A claim whose volume is in the input gives that volume's zones.
 * A claim we cannot follow to a volume (the claim or its PV was not dumped, which is the default with
 * `kubectl get nodes,pods,...`) is taken to be an EBS volume, EBS being zonal and the EKS default
 * storage: the pod then stays in the zone of the node it runs on. That can only forbid a move that
 * was possible, never allow one that was not.
 */
function zonesOfClaims(claims: readonly string[], pod: Pod, index: VolumeIndex): readonly string[] | undefined {
  let zones: string[] | undefined;
  for (const claim of claims) {
    const pvName = index.claims.get(`${pod.namespace}/${claim}`);
    let volumeZones: readonly string[] | null | undefined;
    if (pvName && index.volumes.has(pvName)) volumeZones = index.volumes.get(pvName);
    else {
      const nodeZone = pod.nodeName ? index.nodeZones.get(pod.nodeName) : undefined;
      volumeZones = nodeZone ? [nodeZone] : null;
    }
    if (!volumeZones) continue;
    zones = zones === undefined ? [...volumeZones] : zones.filter((z) => volumeZones.includes(z));
  }
  return zones;
}

/** Hosts the pod's claims pin it to (the intersection over its pinned volumes), or undefined when none is pinned. */
function hostsOfClaims(claims: readonly string[], pod: Pod, index: VolumeIndex): readonly string[] | undefined {
  let hosts: string[] | undefined;
  for (const claim of claims) {
    const pvName = index.claims.get(`${pod.namespace}/${claim}`);
    const volumeHosts = pvName ? index.volumeHosts.get(pvName) : undefined;
    if (!volumeHosts) continue;
    hosts = hosts === undefined ? [...volumeHosts] : hosts.filter((h) => volumeHosts.includes(h));
  }
  return hosts;
}

/** A pod as read, its volume zones still to be worked out from the claims (they need the PVs and PVCs). */
interface ReadPod {
  readonly pod: Pod;
  readonly claims: readonly string[];
}

function parsePod(item: Item): ReadPod {
  const f: Fields = new Fields(objectName(item, true));
  const meta = readMeta(f, item.raw);
  const spec = f.record(item.raw['spec'], 'spec');
  // The API server requires at least one container, so kubectl never prints a pod without the list.
  f.array(spec['containers'], 'spec.containers');
  const status = f.optRecord(item.raw['status'], 'status') ?? {};
  const ownerReferences = parseOwnerReferences(f, (item.raw['metadata'] as JsonRecord)['ownerReferences']);
  const nodeName = f.optString(spec['nodeName'], 'spec.nodeName') || undefined;
  // A dumped pod always has a phase; a hand-written one without it is taken to be running if bound.
  const phase = status['phase'] === undefined || status['phase'] === null
    ? (nodeName ? 'Running' : 'Pending')
    : f.oneOf(status['phase'], 'status.phase', POD_PHASES);
  const startedAt = f.optTimestamp(status['startTime'], 'status.startTime');
  const gracePeriodSeconds = f.optInteger(spec['terminationGracePeriodSeconds'], 'spec.terminationGracePeriodSeconds');
  const controller = ownerReferences.find((o) => o.controller);
  const scheduling = parseSchedulingSpec(f, spec, 'spec');
  const claims = podClaims(f, spec, meta.name);

  const pod: Pod = {
    uid: meta.uid ?? `${meta.namespace}/${meta.name}`,
    namespace: meta.namespace,
    name: meta.name,
    labels: meta.labels,
    annotations: meta.annotations,
    ownerReferences,
    ...(nodeName ? { nodeName } : {}),
    phase,
    priority: f.optInteger(spec['priority'], 'spec.priority') ?? 0,
    ...(meta.createdAt === undefined ? {} : { createdAt: meta.createdAt }),
    ...(startedAt === undefined ? {} : { startedAt }),
    terminating: meta.deleting,
    ...(meta.deletingSince === undefined ? {} : { deletingSince: meta.deletingSince }),
    ...(gracePeriodSeconds === undefined ? {} : { terminationGracePeriodSeconds: gracePeriodSeconds }),
    isDaemonSetPod: controller?.kind === 'DaemonSet',
    isMirrorPod: Annotations.mirrorPod in meta.annotations || ownerReferences.some((o) => o.kind === 'Node'),
    ...scheduling,
  };
  return { pod, claims };
}

function parsePdb(item: Item): PodDisruptionBudget {
  const f: Fields = new Fields(objectName(item, true));
  const meta = readMeta(f, item.raw);
  const spec = f.optRecord(item.raw['spec'], 'spec') ?? {};
  // policy/v1: an empty selector selects every pod in the namespace; a missing one is treated the same.
  const selector: LabelSelector = spec['selector'] === undefined || spec['selector'] === null ? {} : parseLabelSelector(f, spec['selector'], 'spec.selector');
  const status = f.optRecord(item.raw['status'], 'status');
  // disruptionsAllowed is computed by the disruption controller. Without a status we cannot know it,
  // and guessing high could evict past the budget, so missing means 0: the PDB blocks.
  const disruptionsAllowed = f.optInteger(status?.['disruptionsAllowed'], 'status.disruptionsAllowed') ?? 0;
  if (disruptionsAllowed < 0) f.fail('status.disruptionsAllowed', `${disruptionsAllowed} must not be negative`);
  return { namespace: meta.namespace, name: meta.name, selector, disruptionsAllowed };
}

function parseDaemonSet(item: Item): DaemonSet {
  const f: Fields = new Fields(objectName(item, true));
  const meta = readMeta(f, item.raw);
  const spec = f.record(item.raw['spec'], 'spec');
  const template = f.record(spec['template'], 'spec.template');
  const templateMeta = f.optRecord(template['metadata'], 'spec.template.metadata') ?? {};
  const templateSpec = f.record(template['spec'], 'spec.template.spec');
  return {
    namespace: meta.namespace,
    name: meta.name,
    template: {
      labels: f.stringMap(templateMeta['labels'], 'spec.template.metadata.labels'),
      ...parseSchedulingSpec(f, templateSpec, 'spec.template.spec'),
    },
  };
}

function parseWorkload(item: Item, kind: WorkloadStatus['kind']): WorkloadStatus {
  const f: Fields = new Fields(objectName(item, true));
  const meta = readMeta(f, item.raw);
  const spec = f.optRecord(item.raw['spec'], 'spec') ?? {};
  const status = f.optRecord(item.raw['status'], 'status') ?? {};
  return {
    kind,
    namespace: meta.namespace,
    name: meta.name,
    desiredReplicas: f.optInteger(spec['replicas'], 'spec.replicas') ?? 1, // Kubernetes' default
    readyReplicas: f.optInteger(status['readyReplicas'], 'status.readyReplicas') ?? 0, // omitted when 0
  };
}

function parseNamespace(item: Item): Namespace {
  const f: Fields = new Fields(objectName(item, false));
  const meta = readMeta(f, item.raw);
  return { name: meta.name, labels: meta.labels };
}

function rejectDuplicates<T>(values: readonly T[], key: (value: T) => string, describe: (value: T) => string): void {
  const seen = new Set<string>();
  for (const value of values) {
    const k = key(value);
    if (seen.has(k)) throw new InputError(describe(value), 'metadata.name', 'appears more than once in the input');
    seen.add(k);
  }
}

/** The problem to report for a `kind: Status` object: the API error it records. */
function apiErrorProblem(raw: Record<string, unknown>): string {
  const code = typeof raw['code'] === 'number' ? ` ${raw['code']}` : '';
  const reason = typeof raw['reason'] === 'string' ? ` ${raw['reason']}` : '';
  const text = typeof raw['message'] === 'string' ? `: ${raw['message'].slice(0, 300)}` : '';
  return `is a Kubernetes API error (Status${code}${reason}${text}), not a cluster dump: save the output of a kubectl get that succeeded`;
}

/** Parses cluster objects (a `List`'s items, YAML documents, or nested Lists). Throws InputError. */
export function parseClusterObjects(objects: readonly unknown[]): Cluster {
  const builder = new ClusterBuilder();
  builder.addItems(flatten(objects, objects.length === 1 ? () => '' : (i) => `document ${i + 1}`));
  return builder.finish();
}

/**
 * A Cluster read one object at a time (a streamed dump's items are parsed as they arrive, so
 * their raw objects never pile up). Each object is parsed when added, so errors come in input order;
 * what needs other objects (volume zones, duplicate names) is settled by `finish`.
 */
export class ClusterBuilder {
  private readonly nodes: Node[] = [];
  private readonly pods: ReadPod[] = [];
  private readonly volumeItems: Item[] = [];
  private readonly pdbs: PodDisruptionBudget[] = [];
  /** Kinds read past, for a file that holds nothing else. */
  private readonly unknownKinds = new Set<string>();
  private readonly daemonSets: DaemonSet[] = [];
  private readonly workloads: WorkloadStatus[] = [];
  private readonly namespaces: Namespace[] = [];

  /**
   * Adds one object found at `where` (`items[3]`), descending into it if it is a List; `itemKind` is the
   * kind its List gives items that state none (`Pod` in a `PodList`).
   */
  add(raw: unknown, where: string, itemKind?: string): void {
    this.addItems(flatten([raw], () => where, itemKind, true));
  }

  addItems(items: Iterable<Item>): void {
    for (const item of items) {
      switch (item.kind) {
        case 'Node':
          this.nodes.push(parseNode(item));
          break;
        case 'Pod':
          this.pods.push(parsePod(item));
          break;
        case 'PersistentVolume':
        case 'PersistentVolumeClaim':
          this.volumeItems.push(item);
          break;
        case 'PodDisruptionBudget':
          this.pdbs.push(parsePdb(item));
          break;
        case 'DaemonSet':
          this.daemonSets.push(parseDaemonSet(item));
          break;
        case 'Namespace':
          this.namespaces.push(parseNamespace(item));
          break;
        case 'Status':
          // What `kubectl get --raw` or curl saves when the API refused: never a cluster.
          throw new InputError(item.where, '', apiErrorProblem(item.raw));
        default:
          if ((WORKLOAD_KINDS as readonly string[]).includes(item.kind)) this.workloads.push(parseWorkload(item, item.kind as WorkloadStatus['kind']));
          else this.unknownKinds.add(item.kind);
      }
    }
  }

  /**
   * One builder holding the objects of `builders`, in their order (a live read lists its collections at
   * once, each into its own builder).
   */
  static merged(builders: readonly ClusterBuilder[]): ClusterBuilder {
    const out = new ClusterBuilder();
    // (A loop, not push(...list): a spread of 150k pods would overflow the call stack.)
    const append = <T>(to: T[], from: readonly T[]): void => {
      for (const value of from) to.push(value);
    };
    for (const b of builders) {
      for (const kind of b.unknownKinds) out.unknownKinds.add(kind);
      append(out.nodes, b.nodes);
      append(out.pods, b.pods);
      append(out.volumeItems, b.volumeItems);
      append(out.pdbs, b.pdbs);
      append(out.daemonSets, b.daemonSets);
      append(out.workloads, b.workloads);
      append(out.namespaces, b.namespaces);
    }
    return out;
  }

  finish(): Cluster {
    const nodes = this.nodes;
    const known = nodes.length + this.pods.length + this.volumeItems.length + this.pdbs.length + this.daemonSets.length + this.workloads.length + this.namespaces.length;
    if (known === 0 && this.unknownKinds.size > 0) {
      // Unknown kinds beside a cluster's objects are ignored; a file of nothing else is the wrong file,
      // and reading it as an empty cluster would forget every node the state remembers.
      throw new InputError(
        'document 1',
        'kind',
        `holds no object this product reads (only ${[...this.unknownKinds].sort().slice(0, 5).join(', ')}): expected the output of kubectl get nodes,pods,poddisruptionbudgets,daemonsets -A -o json`,
      );
    }
    rejectDuplicates(nodes, (n) => n.name, (n) => `Node "${n.name}"`);
    const volumes = indexVolumes(this.volumeItems, nodes);
    const pods = this.pods.map(({ pod, claims }) => {
      if (claims.length === 0) return pod;
      const volumeZones = zonesOfClaims(claims, pod, volumes);
      const volumeHosts = hostsOfClaims(claims, pod, volumes);
      return volumeZones === undefined && volumeHosts === undefined
        ? pod
        : { ...pod, ...(volumeZones === undefined ? {} : { volumeZones }), ...(volumeHosts === undefined ? {} : { volumeHosts }) };
    });
    rejectDuplicates(pods, (p) => `${p.namespace}/${p.name}`, (p) => `Pod ${p.namespace}/${p.name}`);
    return { nodes, pods, pdbs: this.pdbs, daemonSets: this.daemonSets, workloads: this.workloads, namespaces: this.namespaces };
  }
}
