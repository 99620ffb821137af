// The scheduling-relevant part of a pod spec (a running pod's, or a DaemonSet's template), shared by
// cluster.ts for Pods and DaemonSets.
import type {
  HostPort,
  NodeSelectorTerm,
  PodAffinityTerm,
  PodSchedulingSpec,
  Requirement,
  Resources,
  Toleration,
  TopologySpreadConstraint,
  WeightedNodeSelectorTerm,
  WeightedPodAffinityTerm,
} from '../model/types.ts';
import { LabelKeys } from '../model/types.ts';
import { parseResources } from '../quantity.ts';
import { Fields, isRecord, type JsonRecord } from './fields.ts';
import { parseOptLabelSelector, parseRequirement, TAINT_EFFECTS } from './selectors.ts';

type MutableResources = Record<string, number>;

function addInto(target: MutableResources, add: Resources): void {
  for (const [name, amount] of Object.entries(add)) target[name] = (target[name] ?? 0) + amount;
}

function maxInto(target: MutableResources, other: Resources): void {
  for (const [name, amount] of Object.entries(other)) target[name] = Math.max(target[name] ?? 0, amount);
}

/**
 * One container's requests as the API server stores them: a resource with a limit but no request
 * gets the limit as its request (Kubernetes defaulting), so a dump edited by hand behaves like a live one.
 */
function containerRequests(f: Fields, container: JsonRecord, path: string): Resources {
  const resources = f.optRecord(container['resources'], `${path}.resources`) ?? {};
  const limits = parseResources(resources['limits'], `${path}.resources.limits`, f.object);
  const requests = parseResources(resources['requests'], `${path}.resources.requests`, f.object);
  return { ...limits, ...requests };
}

/**
 * Effective pod requests, as the scheduler computes them:
 * - app containers add up, and so do sidecars (init containers with `restartPolicy: Always`), which
 *   start before the app containers and keep running next to them;
 * - a regular init container runs alone, after the sidecars declared before it have started, so the pod
 *   needs at least its requests plus those sidecars'; the pod takes the larger of that and the sum;
 * - pod-level `spec.resources` (Kubernetes 1.32+), where set, replaces the container total for its
 *   resources;
 * - `spec.overhead` (RuntimeClass overhead) is added last.
 */
export function effectiveRequests(f: Fields, spec: JsonRecord, path: string): Resources {
  const total: MutableResources = {};
  f.optArray(spec['containers'], `${path}.containers`).forEach((c, i) => {
    const p = `${path}.containers[${i}]`;
    addInto(total, containerRequests(f, f.record(c, p), p));
  });

  const sidecarsSoFar: MutableResources = {};
  const initPeak: MutableResources = {};
  f.optArray(spec['initContainers'], `${path}.initContainers`).forEach((c, i) => {
    const p = `${path}.initContainers[${i}]`;
    const container = f.record(c, p);
    const requests = containerRequests(f, container, p);
    const restartPolicy = f.optString(container['restartPolicy'], `${p}.restartPolicy`);
    if (restartPolicy === 'Always') {
      addInto(total, requests);
      addInto(sidecarsSoFar, requests);
      maxInto(initPeak, sidecarsSoFar);
    } else {
      const whileRunning: MutableResources = { ...sidecarsSoFar };
      addInto(whileRunning, requests);
      maxInto(initPeak, whileRunning);
    }
  });
  maxInto(total, initPeak);

  const podLevel = f.optRecord(spec['resources'], `${path}.resources`);
  if (podLevel) {
    const limits = parseResources(podLevel['limits'], `${path}.resources.limits`, f.object);
    const requests = parseResources(podLevel['requests'], `${path}.resources.requests`, f.object);
    Object.assign(total, limits, requests);
  }

  addInto(total, parseResources(spec['overhead'], `${path}.overhead`, f.object));
  return total;
}

/**
 * Required node affinity terms. `matchFields` on `metadata.name` (how DaemonSet pods are pinned) is
 * expressed on the hostname label, which on EKS carries the node name.
 */
function parseNodeAffinity(f: Fields, affinity: JsonRecord | undefined, path: string): NodeSelectorTerm[] {
  const nodeAffinity = f.optRecord(affinity?.['nodeAffinity'], `${path}.nodeAffinity`);
  const requiredPath = `${path}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`;
  const required = f.optRecord(nodeAffinity?.['requiredDuringSchedulingIgnoredDuringExecution'], requiredPath);
  if (!required) return [];
  return f.array(required['nodeSelectorTerms'], `${requiredPath}.nodeSelectorTerms`).map((t, i) => parseNodeSelectorTerm(f, t, `${requiredPath}.nodeSelectorTerms[${i}]`));
}

/** Preferred node affinity: `{ weight, preference }` terms. */
function parsePreferredNodeAffinity(f: Fields, affinity: JsonRecord | undefined, path: string): WeightedNodeSelectorTerm[] {
  const nodeAffinity = f.optRecord(affinity?.['nodeAffinity'], `${path}.nodeAffinity`);
  const preferredPath = `${path}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution`;
  return f.optArray(nodeAffinity?.['preferredDuringSchedulingIgnoredDuringExecution'], preferredPath).map((t, i) => {
    const p = `${preferredPath}[${i}]`;
    const r = f.record(t, p);
    return { weight: parseWeight(f, r['weight'], `${p}.weight`), preference: parseNodeSelectorTerm(f, r['preference'], `${p}.preference`) };
  });
}

/** A preference's weight: Kubernetes requires 1 to 100. */
function parseWeight(f: Fields, raw: unknown, path: string): number {
  const weight = f.optInteger(raw, path);
  if (weight === undefined || weight < 1 || weight > 100) f.fail(path, weight === undefined ? 'is required' : `${weight} must be 1 to 100`);
  return weight;
}

function parseNodeSelectorTerm(f: Fields, t: unknown, p: string): NodeSelectorTerm {
  const term = f.record(t, p);
  const expressions: Requirement[] = f
    .optArray(term['matchExpressions'], `${p}.matchExpressions`)
    .map((e, j) => parseRequirement(f, e, `${p}.matchExpressions[${j}]`, 'kubernetes'));
  f.optArray(term['matchFields'], `${p}.matchFields`).forEach((e, j) => {
    const fp = `${p}.matchFields[${j}]`;
    const field = parseRequirement(f, e, fp, 'kubernetes');
    if (field.key !== 'metadata.name') f.fail(`${fp}.key`, `${JSON.stringify(field.key)}: only metadata.name can be matched as a field`);
    expressions.push({ ...field, key: LabelKeys.hostname });
  });
  return { matchExpressions: expressions };
}

function parsePodAffinityTerms(f: Fields, section: JsonRecord | undefined, path: string): PodAffinityTerm[] {
  const termsPath = `${path}.requiredDuringSchedulingIgnoredDuringExecution`;
  return f.optArray(section?.['requiredDuringSchedulingIgnoredDuringExecution'], termsPath).map((t, i) => parsePodAffinityTerm(f, t, `${termsPath}[${i}]`));
}

/** Preferred pod (anti-)affinity: `{ weight, podAffinityTerm }` terms. */
function parsePreferredPodAffinityTerms(f: Fields, section: JsonRecord | undefined, path: string): WeightedPodAffinityTerm[] {
  const termsPath = `${path}.preferredDuringSchedulingIgnoredDuringExecution`;
  return f.optArray(section?.['preferredDuringSchedulingIgnoredDuringExecution'], termsPath).map((t, i) => {
    const p = `${termsPath}[${i}]`;
    const r = f.record(t, p);
    return { weight: parseWeight(f, r['weight'], `${p}.weight`), term: parsePodAffinityTerm(f, r['podAffinityTerm'], `${p}.podAffinityTerm`) };
  });
}

function parsePodAffinityTerm(f: Fields, t: unknown, p: string): PodAffinityTerm {
  const term = f.record(t, p);
  const labelSelector = parseOptLabelSelector(f, term['labelSelector'], `${p}.labelSelector`);
  const namespaceSelector = parseOptLabelSelector(f, term['namespaceSelector'], `${p}.namespaceSelector`);
  return {
    ...(labelSelector ? { labelSelector } : {}),
    namespaces: f.stringList(term['namespaces'], `${p}.namespaces`),
    ...(namespaceSelector ? { namespaceSelector } : {}),
    topologyKey: f.string(term['topologyKey'], `${p}.topologyKey`),
  };
}

/**
 * Parsed toleration lists, shared between the pods that carry the same one (almost every pod
 * has the same two default tolerations, and one copy per pod was 14 MB of the live heap at 30k pods).
 * Safe to share: the model is read-only. Bounded, so a cluster of all-different lists keeps no more.
 */
const sharedTolerations = new Map<string, readonly Toleration[]>();
const MAX_SHARED_TOLERATION_LISTS = 10_000;

function parseTolerations(f: Fields, raw: unknown, path: string): readonly Toleration[] {
  // The list is looked up by the raw fields it is parsed from: a list seen before is not parsed again.
  const rawKey = rawTolerationsKey(raw);
  if (rawKey === '') return NO_TOLERATIONS;
  const known = rawKey === undefined ? undefined : sharedTolerations.get(rawKey);
  if (known) return known;
  const list = parseTolerationList(f, raw, path);
  if (list.length === 0) return NO_TOLERATIONS;
  if (rawKey !== undefined && sharedTolerations.size < MAX_SHARED_TOLERATION_LISTS) sharedTolerations.set(rawKey, list);
  return list;
}

/**
 * The fields a toleration list is parsed from (key, operator, value, effect; absent told apart from
 * empty), as one string; undefined when a field is not a string (the parser then says what is wrong).
 */
function rawTolerationsKey(raw: unknown): string | undefined {
  if (raw === undefined || raw === null) return '';
  if (!Array.isArray(raw)) return undefined;
  let key = '';
  for (let i = 0; i < raw.length; i++) {
    const t: unknown = raw[i];
    if (!isRecord(t)) return undefined;
    for (const field of TOLERATION_FIELDS) {
      const value = t[field];
      if (value === undefined) key += '\u0003';
      else if (typeof value === 'string') key += value;
      else return undefined;
      key += '\u0001';
    }
    key += '\u0002';
  }
  return key;
}

const TOLERATION_FIELDS = ['key', 'operator', 'value', 'effect'] as const;

const NO_TOLERATIONS: readonly Toleration[] = Object.freeze([]);

function parseTolerationList(f: Fields, raw: unknown, path: string): Toleration[] {
  return f.optArray(raw, path).map((t, i) => {
    const p = `${path}[${i}]`;
    const r = f.record(t, p);
    const key = f.optString(r['key'], `${p}.key`);
    const operator = r['operator'] === undefined || r['operator'] === null || r['operator'] === ''
      ? undefined
      : f.oneOf(r['operator'], `${p}.operator`, ['Exists', 'Equal'] as const);
    const value = f.optString(r['value'], `${p}.value`);
    // An empty effect tolerates every effect, the same as leaving it out.
    const effect = r['effect'] === undefined || r['effect'] === null || r['effect'] === ''
      ? undefined
      : f.oneOf(r['effect'], `${p}.effect`, TAINT_EFFECTS);
    return {
      ...(key === undefined || key === '' ? {} : { key }),
      ...(operator ? { operator } : {}),
      ...(value === undefined ? {} : { value }),
      ...(effect ? { effect } : {}),
    };
  });
}

function parseTopologySpread(f: Fields, raw: unknown, path: string): TopologySpreadConstraint[] {
  return f.optArray(raw, path).map((c, i) => {
    const p = `${path}[${i}]`;
    const r = f.record(c, p);
    const maxSkew = f.optInteger(r['maxSkew'], `${p}.maxSkew`);
    if (maxSkew === undefined || maxSkew < 1) f.fail(`${p}.maxSkew`, maxSkew === undefined ? 'is required' : `${maxSkew} must be at least 1`);
    const minDomains = f.optInteger(r['minDomains'], `${p}.minDomains`);
    if (minDomains !== undefined && minDomains < 1) f.fail(`${p}.minDomains`, `${minDomains} must be at least 1`);
    const labelSelector = parseOptLabelSelector(f, r['labelSelector'], `${p}.labelSelector`);
    const policy = (name: string) =>
      r[name] === undefined || r[name] === null ? undefined : f.oneOf(r[name], `${p}.${name}`, ['Honor', 'Ignore'] as const);
    const nodeAffinityPolicy = policy('nodeAffinityPolicy');
    const nodeTaintsPolicy = policy('nodeTaintsPolicy');
    const matchLabelKeys = f.stringList(r['matchLabelKeys'], `${p}.matchLabelKeys`);
    return {
      maxSkew,
      topologyKey: f.string(r['topologyKey'], `${p}.topologyKey`),
      // Kubernetes requires the field; a hand-written pod without it gets the strict reading.
      whenUnsatisfiable:
        r['whenUnsatisfiable'] === undefined || r['whenUnsatisfiable'] === null
          ? 'DoNotSchedule'
          : f.oneOf(r['whenUnsatisfiable'], `${p}.whenUnsatisfiable`, ['DoNotSchedule', 'ScheduleAnyway'] as const),
      ...(labelSelector ? { labelSelector } : {}),
      ...(minDomains === undefined ? {} : { minDomains }),
      ...(nodeAffinityPolicy ? { nodeAffinityPolicy } : {}),
      ...(nodeTaintsPolicy ? { nodeTaintsPolicy } : {}),
      ...(matchLabelKeys.length > 0 ? { matchLabelKeys } : {}),
    };
  });
}

/**
 * Host ports the pod binds (containers' `ports[].hostPort`). With `hostNetwork` every container port
 * is a host port; the API server fills hostPort in for those, and so do we for hand-written input.
 */
function parseHostPorts(f: Fields, spec: JsonRecord, path: string): HostPort[] {
  const hostNetwork = f.optBoolean(spec['hostNetwork'], `${path}.hostNetwork`) ?? false;
  const out: HostPort[] = [];
  f.optArray(spec['containers'], `${path}.containers`).forEach((c, i) => {
    const cp = `${path}.containers[${i}]`;
    f.optArray(f.record(c, cp)['ports'], `${cp}.ports`).forEach((port, j) => {
      const p = `${cp}.ports[${j}]`;
      const r = f.record(port, p);
      const hostPort = f.optInteger(r['hostPort'], `${p}.hostPort`) ?? (hostNetwork ? f.optInteger(r['containerPort'], `${p}.containerPort`) : undefined);
      if (hostPort === undefined || hostPort === 0) return;
      if (hostPort < 1 || hostPort > 65535) f.fail(`${p}.hostPort`, `${hostPort} is not a port number`);
      const hostIP = f.optString(r['hostIP'], `${p}.hostIP`);
      out.push({
        port: hostPort,
        protocol: f.optString(r['protocol'], `${p}.protocol`) || 'TCP',
        ...(hostIP ? { hostIP } : {}),
      });
    });
  });
  return out;
}

/** Everything in PodSchedulingSpec except volumeZones, which needs the cluster's volumes (cluster.ts). */
export function parseSchedulingSpec(f: Fields, spec: JsonRecord, path: string): Omit<PodSchedulingSpec, 'volumeZones'> {
  const affinity = f.optRecord(spec['affinity'], `${path}.affinity`);
  return {
    requests: effectiveRequests(f, spec, path),
    nodeSelector: f.stringMap(spec['nodeSelector'], `${path}.nodeSelector`),
    requiredNodeAffinity: parseNodeAffinity(f, affinity, `${path}.affinity`),
    tolerations: parseTolerations(f, spec['tolerations'], `${path}.tolerations`),
    podAffinity: parsePodAffinityTerms(f, f.optRecord(affinity?.['podAffinity'], `${path}.affinity.podAffinity`), `${path}.affinity.podAffinity`),
    podAntiAffinity: parsePodAffinityTerms(
      f,
      f.optRecord(affinity?.['podAntiAffinity'], `${path}.affinity.podAntiAffinity`),
      `${path}.affinity.podAntiAffinity`,
    ),
    topologySpread: parseTopologySpread(f, spec['topologySpreadConstraints'], `${path}.topologySpreadConstraints`),
    hostPorts: parseHostPorts(f, spec, path),
    ...parsePreferences(f, affinity, `${path}.affinity`),
  };
}

/** The preferred terms, each list only when the pod states one (most pods state none). */
function parsePreferences(f: Fields, affinity: JsonRecord | undefined, path: string): Pick<PodSchedulingSpec, 'preferredNodeAffinity' | 'preferredPodAffinity' | 'preferredPodAntiAffinity'> {
  if (!affinity) return {};
  const node = parsePreferredNodeAffinity(f, affinity, path);
  const pod = parsePreferredPodAffinityTerms(f, f.optRecord(affinity['podAffinity'], `${path}.podAffinity`), `${path}.podAffinity`);
  const anti = parsePreferredPodAffinityTerms(f, f.optRecord(affinity['podAntiAffinity'], `${path}.podAntiAffinity`), `${path}.podAntiAffinity`);
  return {
    ...(node.length > 0 ? { preferredNodeAffinity: node } : {}),
    ...(pod.length > 0 ? { preferredPodAffinity: pod } : {}),
    ...(anti.length > 0 ? { preferredPodAntiAffinity: anti } : {}),
  };
}

