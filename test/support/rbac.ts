// The ClusterRole of infra/rbac.yaml as the API server would apply it, for tests: a request path is
// turned into RBAC attributes the way the API server's request-info resolver does
// (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go), and those are checked against the role's
// rules the way the RBAC authorizer does (k8s.io/kubernetes/pkg/apis/rbac/v1/evaluation_helpers.go).
// So a test can replay every request a run sent to the fake API server and say which the real cluster
// would have refused with 403.
//
// Modelled: /api/<version>/... and /apis/<group>/<version>/..., namespaced and cluster-scoped paths,
// `namespaces/<name>/status|finalize` as subresources of the namespace, subresources, the verbs of
// each method (GET one: get, GET a collection: list, or watch with ?watch=<anything but 0/false>;
// DELETE a collection: deletecollection), the deprecated /watch/ prefix, a `metadata.name` field
// selector naming the object of a list or watch, and in rules: `*` verbs, groups and resources,
// `*/<subresource>`, `<resource>/<subresource>`, resourceNames and nonResourceURLs (with a trailing `*`).
// Not modelled: aggregated ClusterRoles, Roles and RoleBindings, `proxy` paths, impersonation.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface PolicyRule {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

export interface KubeRequest {
  readonly method: string;
  /** The path without its query string, as sent (percent-encoded). */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
}

/** A request's RBAC attributes and the role's verdict. */
export interface Authorization {
  readonly allowed: boolean;
  readonly verb: string;
  /** '' for the core group (and for a non-resource request). */
  readonly group: string;
  /** '' for a non-resource request (such as /version). */
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** Set for a request that is not for a resource: what nonResourceURLs rules are matched against. */
  readonly nonResourcePath?: string;
}

/** A request the role does not allow, with what it was taken for. */
export interface UnauthorizedRequest extends Authorization {
  readonly method: string;
  readonly path: string;
}

const ROOT = join(import.meta.dirname, '..', '..');
const RBAC_FILE = join(ROOT, 'infra', 'rbac.yaml');
const CLUSTER_ROLE = 'eks-consolidator';

/** The rules of the `eks-consolidator` ClusterRole in infra/rbac.yaml (read once). */
export function clusterRoleRules(): readonly PolicyRule[] {
  rules ??= readRules();
  return rules;
}
let rules: readonly PolicyRule[] | undefined;

function readRules(): readonly PolicyRule[] {
  const documents = parseAllDocuments(readFileSync(RBAC_FILE, 'utf8')).map((d) => d.toJSON() as { kind?: string; metadata?: { name?: string }; rules?: PolicyRule[] });
  const role = documents.find((d) => d.kind === 'ClusterRole' && d.metadata?.name === CLUSTER_ROLE);
  if (role === undefined) throw new Error(`infra/rbac.yaml has no ClusterRole ${CLUSTER_ROLE}`);
  return role.rules ?? [];
}

// ---------------------------------------------------------------------------------------------------
// Request info (requestinfo.go)

interface RequestInfo {
  readonly isResourceRequest: boolean;
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  readonly path: string;
}

const API_PREFIXES = new Set(['api', 'apis']);
/** The core group's prefix: its paths carry no group segment. */
const GROUPLESS_PREFIXES = new Set(['api']);
/** Verbs that can appear as the first segment after the version. */
const SPECIAL_VERBS = new Set(['proxy', 'watch']);
/** Of these, the ones whose third part is not a subresource. */
const SPECIAL_VERBS_NO_SUBRESOURCES = new Set(['proxy']);
/** `namespaces/<name>/<x>` where x is the namespace's own subresource, not a namespaced resource. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

const METHOD_VERBS: Readonly<Record<string, string>> = {
  POST: 'create',
  GET: 'get',
  HEAD: 'get',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

/** The RBAC attributes of one request, as the API server derives them from its method, path and query. */
export function requestInfo(request: KubeRequest): RequestInfo {
  const method = request.method.toUpperCase();
  const path = request.path;
  const nonResource: RequestInfo = { isResourceRequest: false, verb: method.toLowerCase(), group: '', resource: '', subresource: '', namespace: '', name: '', path };
  let parts = path.replace(/^\/+|\/+$/g, '').split('/').filter((p) => p !== '').map(decodeURIComponent);
  if (parts.length < 3 || !API_PREFIXES.has(parts[0]!)) return nonResource;
  const prefix = parts[0]!;
  parts = parts.slice(1);
  let group = '';
  if (!GROUPLESS_PREFIXES.has(prefix)) {
    // /apis/<group>/<version>/<resource>: anything shorter is discovery, not a resource.
    if (parts.length < 3) return nonResource;
    group = parts[0]!;
    parts = parts.slice(1);
  }
  parts = parts.slice(1); // the version

  let verb: string;
  if (SPECIAL_VERBS.has(parts[0]!)) {
    if (parts.length < 2) throw new Error(`${method} ${path}: unable to determine kind and namespace from the url`);
    verb = parts[0]!;
    parts = parts.slice(1);
  } else {
    verb = METHOD_VERBS[method] ?? '';
  }

  let namespace = '';
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      namespace = parts[1]!;
      // namespaces/<ns>/<resource>/...: a namespaced resource (but namespaces/<ns>/status is the namespace's).
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
    }
  }

  // resource/name/subresource/anything else
  let resource = '';
  let name = '';
  let subresource = '';
  if (parts.length >= 3 && !SPECIAL_VERBS_NO_SUBRESOURCES.has(verb)) subresource = parts[2]!;
  if (parts.length >= 2) name = parts[1]!;
  if (parts.length >= 1) resource = parts[0]!;

  const query = request.query ?? {};
  // No name and a GET: the collection, listed or watched; a metadata.name field selector names the object.
  if (name === '' && verb === 'get') {
    verb = queryBool(query['watch']) ? 'watch' : 'list';
    name = exactFieldMatch(query['fieldSelector'], 'metadata.name') ?? '';
  }
  if (name === '' && verb === 'delete') verb = 'deletecollection';

  return { isResourceRequest: true, verb, group, resource, subresource, namespace, name, path };
}

/** A boolean query parameter as the API server decodes it: present and not `0` or `false` is true. */
function queryBool(value: string | undefined): boolean {
  if (value === undefined) return false;
  return value !== '0' && value.toLowerCase() !== 'false';
}

/** `field=value` (or `field==value`) among a field selector's comma-separated terms. */
function exactFieldMatch(selector: string | undefined, field: string): string | undefined {
  if (selector === undefined || selector === '') return undefined;
  for (const term of selector.split(',')) {
    const match = /^\s*([^!=\s]+)\s*==?\s*(.*?)\s*$/.exec(term);
    // Only a valid path segment becomes the name (the API server checks it the same way).
    if (match !== null && match[1] === field && match[2] !== '' && !/[/%]/.test(match[2]!) && match[2] !== '.' && match[2] !== '..') return match[2];
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Rule evaluation (evaluation_helpers.go)

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.some((v) => v === '*' || v === verb);
}

function groupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === '*' || g === group);
}

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  return (rule.resources ?? []).some((r) => {
    if (r === '*' || r === combined) return true;
    // `*/scale`: that subresource of any resource. There is no `pods/*`.
    return subresource !== '' && r === `*/${subresource}`;
  });
}

function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

function nonResourceUrlMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

function ruleAllows(rule: PolicyRule, info: RequestInfo): boolean {
  if (!info.isResourceRequest) return verbMatches(rule, info.verb) && nonResourceUrlMatches(rule, info.path);
  const combined = info.subresource === '' ? info.resource : `${info.resource}/${info.subresource}`;
  return verbMatches(rule, info.verb) && groupMatches(rule, info.group) && resourceMatches(rule, combined, info.subresource) && resourceNameMatches(rule, info.name);
}

/** Whether infra/rbac.yaml's ClusterRole (or `rules`) allows the request, and as what it was taken. */
export function authorize(request: KubeRequest, rules: readonly PolicyRule[] = clusterRoleRules()): Authorization {
  const info = requestInfo(request);
  const allowed = rules.some((rule) => ruleAllows(rule, info));
  return {
    allowed,
    verb: info.verb,
    group: info.group,
    resource: info.resource,
    ...(info.subresource === '' ? {} : { subresource: info.subresource }),
    ...(info.namespace === '' ? {} : { namespace: info.namespace }),
    ...(info.name === '' ? {} : { name: info.name }),
    ...(info.isResourceRequest ? {} : { nonResourcePath: info.path }),
  };
}

/** The requests the role refuses (the real API server would answer them 403), each with its attributes. */
export function unauthorizedRequests(requests: readonly KubeRequest[], rules: readonly PolicyRule[] = clusterRoleRules()): UnauthorizedRequest[] {
  return requests.flatMap((request) => {
    const verdict = authorize(request, rules);
    return verdict.allowed ? [] : [{ method: request.method, path: request.path, ...verdict }];
  });
}

// ---------------------------------------------------------------------------------------------------
// Grants and use, as `verb group/resource` lines

/** `verb group/resource[/subresource]` (`core` for the core group), e.g. `create core/pods/eviction`. */
export function permissionOf(a: Pick<Authorization, 'verb' | 'group' | 'resource' | 'subresource'>): string {
  return `${a.verb} ${a.group === '' ? 'core' : a.group}/${a.resource}${a.subresource === undefined ? '' : `/${a.subresource}`}`;
}

/** What a run used: the distinct permissions of its resource requests, sorted. */
export function permissionsUsed(requests: readonly KubeRequest[]): string[] {
  const used = new Set<string>();
  for (const request of requests) {
    const info = requestInfo(request);
    if (!info.isResourceRequest) continue;
    used.add(permissionOf({ verb: info.verb, group: info.group, resource: info.resource, ...(info.subresource === '' ? {} : { subresource: info.subresource }) }));
  }
  return [...used].sort();
}

/**
 * What the role grants, one line per verb, group and resource of its rules, sorted. A wildcard stays a
 * wildcard (`* core/nodes`): such a grant can never be shown to be used in full.
 */
export function permissionsGranted(rules: readonly PolicyRule[] = clusterRoleRules()): string[] {
  const granted = new Set<string>();
  for (const rule of rules) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        for (const verb of rule.verbs) granted.add(`${verb} ${group === '' ? 'core' : group}/${resource}`);
      }
    }
  }
  return [...granted].sort();
}
