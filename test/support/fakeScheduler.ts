// A control plane for the fake Kubernetes API server (fakeKubeApi.ts): the controllers and the scheduler
// a real cluster runs beside the API server, so that a test of code that evicts pods sees where they go,
// and whether they go anywhere. Modelled on the upstream controllers, not on what our product expects:
//
// - workload controllers: a ReplicaSet keeps `spec.replicas` active pods (not terminating, not finished):
//   a pod evicted or deleted is replaced at once by a new pod (a new name, the template's spec, Pending,
//   no nodeName). A StatefulSet recreates `<name>-<ordinal>` under the same name, but only once the old
//   pod is gone (it waits out a Terminating pod). Bare pods (no controller) are never recreated. Each
//   pod carries its slot in the annotation ORDINAL, so a test can follow "the same pod" across
//   recreations (controller + ordinal). Workload status (replicas, readyReplicas) follows the pods.
// - the DaemonSet controller: one pod of each DaemonSet on every Node that is not being deleted, bound
//   directly (DaemonSet pods tolerate everything).
// - the pod garbage collector: a pod bound to a Node that no longer exists is deleted (`onPodGc` is told
//   first: for a workload pod that means it was lost with its node).
// - the scheduler (kube-scheduler's default filters and LeastAllocated scoring): Pending pods are bound
//   one by one, highest priority first, then oldest, then by namespace/name. Filters: the node is Ready,
//   not being deleted and not unschedulable (unless the pod tolerates node.kubernetes.io/unschedulable),
//   its NoSchedule and NoExecute taints are tolerated, the pod's nodeSelector and required node affinity
//   (matchExpressions: In, NotIn, Exists, DoesNotExist, Gt, Lt; terms ORed) match its labels, and the
//   pod's requests fit allocatable minus the requests of the pods already bound there (terminating ones
//   included, as the scheduler counts them until they are gone), pod count included. Score: the mean over
//   cpu and memory of (allocatable - requested after placing the pod) / allocatable; the highest wins,
//   ties go to the first node by name (deterministic, where kube-scheduler picks at random). A pod that
//   fits nowhere stays Pending with PodScheduled=False (Unschedulable).
// - pod readiness: a bound pod becomes Ready `readyDelayMs` after it was bound.
// - the disruption controller and the Eviction API's PodDisruptionBudget check: each PDB's status
//   (currentHealthy, desiredHealthy, disruptionsAllowed, expectedPods) is computed from the live pods
//   (healthy: bound, Running, Ready, not terminating; maxUnavailable counts against the controller's
//   replicas, minAvailable against the pods selected), and an eviction is refused (429) when a PDB that
//   selects a healthy pod allows no disruption now. Evicting a pod that is not healthy is allowed.
//
// Nothing runs by itself: `tick()` brings everything up to date with the clock, and by default it also
// runs before each request the fake server serves (after any controller attached earlier, e.g.
// fakeKarpenter.ts), so code that polls the API sees the cluster move as its clock moves. A tick whose
// clock and store are unchanged since the last one does nothing. Writes go to the store directly (not
// through HTTP): the server's request log stays what the code under test sent. Deterministic: names and
// uids come from counters, and every list is walked in a fixed order.
import { createHash } from 'node:crypto';
import type { FakeKubeApi } from './fakeKubeApi.ts';

type Json = Record<string, unknown>;

/** The slot of a workload pod (its ordinal); the same across recreations of the pod. */
export const ORDINAL = 'fake.test/ordinal';

export interface ControlPlaneOptions {
  /** The test's clock, ms since the epoch. */
  readonly now: () => number;
  /** Run `tick()` before each request the server serves. Default true. */
  readonly tickOnRequest?: boolean;
  /** How long a bound pod takes to become Ready. Default 0. */
  readonly readyDelayMs?: number;
  /** Told before the pod garbage collector deletes a pod bound to a Node that no longer exists. */
  readonly onPodGc?: (pod: Json, nodeName: string) => void;
  /** Decide evictions by the PodDisruptionBudgets in the store (default true). */
  readonly enforcePdbs?: boolean;
}

export interface Binding {
  readonly pod: string;
  readonly node: string;
  readonly at: number;
}

export interface ControlPlane {
  /** Brings controllers, scheduler and PDB statuses up to date with the clock. */
  tick(): void;
  /** Every binding made, in order. */
  readonly bindings: readonly Binding[];
  /** Pods the workload controllers created (replacing evicted or deleted ones). */
  readonly recreated: readonly string[];
  /** Evictions the PDB check refused. */
  readonly refusedEvictions: number;
  /** Pods not bound, not terminating, not finished (namespace/name). */
  pending(): string[];
  /** Stops ticking before requests. */
  detach(): void;
}

export function attachControlPlane(api: FakeKubeApi, options: ControlPlaneOptions): ControlPlane {
  const store = api.store;
  const now = options.now;
  const readyDelayMs = options.readyDelayMs ?? 0;
  const bindings: Binding[] = [];
  const recreated: string[] = [];
  const boundAt = new Map<string, number>();
  let refused = 0;
  let uidSeq = 0;
  const nameSeq = new Map<string, number>();
  let lastTick: { at: number; version: string } | undefined;

  const detachHook = options.tickOnRequest === false ? () => undefined : api.beforeRequest(() => tick());
  if (options.enforcePdbs !== false) {
    api.setEvictionPolicy(({ namespace, name }) => {
      const pod = store.peek('Pod', namespace).find((p) => nameOf(p) === name);
      if (pod === undefined) return 'notFound';
      if (!healthy(pod)) return 'allow';
      for (const pdb of store.peek('PodDisruptionBudget', namespace)) {
        if (!selects(pdb, pod)) continue;
        if (budget(pdb).disruptionsAllowed <= 0) {
          refused += 1;
          return 'blockByPdb';
        }
      }
      return 'allow';
    });
  }

  const watched = ['Pod', 'Node', 'PodDisruptionBudget', 'ReplicaSet', 'StatefulSet', 'DaemonSet'];

  function tick(): void {
    const at = now();
    if (lastTick !== undefined && lastTick.at === at && lastTick.version === store.versionOf(...watched)) return;
    api.reapTerminatedPods();
    collectGarbage();
    runDaemonSets(at);
    runWorkloads(at);
    markReady(at);
    schedule(at);
    updateWorkloadStatus();
    updatePdbStatus();
    lastTick = { at, version: store.versionOf(...watched) };
  }

  // --- pod garbage collector ----------------------------------------------------------------------

  function collectGarbage(): void {
    const nodes = new Set(store.peek('Node').map(nameOf));
    for (const pod of store.peek('Pod')) {
      const nodeName = specOf(pod)['nodeName'];
      if (typeof nodeName !== 'string' || nodeName === '' || nodes.has(nodeName)) continue;
      options.onPodGc?.(pod, nodeName);
      store.delete('Pod', nameOf(pod), namespaceOf(pod));
    }
  }

  // --- DaemonSet controller -----------------------------------------------------------------------

  function runDaemonSets(at: number): void {
    const daemonSets = store.peek('DaemonSet');
    if (daemonSets.length === 0) return;
    const nodes = store.peek('Node').filter((n) => !isDeleting(n));
    const pods = store.peek('Pod').filter((p) => ownerOf(p)?.kind === 'DaemonSet');
    for (const ds of daemonSets) {
      const template = childOf(specOf(ds), 'template');
      for (const node of nodes) {
        if (pods.some((p) => ownerOf(p)?.name === nameOf(ds) && namespaceOf(p) === namespaceOf(ds) && specOf(p)['nodeName'] === nameOf(node))) continue;
        const name = `${nameOf(ds)}-${shortHash(nameOf(node))}`;
        if (store.get('Pod', name, namespaceOf(ds)) !== undefined) continue;
        store.put({
          kind: 'Pod',
          metadata: {
            name,
            namespace: namespaceOf(ds),
            uid: nextUid(name),
            creationTimestamp: iso(at),
            labels: { ...stringsOf(childOf(template, 'metadata')['labels']) },
            ownerReferences: [ownerReference('DaemonSet', ds)],
          },
          spec: { ...structuredClone(childOf(template, 'spec')), nodeName: nameOf(node) },
          status: { phase: 'Running', startTime: iso(at), conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(at) }] },
        });
      }
    }
  }

  // --- ReplicaSet and StatefulSet controllers -----------------------------------------------------

  function runWorkloads(at: number): void {
    const pods = store.peek('Pod');
    for (const kind of ['ReplicaSet', 'StatefulSet'] as const) {
      for (const workload of store.peek(kind)) {
        const replicas = numberOr(specOf(workload)['replicas'], 1);
        const owned = pods.filter((p) => ownedBy(p, kind, workload));
        for (let ordinal = 0; ordinal < replicas; ordinal += 1) {
          if (kind === 'StatefulSet') {
            // The same name: only once the previous incarnation is gone (Terminating included).
            const name = `${nameOf(workload)}-${ordinal}`;
            if (store.get('Pod', name, namespaceOf(workload)) === undefined) create(workload, kind, name, ordinal, at);
          } else if (!owned.some((p) => active(p) && ordinalOf(p) === ordinal)) {
            const seq = (nameSeq.get(nameOf(workload)) ?? 0) + 1;
            nameSeq.set(nameOf(workload), seq);
            create(workload, kind, `${nameOf(workload)}-r${seq.toString(36).padStart(4, '0')}`, ordinal, at);
          }
        }
      }
    }
  }

  function create(workload: Json, kind: string, name: string, ordinal: number, at: number): void {
    const template = childOf(specOf(workload), 'template');
    const key = `${namespaceOf(workload)}/${name}`;
    recreated.push(key);
    store.put({
      kind: 'Pod',
      metadata: {
        name,
        namespace: namespaceOf(workload),
        uid: nextUid(name),
        creationTimestamp: iso(at),
        labels: { ...stringsOf(childOf(template, 'metadata')['labels']) },
        annotations: { ...stringsOf(childOf(template, 'metadata')['annotations']), [ORDINAL]: String(ordinal) },
        ownerReferences: [ownerReference(kind, workload)],
      },
      spec: structuredClone(childOf(template, 'spec')),
      status: { phase: 'Pending', conditions: [] },
    });
  }

  function updateWorkloadStatus(): void {
    const pods = store.peek('Pod');
    for (const kind of ['ReplicaSet', 'StatefulSet'] as const) {
      for (const workload of store.peek(kind)) {
        const owned = pods.filter((p) => ownedBy(p, kind, workload) && active(p));
        const ready = owned.filter((p) => healthy(p)).length;
        const status = { replicas: owned.length, ...(ready === 0 ? {} : { readyReplicas: ready, availableReplicas: ready }), observedGeneration: 1 };
        if (JSON.stringify(workload['status'] ?? {}) === JSON.stringify(status)) continue;
        store.put({ ...workload, status });
      }
    }
  }

  // --- readiness and the scheduler -----------------------------------------------------------------

  function markReady(at: number): void {
    for (const pod of store.peek('Pod')) {
      if (ownerOf(pod)?.kind === 'DaemonSet' || isDeleting(pod) || typeof specOf(pod)['nodeName'] !== 'string') continue;
      if (condition(pod, 'Ready') === 'True') continue;
      const started = Date.parse(String(statusOf(pod)['startTime'] ?? ''));
      const since = boundAt.get(uidOf(pod)) ?? (Number.isNaN(started) ? at : started);
      if (at < since + readyDelayMs) continue;
      const next = structuredClone(pod);
      setCondition(next, 'Ready', 'True', at);
      store.put(next);
    }
  }

  function schedule(at: number): void {
    const pending = store
      .peek('Pod')
      .filter((p) => unbound(p))
      .sort(
        (a, b) =>
          numberOr(specOf(b)['priority'], 0) - numberOr(specOf(a)['priority'], 0) ||
          String(metadataOf(a)['creationTimestamp'] ?? '').localeCompare(String(metadataOf(b)['creationTimestamp'] ?? '')) ||
          `${namespaceOf(a)}/${nameOf(a)}`.localeCompare(`${namespaceOf(b)}/${nameOf(b)}`),
      );
    if (pending.length === 0) return;
    const nodes = store.peek('Node');
    for (const pod of pending) {
      const bound = store.peek('Pod').filter((p) => typeof specOf(p)['nodeName'] === 'string' && !finished(p));
      const choice = placeFor(pod, nodes, bound);
      const next = structuredClone(pod);
      if (choice === undefined) {
        if (condition(pod, 'PodScheduled') === 'False') continue;
        setCondition(next, 'PodScheduled', 'False', at, 'Unschedulable');
        store.put(next);
        continue;
      }
      writable(next, 'spec')['nodeName'] = choice;
      writable(next, 'status')['phase'] = 'Running';
      writable(next, 'status')['startTime'] = iso(at);
      setCondition(next, 'PodScheduled', 'True', at);
      setCondition(next, 'Ready', readyDelayMs === 0 ? 'True' : 'False', at);
      const stored = store.put(next);
      boundAt.set(uidOf(stored), at);
      bindings.push({ pod: `${namespaceOf(pod)}/${nameOf(pod)}`, node: choice, at });
    }
  }

  // --- PodDisruptionBudgets -------------------------------------------------------------------------

  function budget(pdb: Json): { currentHealthy: number; desiredHealthy: number; disruptionsAllowed: number; expectedPods: number } {
    const selected = store.peek('Pod', namespaceOf(pdb)).filter((p) => active(p) && selects(pdb, p));
    const currentHealthy = selected.filter(healthy).length;
    const spec = specOf(pdb);
    let expectedPods = selected.length;
    let desiredHealthy: number;
    if (spec['maxUnavailable'] !== undefined) {
      // The scale of the controllers of the selected pods (the disruption controller's expected count).
      const owners = new Map<string, number>();
      for (const pod of store.peek('Pod', namespaceOf(pdb)).filter((p) => selects(pdb, p))) {
        const owner = ownerOf(pod);
        if (owner === undefined || (owner.kind !== 'ReplicaSet' && owner.kind !== 'StatefulSet')) continue;
        const workload = store.peek(owner.kind, namespaceOf(pdb)).find((w) => nameOf(w) === owner.name);
        if (workload !== undefined) owners.set(`${owner.kind}/${owner.name}`, numberOr(specOf(workload)['replicas'], 1));
      }
      if (owners.size > 0) expectedPods = [...owners.values()].reduce((a, b) => a + b, 0);
      desiredHealthy = Math.max(0, expectedPods - resolve(spec['maxUnavailable'], expectedPods));
    } else {
      desiredHealthy = resolve(spec['minAvailable'] ?? 1, expectedPods);
    }
    return { currentHealthy, desiredHealthy, disruptionsAllowed: Math.max(0, currentHealthy - desiredHealthy), expectedPods };
  }

  function updatePdbStatus(): void {
    for (const pdb of store.peek('PodDisruptionBudget')) {
      const status = { ...budget(pdb), observedGeneration: 1 };
      const before = pdb['status'] as Json | undefined;
      if (before !== undefined && Object.entries(status).every(([k, v]) => before[k] === v)) continue;
      store.put({ ...pdb, status });
    }
  }

  function nextUid(name: string): string {
    uidSeq += 1;
    return `uid-cp-${uidSeq}-${name}`;
  }

  return {
    tick,
    bindings,
    recreated,
    get refusedEvictions() {
      return refused;
    },
    pending: () => store.peek('Pod').filter(unbound).map((p) => `${namespaceOf(p)}/${nameOf(p)}`),
    detach: detachHook,
  };
}

// ---------------------------------------------------------------------------------------------------
// The scheduler's filters and score, exported for tests of the fake itself.

export interface Placement {
  readonly node: string;
  readonly score: number;
}

/** Where kube-scheduler's default filters and LeastAllocated put `pod`, or undefined (it stays Pending). */
export function placeFor(pod: Json, nodes: readonly Json[], boundPods: readonly Json[]): string | undefined {
  return rankNodes(pod, nodes, boundPods)[0]?.node;
}

/** The feasible nodes, best first (score descending in kube-scheduler's whole points, ties drawn). */
export function rankNodes(pod: Json, nodes: readonly Json[], boundPods: readonly Json[]): Placement[] {
  const wanted = podRequests(pod);
  const out: Placement[] = [];
  for (const node of nodes) {
    if (!feasible(pod, node)) continue;
    const allocatable = resourcesOf(statusOf(node)['allocatable']);
    const here = boundPods.filter((p) => specOf(p)['nodeName'] === nameOf(node));
    const used = { cpu: 0, memory: 0 };
    for (const p of here) {
      const r = podRequests(p);
      used.cpu += r.cpu;
      used.memory += r.memory;
    }
    if (used.cpu + wanted.cpu > (allocatable['cpu'] ?? 0)) continue;
    if (used.memory + wanted.memory > (allocatable['memory'] ?? 0)) continue;
    if (here.length + 1 > (allocatable['pods'] ?? 110)) continue;
    // kube-scheduler's arithmetic: whole points per resource (cpu in millicores, memory in bytes), each
    // rounded down, their mean rounded down; a resource the node has none of is left out.
    const points: number[] = [];
    for (const [resource, unit] of [['cpu', 1000], ['memory', 1]] as const) {
      const total = Math.round((allocatable[resource] ?? 0) * unit);
      if (total <= 0) continue;
      const left = total - Math.round(used[resource] * unit) - Math.round(wanted[resource] * unit);
      points.push(Math.floor((left * 100) / total));
    }
    const score = points.length === 0 ? 0 : Math.floor(points.reduce((a, b) => a + b, 0) / points.length);
    out.push({ node: nameOf(node), score });
  }
  // Among nodes with the top score kube-scheduler picks one at random; here a hash of the pod and the
  // node stands in for the draw, so a run is the same every time and no tie goes by name.
  const podName = `${namespaceOf(pod)}/${nameOf(pod)}`;
  return out.sort((a, b) => b.score - a.score || tieDraw(podName, a.node) - tieDraw(podName, b.node) || a.node.localeCompare(b.node));
}

/** A pod's draw for a node among tied nodes (FNV-1a of both names). */
export function tieDraw(podName: string, nodeName: string): number {
  let h = 0x811c9dc5;
  for (const ch of `${podName}|${nodeName}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  return h >>> 0;
}

/** The filters other than resources: readiness, cordon, taints, nodeSelector, required node affinity. */
export function feasible(pod: Json, node: Json): boolean {
  if (isDeleting(node) || condition(node, 'Ready') !== 'True') return false;
  const tolerations = arrayOf(specOf(pod)['tolerations']);
  if (specOf(node)['unschedulable'] === true && !tolerates(tolerations, { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' })) return false;
  for (const taint of arrayOf(specOf(node)['taints'])) {
    if (taint['effect'] !== 'NoSchedule' && taint['effect'] !== 'NoExecute') continue;
    if (!tolerates(tolerations, taint)) return false;
  }
  const labels = stringsOf(metadataOf(node)['labels']);
  for (const [key, value] of Object.entries(stringsOf(specOf(pod)['nodeSelector']))) if (labels[key] !== value) return false;
  const required = childOf(childOf(childOf(specOf(pod), 'affinity'), 'nodeAffinity'), 'requiredDuringSchedulingIgnoredDuringExecution');
  const terms = arrayOf(required['nodeSelectorTerms']);
  if (terms.length > 0 && !terms.some((term) => arrayOf(term['matchExpressions']).every((e) => matchesExpression(e, labels)))) return false;
  return true;
}

function matchesExpression(expression: Json, labels: Record<string, string>): boolean {
  const key = String(expression['key']);
  const values = Array.isArray(expression['values']) ? expression['values'].map(String) : [];
  const value = labels[key];
  switch (expression['operator']) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
      return value !== undefined && Number(value) > Number(values[0]);
    case 'Lt':
      return value !== undefined && Number(value) < Number(values[0]);
    default:
      return false;
  }
}

function tolerates(tolerations: readonly Json[], taint: Json): boolean {
  return tolerations.some((t) => {
    const effect = t['effect'] ?? '';
    if (effect !== '' && effect !== taint['effect']) return false;
    const key = t['key'] ?? '';
    if (t['operator'] === 'Exists') return key === '' || key === taint['key'];
    return key === taint['key'] && (t['value'] ?? '') === (taint['value'] ?? '');
  });
}

/** A pod's requests: the sum over its containers, or the largest init container's when larger. */
export function podRequests(pod: Json): { cpu: number; memory: number } {
  const sum = { cpu: 0, memory: 0 };
  for (const container of arrayOf(specOf(pod)['containers'])) {
    const r = resourcesOf(childOf(childOf(container, 'resources'), 'requests'));
    sum.cpu += r['cpu'] ?? 0;
    sum.memory += r['memory'] ?? 0;
  }
  for (const container of arrayOf(specOf(pod)['initContainers'])) {
    const r = resourcesOf(childOf(childOf(container, 'resources'), 'requests'));
    sum.cpu = Math.max(sum.cpu, r['cpu'] ?? 0);
    sum.memory = Math.max(sum.memory, r['memory'] ?? 0);
  }
  return sum;
}

/** cpu in millicores, everything else in base units (bytes, a count). */
function resourcesOf(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, raw] of Object.entries(stringsOf(value, true))) out[key] = key === 'cpu' ? quantity(raw) * 1000 : quantity(raw);
  return out;
}

const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12,
  Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4,
};

/** A Kubernetes quantity (`100m`, `1.5`, `128Mi`, `2e3`) as a number. */
export function quantity(text: string): number {
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?\d+)?)(n|u|m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(text.trim());
  if (m === null) throw new Error(`fakeScheduler: unreadable quantity ${text}`);
  return Number(m[1]) * (SUFFIX[m[2] ?? ''] ?? 1);
}

// ---------------------------------------------------------------------------------------------------
// Pods and PDBs

/** Not terminating and not finished: what a controller counts as one of its replicas. */
function active(pod: Json): boolean {
  return !isDeleting(pod) && !finished(pod);
}

function finished(pod: Json): boolean {
  const phase = statusOf(pod)['phase'];
  return phase === 'Succeeded' || phase === 'Failed';
}

function unbound(pod: Json): boolean {
  const nodeName = specOf(pod)['nodeName'];
  return (typeof nodeName !== 'string' || nodeName === '') && active(pod);
}

/** Bound, Running, Ready and not terminating: what a PodDisruptionBudget counts as healthy. */
function healthy(pod: Json): boolean {
  return active(pod) && typeof specOf(pod)['nodeName'] === 'string' && statusOf(pod)['phase'] === 'Running' && condition(pod, 'Ready') === 'True';
}

function selects(pdb: Json, pod: Json): boolean {
  if (namespaceOf(pdb) !== namespaceOf(pod)) return false;
  const selector = childOf(specOf(pdb), 'selector');
  const labels = stringsOf(metadataOf(pod)['labels']);
  for (const [k, v] of Object.entries(stringsOf(selector['matchLabels']))) if (labels[k] !== v) return false;
  return arrayOf(selector['matchExpressions']).every((e) => matchesExpression(e, labels));
}

/** An int-or-percent of `total` (percentages round up, as the disruption controller does). */
function resolve(value: unknown, total: number): number {
  if (typeof value === 'number') return value;
  const percent = /^(\d+)%$/.exec(String(value));
  return percent === null ? Number(value) : Math.ceil((Number(percent[1]) * total) / 100);
}

function ownerOf(object: Json): { kind: string; name: string } | undefined {
  const owner = arrayOf(metadataOf(object)['ownerReferences']).find((o) => o['controller'] === true) ?? arrayOf(metadataOf(object)['ownerReferences'])[0];
  return owner === undefined ? undefined : { kind: String(owner['kind']), name: String(owner['name']) };
}

function ownedBy(pod: Json, kind: string, workload: Json): boolean {
  const owner = ownerOf(pod);
  return owner?.kind === kind && owner.name === nameOf(workload) && namespaceOf(pod) === namespaceOf(workload);
}

function ordinalOf(pod: Json): number {
  return numberOr(Number(stringsOf(metadataOf(pod)['annotations'])[ORDINAL]), -1);
}

function ownerReference(kind: string, owner: Json): Json {
  return { apiVersion: 'apps/v1', kind, name: nameOf(owner), uid: metadataOf(owner)['uid'], controller: true, blockOwnerDeletion: true };
}

function condition(object: Json, type: string): string | undefined {
  return arrayOf(statusOf(object)['conditions']).find((c) => c['type'] === type)?.['status'] as string | undefined;
}

function setCondition(object: Json, type: string, status: string, at: number, reason?: string): void {
  const holder = writable(object, 'status');
  const conditions = arrayOf(holder['conditions']).filter((c) => c['type'] !== type);
  conditions.push({ type, status, lastTransitionTime: iso(at), ...(reason === undefined ? {} : { reason }) });
  holder['conditions'] = conditions;
}

// ---------------------------------------------------------------------------------------------------
// JSON helpers

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object at `key` (an empty one, not attached, when missing): for reading. */
function childOf(object: Json, key: string): Json {
  const value = object[key];
  return isJson(value) ? value : {};
}

/** The object at `key`, created and attached when missing: for writing. */
function writable(object: Json, key: string): Json {
  const value = object[key];
  if (isJson(value)) return value;
  const created: Json = {};
  object[key] = created;
  return created;
}

const metadataOf = (o: Json): Json => childOf(o, 'metadata');
const specOf = (o: Json): Json => childOf(o, 'spec');
const statusOf = (o: Json): Json => childOf(o, 'status');
const nameOf = (o: Json): string => String(metadataOf(o)['name']);
const namespaceOf = (o: Json): string => String(metadataOf(o)['namespace'] ?? 'default');
const uidOf = (o: Json): string => String(metadataOf(o)['uid']);

function arrayOf(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isJson) : [];
}

function stringsOf(value: unknown, numbersToo = false): Record<string, string> {
  if (!isJson(value)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'string') out[k] = v;
    else if (numbersToo && typeof v === 'number') out[k] = String(v);
  }
  return out;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

function isDeleting(o: Json): boolean {
  return typeof metadataOf(o)['deletionTimestamp'] === 'string';
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 5);
}
