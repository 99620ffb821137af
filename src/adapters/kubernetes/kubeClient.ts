// Connecting to a Kubernetes API with @kubernetes/client-node 1.4, and the one error type every
// Kubernetes adapter throws.
//
// Three ways in:
// - `kubeConfigFromEndpoint`: a server URL, its CA and a bearer token (or a function that returns the
//   token to use now). The function is asked on every request, so an EKS token that ages out is
//   replaced without rebuilding anything.
// - `eksKubeConfig`: the same, with the endpoint and CA from EKS DescribeCluster and the token from
//   the caller's AWS credentials: what the Lambda uses.
// - `kubeConfigFromFile`: a kubeconfig for local use (its exec plugins, e.g. `aws eks get-token`, work).
import { ApiException, AppsV1Api, CoreV1Api, KubeConfig, PolicyV1Api } from '@kubernetes/client-node';
// The generated serializer is not re-exported by the package root; the package has no `exports` map,
// so the deep path is a supported import in 1.x.
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import type { User } from '@kubernetes/client-node';
import type { EKSClient } from '@aws-sdk/client-eks';
import { describeClusterEndpoint } from './eksCluster.ts';
import { EksTokenSource } from './eksToken.ts';
import type { AwsCredentials, AwsCredentialsProvider } from './eksToken.ts';

/** The bearer token to send now. */
export type TokenProvider = () => Promise<string>;

export interface EndpointConnection {
  /** API server URL, e.g. `https://ABC.gr7.us-east-1.eks.amazonaws.com`. */
  readonly server: string;
  /** CA certificate of the server, base64-encoded PEM (kubeconfig `certificate-authority-data`). */
  readonly caData: string;
  /** A fixed token, or a provider asked before every request. */
  readonly token: string | TokenProvider;
}

const CONTEXT = 'eks-consolidator';
/** Name of our auth provider in the generated kubeconfig user; matched by our authenticator only. */
const TOKEN_AUTH_PROVIDER = 'eks-consolidator-token';

/** The client's authenticator interface (not exported by the package root). */
type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

/** A KubeConfig for one server, CA and token. */
export function kubeConfigFromEndpoint(connection: EndpointConnection): KubeConfig {
  const { server, caData, token } = connection;
  const kc = new KubeConfig();
  const user: User =
    typeof token === 'string'
      ? { name: CONTEXT, token }
      : { name: CONTEXT, authProvider: { name: TOKEN_AUTH_PROVIDER, config: {} } };
  kc.loadFromOptions({
    clusters: [{ name: CONTEXT, server, caData, skipTLSVerify: false }],
    users: [user],
    contexts: [{ name: CONTEXT, cluster: CONTEXT, user: CONTEXT }],
    currentContext: CONTEXT,
  });
  if (typeof token === 'function') kc.addAuthenticator(tokenAuthenticator(token));
  return withRequestDeadline(kc);
}

/**
 * One request to the API server, answer included: a page of 500 pods as `kubectl get -o json` prints
 * them is about 2 MB. Past it the call fails like any API error (retried by the next step or pass)
 * instead of hanging until the Lambda's own timeout stops the invocation mid-step.
 */
export const KUBE_REQUEST_TIMEOUT_MS = 30_000;

/** The deadline of each KubeConfig given one (set again: the new value applies). */
const deadlines = new WeakMap<KubeConfig, number>();

/**
 * Gives every request made through `kc` a deadline. The client asks the KubeConfig to authenticate each
 * request it builds, for every API group; that is where the request's abort signal is set.
 */
export function withRequestDeadline(kc: KubeConfig, timeoutMs: number = KUBE_REQUEST_TIMEOUT_MS): KubeConfig {
  const installed = deadlines.has(kc);
  deadlines.set(kc, timeoutMs);
  if (installed) return kc;
  const authenticate = kc.applySecurityAuthentication.bind(kc);
  kc.applySecurityAuthentication = async (context) => {
    await authenticate(context);
    if (context.getSignal() === undefined) context.setSignal(AbortSignal.timeout(deadlines.get(kc)!) as Parameters<typeof context.setSignal>[0]);
  };
  return kc;
}

function tokenAuthenticator(provider: TokenProvider): Authenticator {
  return {
    isAuthProvider: (user) => (user.authProvider as { name?: unknown } | undefined)?.name === TOKEN_AUTH_PROVIDER,
    async applyAuthentication(_user, opts) {
      const token = await provider();
      const headers = (opts.headers ?? {}) as Record<string, string | string[] | number | undefined>;
      headers['Authorization'] = `Bearer ${token}`;
      opts.headers = headers as typeof opts.headers;
    },
  };
}

/**
 * A KubeConfig from a kubeconfig file (default: `$KUBECONFIG`, then `~/.kube/config`, then the
 * in-cluster service account), optionally switched to `context`.
 */
export function kubeConfigFromFile(path?: string, context?: string): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (path === undefined) kc.loadFromDefault();
    else kc.loadFromFile(path);
  } catch (error) {
    throw new KubernetesApiError('load kubeconfig', path ?? 'default kubeconfig', describeCause(error), undefined, {
      cause: error,
    });
  }
  if (context !== undefined) {
    if (kc.getContextObject(context) === null) {
      throw new KubernetesApiError('load kubeconfig', path ?? 'default kubeconfig', `no context named "${context}"`);
    }
    kc.setCurrentContext(context);
  }
  if (kc.getCurrentCluster() === null) {
    throw new KubernetesApiError('load kubeconfig', path ?? 'default kubeconfig', 'no current cluster');
  }
  return withRequestDeadline(kc);
}

export interface EksConnectionOptions {
  readonly clusterName: string;
  readonly region: string;
  /** Default: the SDK's Node.js credential chain. */
  readonly credentials?: AwsCredentials | AwsCredentialsProvider;
  /** A client for DescribeCluster (tests pass a mocked one). */
  readonly eksClient?: EKSClient;
  /** The clock for token refresh, epoch ms. */
  readonly now?: () => number;
}

/** A KubeConfig for an EKS cluster: endpoint and CA from DescribeCluster, a token refreshed as it ages. */
export async function eksKubeConfig(
  options: EksConnectionOptions,
): Promise<{ kubeConfig: KubeConfig; tokens: EksTokenSource }> {
  const endpoint = await describeClusterEndpoint(options.clusterName, {
    region: options.region,
    ...(options.eksClient === undefined ? {} : { client: options.eksClient }),
  });
  const tokens = new EksTokenSource({
    clusterName: options.clusterName,
    region: options.region,
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const kubeConfig = kubeConfigFromEndpoint({ ...endpoint, token: () => tokens.getToken() });
  return { kubeConfig, tokens };
}

/** The typed API groups the adapters use. */
export interface KubeApis {
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly policy: PolicyV1Api;
}

export function makeKubeApis(kc: KubeConfig): KubeApis {
  return {
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    policy: kc.makeApiClient(PolicyV1Api),
  };
}

// ---------------------------------------------------------------------------------------------------
// Lists and plain objects

/** Page size of list calls: the API server's own recommendation is 500. */
export const DEFAULT_PAGE_SIZE = 500;

/** One page of a list answer, as the typed client returns it. */
export interface ListPage<T> {
  readonly metadata?: { readonly _continue?: string };
  readonly items: readonly T[];
}

/**
 * Lists a collection page by page (`limit` + `continue`) until the server says it is done. When a
 * continue token has expired (410 Gone: the snapshot it pinned was compacted away) the listing starts
 * over, at most twice, as `kubectl` and informers do.
 */
export function listAllPages<T>(
  resource: string,
  fetchPage: (page: { limit: number; _continue?: string }) => Promise<ListPage<T>>,
  pageSize: number = DEFAULT_PAGE_SIZE,
): Promise<T[]> {
  return listAllPagesMapped(resource, fetchPage, (item) => item, pageSize);
}

/**
 * listAllPages, each item mapped as its page arrives: the typed client objects of a page can be
 * dropped before the next page is read (a cluster's pods, in full, take far more memory than the
 * planner needs of them).
 */
export async function listAllPagesMapped<T, U>(
  resource: string,
  fetchPage: (page: { limit: number; _continue?: string }) => Promise<ListPage<T>>,
  map: (item: T) => U,
  pageSize: number = DEFAULT_PAGE_SIZE,
): Promise<U[]> {
  return listAllPagesInto(
    resource,
    fetchPage,
    () => {
      const items: U[] = [];
      return { add: (item: T) => void items.push(map(item)), items };
    },
    pageSize,
  ).then((sink) => sink.items);
}

/**
 * listAllPages into a sink that takes each item as its page arrives; a listing that starts over (410)
 * starts a fresh sink, so nothing of the abandoned listing is kept. Returns the sink of the listing that
 * completed. `add` must not throw for an item it cannot use (that would read as a failed list call):
 * the sink keeps such problems itself.
 */
export async function listAllPagesInto<T, S extends { add(item: T): void }>(
  resource: string,
  fetchPage: (page: { limit: number; _continue?: string }) => Promise<ListPage<T>>,
  newSink: () => S,
  pageSize: number = DEFAULT_PAGE_SIZE,
): Promise<S> {
  for (let attempt = 0; ; attempt += 1) {
    const sink = newSink();
    let token: string | undefined;
    try {
      for (let pages = 0; ; pages += 1) {
        if (pages > 100_000) throw new Error('the server kept sending continue tokens');
        const page = await fetchPage(token === undefined ? { limit: pageSize } : { limit: pageSize, _continue: token });
        for (const item of page.items) sink.add(item);
        token = page.metadata?._continue;
        if (token === undefined || token === '') return sink;
      }
    } catch (error) {
      if (token !== undefined && statusCodeOf(error) === 410 && attempt < 2) continue;
      throw toKubernetesError(error, 'list', resource);
    }
  }
}

/**
 * The plain JSON shape `kubectl get -o json` prints for a typed client object: JSON field names,
 * RFC 3339 strings for times, and `kind`/`apiVersion` set (list items come without them).
 * `type` is the client's model name, e.g. `V1Pod`.
 */
export function toPlainObject(item: unknown, type: string, kind: string, apiVersion: string): Record<string, unknown> {
  // The serializer writes every known field, absent ones as `undefined`: a JSON round trip drops them.
  // Times come out with milliseconds (`...T12:00:00.000Z`), which is still RFC 3339.
  const plain = JSON.parse(JSON.stringify(ObjectSerializer.serialize(item, type, ''))) as Record<string, unknown>;
  delete plain['apiVersion'];
  delete plain['kind'];
  return { apiVersion, kind, ...plain };
}

// ---------------------------------------------------------------------------------------------------
// Errors

/**
 * A Kubernetes API call failed (or could not be made). Names the operation and the resource, and
 * carries the HTTP status and the API's `reason` when there was an answer.
 */
export class KubernetesApiError extends Error {
  override readonly name = 'KubernetesApiError';
  /** The `reason` of the API's Status answer, e.g. `NotFound`, `Forbidden`, `Conflict`. */
  readonly reason: string | undefined;

  constructor(
    /** What we were doing, e.g. `list`, `patch`, `evict`. */
    readonly operation: string,
    /** The resource, e.g. `pods`, `Node ip-10-0-1-7.ec2.internal`, `Pod default/web-0`. */
    readonly resource: string,
    /** What went wrong, in one sentence. */
    readonly problem: string,
    /** HTTP status of the answer; undefined when no answer came (connection, TLS, timeout). */
    readonly statusCode?: number,
    options?: { cause?: unknown; reason?: string },
  ) {
    super(`Kubernetes API: ${operation} ${resource} failed: ${problem}`, options);
    this.reason = options?.reason;
  }

  /** The API server refused the credentials (wrong cluster, expired token, no access entry). */
  get unauthorized(): boolean {
    return this.statusCode === 401;
  }
}

/** What an API's Status answer says, read from an ApiException body (a JSON string) when it is one. */
export interface ApiStatus {
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly details?: { readonly causes?: readonly { readonly reason?: string; readonly message?: string }[] };
}

export function apiStatusOf(error: unknown): ApiStatus | undefined {
  if (!(error instanceof ApiException)) return undefined;
  const body: unknown = error.body;
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return { code: error.code, message: body.trim() === '' ? undefined : body.trim() };
    }
  }
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    const status = parsed as ApiStatus;
    return { ...status, code: error.code };
  }
  return { code: error.code };
}

/** The HTTP status of an ApiException, undefined for anything else. */
export function statusCodeOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

/** Turns anything a client call threw into a KubernetesApiError naming the operation and resource. */
export function toKubernetesError(error: unknown, operation: string, resource: string): KubernetesApiError {
  if (error instanceof KubernetesApiError) return error;
  if (error instanceof ApiException) {
    const code = error.code;
    const status = apiStatusOf(error);
    const said = status?.message === undefined || status.message === '' ? '' : `: ${status.message}`;
    let problem: string;
    if (code === 401) {
      problem =
        'the API server refused the credentials (401 Unauthorized). For EKS: the token must be made for ' +
        "this cluster, and the caller's IAM role needs an access entry (or an aws-auth mapping)" +
        said;
    } else if (code === 403) {
      problem = `forbidden (403): the identity lacks RBAC permission${said}`;
    } else {
      problem = `HTTP ${code}${status?.reason === undefined ? '' : ` ${status.reason}`}${said}`;
    }
    return new KubernetesApiError(operation, resource, problem, code, {
      cause: error,
      ...(status?.reason === undefined ? {} : { reason: status.reason }),
    });
  }
  return new KubernetesApiError(operation, resource, `no answer from the API server: ${describeCause(error)}`, undefined, {
    cause: error,
  });
}

/** Runs one API call and names the operation and resource in the error if it fails. */
export async function callKube<T>(operation: string, resource: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toKubernetesError(error, operation, resource);
  }
}

function describeCause(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const prefix = typeof code === 'string' && !error.message.includes(code) ? `${code}: ` : '';
    return `${prefix}${error.message}`;
  }
  return String(error);
}
