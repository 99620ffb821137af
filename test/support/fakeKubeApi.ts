// A small Kubernetes API server for tests: HTTPS on 127.0.0.1 (self-signed certificate made with
// openssl at first use), bearer-token auth, an in-memory object store, and a log of every request so a
// test can assert what was (or was not) written. The real @kubernetes/client-node talks to it with
// `caData` and `token` exactly as it talks to EKS.
//
// Served:
// - list (all namespaces or one namespace) for nodes, pods, namespaces, persistentvolumes,
//   persistentvolumeclaims, events, poddisruptionbudgets, daemonsets, deployments, statefulsets,
//   replicasets; `limit`/`continue` paging (items sorted by namespace/name, without kind/apiVersion, as
//   the real API sends them); `fieldSelector` on any dotted path (`spec.nodeName=x`, `!=`);
//   `labelSelector` with `k=v`, `k!=v`, `k`, `!k`;
// - GET, PATCH (json-patch; merge-patch, strategic merge treated as merge; a `metadata.resourceVersion`
//   in a merge patch is a precondition) and DELETE of one object;
// - POST create (e.g. events; `generateName` honoured; 409 AlreadyExists when the name is taken) and POST
//   `pods/<name>/eviction` decided by the eviction policy (allow: the pod is deleted; blockByPdb: 429 with
//   the API's Status body; notFound);
// - Karpenter's custom resources `karpenter.sh/v1` nodepools and nodeclaims (cluster-scoped), served only
//   when the cluster "has the CRDs" (option `karpenterCrds`, seeded NodePools/NodeClaims, or
//   `installKarpenterCrds()`), because a cluster without Karpenter answers 404 and tests rely on that. As
//   the real API does for them: `status` is a subresource (ignored on create and on a patch of the object,
//   written through `<name>/status`), and a NodeClaim's spec is required on create and immutable after;
// - deletion as the API server does it for every kind: an object with `metadata.finalizers` only gets a
//   `deletionTimestamp` and stays until its finalizers are removed (it goes when a patch empties them);
//   `preconditions.uid`/`resourceVersion` in the DeleteOptions body must match (409 otherwise);
// - failures injected per request (`fail`), e.g. a 500 on pods or a 410 on a continue token;
// - hooks run before each authorised request (`beforeRequest`), so a controller stand-in (see
//   fakeKarpenter.ts) can catch up with the test's clock before the request sees the store, and after
//   each request is answered (`afterRequest`);
// - failures decided per request by a function (`failWith`): a Status answer instead of serving, or a
//   dropped connection (a client timeout) either before the request is served or after it was served
//   (the write done, its answer lost);
// - graceful pod termination when asked for (`setPodTermination`): a deleted or evicted pod keeps a
//   `deletionTimestamp` of now + its grace period and stays Terminating until then (as the kubelet
//   takes that long to confirm), then goes; without it, a pod without finalizers goes at once.
// Every answer that is not a success is a `Status` object like the real API's. Timestamps the server
// writes (creationTimestamp, deletionTimestamp) come from `now` (the test's clock when given).
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

type Json = Record<string, unknown>;

export type EvictionDecision = 'allow' | 'blockByPdb' | 'notFound';
export type EvictionPolicy = EvictionDecision | ((pod: { namespace: string; name: string }) => EvictionDecision);
/** What an eviction did: the pod deleted (or, with finalizers, marked deleting), or why not. */
export type EvictionOutcome = 'evicted' | 'blockedByPdb' | 'notFound' | 'conflict';

/** Karpenter's finalizer on NodeClaims and the Nodes it registers. */
export const KarpenterTerminationFinalizer = 'karpenter.sh/termination';

export interface FakeKubeApiOptions {
  /** Initial objects, plain JSON with `kind` set (as kubectl prints them). */
  readonly objects?: readonly unknown[];
  /** How evictions are answered. Default `allow`. */
  readonly evictionPolicy?: EvictionPolicy;
  /** The bearer token the server accepts. Default: a random one. */
  readonly token?: string;
  /** Overrides token checking: accept a request when this returns true. */
  readonly authorize?: (token: string | undefined) => boolean;
  /** Serve karpenter.sh/v1 nodepools and nodeclaims. Default: when `objects` holds one of them. */
  readonly karpenterCrds?: boolean;
  /** The clock for timestamps the server writes. Default `Date.now`. */
  readonly now?: () => number;
}

export interface RecordedRequest {
  readonly method: string;
  /** Path without the query string, e.g. `/api/v1/nodes/n1`. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType: string | undefined;
  /** The bearer token presented, if any. */
  readonly token: string | undefined;
  /** Parsed JSON body (the raw text when it is not JSON), undefined when empty. */
  readonly body: unknown;
  /** Status code answered. */
  status: number;
}

export interface FailureRule {
  readonly method?: string;
  /** Matches the path exactly (string) or by pattern. */
  readonly path?: string | RegExp;
  readonly when?: (request: RecordedRequest) => boolean;
  readonly status: number;
  readonly reason?: string;
  readonly message?: string;
  /** How many matching requests fail. Default 1; Infinity for all. */
  times?: number;
}

/** What `failWith` makes of a request: a Status answer, or a connection dropped before or after serving it. */
export type InjectedFailure =
  | { readonly status: number; readonly reason?: string; readonly message?: string }
  | { readonly drop: 'before' | 'after' };

export interface FakeKubeApi {
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  /** The server's certificate, base64 PEM (kubeconfig `certificate-authority-data`). */
  readonly caData: string;
  readonly token: string;
  readonly store: FakeStore;
  /** Every request received, in order (unauthorised ones too). */
  readonly requests: RecordedRequest[];
  /** Requests other than GET (what a dry run must never send). */
  mutatingRequests(): RecordedRequest[];
  /** Changes how evictions are answered from now on. */
  setEvictionPolicy(policy: EvictionPolicy): void;
  /** Makes matching requests fail with `status` (a Status body) instead of being served. */
  fail(rule: FailureRule): void;
  /**
   * Runs `hook` before each authorised request is served (before injected failures too); a hook that
   * throws makes the request a 500. Returns a function that removes the hook.
   */
  beforeRequest(hook: (request: RecordedRequest) => void): () => void;
  /**
   * Evicts a pod as POST `pods/<name>/eviction` would (same policy, same uid precondition), without
   * logging a request: for controller stand-ins that act on the cluster beside the code under test.
   */
  evictPod(namespace: string, name: string, uid?: string): EvictionOutcome;
  /** Starts serving karpenter.sh/v1 nodepools and nodeclaims (as installing Karpenter's CRDs would). */
  installKarpenterCrds(): void;
  /**
   * Runs `hook` after each authorised request was answered (`request.status` set; a dropped connection
   * has status 0). Returns a function that removes the hook.
   */
  afterRequest(hook: (request: RecordedRequest) => void): () => void;
  /**
   * Decides, for each authorised request (after the `beforeRequest` hooks, before the `fail` rules),
   * whether it fails and how: a Status answer, or a dropped connection before or after serving it.
   * Undefined from `decide` serves the request. Returns a function that removes the decider.
   */
  failWith(decide: (request: RecordedRequest) => InjectedFailure | undefined): () => void;
  /**
   * Graceful pod deletion: `graceMs(pod)` (> 0) keeps a deleted or evicted pod Terminating, with
   * `deletionTimestamp` now + grace, until the server's clock passes it (checked before each request, or
   * with `reapTerminatedPods`). Undefined: pods without finalizers go at once (the default).
   */
  setPodTermination(graceMs: ((pod: Json) => number) | undefined): void;
  /** Removes Terminating pods (without finalizers) whose deletionTimestamp has passed; returns their keys. */
  reapTerminatedPods(): string[];
  /** Replaces the clock used for the timestamps the server writes. */
  setClock(now: () => number): void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------
// Resources

interface ResourceInfo {
  readonly kind: string;
  readonly plural: string;
  /** `v1` for the core group, `apps/v1` etc. */
  readonly apiVersion: string;
  readonly namespaced: boolean;
  /** A Karpenter custom resource: served only once the cluster has Karpenter's CRDs. */
  readonly karpenter?: boolean;
}

const RESOURCES: readonly ResourceInfo[] = [
  { kind: 'Node', plural: 'nodes', apiVersion: 'v1', namespaced: false },
  { kind: 'Namespace', plural: 'namespaces', apiVersion: 'v1', namespaced: false },
  { kind: 'PersistentVolume', plural: 'persistentvolumes', apiVersion: 'v1', namespaced: false },
  { kind: 'Pod', plural: 'pods', apiVersion: 'v1', namespaced: true },
  { kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims', apiVersion: 'v1', namespaced: true },
  { kind: 'Event', plural: 'events', apiVersion: 'v1', namespaced: true },
  { kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', apiVersion: 'policy/v1', namespaced: true },
  { kind: 'DaemonSet', plural: 'daemonsets', apiVersion: 'apps/v1', namespaced: true },
  { kind: 'Deployment', plural: 'deployments', apiVersion: 'apps/v1', namespaced: true },
  { kind: 'StatefulSet', plural: 'statefulsets', apiVersion: 'apps/v1', namespaced: true },
  { kind: 'ReplicaSet', plural: 'replicasets', apiVersion: 'apps/v1', namespaced: true },
  { kind: 'NodePool', plural: 'nodepools', apiVersion: 'karpenter.sh/v1', namespaced: false, karpenter: true },
  { kind: 'NodeClaim', plural: 'nodeclaims', apiVersion: 'karpenter.sh/v1', namespaced: false, karpenter: true },
];

const byKind = new Map(RESOURCES.map((r) => [r.kind, r]));

function resourceFor(apiVersion: string, plural: string): ResourceInfo | undefined {
  return RESOURCES.find((r) => r.apiVersion === apiVersion && r.plural === plural);
}

// ---------------------------------------------------------------------------------------------------
// Store

/** The objects the fake server holds, by kind. Objects are stored as plain JSON with kind/apiVersion. */
export class FakeStore {
  private readonly objects = new Map<string, Map<string, Json>>();
  private revision = 1;
  /** The store's revision at the last change of each kind. */
  private readonly changedAt = new Map<string, number>();

  constructor(initial: readonly unknown[] = []) {
    for (const object of initial) this.put(object);
  }

  /** The current resourceVersion of the whole store. */
  get resourceVersion(): string {
    return String(this.revision);
  }

  /**
   * When any of `kinds` last changed (a put or a delete), as one comparable string: a controller that
   * reads only these kinds can skip its work while it stays the same.
   */
  versionOf(...kinds: string[]): string {
    return kinds.map((k) => this.changedAt.get(k) ?? 0).join('.');
  }

  /**
   * The stored objects of a kind, sorted as `list` sorts them, without copying: for readers that never
   * change what they get (write through `put`, with a copy).
   */
  peek(kind: string, namespace?: string): readonly Json[] {
    return [...this.table(kind).entries()]
      .filter(([, o]) => namespace === undefined || metadataOf(o)['namespace'] === namespace)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => o);
  }

  /** Adds or replaces an object (a deep copy). Unknown kinds are rejected. */
  put(object: unknown): Json {
    if (!isJson(object) || typeof object['kind'] !== 'string') throw new Error('FakeStore.put: an object with a kind');
    const info = byKind.get(object['kind']);
    if (info === undefined) throw new Error(`FakeStore.put: kind ${object['kind']} is not served`);
    const copy = structuredClone(object);
    copy['apiVersion'] = info.apiVersion;
    const metadata = isJson(copy['metadata']) ? copy['metadata'] : {};
    copy['metadata'] = metadata;
    if (typeof metadata['name'] !== 'string') throw new Error(`FakeStore.put: ${info.kind} without metadata.name`);
    if (info.namespaced && typeof metadata['namespace'] !== 'string') metadata['namespace'] = 'default';
    if (!info.namespaced) delete metadata['namespace'];
    if (typeof metadata['uid'] !== 'string') metadata['uid'] = randomUUID();
    this.revision += 1;
    this.changedAt.set(info.kind, this.revision);
    metadata['resourceVersion'] = String(this.revision);
    this.table(info.kind).set(key(metadata), copy);
    return copy;
  }

  /** A deep copy of the object, or undefined. */
  get(kind: string, name: string, namespace?: string): Json | undefined {
    const found = this.table(kind).get(key({ name, namespace: byKind.get(kind)?.namespaced ? namespace ?? 'default' : undefined }));
    return found === undefined ? undefined : structuredClone(found);
  }

  /**
   * Deep copies of every object of a kind, sorted by namespace/name, optionally in one namespace and
   * only those `keep` accepts (tested on the stored object, so a selective list copies only what it returns).
   */
  list(kind: string, namespace?: string, keep?: (object: Json) => boolean): Json[] {
    return [...this.table(kind).entries()]
      .filter(([, o]) => (namespace === undefined || metadataOf(o)['namespace'] === namespace) && (keep === undefined || keep(o)))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => structuredClone(o));
  }

  /** Removes an object; true when it was there. */
  delete(kind: string, name: string, namespace?: string): boolean {
    const removed = this.table(kind).delete(key({ name, namespace: byKind.get(kind)?.namespaced ? namespace ?? 'default' : undefined }));
    if (removed) {
      this.revision += 1;
      this.changedAt.set(kind, this.revision);
    }
    return removed;
  }

  /**
   * Deletes as the API server does: an object with finalizers only gets `deletionTimestamp` (`at`, kept
   * when already set) and stays; one without is removed. Returns the object as it now stands (with
   * `removed` telling which), or undefined when there is no such object.
   */
  deleteGracefully(kind: string, name: string, namespace: string | undefined, at: string): { object: Json; removed: boolean } | undefined {
    const current = this.get(kind, name, namespace);
    if (current === undefined) return undefined;
    if (finalizersOf(current).length === 0) {
      this.delete(kind, name, namespace);
      return { object: current, removed: true };
    }
    if (typeof metadataOf(current)['deletionTimestamp'] === 'string') return { object: current, removed: false };
    metadataOf(current)['deletionTimestamp'] = at;
    metadataOf(current)['deletionGracePeriodSeconds'] = 0;
    return { object: this.put(current), removed: false };
  }

  /**
   * Takes `finalizer` off an object; an object being deleted goes once no finalizer is left (the API
   * server's garbage step). Returns the object as it now stands, undefined when gone or absent.
   */
  removeFinalizer(kind: string, name: string, namespace: string | undefined, finalizer: string): Json | undefined {
    const current = this.get(kind, name, namespace);
    if (current === undefined) return undefined;
    const left = finalizersOf(current).filter((f) => f !== finalizer);
    if (left.length === finalizersOf(current).length) return current;
    if (left.length === 0 && typeof metadataOf(current)['deletionTimestamp'] === 'string') {
      this.delete(kind, name, namespace);
      return undefined;
    }
    if (left.length === 0) delete metadataOf(current)['finalizers'];
    else metadataOf(current)['finalizers'] = left;
    return this.put(current);
  }

  /** Every object of every kind. */
  all(): Json[] {
    return RESOURCES.flatMap((r) => this.list(r.kind));
  }

  private table(kind: string): Map<string, Json> {
    let table = this.objects.get(kind);
    if (table === undefined) {
      table = new Map();
      this.objects.set(kind, table);
    }
    return table;
  }
}

function key(metadata: { name?: unknown; namespace?: unknown }): string {
  return typeof metadata.namespace === 'string' ? `${metadata.namespace}/${String(metadata.name)}` : String(metadata.name);
}

// ---------------------------------------------------------------------------------------------------
// Certificate

interface Certificate {
  readonly key: string;
  readonly cert: string;
}

let certificate: Promise<Certificate> | undefined;

/** One self-signed certificate for 127.0.0.1 per test process (key generation takes a moment). */
function selfSignedCertificate(): Promise<Certificate> {
  certificate ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fake-kube-api-'));
    try {
      const keyFile = join(dir, 'key.pem');
      const certFile = join(dir, 'cert.pem');
      await promisify(execFile)('openssl', [
        'req', '-x509', '-newkey', 'rsa:2048', '-nodes',
        '-keyout', keyFile, '-out', certFile,
        '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1',
      ]);
      return { key: await readFile(keyFile, 'utf8'), cert: await readFile(certFile, 'utf8') };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  return certificate;
}

// ---------------------------------------------------------------------------------------------------
// Server

export async function startFakeKubeApi(options: FakeKubeApiOptions = {}): Promise<FakeKubeApi> {
  const { key: tlsKey, cert } = await selfSignedCertificate();
  const token = options.token ?? `fake-${randomBytes(12).toString('hex')}`;
  const authorize = options.authorize ?? ((presented: string | undefined) => presented === token);
  const store = new FakeStore(options.objects ?? []);
  const requests: RecordedRequest[] = [];
  const failures: FailureRule[] = [];
  let evictionPolicy: EvictionPolicy = options.evictionPolicy ?? 'allow';
  const hooks: ((request: RecordedRequest) => void)[] = [];
  const afterHooks: ((request: RecordedRequest) => void)[] = [];
  const deciders: ((request: RecordedRequest) => InjectedFailure | undefined)[] = [];
  let podTermination: ((pod: Json) => number) | undefined;
  let clock = options.now ?? Date.now;
  // A cluster has Karpenter's CRDs when told so, or when it was seeded with their objects.
  let karpenterServed = options.karpenterCrds ?? (options.objects ?? []).some((o) => isJson(o) && byKind.get(String(o['kind']))?.karpenter === true);
  const timestamp = (): string => new Date(clock()).toISOString().replace(/\.\d{3}Z$/, 'Z');

  const server = createServer({ key: tlsKey, cert }, (req, res) => {
    void handle(req, res).catch((error: unknown) => {
      send(res, 500, status(500, 'InternalError', `fake server error: ${String(error)}`));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    const text = await readBody(req);
    const authorization = req.headers['authorization'];
    const presented = typeof authorization === 'string' && authorization.startsWith('Bearer ') ? authorization.slice(7) : undefined;
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      contentType: req.headers['content-type']?.split(';')[0]?.trim(),
      token: presented,
      body: parseBody(text),
      status: 0,
    };
    requests.push(record);
    let dropAnswer = false;
    const reply = (code: number, body: unknown): void => {
      if (dropAnswer) {
        // Served, but the client never hears back (its timeout): the connection goes without an answer.
        record.status = 0;
        res.destroy();
      } else {
        record.status = code;
        send(res, code, body);
      }
      for (const hook of [...afterHooks]) hook(record);
    };

    if (!authorize(presented)) return reply(401, status(401, 'Unauthorized', 'Unauthorized'));
    if (podTermination !== undefined) reapTerminatedPods();
    for (const hook of [...hooks]) hook(record);
    for (const decide of [...deciders]) {
      const injected = decide(record);
      if (injected === undefined) continue;
      if ('drop' in injected) {
        dropAnswer = true;
        if (injected.drop === 'before') return reply(0, undefined);
        break;
      }
      return reply(injected.status, status(injected.status, injected.reason ?? reasonFor(injected.status), injected.message ?? 'injected failure'));
    }
    const failure = failures.find((rule) => matches(rule, record));
    if (failure !== undefined) {
      failure.times = (failure.times ?? 1) - 1;
      if (failure.times <= 0) failures.splice(failures.indexOf(failure), 1);
      return reply(failure.status, status(failure.status, failure.reason ?? reasonFor(failure.status), failure.message ?? 'injected failure'));
    }

    const route = parseRoute(url.pathname);
    if (route === undefined || (route.info.karpenter === true && !karpenterServed)) {
      return reply(404, status(404, 'NotFound', 'the server could not find the requested resource'));
    }
    const { info, namespace, name, subresource } = route;
    const what = `${info.plural} "${name ?? ''}"`;

    if (name === undefined) {
      if (record.method === 'GET') return reply(200, listAnswer(info, namespace, record.query));
      if (record.method === 'POST') return reply(...create(info, namespace, record.body));
      return reply(405, status(405, 'MethodNotAllowed', `${record.method} on a collection`));
    }
    if (subresource === 'eviction' && info.kind === 'Pod' && record.method === 'POST') {
      return reply(...evict(namespace ?? 'default', name, record.body));
    }
    const statusOnly = subresource === 'status' && info.karpenter === true;
    if (subresource !== undefined && !statusOnly) return reply(404, status(404, 'NotFound', `subresource ${subresource} not served`));

    const current = store.get(info.kind, name, namespace);
    if (current === undefined) return reply(404, status(404, 'NotFound', `${what} not found`, { name, kind: info.plural }));
    switch (record.method) {
      case 'GET':
        return reply(200, current);
      case 'DELETE':
        if (statusOnly) break;
        return reply(...remove(info, current, record.body));
      case 'PATCH':
        return reply(...patch(info, current, record.contentType, record.body, statusOnly));
      default:
        break;
    }
    return reply(405, status(405, 'MethodNotAllowed', `${record.method} on ${what}`));
  }

  function listAnswer(info: ResourceInfo, namespace: string | undefined, query: Record<string, string>): Json {
    const byField = query['fieldSelector'] !== undefined && query['fieldSelector'] !== '' ? fieldSelector(query['fieldSelector']) : undefined;
    // Not copied: the answer is serialized at once.
    let items = store.peek(info.kind, namespace).filter((o) => byField === undefined || byField(o));
    if (query['labelSelector'] !== undefined && query['labelSelector'] !== '') {
      const test = labelSelector(query['labelSelector']);
      items = items.filter((o) => test(labelsOf(o)));
    }
    let offset = 0;
    if (query['continue'] !== undefined && query['continue'] !== '') {
      offset = (JSON.parse(Buffer.from(query['continue'], 'base64url').toString('utf8')) as { offset: number }).offset;
    }
    const limit = query['limit'] === undefined ? 0 : Number(query['limit']);
    const end = limit > 0 ? Math.min(items.length, offset + limit) : items.length;
    const page = items.slice(offset, end).map(({ kind: _k, apiVersion: _v, ...rest }) => rest);
    const metadata: Json = { resourceVersion: store.resourceVersion };
    if (end < items.length) {
      metadata['continue'] = Buffer.from(JSON.stringify({ offset: end })).toString('base64url');
      metadata['remainingItemCount'] = items.length - end;
    }
    return { kind: `${info.kind}List`, apiVersion: info.apiVersion, metadata, items: page };
  }

  function create(info: ResourceInfo, namespace: string | undefined, body: unknown): [number, unknown] {
    if (!isJson(body)) return [400, status(400, 'BadRequest', 'the body is not a JSON object')];
    const metadata = isJson(body['metadata']) ? { ...body['metadata'] } : {};
    if (typeof metadata['name'] !== 'string' && typeof metadata['generateName'] === 'string') {
      metadata['name'] = `${metadata['generateName']}${randomBytes(3).toString('hex').slice(0, 5)}`;
    }
    if (typeof metadata['name'] !== 'string') return [422, status(422, 'Invalid', 'metadata.name: Required value')];
    if (info.namespaced) metadata['namespace'] = namespace ?? metadata['namespace'] ?? 'default';
    if (store.get(info.kind, metadata['name'], metadata['namespace'] as string | undefined) !== undefined) {
      return [409, status(409, 'AlreadyExists', `${info.plural} "${metadata['name']}" already exists`, { name: metadata['name'], kind: info.plural })];
    }
    // Fields the API server owns: whatever the client sent is replaced.
    delete metadata['deletionTimestamp'];
    delete metadata['deletionGracePeriodSeconds'];
    metadata['creationTimestamp'] ??= timestamp();
    const object: Json = { ...body, kind: info.kind, metadata };
    if (info.karpenter === true) {
      // The CRDs declare a status subresource: a create cannot set status.
      delete object['status'];
      metadata['generation'] = 1;
      const invalid = validateCustomResource(info, object, undefined);
      if (invalid !== undefined) return [422, invalid];
    }
    return [201, store.put(object)];
  }

  function remove(info: ResourceInfo, current: Json, body: unknown): [number, unknown] {
    const conflict = preconditionFailure(current, body);
    if (conflict !== undefined) return [409, conflict];
    const meta = metadataOf(current);
    if (info.kind === 'Pod') {
      const terminating = terminatePod(current);
      if (terminating !== undefined) return [200, terminating];
    }
    const result = store.deleteGracefully(info.kind, String(meta['name']), meta['namespace'] as string | undefined, timestamp());
    if (result === undefined) return [404, status(404, 'NotFound', `${info.plural} "${String(meta['name'])}" not found`)];
    // Custom resources answer an immediate deletion with a Status; built-in kinds with the object.
    if (result.removed && info.karpenter === true) {
      return [200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: meta['name'], group: 'karpenter.sh', kind: info.plural, uid: meta['uid'] } }];
    }
    return [200, result.object];
  }

  function evictPod(namespace: string, name: string, uid?: string): EvictionOutcome {
    const pod = store.get('Pod', name, namespace);
    if (pod === undefined) return 'notFound';
    const decision = typeof evictionPolicy === 'function' ? evictionPolicy({ namespace, name }) : evictionPolicy;
    if (decision === 'notFound') return 'notFound';
    if (decision === 'blockByPdb') return 'blockedByPdb';
    if (uid !== undefined && uid !== metadataOf(pod)['uid']) return 'conflict';
    if (terminatePod(pod) === undefined) store.deleteGracefully('Pod', name, namespace, timestamp());
    return 'evicted';
  }

  /**
   * With `setPodTermination`: the pod stays Terminating until now + its grace period (a pod already
   * terminating keeps its deadline). Returns the pod as stored, or undefined when it is deleted the
   * ordinary way (no termination set, or no grace).
   */
  function terminatePod(pod: Json): Json | undefined {
    if (podTermination === undefined) return undefined;
    const meta = metadataOf(pod);
    if (typeof meta['deletionTimestamp'] === 'string') return pod;
    const graceMs = podTermination(pod);
    if (!(graceMs > 0)) return undefined;
    const next = structuredClone(pod);
    metadataOf(next)['deletionTimestamp'] = new Date(clock() + graceMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
    metadataOf(next)['deletionGracePeriodSeconds'] = Math.ceil(graceMs / 1000);
    return store.put(next);
  }

  function reapTerminatedPods(): string[] {
    const now = clock();
    const due = store.list('Pod', undefined, (p) => {
      const at = Date.parse(String(metadataOf(p)['deletionTimestamp'] ?? ''));
      return !Number.isNaN(at) && at <= now && finalizersOf(p).length === 0;
    });
    for (const pod of due) store.delete('Pod', String(metadataOf(pod)['name']), String(metadataOf(pod)['namespace']));
    return due.map((p) => `${String(metadataOf(p)['namespace'])}/${String(metadataOf(p)['name'])}`);
  }

  function evict(namespace: string, name: string, body: unknown): [number, unknown] {
    const options = isJson(body) && isJson(body['deleteOptions']) ? body['deleteOptions'] : {};
    const wantedUid = isJson(options['preconditions']) ? options['preconditions']['uid'] : undefined;
    const uidBefore = metadataOf(store.get('Pod', name, namespace) ?? {})['uid'];
    switch (evictPod(namespace, name, typeof wantedUid === 'string' ? wantedUid : undefined)) {
      case 'evicted':
        return [201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }];
      case 'notFound':
        return [404, status(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' })];
      case 'conflict':
        return [409, status(409, 'Conflict', `Precondition failed: UID in precondition: ${String(wantedUid)}, UID in object meta: ${String(uidBefore)}`)];
      case 'blockedByPdb':
        return [
          429,
          status(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
            causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget needs 1 healthy pods and has 1 currently' }],
          }),
        ];
    }
  }

  function patch(info: ResourceInfo, current: Json, contentType: string | undefined, body: unknown, statusOnly: boolean): [number, unknown] {
    let patched: unknown;
    if (contentType === 'application/json-patch+json') {
      if (!Array.isArray(body)) return [400, status(400, 'BadRequest', 'a JSON Patch must be an array')];
      try {
        patched = applyJsonPatch(current, body);
      } catch (error) {
        return [
          422,
          status(422, 'Invalid', 'the server rejected our request due to an error in our request', {
            causes: [{ type: 'UnexpectedServerResponse', message: error instanceof Error ? error.message : String(error) }],
          }),
        ];
      }
    } else if (contentType === 'application/merge-patch+json' || contentType === 'application/strategic-merge-patch+json') {
      const wantedVersion = isJson(body) && isJson(body['metadata']) ? body['metadata']['resourceVersion'] : undefined;
      if (wantedVersion !== undefined && wantedVersion !== metadataOf(current)['resourceVersion']) {
        return [
          409,
          status(409, 'Conflict', 'Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again'),
        ];
      }
      patched = mergePatch(current, body);
    } else {
      return [415, status(415, 'UnsupportedMediaType', `the body of the request was in an unknown format: ${contentType ?? 'none'}`)];
    }
    if (!isJson(patched)) return [422, status(422, 'Invalid', 'the patch made the object something else than an object')];
    const metadata = metadataOf(patched);
    if (metadata['name'] !== metadataOf(current)['name']) return [422, status(422, 'Invalid', 'metadata.name is immutable')];
    const next = settlePatch(info, current, patched, statusOnly);
    const invalid = info.karpenter === true ? validateCustomResource(info, next, current) : finalizerFailure(info, next, current);
    if (invalid !== undefined) return [422, invalid];
    return [200, storeAfterPatch(info, next)];
  }

  /** What of a patch the server keeps: deletionTimestamp is its own, and status goes through /status only. */
  function settlePatch(info: ResourceInfo, current: Json, patched: Json, statusOnly: boolean): Json {
    if (statusOnly) return { ...current, status: patched['status'] };
    const next: Json = { ...patched, kind: current['kind'], metadata: { ...metadataOf(patched) } };
    const meta = metadataOf(next);
    for (const field of ['deletionTimestamp', 'deletionGracePeriodSeconds']) {
      if (metadataOf(current)[field] === undefined) delete meta[field];
      else meta[field] = metadataOf(current)[field];
    }
    if (info.karpenter === true) {
      if (current['status'] === undefined) delete next['status'];
      else next['status'] = current['status'];
    }
    return next;
  }

  /** A deleting object whose last finalizer a patch removed is gone (the API server's garbage step). */
  function storeAfterPatch(info: ResourceInfo, next: Json): Json {
    const meta = metadataOf(next);
    if (typeof meta['deletionTimestamp'] === 'string' && finalizersOf(next).length === 0) {
      store.delete(info.kind, String(meta['name']), meta['namespace'] as string | undefined);
      return next;
    }
    return store.put(next);
  }

  function finalizerFailure(info: ResourceInfo, next: Json, current: Json): Json | undefined {
    if (typeof metadataOf(current)['deletionTimestamp'] !== 'string') return undefined;
    const added = finalizersOf(next).filter((f) => !finalizersOf(current).includes(f));
    if (added.length === 0) return undefined;
    return invalidStatus(info, next, [{ field: 'metadata.finalizers', message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}` }]);
  }

  function validateCustomResource(info: ResourceInfo, object: Json, current: Json | undefined): Json | undefined {
    if (current !== undefined) {
      const finalizers = finalizerFailure(info, object, current);
      if (finalizers !== undefined) return finalizers;
    }
    if (info.kind !== 'NodeClaim') return undefined;
    const causes = nodeClaimSpecProblems(object['spec'], current?.['spec']);
    return causes.length === 0 ? undefined : invalidStatus(info, object, causes);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://127.0.0.1:${port}`,
    caData: Buffer.from(cert, 'utf8').toString('base64'),
    token,
    store,
    requests,
    mutatingRequests: () => requests.filter((r) => r.method !== 'GET'),
    setEvictionPolicy: (policy) => {
      evictionPolicy = policy;
    },
    fail: (rule) => {
      failures.push({ ...rule, times: rule.times ?? 1 });
    },
    beforeRequest: (hook) => {
      hooks.push(hook);
      return () => {
        const at = hooks.indexOf(hook);
        if (at >= 0) hooks.splice(at, 1);
      };
    },
    evictPod,
    installKarpenterCrds: () => {
      karpenterServed = true;
    },
    afterRequest: (hook) => {
      afterHooks.push(hook);
      return () => {
        const at = afterHooks.indexOf(hook);
        if (at >= 0) afterHooks.splice(at, 1);
      };
    },
    failWith: (decide) => {
      deciders.push(decide);
      return () => {
        const at = deciders.indexOf(decide);
        if (at >= 0) deciders.splice(at, 1);
      };
    },
    setPodTermination: (graceMs) => {
      podTermination = graceMs;
    },
    reapTerminatedPods,
    setClock: (now) => {
      clock = now;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---------------------------------------------------------------------------------------------------
// Helpers

function parseRoute(
  path: string,
): { info: ResourceInfo; namespace?: string; name?: string; subresource?: string } | undefined {
  const parts = path.split('/').filter((p) => p !== '').map(decodeURIComponent);
  let apiVersion: string;
  let rest: string[];
  if (parts[0] === 'api' && parts[1] === 'v1') {
    apiVersion = 'v1';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    apiVersion = `${parts[1]}/${parts[2]}`;
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  // namespaces/<ns>/<plural>[/<name>[/<sub>]] is namespaced; anything else is <plural>[/<name>].
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const info = resourceFor(apiVersion, rest[2] ?? '');
    if (info === undefined || !info.namespaced) return undefined;
    return { info, namespace: rest[1], ...(rest[3] === undefined ? {} : { name: rest[3] }), ...(rest[4] === undefined ? {} : { subresource: rest[4] }) };
  }
  const info = resourceFor(apiVersion, rest[0] ?? '');
  if (info === undefined || rest.length > 3) return undefined;
  if (info.namespaced && rest[1] !== undefined) return undefined;
  return { info, ...(rest[1] === undefined ? {} : { name: rest[1] }), ...(rest[2] === undefined ? {} : { subresource: rest[2] }) };
}

/** DeleteOptions.preconditions (uid, resourceVersion): only that incarnation/version is deleted. */
function preconditionFailure(current: Json, body: unknown): Json | undefined {
  const preconditions = isJson(body) && isJson(body['preconditions']) ? body['preconditions'] : {};
  const meta = metadataOf(current);
  const uid = preconditions['uid'];
  if (typeof uid === 'string' && uid !== meta['uid']) {
    return status(409, 'Conflict', `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${String(meta['uid'])}`);
  }
  const version = preconditions['resourceVersion'];
  if (typeof version === 'string' && version !== meta['resourceVersion']) {
    return status(409, 'Conflict', `Precondition failed: ResourceVersion in precondition: ${version}, ResourceVersion in object meta: ${String(meta['resourceVersion'])}`);
  }
  return undefined;
}

interface FieldProblem {
  readonly field: string;
  readonly message: string;
}

/** The checks of Karpenter's NodeClaim CRD schema a client is likely to trip on. */
function nodeClaimSpecProblems(spec: unknown, previous: unknown): FieldProblem[] {
  if (previous !== undefined) {
    return deepEqual(spec, previous) ? [] : [{ field: 'spec', message: 'Invalid value: "object": spec is immutable' }];
  }
  if (!isJson(spec)) return [{ field: 'spec', message: 'Required value' }];
  const problems: FieldProblem[] = [];
  const ref = spec['nodeClassRef'];
  if (!isJson(ref)) problems.push({ field: 'spec.nodeClassRef', message: 'Required value' });
  else {
    for (const part of ['group', 'kind', 'name']) {
      if (typeof ref[part] !== 'string' || ref[part] === '') {
        problems.push({ field: `spec.nodeClassRef.${part}`, message: `Invalid value: "string": ${part} may not be empty` });
      }
    }
  }
  const requirements = spec['requirements'];
  if (!Array.isArray(requirements)) problems.push({ field: 'spec.requirements', message: 'Required value' });
  else if (requirements.some((r) => isJson(r) && r['operator'] === 'In' && (!Array.isArray(r['values']) || r['values'].length === 0))) {
    problems.push({ field: 'spec.requirements', message: "Invalid value: \"array\": requirements with operator 'In' must have a value defined" });
  }
  return problems;
}

/** A 422 as the API server words it: `<Kind>.<group> "<name>" is invalid: <field>: <message>`. */
function invalidStatus(info: ResourceInfo, object: Json, problems: readonly FieldProblem[]): Json {
  const group = info.apiVersion.includes('/') ? info.apiVersion.split('/')[0] ?? '' : '';
  const name = String(metadataOf(object)['name']);
  const qualified = group === '' ? info.kind : `${info.kind}.${group}`;
  const text = problems.map((p) => `${p.field}: ${p.message}`).join(', ');
  return status(422, 'Invalid', `${qualified} "${name}" is invalid: ${problems.length === 1 ? text : `[${text}]`}`, {
    name,
    group,
    kind: info.kind,
    causes: problems.map((p) => ({ reason: 'FieldValueInvalid', message: p.message, field: p.field })),
  });
}

function matches(rule: FailureRule, request: RecordedRequest): boolean {
  if (rule.method !== undefined && rule.method.toUpperCase() !== request.method) return false;
  if (rule.path !== undefined) {
    if (typeof rule.path === 'string' ? rule.path !== request.path : !rule.path.test(request.path)) return false;
  }
  return rule.when === undefined || rule.when(request);
}

function status(code: number, reason: string, message: string, details?: Json): Json {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details === undefined ? {} : { details }),
    code,
  };
}

function reasonFor(code: number): string {
  const reasons: Record<number, string> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    409: 'Conflict',
    410: 'Expired',
    422: 'Invalid',
    429: 'TooManyRequests',
    500: 'InternalError',
    503: 'ServiceUnavailable',
  };
  return reasons[code] ?? 'Unknown';
}

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function metadataOf(object: Json): Json {
  return isJson(object['metadata']) ? object['metadata'] : {};
}

function finalizersOf(object: Json): string[] {
  const finalizers = metadataOf(object)['finalizers'];
  return Array.isArray(finalizers) ? finalizers.filter((f): f is string => typeof f === 'string') : [];
}

function labelsOf(object: Json): Record<string, unknown> {
  const labels = metadataOf(object)['labels'];
  return isJson(labels) ? labels : {};
}

function valueAt(object: unknown, dotted: string): unknown {
  let value: unknown = object;
  for (const part of dotted.split('.')) value = isJson(value) ? value[part] : undefined;
  return value;
}

function fieldSelector(selector: string): (object: Json) => boolean {
  const terms = selector.split(',').map((term) => {
    const m = /^([^!=]+)(==|=|!=)(.*)$/.exec(term.trim());
    if (m === null) throw new Error(`unsupported field selector ${term}`);
    const [, path = '', op, wanted = ''] = m;
    return (o: Json) => {
      const actual = valueAt(o, path);
      const text = actual === undefined || actual === null ? '' : String(actual);
      return op === '!=' ? text !== wanted : text === wanted;
    };
  });
  return (o) => terms.every((t) => t(o));
}

function labelSelector(selector: string): (labels: Record<string, unknown>) => boolean {
  const terms = selector.split(',').map((raw) => {
    const term = raw.trim();
    const m = /^([^!=]+)(==|=|!=)(.*)$/.exec(term);
    if (m !== null) {
      const [, k = '', op, v = ''] = m;
      return (l: Record<string, unknown>) => (op === '!=' ? l[k] !== v : l[k] === v);
    }
    if (term.startsWith('!')) return (l: Record<string, unknown>) => !(term.slice(1) in l);
    return (l: Record<string, unknown>) => term in l;
  });
  return (labels) => terms.every((t) => t(labels));
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isJson(patch)) return structuredClone(patch);
  const result: Json = isJson(target) ? structuredClone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete result[k];
    else result[k] = mergePatch(result[k], v);
  }
  return result;
}

/**
 * RFC 6902 JSON Patch: add, remove, replace, test, move, copy. As in the API server's patch library,
 * `test` of a missing path against null succeeds. Throws (message as the library's) on a failed op.
 */
function applyJsonPatch(document: unknown, operations: unknown[]): unknown {
  let doc = structuredClone(document);
  for (const raw of operations) {
    if (!isJson(raw) || typeof raw['op'] !== 'string' || typeof raw['path'] !== 'string') {
      throw new Error('invalid operation');
    }
    const op = raw['op'];
    const path = raw['path'];
    switch (op) {
      case 'test': {
        const actual = getPointer(doc, path);
        const expected = raw['value'] ?? null;
        if (!deepEqual(actual ?? null, expected)) throw new Error(`testing value ${path} failed: test failed`);
        break;
      }
      case 'add':
        doc = setPointer(doc, path, structuredClone(raw['value']), 'add');
        break;
      case 'replace':
        if (getPointer(doc, path) === undefined) throw new Error(`replace operation does not apply: doc is missing key: ${path}`);
        doc = setPointer(doc, path, structuredClone(raw['value']), 'replace');
        break;
      case 'remove':
        if (getPointer(doc, path) === undefined) throw new Error(`remove operation does not apply: doc is missing path: ${path}`);
        doc = removePointer(doc, path);
        break;
      case 'move':
      case 'copy': {
        const from = raw['from'];
        if (typeof from !== 'string') throw new Error(`${op} operation needs from`);
        const value = getPointer(doc, from);
        if (value === undefined) throw new Error(`${op} operation does not apply: doc is missing from path: ${from}`);
        if (op === 'move') doc = removePointer(doc, from);
        doc = setPointer(doc, path, structuredClone(value), 'add');
        break;
      }
      default:
        throw new Error(`unexpected kind: ${op}`);
    }
  }
  return doc;
}

function tokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`invalid JSON pointer ${pointer}`);
  return pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function getPointer(doc: unknown, pointer: string): unknown {
  let value: unknown = doc;
  for (const token of tokens(pointer)) {
    if (Array.isArray(value)) value = value[Number(token)];
    else if (isJson(value)) value = value[token];
    else return undefined;
  }
  return value;
}

function setPointer(doc: unknown, pointer: string, value: unknown, mode: 'add' | 'replace'): unknown {
  const parts = tokens(pointer);
  if (parts.length === 0) return value;
  const last = parts[parts.length - 1] ?? '';
  const parent = getPointer(doc, `/${parts.slice(0, -1).map((t) => t.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`.replace(/^\/$/, ''));
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw new Error(`index out of bounds: ${pointer}`);
    if (mode === 'add') parent.splice(index, 0, value);
    else parent[index] = value;
  } else if (isJson(parent)) {
    parent[last] = value;
  } else {
    throw new Error(`add operation does not apply: doc is missing path: ${pointer}`);
  }
  return doc;
}

function removePointer(doc: unknown, pointer: string): unknown {
  const parts = tokens(pointer);
  const last = parts[parts.length - 1] ?? '';
  const parent = getPointer(doc, `/${parts.slice(0, -1).map((t) => t.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`.replace(/^\/$/, ''));
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else if (isJson(parent)) delete parent[last];
  return doc;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isJson(a) && isJson(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------
// Object builders: plain Kubernetes JSON as kubectl prints it, for seeding the store.

export interface KubeNodeOptions {
  readonly pool?: string | null;
  readonly instanceType?: string;
  readonly zone?: string;
  readonly capacityType?: 'on-demand' | 'spot';
  readonly cpu?: string;
  readonly memory?: string;
  readonly pods?: string;
  readonly ready?: boolean;
  readonly createdAt?: string;
  readonly taints?: readonly Json[];
  readonly unschedulable?: boolean;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export function kubeNode(name: string, o: KubeNodeOptions = {}): Json {
  const zone = o.zone ?? 'us-east-1a';
  const created = o.createdAt ?? '2026-11-21T09:00:00Z';
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: `uid-node-${name}`,
      creationTimestamp: created,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': o.instanceType ?? 'm5.large',
        'topology.kubernetes.io/zone': zone,
        'karpenter.sh/capacity-type': o.capacityType ?? 'on-demand',
        ...(o.pool === null ? {} : { 'karpenter.sh/nodepool': o.pool ?? 'default' }),
        ...o.labels,
      },
      ...(o.annotations === undefined ? {} : { annotations: o.annotations }),
    },
    spec: {
      providerID: `aws:///${zone}/i-0${Buffer.from(name).toString('hex').slice(0, 16).padEnd(16, '0')}`,
      ...(o.taints === undefined ? {} : { taints: o.taints }),
      ...(o.unschedulable === undefined ? {} : { unschedulable: o.unschedulable }),
    },
    status: {
      capacity: { cpu: '2', memory: '8042984Ki', pods: o.pods ?? '29', 'ephemeral-storage': '20959212Ki' },
      allocatable: { cpu: o.cpu ?? '1930m', memory: o.memory ?? '7134Mi', pods: o.pods ?? '29', 'ephemeral-storage': '18242267924' },
      conditions: [
        { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: created, lastTransitionTime: created, reason: 'KubeletHasSufficientMemory', message: 'ok' },
        { type: 'Ready', status: o.ready === false ? 'False' : 'True', lastHeartbeatTime: created, lastTransitionTime: created, reason: 'KubeletReady', message: 'kubelet is posting ready status' },
      ],
    },
  };
}

export interface KubePodOptions {
  readonly node?: string;
  readonly cpu?: string;
  readonly memory?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  /** Controller owner; default a ReplicaSet `<name>-rs`. null: a bare pod. */
  readonly owner?: { kind: string; name: string } | null;
  readonly phase?: string;
  readonly createdAt?: string;
  readonly priority?: number;
  readonly claim?: string;
}

export function kubePod(namespace: string, name: string, o: KubePodOptions = {}): Json {
  const created = o.createdAt ?? '2026-11-21T10:00:00Z';
  const owner = o.owner === undefined ? { kind: 'ReplicaSet', name: `${name}-rs` } : o.owner;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      uid: `uid-pod-${namespace}-${name}`,
      creationTimestamp: created,
      labels: o.labels ?? { app: name },
      ...(o.annotations === undefined ? {} : { annotations: o.annotations }),
      ...(owner === null
        ? {}
        : { ownerReferences: [{ apiVersion: 'apps/v1', kind: owner.kind, name: owner.name, uid: `uid-${owner.name}`, controller: true, blockOwnerDeletion: true }] }),
    },
    spec: {
      ...(o.node === undefined ? {} : { nodeName: o.node }),
      ...(o.priority === undefined ? {} : { priority: o.priority }),
      containers: [
        {
          name: 'main',
          image: 'public.ecr.aws/nginx/nginx:1.27',
          resources: { requests: { cpu: o.cpu ?? '100m', memory: o.memory ?? '128Mi' } },
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
        },
      ],
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      ...(o.claim === undefined ? {} : { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: o.claim } }] }),
    },
    status: {
      phase: o.phase ?? (o.node === undefined ? 'Pending' : 'Running'),
      ...(o.node === undefined ? {} : { startTime: created }),
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: created }],
    },
  };
}

export function kubePdb(namespace: string, name: string, matchLabels: Record<string, string>, disruptionsAllowed: number): Json {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace, uid: `uid-pdb-${name}`, creationTimestamp: '2026-11-20T00:00:00Z' },
    spec: { minAvailable: 1, selector: { matchLabels } },
    status: { currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed, expectedPods: 2, observedGeneration: 1 },
  };
}

export function kubeDaemonSet(namespace: string, name: string, cpu = '50m', memory = '64Mi'): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace, uid: `uid-ds-${name}`, creationTimestamp: '2026-11-20T00:00:00Z' },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [{ name, image: `example/${name}:1`, resources: { requests: { cpu, memory } } }],
          tolerations: [{ operator: 'Exists' }],
        },
      },
    },
    status: { currentNumberScheduled: 2, desiredNumberScheduled: 2, numberMisscheduled: 0, numberReady: 2 },
  };
}

export function kubeWorkload(kind: 'Deployment' | 'StatefulSet' | 'ReplicaSet', namespace: string, name: string, replicas: number, ready: number): Json {
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, namespace, uid: `uid-${kind}-${name}`, creationTimestamp: '2026-11-20T00:00:00Z' },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'example/app:1' }] } },
      ...(kind === 'StatefulSet' ? { serviceName: name } : {}),
    },
    status: { replicas, ...(ready === 0 ? {} : { readyReplicas: ready }) },
  };
}

export function kubeNamespace(name: string, labels: Record<string, string> = {}): Json {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, uid: `uid-ns-${name}`, creationTimestamp: '2026-11-20T00:00:00Z', labels: { 'kubernetes.io/metadata.name': name, ...labels } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

/** A zonal EBS volume bound to `namespace/claim`, and the claim. */
export function kubeVolume(namespace: string, claim: string, volume: string, zone: string): [Json, Json] {
  const pv = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: volume, uid: `uid-pv-${volume}`, creationTimestamp: '2026-11-20T00:00:00Z' },
    spec: {
      accessModes: ['ReadWriteOnce'],
      capacity: { storage: '10Gi' },
      claimRef: { kind: 'PersistentVolumeClaim', namespace, name: claim },
      csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0abc' },
      nodeAffinity: {
        required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }] }] },
      },
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'gp3',
    },
    status: { phase: 'Bound' },
  };
  const pvc = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: claim, namespace, uid: `uid-pvc-${claim}`, creationTimestamp: '2026-11-20T00:00:00Z' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } }, storageClassName: 'gp3', volumeName: volume },
    status: { phase: 'Bound', capacity: { storage: '10Gi' } },
  };
  return [pv, pvc];
}
