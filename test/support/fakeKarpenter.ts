// A stand-in for Karpenter's NodeClaim controllers, acting on the fake API server's store so that a test
// of code that drives Karpenter through `karpenter.sh/v1` NodeClaims meets what a cluster with Karpenter
// would do. It is modelled on Karpenter's own controllers, not on what our product expects:
//
// - nodeclaim.lifecycle: puts the `karpenter.sh/termination` finalizer on every NodeClaim, then moves it
//   through Launched (the "cloud provider" picks an instance from the claim's requirements, or fails with
//   insufficient capacity, after which Karpenter deletes the claim), Registered (the kubelet's Node
//   appears; Karpenter syncs the claim's labels, annotations, taints and startup taints onto it and owns
//   it through an owner reference and its finalizer) and Initialized (startup taints gone, the node
//   labelled initialized). Its liveness check deletes a claim whose node has not registered 15 minutes
//   after creation.
// - node.termination and the nodeclaim.lifecycle finalizer: a deleted NodeClaim gets its Node deleted;
//   the Node is tainted `karpenter.sh/disrupted:NoSchedule`, its pods are evicted through the Eviction
//   API tier by tier (so a PodDisruptionBudget holds the drain, retried on the next reconcile), pods are
//   deleted outright once the claim's terminationGracePeriod runs out, then the instance is terminated,
//   the Node's finalizer removed (the Node goes) and the claim's finalizer removed (the claim goes). A
//   Node deleted by someone else takes its NodeClaim with it the same way.
// - disruption: each loop strips `karpenter.sh/disrupted:NoSchedule` from nodes Karpenter is not itself
//   disrupting (a leftover, for Karpenter, of a disruption that did not finish).
//
// Time comes from the test's clock (`now`). Nothing runs by itself: `reconcile()` moves every claim as
// far as the clock allows, and by default it also runs before each request the fake server serves, so
// code that polls the API sees progress as its clock moves. The stand-in writes to the store directly,
// not through HTTP, so its writes are not in the server's request log: `mutatingRequests()` stays what
// the code under test sent.
//
// Left out, on purpose: NodePool status (resource counters, readiness), the `karpenter.sh/unregistered`
// taint, volume detachment, the minimum drain time, launch timeouts other than insufficient capacity,
// drift/expiry/consolidation, and DaemonSet pods in a drain (Karpenter evicts those that do not tolerate
// the disrupted taint last; here they stay, as test fixtures rarely give them the tolerations real
// DaemonSet pods carry).
import { randomBytes } from 'node:crypto';
import { KarpenterTerminationFinalizer } from './fakeKubeApi.ts';
import type { FakeKubeApi, FakeStore } from './fakeKubeApi.ts';

type Json = Record<string, unknown>;

/** A Kubernetes taint as JSON. */
export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: string;
  readonly timeAdded?: string;
}

/** How long each lifecycle step takes, in ms of the test's clock. All default to 0. */
export interface KarpenterDelays {
  /** From creation to Launched (the instance exists). */
  readonly launchDelayMs?: number;
  /** From Launched to Registered (the Node appears). */
  readonly registerDelayMs?: number;
  /** From Registered to Initialized (startup taints gone). */
  readonly initializeDelayMs?: number;
}

/** What the "cloud provider" launched for a claim. */
export interface LaunchChoice {
  readonly instanceType: string;
  readonly zone: string;
  readonly capacityType: string;
  readonly arch: string;
  readonly capacity: Readonly<Record<string, string>>;
  readonly allocatable: Readonly<Record<string, string>>;
}

/** How the registered Node differs from what the claim asked for (a launch that does not match). */
export interface NodeOverrides {
  /** The Node's name. Default `ip-10-x-y-z.ec2.internal`. */
  readonly name?: string;
  /** Labels set on the Node after Karpenter's sync; `null` removes one. */
  readonly labels?: Readonly<Record<string, string | null>>;
  /** Replaces these allocatable / capacity entries. */
  readonly allocatable?: Readonly<Record<string, string>>;
  readonly capacity?: Readonly<Record<string, string>>;
  /** Extra taints the Node registers with. */
  readonly taints?: readonly Taint[];
}

type PerClaim<T> = T | ((claim: Json) => T);

export interface FakeKarpenterOptions {
  /** The test's clock, ms since the epoch. It also becomes the API server's clock. */
  readonly now: () => number;
  readonly launchDelayMs?: PerClaim<number>;
  readonly registerDelayMs?: PerClaim<number>;
  readonly initializeDelayMs?: PerClaim<number>;
  /** A claim whose Node has not registered this long after creation is deleted. Default 15 min. */
  readonly registrationTimeoutMs?: number;
  /** Overrides (parts of) the launch; default: the first `In` value of each requirement. */
  readonly launchChoice?: (claim: Json) => Partial<LaunchChoice>;
  /** The launch fails with insufficient capacity: Karpenter deletes the claim. */
  readonly insufficientCapacity?: (claim: Json) => boolean;
  /** The instance never joins the cluster: the claim is deleted after the registration timeout. */
  readonly neverRegister?: (claim: Json) => boolean;
  /** Makes the registered Node differ from the claim. */
  readonly nodeOverrides?: (claim: Json) => NodeOverrides | undefined;
  /** Strip `karpenter.sh/disrupted` from nodes whose claim is not being deleted. Default true. */
  readonly stripDisruptedTaint?: boolean;
  /** Reconcile before each request the server serves. Default true. */
  readonly reconcileOnRequest?: boolean;
}

export interface FakeKarpenter {
  /** Moves every NodeClaim as far as the clock allows. */
  reconcile(): void;
  /** The NodeClaims now in the store. */
  claims(): Json[];
  /** Every instance id launched, in order. */
  readonly launchedInstances: readonly string[];
  /** Every instance id terminated, in order. */
  readonly terminatedInstances: readonly string[];
  /** Claims not being deleted whose registered Node is gone (as things stand, without reconciling). */
  leakedClaims(): Json[];
  /** Delays for the claims matching `match` (a name or a predicate); later calls win. */
  setDelays(match: string | ((claim: Json) => boolean), delays: KarpenterDelays): void;
  /** Stops reconciling before requests. */
  detach(): void;
}

const FINALIZER = KarpenterTerminationFinalizer;
const DISRUPTED: Taint = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' };
const TERMINATION_TIME = 'karpenter.sh/nodeclaim-termination-timestamp';
const DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';
const LABEL = {
  nodePool: 'karpenter.sh/nodepool',
  registered: 'karpenter.sh/registered',
  initialized: 'karpenter.sh/initialized',
  capacityType: 'karpenter.sh/capacity-type',
  instanceType: 'node.kubernetes.io/instance-type',
  zone: 'topology.kubernetes.io/zone',
  region: 'topology.kubernetes.io/region',
  arch: 'kubernetes.io/arch',
  os: 'kubernetes.io/os',
  hostname: 'kubernetes.io/hostname',
  excludeBalancers: 'node.kubernetes.io/exclude-from-external-load-balancers',
} as const;
/** Pod priority classes the termination controller drains after the others. */
const CRITICAL = new Set(['system-cluster-critical', 'system-node-critical']);

interface Timeline {
  created: number;
  launched?: number;
  registered?: number;
}

export function attachKarpenter(api: FakeKubeApi, options: FakeKarpenterOptions): FakeKarpenter {
  const store = api.store;
  const now = options.now;
  const registrationTimeoutMs = options.registrationTimeoutMs ?? 15 * 60_000;
  const timelines = new Map<string, Timeline>();
  const launched: string[] = [];
  const terminated: string[] = [];
  const delayRules: { match: (claim: Json) => boolean; delays: KarpenterDelays }[] = [];
  const nodeNames = new Set<string>();
  const nodes = nodeIndex(store);

  api.installKarpenterCrds();
  api.setClock(now);
  const detach = options.reconcileOnRequest === false ? () => undefined : api.beforeRequest(() => reconcile());

  function reconcile(): void {
    const claims = store.list('NodeClaim');
    if (claims.length === 0) return;
    const at = now();
    for (const claim of claims) reconcileClaim(claim, at);
    if (options.stripDisruptedTaint !== false) stripDisruptedTaints();
  }

  function reconcileClaim(claim: Json, at: number): void {
    if (isDeleting(claim)) return finalize(claim, at);
    const adopted = adopt(claim, at);
    if (nodeLost(adopted)) return deleteClaim(adopted, at);
    const afterLaunch = launch(adopted, at);
    if (afterLaunch === undefined) return;
    const afterRegistration = register(afterLaunch, at);
    if (afterRegistration === undefined) return;
    initialize(afterRegistration, at);
  }

  // --- lifecycle: finalizer, launch, registration, initialization, liveness ---------------------------

  /**
   * Karpenter adds its finalizer before anything else, so that no instance can leak. A claim without
   * conditions starts Unknown, except that one seeded with a providerID (a test's running node) is
   * read from what it has: launched, registered when its Node is there, initialized when so labelled.
   */
  function adopt(claim: Json, at: number): Json {
    const next = structuredClone(claim);
    const meta = metadataOf(next);
    if (!finalizersOf(next).includes(FINALIZER)) meta['finalizers'] = [...finalizersOf(next), FINALIZER];
    const node = nodes.byProvider(providerIdOf(claim));
    const seeded: Record<string, boolean> = {
      Launched: providerIdOf(claim) !== undefined,
      Registered: node !== undefined,
      Initialized: node !== undefined && labelsOf(node)[LABEL.initialized] === 'true',
    };
    if (node !== undefined && statusOf(claim)['nodeName'] === undefined && conditionOf(claim, 'Registered') === undefined) {
      statusOf(next)['nodeName'] = nameOf(node);
    }
    const created = createdAt(claim, at);
    for (const type of ['Launched', 'Registered', 'Initialized', 'Ready']) {
      if (conditionOf(next, type) !== undefined) continue;
      if (seeded[type] === true) setCondition(next, type, 'True', type, '', created);
      else setCondition(next, type, 'Unknown', 'AwaitingReconciliation', 'object is awaiting reconciliation', at);
    }
    const uid = String(meta['uid']);
    if (!timelines.has(uid)) timelines.set(uid, { created });
    return write(claim, next);
  }

  function launch(claim: Json, at: number): Json | undefined {
    if (conditionOf(claim, 'Launched')?.['status'] !== 'Unknown') return claim;
    const timeline = timelineOf(claim, at);
    const due = timeline.created + delay('launchDelayMs', claim);
    if (at < due) return claim;
    if (options.insufficientCapacity?.(claim) === true) {
      // The launch controller records a warning event and deletes the claim; the provisioner retries.
      recordEvent(claim, 'InsufficientCapacityError', `NodeClaim ${nameOf(claim)} event: all requested instance types were unavailable during launch`);
      deleteClaim(claim, at);
      return undefined;
    }
    const choice = chooseLaunch(claim);
    const instanceId = `i-${randomBytes(9).toString('hex').slice(0, 17)}`;
    launched.push(instanceId);
    timeline.launched = due;
    const next = structuredClone(claim);
    // The cloud provider's labels first; the claim's own labels win, as in the launch controller.
    metadataOf(next)['labels'] = { ...launchLabels(choice), ...labelsOf(claim) };
    const status = statusOf(next);
    status['providerID'] = `aws:///${choice.zone}/${instanceId}`;
    status['imageID'] = 'ami-0fake0000000000000';
    status['capacity'] = { ...choice.capacity };
    status['allocatable'] = { ...choice.allocatable };
    setCondition(next, 'Launched', 'True', 'Launched', '', due);
    setCondition(next, 'Registered', 'Unknown', 'NodeNotFound', 'Node not registered with cluster', due);
    return write(claim, next);
  }

  function register(claim: Json, at: number): Json | undefined {
    if (conditionOf(claim, 'Launched')?.['status'] !== 'True' || conditionOf(claim, 'Registered')?.['status'] === 'True') return claim;
    const timeline = timelineOf(claim, at);
    const launchedAt = timeline.launched ?? conditionTime(claim, 'Launched') ?? timeline.created;
    const due = launchedAt + delay('registerDelayMs', claim);
    const timeoutAt = timeline.created + registrationTimeoutMs;
    const joins = options.neverRegister?.(claim) !== true && due <= timeoutAt;
    if (joins && at >= due) return registerNode(claim, due);
    // The liveness check: a node that never joined is given up and its claim deleted.
    if (at >= timeoutAt) {
      deleteClaim(claim, at);
      return undefined;
    }
    return claim;
  }

  function registerNode(claim: Json, at: number): Json {
    const node = nodeForRegistration(claim, at);
    store.put(node);
    timelineOf(claim, at).registered = at;
    const next = structuredClone(claim);
    statusOf(next)['nodeName'] = nameOf(node);
    setCondition(next, 'Registered', 'True', 'Registered', '', at);
    setCondition(next, 'Initialized', 'Unknown', 'NotInitialized', 'Node not initialized', at);
    return write(claim, next);
  }

  function initialize(claim: Json, at: number): void {
    if (conditionOf(claim, 'Registered')?.['status'] !== 'True' || conditionOf(claim, 'Initialized')?.['status'] === 'True') return;
    const timeline = timelineOf(claim, at);
    const registeredAt = timeline.registered ?? conditionTime(claim, 'Registered') ?? timeline.created;
    const due = registeredAt + delay('initializeDelayMs', claim);
    const node = nodes.byProvider(providerIdOf(claim));
    if (at < due || node === undefined) return;
    // Whatever removes startup taints (a CNI agent, say) has done so; Karpenter then labels the node.
    const startup = taintsAt(claim, 'startupTaints');
    const nextNode = structuredClone(node);
    specOf(nextNode)['taints'] = taintsOf(node).filter((t) => !startup.some((s) => sameTaint(s, t)));
    metadataOf(nextNode)['labels'] = { ...labelsOf(node), [LABEL.initialized]: 'true' };
    write(node, nextNode);
    const next = structuredClone(claim);
    setCondition(next, 'Initialized', 'True', 'Initialized', '', due);
    write(claim, next);
  }

  /** A registered claim whose Node is gone or being deleted goes too (liveness / node termination). */
  function nodeLost(claim: Json): boolean {
    if (conditionOf(claim, 'Registered')?.['status'] !== 'True') return false;
    const node = nodes.byProvider(providerIdOf(claim));
    return node === undefined || isDeleting(node);
  }

  function deleteClaim(claim: Json, at: number): void {
    const result = store.deleteGracefully('NodeClaim', nameOf(claim), undefined, iso(at));
    if (result !== undefined && !result.removed) finalize(result.object, at);
  }

  // --- termination: drain, terminate the instance, release the finalizers -----------------------------

  function finalize(claim: Json, at: number): void {
    if (!finalizersOf(claim).includes(FINALIZER)) return;
    const annotated = annotateTerminationTime(claim);
    const node = nodes.byProvider(providerIdOf(annotated));
    if (node !== undefined && !terminateNode(node, annotated, at)) return;
    terminateInstance(annotated);
    store.removeFinalizer('NodeClaim', nameOf(annotated), undefined, FINALIZER);
  }

  /** Karpenter records when a claim's terminationGracePeriod runs out, counted from its deletion. */
  function annotateTerminationTime(claim: Json): Json {
    const grace = specOf(claim)['terminationGracePeriod'];
    const deletedAt = Date.parse(String(metadataOf(claim)['deletionTimestamp']));
    if (typeof grace !== 'string' || annotationsOf(claim)[TERMINATION_TIME] !== undefined || Number.isNaN(deletedAt)) return claim;
    const next = structuredClone(claim);
    metadataOf(next)['annotations'] = { ...annotationsOf(claim), [TERMINATION_TIME]: iso(deletedAt + parseDuration(grace)) };
    return write(claim, next);
  }

  /** Returns true once the Node is gone. */
  function terminateNode(node: Json, claim: Json, at: number): boolean {
    const deleting = markNodeDeleting(node, at);
    const tainted = taintDisrupted(deleting);
    if (!drain(tainted, claim, at)) return false;
    terminateInstance(claim);
    return store.removeFinalizer('Node', nameOf(tainted), undefined, FINALIZER) === undefined;
  }

  /** The claim's finalizer deletes its Node; registration gave the Node Karpenter's finalizer, so it waits. */
  function markNodeDeleting(node: Json, at: number): Json {
    if (isDeleting(node)) return node;
    let current = node;
    if (!finalizersOf(node).includes(FINALIZER)) {
      // A node seeded by a test may lack the finalizer; without it the delete would skip the drain.
      const next = structuredClone(node);
      metadataOf(next)['finalizers'] = [...finalizersOf(node), FINALIZER];
      current = write(node, next);
    }
    return store.deleteGracefully('Node', nameOf(current), undefined, iso(at))?.object ?? current;
  }

  function taintDisrupted(node: Json): Json {
    const next = structuredClone(node);
    if (!taintsOf(node).some((t) => sameTaint(t, DISRUPTED))) {
      specOf(next)['taints'] = [...taintsOf(node).filter((t) => t.key !== DISRUPTED.key), { ...DISRUPTED }];
    }
    // The termination controller also takes the node out of load balancers while it drains.
    metadataOf(next)['labels'] = { ...labelsOf(node), [LABEL.excludeBalancers]: 'karpenter' };
    return write(node, next);
  }

  /** Evicts what the termination controller waits for; true when nothing is left to wait for. */
  function drain(node: Json, claim: Json, at: number): boolean {
    const deadline = terminationTime(claim);
    const waiting = (): Json[] => podsOn(nameOf(node)).filter((p) => awaitsEviction(p, at));
    // Past the claim's terminationGracePeriod (less the pod's own grace period) a pod is deleted outright.
    for (const pod of waiting().filter((p) => needsForceDelete(p, deadline, at))) deletePod(pod, at);
    for (const tier of drainTiers(waiting())) {
      for (const pod of tier.filter((p) => !isDeleting(p) && !doNotDisrupt(p, at))) {
        const meta = metadataOf(pod);
        api.evictPod(String(meta['namespace']), String(meta['name']), String(meta['uid']));
      }
      if (tier.some((p) => store.get('Pod', nameOf(p), String(metadataOf(p)['namespace'])) !== undefined)) break;
    }
    return waiting().length === 0;
  }

  function deletePod(pod: Json, at: number): void {
    store.deleteGracefully('Pod', nameOf(pod), String(metadataOf(pod)['namespace']), iso(at));
  }

  function terminateInstance(claim: Json): void {
    const id = providerIdOf(claim)?.split('/').pop();
    if (id !== undefined && id !== '' && !terminated.includes(id)) terminated.push(id);
  }

  // --- disruption: leftover taints ---------------------------------------------------------------------

  function stripDisruptedTaints(): void {
    for (const claim of store.list('NodeClaim')) {
      if (isDeleting(claim)) continue;
      const node = nodes.byProvider(providerIdOf(claim));
      if (node === undefined || isDeleting(node) || !taintsOf(node).some((t) => sameTaint(t, DISRUPTED))) continue;
      const next = structuredClone(node);
      specOf(next)['taints'] = taintsOf(node).filter((t) => !sameTaint(t, DISRUPTED));
      write(node, next);
    }
  }

  // --- helpers that need the controller's state ---------------------------------------------------------

  function nodeForRegistration(claim: Json, at: number): Json {
    const overrides = options.nodeOverrides?.(claim) ?? {};
    const name = overrides.name ?? freshNodeName();
    if (store.get('Node', name) !== undefined) throw new Error(`fakeKarpenter: a Node named ${name} already exists`);
    nodeNames.add(name);
    const labels: Record<string, string | null> = {
      ...stringsOf(labelsOf(claim)),
      [LABEL.nodePool]: nodePoolOf(claim),
      [LABEL.registered]: 'true',
      [LABEL.hostname]: name,
      ...overrides.labels,
    };
    const status = statusOf(claim);
    return {
      kind: 'Node',
      metadata: {
        name,
        creationTimestamp: iso(at),
        labels: Object.fromEntries(Object.entries(labels).filter((e): e is [string, string] => e[1] !== null)),
        annotations: { ...annotationsOf(claim) },
        finalizers: [FINALIZER],
        ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: nameOf(claim), uid: metadataOf(claim)['uid'], blockOwnerDeletion: true }],
      },
      spec: {
        providerID: providerIdOf(claim),
        taints: mergeTaints([...taintsAt(claim, 'taints'), ...taintsAt(claim, 'startupTaints'), ...(overrides.taints ?? [])]),
      },
      status: {
        capacity: { ...stringsOf(status['capacity']), ...overrides.capacity },
        allocatable: { ...stringsOf(status['allocatable']), ...overrides.allocatable },
        addresses: [
          { type: 'InternalIP', address: name.replace(/^ip-/, '').replace(/\..*$/, '').replace(/-/g, '.') },
          { type: 'InternalDNS', address: name },
        ],
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: iso(at), lastTransitionTime: iso(at) }],
      },
    };
  }

  function freshNodeName(): string {
    for (;;) {
      const [a = 0, b = 0, c = 0] = randomBytes(3);
      const name = `ip-10-${a}-${b}-${(c % 254) + 1}.ec2.internal`;
      if (!nodeNames.has(name) && store.get('Node', name) === undefined) return name;
    }
  }

  function chooseLaunch(claim: Json): LaunchChoice {
    const instanceType = firstAllowed(claim, LABEL.instanceType) ?? 'm5.large';
    const shape = instanceShape(instanceType);
    return {
      instanceType,
      zone: firstAllowed(claim, LABEL.zone) ?? 'us-east-1a',
      capacityType: firstAllowed(claim, LABEL.capacityType) ?? 'on-demand',
      arch: firstAllowed(claim, LABEL.arch) ?? 'amd64',
      ...shape,
      ...options.launchChoice?.(claim),
    };
  }

  function delay(key: keyof KarpenterDelays, claim: Json): number {
    for (let i = delayRules.length - 1; i >= 0; i -= 1) {
      const rule = delayRules[i];
      const value = rule?.delays[key];
      if (rule !== undefined && value !== undefined && rule.match(claim)) return value;
    }
    const option = options[key];
    return typeof option === 'function' ? option(claim) : option ?? 0;
  }

  function timelineOf(claim: Json, at: number): Timeline {
    const uid = String(metadataOf(claim)['uid']);
    let timeline = timelines.get(uid);
    if (timeline === undefined) {
      timeline = { created: createdAt(claim, at) };
      timelines.set(uid, timeline);
    }
    return timeline;
  }

  function podsOn(nodeName: string): Json[] {
    return store.list('Pod').filter((p) => specOf(p)['nodeName'] === nodeName);
  }

  function recordEvent(claim: Json, reason: string, message: string): void {
    store.put({
      kind: 'Event',
      metadata: { name: `${nameOf(claim)}.${randomBytes(8).toString('hex')}`, namespace: 'default', creationTimestamp: iso(now()) },
      involvedObject: { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: nameOf(claim), uid: metadataOf(claim)['uid'] },
      reason,
      message,
      type: 'Warning',
      source: { component: 'karpenter' },
      firstTimestamp: iso(now()),
      lastTimestamp: iso(now()),
      count: 1,
    });
  }

  /** Writes `next` when it differs from `before` (no needless resourceVersion bump); returns what is stored. */
  function write(before: Json, next: Json): Json {
    return deepEqual(before, next) ? before : store.put(next);
  }

  return {
    reconcile,
    claims: () => store.list('NodeClaim'),
    launchedInstances: launched,
    terminatedInstances: terminated,
    leakedClaims: () =>
      store.list('NodeClaim').filter((c) => !isDeleting(c) && conditionOf(c, 'Registered')?.['status'] === 'True' && nodes.byProvider(providerIdOf(c)) === undefined),
    setDelays: (match, delays) => {
      delayRules.push({ match: typeof match === 'string' ? (c) => nameOf(c) === match : match, delays });
    },
    detach,
  };
}

// ---------------------------------------------------------------------------------------------------
// Nodes by provider id: Karpenter ties a Node to its NodeClaim by providerID, not by name. The index is
// rebuilt only when the store changed, since reconcile runs before every request.

function nodeIndex(store: FakeStore): { byProvider(providerId: string | undefined): Json | undefined } {
  let version = '';
  let byProvider = new Map<string, Json>();
  return {
    byProvider(providerId) {
      if (providerId === undefined) return undefined;
      if (version !== store.resourceVersion) {
        byProvider = new Map(store.list('Node').map((n) => [String(specOf(n)['providerID']), n]));
        version = store.resourceVersion;
      }
      const node = byProvider.get(providerId);
      return node === undefined ? undefined : structuredClone(node);
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Pods in a drain, as the termination controller sees them

/** Pods the drain waits for: not finished, not mirror or DaemonSet pods, not tolerating the taint, not stuck. */
function awaitsEviction(pod: Json, at: number): boolean {
  const phase = statusOf(pod)['phase'];
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  if (ownedBy(pod, 'Node') || annotationsOf(pod)['kubernetes.io/config.mirror'] !== undefined || ownedBy(pod, 'DaemonSet')) return false;
  if (toleratesDisrupted(pod)) return false;
  // A pod still terminating a minute past its deletion time is left to the kubelet.
  const deletedAt = Date.parse(String(metadataOf(pod)['deletionTimestamp']));
  return Number.isNaN(deletedAt) || at - deletedAt <= 60_000;
}

/** Non-critical pods first, then critical ones (Kubernetes' graceful node shutdown order). */
function drainTiers(pods: Json[]): Json[][] {
  const critical = (p: Json): boolean => CRITICAL.has(String(specOf(p)['priorityClassName']));
  return [pods.filter((p) => !critical(p)), pods.filter(critical)].filter((tier) => tier.length > 0);
}

function needsForceDelete(pod: Json, deadline: number | undefined, at: number): boolean {
  if (deadline === undefined) return false;
  const deletedAt = Date.parse(String(metadataOf(pod)['deletionTimestamp']));
  if (!Number.isNaN(deletedAt)) return deletedAt > deadline;
  // The API server defaults a pod's terminationGracePeriodSeconds to 30.
  const grace = specOf(pod)['terminationGracePeriodSeconds'];
  return at > deadline - (typeof grace === 'number' ? grace : 30) * 1000;
}

/** `karpenter.sh/do-not-disrupt`: "true", or a duration counted from the pod's start. */
function doNotDisrupt(pod: Json, at: number): boolean {
  const value = annotationsOf(pod)[DO_NOT_DISRUPT];
  if (value === undefined) return false;
  if (value === 'true') return true;
  const duration = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(value) ? parseDuration(value) : 0;
  if (duration <= 0) return false;
  const started = Date.parse(String(statusOf(pod)['startTime']));
  return Number.isNaN(started) || at - started < duration;
}

function toleratesDisrupted(pod: Json): boolean {
  const tolerations = specOf(pod)['tolerations'];
  if (!Array.isArray(tolerations)) return false;
  return tolerations.some((raw) => {
    if (!isJson(raw)) return false;
    const effect = raw['effect'] ?? '';
    if (effect !== '' && effect !== DISRUPTED.effect) return false;
    const key = raw['key'] ?? '';
    if (raw['operator'] === 'Exists') return key === '' || key === DISRUPTED.key;
    return key === DISRUPTED.key && (raw['value'] ?? '') === '';
  });
}

function ownedBy(object: Json, kind: string): boolean {
  const owners = metadataOf(object)['ownerReferences'];
  return Array.isArray(owners) && owners.some((o) => isJson(o) && o['kind'] === kind);
}

// ---------------------------------------------------------------------------------------------------
// Launch: the "cloud provider"

function firstAllowed(claim: Json, key: string): string | undefined {
  const requirements = specOf(claim)['requirements'];
  if (!Array.isArray(requirements)) return undefined;
  for (const r of requirements) {
    if (isJson(r) && r['key'] === key && r['operator'] === 'In' && Array.isArray(r['values']) && typeof r['values'][0] === 'string') {
      return r['values'][0];
    }
  }
  return undefined;
}

function launchLabels(choice: LaunchChoice): Record<string, string> {
  return {
    [LABEL.instanceType]: choice.instanceType,
    [LABEL.zone]: choice.zone,
    [LABEL.region]: choice.zone.replace(/[a-z]$/, ''),
    [LABEL.capacityType]: choice.capacityType,
    [LABEL.arch]: choice.arch,
    [LABEL.os]: 'linux',
  };
}

/**
 * Roughly what EC2 and the EKS AMI report for a size: vCPUs from the size, memory per vCPU from the family
 * letter (c 2 GiB, m 4, r 8, x 16), max pods from the ENI limits, and allocatable after the AMI's
 * kube-reserved and eviction threshold. Tests that care pass `launchChoice`.
 */
function instanceShape(instanceType: string): Pick<LaunchChoice, 'capacity' | 'allocatable'> {
  const [family = 'm5', size = 'large'] = instanceType.split('.');
  const multiple = /^(\d*)xlarge$/.exec(size);
  const vcpus = multiple !== null ? 4 * Number(multiple[1] === '' ? 1 : multiple[1]) : 2;
  const perVcpuGiB = ({ c: 2, m: 4, r: 8, x: 16 } as Record<string, number>)[family[0] ?? 'm'] ?? 4;
  const pods = vcpus <= 2 ? 29 : vcpus <= 8 ? 58 : vcpus <= 48 ? 234 : 737;
  const memoryMi = Math.floor(vcpus * perVcpuGiB * 1024 * 0.96);
  const reservedCpuM = 60 + (vcpus > 1 ? 10 : 0) + Math.min(Math.max(vcpus - 2, 0), 2) * 5 + Math.max(vcpus - 4, 0) * 2.5;
  const reservedMemoryMi = 11 * pods + 255 + 100;
  return {
    capacity: { cpu: String(vcpus), memory: `${memoryMi}Mi`, pods: String(pods), 'ephemeral-storage': '20959212Ki' },
    allocatable: {
      cpu: `${vcpus * 1000 - Math.ceil(reservedCpuM)}m`,
      memory: `${memoryMi - reservedMemoryMi}Mi`,
      pods: String(pods),
      'ephemeral-storage': '18242267924',
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// NodeClaim status conditions, as Karpenter's status library writes them

function conditionOf(claim: Json, type: string): Json | undefined {
  const conditions = statusOf(claim)['conditions'];
  return Array.isArray(conditions) ? conditions.find((c): c is Json => isJson(c) && c['type'] === type) : undefined;
}

function conditionTime(claim: Json, type: string): number | undefined {
  const time = Date.parse(String(conditionOf(claim, type)?.['lastTransitionTime']));
  return Number.isNaN(time) ? undefined : time;
}

/** Sets a condition (lastTransitionTime moves only when the status does) and the root `Ready` with it. */
function setCondition(claim: Json, type: string, status: string, reason: string, message: string, at: number): void {
  putCondition(claim, type, status, reason, message, at);
  if (type === 'Ready') return;
  const parts = ['Launched', 'Registered', 'Initialized'].map((t) => conditionOf(claim, t)?.['status']);
  if (parts.every((s) => s === 'True')) putCondition(claim, 'Ready', 'True', 'Ready', '', at);
  else if (conditionOf(claim, 'Ready') !== undefined) putCondition(claim, 'Ready', 'Unknown', 'UnhealthyDependents', 'not all conditions are True', at);
}

function putCondition(claim: Json, type: string, status: string, reason: string, message: string, at: number): void {
  const holder = statusOf(claim);
  const conditions = Array.isArray(holder['conditions']) ? [...(holder['conditions'] as unknown[])] : [];
  const index = conditions.findIndex((c) => isJson(c) && c['type'] === type);
  const previous = index >= 0 ? (conditions[index] as Json) : undefined;
  const transition = previous !== undefined && previous['status'] === status ? previous['lastTransitionTime'] : iso(at);
  const condition = { type, status, reason, message, lastTransitionTime: transition, observedGeneration: metadataOf(claim)['generation'] ?? 1 };
  if (index >= 0) conditions[index] = condition;
  else conditions.push(condition);
  holder['conditions'] = conditions;
}

// ---------------------------------------------------------------------------------------------------
// JSON helpers

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The named object inside `object`, created when missing (so callers can write into it). */
function child(object: Json, key: string): Json {
  const value = object[key];
  if (isJson(value)) return value;
  const created: Json = {};
  object[key] = created;
  return created;
}

const metadataOf = (o: Json): Json => child(o, 'metadata');
const specOf = (o: Json): Json => child(o, 'spec');
const statusOf = (o: Json): Json => child(o, 'status');
const nameOf = (o: Json): string => String(metadataOf(o)['name']);

function stringsOf(value: unknown): Record<string, string> {
  return isJson(value) ? Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string')) : {};
}

const labelsOf = (o: Json): Record<string, string> => stringsOf(metadataOf(o)['labels']);
const annotationsOf = (o: Json): Record<string, string> => stringsOf(metadataOf(o)['annotations']);

function finalizersOf(o: Json): string[] {
  const finalizers = metadataOf(o)['finalizers'];
  return Array.isArray(finalizers) ? finalizers.filter((f): f is string => typeof f === 'string') : [];
}

function isDeleting(o: Json): boolean {
  return typeof metadataOf(o)['deletionTimestamp'] === 'string';
}

function providerIdOf(claim: Json): string | undefined {
  const id = statusOf(claim)['providerID'];
  return typeof id === 'string' && id !== '' ? id : undefined;
}

function nodePoolOf(claim: Json): string | null {
  const label = labelsOf(claim)[LABEL.nodePool];
  if (label !== undefined) return label;
  const owners = metadataOf(claim)['ownerReferences'];
  const pool = Array.isArray(owners) ? owners.find((o) => isJson(o) && o['kind'] === 'NodePool') : undefined;
  return isJson(pool) && typeof pool['name'] === 'string' ? pool['name'] : null;
}

function terminationTime(claim: Json): number | undefined {
  const time = Date.parse(annotationsOf(claim)[TERMINATION_TIME] ?? '');
  return Number.isNaN(time) ? undefined : time;
}

function createdAt(claim: Json, fallback: number): number {
  const time = Date.parse(String(metadataOf(claim)['creationTimestamp']));
  return Number.isNaN(time) || time > fallback ? fallback : time;
}

function taintsOf(node: Json): Taint[] {
  return taintList(specOf(node)['taints']);
}

function taintsAt(claim: Json, field: 'taints' | 'startupTaints'): Taint[] {
  return taintList(specOf(claim)[field]);
}

function taintList(value: unknown): Taint[] {
  return Array.isArray(value) ? value.filter((t): t is Taint => isJson(t) && typeof t['key'] === 'string' && typeof t['effect'] === 'string') : [];
}

/** Taints match on key and effect, as Kubernetes' MatchTaint does. */
function sameTaint(a: Taint, b: Taint): boolean {
  return a.key === b.key && a.effect === b.effect;
}

function mergeTaints(taints: readonly Taint[]): Taint[] {
  return taints.filter((t, i) => taints.findIndex((u) => sameTaint(t, u)) === i).map((t) => ({ ...t }));
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A Go duration (`90s`, `1h30m`, `24h`) in ms. */
function parseDuration(text: string): number {
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const [, amount = '0', u = 's'] of text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) total += Number(amount) * (unit[u] ?? 0);
  return total;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isJson(a) && isJson(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}
