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
// - POST create (e.g. events; `generateName` honoured) and POST `pods/<name>/eviction` decided by the
//   eviction policy (allow: the pod is deleted; blockByPdb: 429 with the API's Status body; notFound);
// - failures injected per request (`fail`), e.g. a 500 on pods or a 410 on a continue token.
// Every answer that is not a success is a `Status` object like the real API's.
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

export interface FakeKubeApiOptions {
  /** Initial objects, plain JSON with `kind` set (as kubectl prints them). */
  readonly objects?: readonly unknown[];
  /** How evictions are answered. Default `allow`. */
  readonly evictionPolicy?: EvictionPolicy;
  /** The bearer token the server accepts. Default: a random one. */
  readonly token?: string;
  /** Overrides token checking: accept a request when this returns true. */
  readonly authorize?: (token: string | undefined) => boolean;
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

  constructor(initial: readonly unknown[] = []) {
    for (const object of initial) this.put(object);
  }

  /** The current resourceVersion of the whole store. */
  get resourceVersion(): string {
    return String(this.revision);
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
    metadata['resourceVersion'] = String(this.revision);
    this.table(info.kind).set(key(metadata), copy);
    return copy;
  }

  /** A deep copy of the object, or undefined. */
  get(kind: string, name: string, namespace?: string): Json | undefined {
    const found = this.table(kind).get(key({ name, namespace: byKind.get(kind)?.namespaced ? namespace ?? 'default' : undefined }));
    return found === undefined ? undefined : structuredClone(found);
  }

  /** Deep copies of every object of a kind, sorted by namespace/name, optionally in one namespace. */
  list(kind: string, namespace?: string): Json[] {
    return [...this.table(kind).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => structuredClone(o))
      .filter((o) => namespace === undefined || metadataOf(o)['namespace'] === namespace);
  }

  /** Removes an object; true when it was there. */
  delete(kind: string, name: string, namespace?: string): boolean {
    const removed = this.table(kind).delete(key({ name, namespace: byKind.get(kind)?.namespaced ? namespace ?? 'default' : undefined }));
    if (removed) this.revision += 1;
    return removed;
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
    const reply = (code: number, body: unknown): void => {
      record.status = code;
      send(res, code, body);
    };

    if (!authorize(presented)) return reply(401, status(401, 'Unauthorized', 'Unauthorized'));
    const failure = failures.find((rule) => matches(rule, record));
    if (failure !== undefined) {
      failure.times = (failure.times ?? 1) - 1;
      if (failure.times <= 0) failures.splice(failures.indexOf(failure), 1);
      return reply(failure.status, status(failure.status, failure.reason ?? reasonFor(failure.status), failure.message ?? 'injected failure'));
    }

    const route = parseRoute(url.pathname);
    if (route === undefined) return reply(404, status(404, 'NotFound', 'the server could not find the requested resource'));
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
    if (subresource !== undefined) return reply(404, status(404, 'NotFound', `subresource ${subresource} not served`));

    const current = store.get(info.kind, name, namespace);
    if (current === undefined) return reply(404, status(404, 'NotFound', `${what} not found`, { name, kind: info.plural }));
    switch (record.method) {
      case 'GET':
        return reply(200, current);
      case 'DELETE': {
        // DeleteOptions.preconditions.uid: only that incarnation of the object (409 otherwise).
        const body = record.body;
        const wantedUid = isJson(body) && isJson(body['preconditions']) ? body['preconditions']['uid'] : undefined;
        if (typeof wantedUid === 'string' && wantedUid !== metadataOf(current)['uid']) {
          return reply(409, status(409, 'Conflict', `Precondition failed: UID in precondition: ${wantedUid}, UID in object meta: ${String(metadataOf(current)['uid'])}`));
        }
        store.delete(info.kind, name, namespace);
        return reply(200, current);
      }
      case 'PATCH':
        return reply(...patch(current, record.contentType, record.body));
      default:
        return reply(405, status(405, 'MethodNotAllowed', `${record.method} on ${what}`));
    }
  }

  function listAnswer(info: ResourceInfo, namespace: string | undefined, query: Record<string, string>): Json {
    let items = store.list(info.kind, namespace);
    if (query['fieldSelector'] !== undefined && query['fieldSelector'] !== '') {
      const test = fieldSelector(query['fieldSelector']);
      items = items.filter(test);
    }
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
      return [409, status(409, 'AlreadyExists', `${info.plural} "${metadata['name']}" already exists`)];
    }
    metadata['creationTimestamp'] ??= new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    return [201, store.put({ ...body, kind: info.kind, metadata })];
  }

  function evict(namespace: string, name: string, body: unknown): [number, unknown] {
    const pod = store.get('Pod', name, namespace);
    if (pod === undefined) return [404, status(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' })];
    const decision = typeof evictionPolicy === 'function' ? evictionPolicy({ namespace, name }) : evictionPolicy;
    if (decision === 'notFound') return [404, status(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' })];
    if (decision === 'blockByPdb') {
      return [
        429,
        status(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
          causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget needs 1 healthy pods and has 1 currently' }],
        }),
      ];
    }
    const wantedUid = isJson(body) && isJson(body['deleteOptions']) && isJson(body['deleteOptions']['preconditions'])
      ? body['deleteOptions']['preconditions']['uid']
      : undefined;
    if (typeof wantedUid === 'string' && wantedUid !== metadataOf(pod)['uid']) {
      return [409, status(409, 'Conflict', `Precondition failed: UID in precondition: ${wantedUid}, UID in object meta: ${String(metadataOf(pod)['uid'])}`)];
    }
    store.delete('Pod', name, namespace);
    return [201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }];
  }

  function patch(current: Json, contentType: string | undefined, body: unknown): [number, unknown] {
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
    return [200, store.put({ ...patched, kind: current['kind'] })];
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
  if (info === undefined || rest.length > 2) return undefined;
  if (info.namespaced && rest[1] !== undefined) return undefined;
  return { info, ...(rest[1] === undefined ? {} : { name: rest[1] }) };
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
