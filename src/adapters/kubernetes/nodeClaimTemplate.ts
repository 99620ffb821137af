// The `karpenter.sh/v1` NodeClaim a replacement becomes, built from its NodePool the way Karpenter's
// provisioner builds one: `NodeClaimTemplate.ToNodeClaim` (apis/v1/nodepool.go) copies the template's
// labels, annotations, taints, startup taints, requirements, node class, expireAfter and
// terminationGracePeriod; `NewNodeClaimTemplate` and `ToNodeClaim` in
// provisioning/scheduling/nodeclaimtemplate.go add the pool and node class labels, the pool's hash
// annotations and the owner reference, and narrow the instance types to the launch's options (cheapest
// first, at most 600). A claim built here is therefore one Karpenter would have created itself: its
// lifecycle controllers launch, register and initialize it, and drift, expiry and interruption treat
// it as their own.
//
// Pure: a plain JSON object in, a plain JSON object out (the sha256 of the name is not I/O).
import { createHash } from 'node:crypto';
import { LabelKeys, type Labels, type NodeClaimTemplateSource, type Taint } from '../../core/model/types.ts';
import { NODECLAIM_COMMAND_ANNOTATION, NODECLAIM_INDEX_ANNOTATION, type NodeClaimRequest } from '../../core/ports/actuator.ts';

export const NODECLAIM_API_VERSION = 'karpenter.sh/v1';
export const NODECLAIM_KIND = 'NodeClaim';

/**
 * Karpenter sends at most this many instance types in a NodeClaim's requirements (`MaxInstanceTypes`
 * in provisioning/scheduling/nodeclaimtemplate.go), the cheapest ones.
 */
export const MAX_INSTANCE_TYPES = 600;

/**
 * Karpenter's scheduler marks every NodeClaim it creates "true" or "false" here: whether a `minValues`
 * had to be lowered to what the launch could offer (scheduling/scheduler.go).
 */
export const MIN_VALUES_RELAXED_ANNOTATION = 'karpenter.sh/nodeclaim-min-values-relaxed';

const HASH_ANNOTATION_KEYS = ['karpenter.sh/nodepool-hash', 'karpenter.sh/nodepool-hash-version'] as const;

/**
 * Karpenter names a NodeClaim with `generateName: <pool>-`, which the API server cuts to 58 characters
 * before adding 5 random ones: names stay within 63. Ours keep that bound with 12 hex digits instead.
 */
const MAX_NAME_CHARS = 63;
const NAME_HASH_CHARS = 12;

/** A NodeClaim object as sent to the API server (plain JSON). */
export interface NodeClaimObject {
  readonly apiVersion: typeof NODECLAIM_API_VERSION;
  readonly kind: typeof NODECLAIM_KIND;
  readonly metadata: {
    readonly name: string;
    readonly labels: Record<string, string>;
    readonly annotations: Record<string, string>;
    readonly ownerReferences?: readonly {
      readonly apiVersion: string;
      readonly kind: string;
      readonly name: string;
      readonly uid: string;
      readonly blockOwnerDeletion: boolean;
    }[];
  };
  readonly spec: {
    readonly taints?: readonly Taint[];
    readonly startupTaints?: readonly Taint[];
    readonly requirements: readonly NodeClaimRequirement[];
    readonly resources: { readonly requests: Record<string, string> };
    readonly nodeClassRef: { readonly group: string; readonly kind: string; readonly name: string };
    readonly expireAfter?: string;
    readonly terminationGracePeriod?: string;
  };
}

export interface NodeClaimRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
  readonly minValues?: number;
}

/**
 * The claim's name for (pool, command, replacement index): the same three always give the same name, so
 * a create repeated after a lost answer meets the first claim (409) instead of launching a second node.
 * A DNS-1123 subdomain of at most 63 characters: `<pool, cut>-<12 hex of sha256>`.
 */
export function nodeClaimName(nodePool: string, commandId: string, index: number): string {
  const digest = createHash('sha256').update(`${nodePool}\n${commandId}\n${index}`).digest('hex').slice(0, NAME_HASH_CHARS);
  const room = MAX_NAME_CHARS - NAME_HASH_CHARS - 1;
  // Pool names from the API server are already valid; a hand-written one is made so (lower case, and
  // each dot-separated part starting and ending with a letter or digit once cut).
  const prefix = nodePool
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .slice(0, room)
    .replace(/^[^a-z0-9]+/, '')
    .replace(/[^a-z0-9]+$/, '')
    .replace(/\.[^a-z0-9]+/g, '.')
    .replace(/[^a-z0-9]+\./g, '.');
  return prefix === '' ? `nodeclaim-${digest}` : `${prefix}-${digest}`;
}

/**
 * The label Karpenter puts on every NodeClaim naming its node class: `<group>/<kind in lower case>`
 * (`NodeClassLabelKey` in apis/v1/labels.go), e.g. `karpenter.k8s.aws/ec2nodeclass`.
 */
export function nodeClassLabelKey(ref: { readonly group: string; readonly kind: string }): string {
  return `${ref.group}/${ref.kind.toLowerCase()}`;
}

/** The NodeClaim for one planned replacement. Throws when the pool has no `nodeClaimTemplate`. */
export function buildNodeClaim(request: NodeClaimRequest): NodeClaimObject {
  const { nodePool, replacement } = request;
  const template = nodePool.nodeClaimTemplate;
  if (template === undefined) {
    throw new Error(
      `NodePool "${nodePool.name}" has no spec.template.spec.nodeClassRef, so no NodeClaim can be built from it: Karpenter launches a NodeClaim only through its node class`,
    );
  }
  if (replacement.instanceTypes.length === 0) {
    throw new Error(`the replacement for NodePool "${nodePool.name}" lists no instance type, so its NodeClaim could allow none`);
  }
  const name = nodeClaimName(nodePool.name, request.commandId, request.index);

  const labels: Record<string, string> = {
    ...nodePool.templateLabels,
    [LabelKeys.nodePool]: nodePool.name,
    [nodeClassLabelKey(template.nodeClassRef)]: template.nodeClassRef.name,
  };
  const narrowed = narrowedRequirements(template, request);
  const requirements = withLabelRequirements(narrowed.requirements, labels);
  // Karpenter gives a custom label its value when the requirements leave one to choose
  // (`resolveCustomLabelsFromRequirements`, provisioning/scheduling/nodeclaimtemplate.go).
  Object.assign(labels, customLabels(template.requirements, labels, name));

  const annotations: Record<string, string> = { ...template.annotations };
  for (const key of HASH_ANNOTATION_KEYS) {
    const value = template.hashAnnotations[key];
    if (value !== undefined) annotations[key] = value;
  }
  annotations[MIN_VALUES_RELAXED_ANNOTATION] = narrowed.minValuesRelaxed ? 'true' : 'false';
  annotations[NODECLAIM_COMMAND_ANNOTATION] = request.commandId;
  annotations[NODECLAIM_INDEX_ANNOTATION] = String(request.index);

  return {
    apiVersion: NODECLAIM_API_VERSION,
    kind: NODECLAIM_KIND,
    metadata: {
      name,
      labels,
      annotations,
      // Karpenter owns every claim by its pool (deleting the pool deletes its claims); without the
      // pool's uid there is no valid reference to write, so none is.
      ...(template.nodePoolUid === undefined
        ? {}
        : {
            ownerReferences: [
              { apiVersion: NODECLAIM_API_VERSION, kind: 'NodePool', name: nodePool.name, uid: template.nodePoolUid, blockOwnerDeletion: true },
            ],
          }),
    },
    spec: {
      ...(nodePool.templateTaints.length > 0 ? { taints: nodePool.templateTaints.map(copyTaint) } : {}),
      ...(template.startupTaints.length > 0 ? { startupTaints: template.startupTaints.map(copyTaint) } : {}),
      requirements,
      resources: { requests: resourceRequests(request.requests) },
      nodeClassRef: { group: template.nodeClassRef.group, kind: template.nodeClassRef.kind, name: template.nodeClassRef.name },
      ...(template.expireAfter === undefined ? {} : { expireAfter: template.expireAfter }),
      // Karpenter's own default is nil (`DefaultTerminationGracePeriod`): nothing is written when unset.
      ...(template.terminationGracePeriod === undefined ? {} : { terminationGracePeriod: template.terminationGracePeriod }),
    },
  };
}

function copyTaint(taint: Taint): Taint {
  return taint.value === undefined ? { key: taint.key, effect: taint.effect } : { key: taint.key, value: taint.value, effect: taint.effect };
}

/**
 * The pool's requirements as written, with instance type, capacity type and (when planned) zone
 * replaced by `In` the planned values; a key the pool did not write is added after the others.
 */
function narrowedRequirements(
  template: NodeClaimTemplateSource,
  request: NodeClaimRequest,
): { requirements: NodeClaimRequirement[]; minValuesRelaxed: boolean } {
  const { replacement } = request;
  const instanceTypes = replacement.instanceTypes.slice(0, MAX_INSTANCE_TYPES);
  const writtenTypes = template.requirements.find((r) => r.key === LabelKeys.instanceType);
  // Karpenter keeps the pool's minValues on the instance-type requirement; a launch offering fewer
  // types than that could never satisfy it, so it is lowered to what is offered, which Karpenter's
  // scheduler records as a relaxed minValues.
  const minValues = writtenTypes?.minValues === undefined ? undefined : Math.min(writtenTypes.minValues, instanceTypes.length);
  const minValuesRelaxed = minValues !== undefined && minValues < (writtenTypes?.minValues ?? 0);
  const replaced = new Map<string, NodeClaimRequirement>([
    [LabelKeys.instanceType, { key: LabelKeys.instanceType, operator: 'In', values: instanceTypes, ...(minValues === undefined ? {} : { minValues }) }],
    [LabelKeys.capacityType, { key: LabelKeys.capacityType, operator: 'In', values: [replacement.capacityType] }],
  ]);
  if (replacement.zones.length > 0) replaced.set(LabelKeys.zone, { key: LabelKeys.zone, operator: 'In', values: [...replacement.zones] });

  const requirements: NodeClaimRequirement[] = [];
  const placed = new Set<string>();
  for (const written of template.requirements) {
    const narrowedOne = replaced.get(written.key);
    if (narrowedOne === undefined) {
      requirements.push(copyRequirement(written));
    } else if (!placed.has(written.key)) {
      requirements.push(narrowedOne);
      placed.add(written.key);
    }
  }
  for (const [key, requirement] of replaced) if (!placed.has(key)) requirements.push(requirement);
  return { requirements, minValuesRelaxed };
}

function copyRequirement(r: NodeClaimTemplateSource['requirements'][number]): NodeClaimRequirement {
  return {
    key: r.key,
    operator: r.operator,
    ...(r.values === undefined || r.values.length === 0 ? {} : { values: [...r.values] }),
    ...(r.minValues === undefined ? {} : { minValues: r.minValues }),
  };
}

/**
 * Karpenter adds a requirement `<label> In [<value>]` for each of the claim's labels
 * (`NewLabelRequirements` in `NewNodeClaimTemplate`), intersected with a requirement already on that key.
 */
function withLabelRequirements(requirements: NodeClaimRequirement[], labels: Labels): NodeClaimRequirement[] {
  const out = [...requirements];
  for (const [key, value] of Object.entries(labels)) {
    const at = out.findIndex((r) => r.key === key);
    const single: NodeClaimRequirement = { key, operator: 'In', values: [value] };
    if (at < 0) {
      out.push(single);
    } else {
      // Every requirement on the key is replaced by the single value the label fixes, as the
      // intersection of a compatible pool gives; one with minValues above 1 can only keep 1.
      const existing = out[at]!;
      out[at] = existing.minValues === undefined ? single : { ...single, minValues: 1 };
      for (let i = out.length - 1; i > at; i -= 1) if (out[i]!.key === key) out.splice(i, 1);
    }
  }
  return out;
}

/**
 * Label keys Karpenter (with the AWS provider) knows or reserves: it never invents a value for them,
 * the instance launched decides them (`WellKnownLabels`, `RestrictedLabelDomains`, `RestrictedLabels`
 * and `NormalizedLabels` in apis/v1/labels.go, plus the AWS provider's own).
 */
const WELL_KNOWN_KEYS: ReadonlySet<string> = new Set([
  LabelKeys.nodePool,
  LabelKeys.zone,
  LabelKeys.region,
  LabelKeys.instanceType,
  LabelKeys.arch,
  LabelKeys.os,
  LabelKeys.capacityType,
  LabelKeys.hostname,
  'node.kubernetes.io/windows-build',
  'topology.k8s.aws/zone-id',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
]);
const RESERVED_DOMAINS = ['karpenter.sh', 'karpenter.k8s.aws'];

function isCustomKey(key: string): boolean {
  if (WELL_KNOWN_KEYS.has(key)) return false;
  const slash = key.indexOf('/');
  const domain = slash < 0 ? '' : key.slice(0, slash);
  return !RESERVED_DOMAINS.some((d) => domain === d || domain.endsWith(`.${d}`));
}

/**
 * Values for custom label keys the pool's requirements constrain but no label fixes: Karpenter writes
 * one allowed value as a label so a pod selecting it can land. For `In` it takes one of the values (Go's
 * set order, effectively any; here the first written that every requirement on the key allows); for
 * `Exists`, `NotIn` and the numeric bounds it takes a random integer in bounds, here one derived from the
 * claim's name, so that it is stable for the claim yet differs between claims as Karpenter's does.
 * `DoesNotExist` gives no label.
 */
function customLabels(requirements: NodeClaimTemplateSource['requirements'], labels: Labels, claimName: string): Record<string, string> {
  const byKey = new Map<string, NodeClaimTemplateSource['requirements'][number][]>();
  for (const r of requirements) {
    if (!isCustomKey(r.key) || Object.hasOwn(labels, r.key)) continue;
    byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
  }
  const out: Record<string, string> = {};
  for (const [key, list] of byKey) {
    const value = resolveValue(key, list, claimName);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function resolveValue(key: string, list: readonly NodeClaimTemplateSource['requirements'][number][], claimName: string): string | undefined {
  if (list.some((r) => r.operator === 'DoesNotExist')) return undefined;
  let min = 0;
  let max = Number.MAX_SAFE_INTEGER; // exclusive
  const excluded = new Set<string>();
  let allowed: string[] | undefined;
  for (const r of list) {
    const values = r.values ?? [];
    const n = Number(values[0]);
    switch (r.operator) {
      case 'In':
        allowed = allowed === undefined ? [...values] : allowed.filter((v) => values.includes(v));
        break;
      case 'NotIn':
        values.forEach((v) => excluded.add(v));
        break;
      case 'Gt':
        min = Math.max(min, n + 1);
        break;
      case 'Gte':
        min = Math.max(min, n);
        break;
      case 'Lt':
        max = Math.min(max, n);
        break;
      case 'Lte':
        max = Math.min(max, n + 1);
        break;
    }
  }
  const bounded = list.some((r) => r.operator === 'Gt' || r.operator === 'Gte' || r.operator === 'Lt' || r.operator === 'Lte');
  const inBounds = (v: string) => !bounded || (/^\d+$/.test(v) && Number(v) >= min && Number(v) < max);
  if (allowed !== undefined) return allowed.find((v) => !excluded.has(v) && inBounds(v));
  if (!(min < max)) return undefined;
  const seed = Number.parseInt(createHash('sha256').update(`${claimName}\n${key}`).digest('hex').slice(0, 12), 16);
  const span = max - min;
  for (let step = 0; step <= excluded.size && step < span; step += 1) {
    const candidate = String(min + ((seed + step) % span));
    if (!excluded.has(candidate)) return candidate;
  }
  return undefined;
}

/**
 * spec.resources.requests from model units: cpu millicores as `1500m` (whole cores as `2`), memory and
 * ephemeral storage bytes as `Mi`, `Ki` or plain bytes (the largest unit that divides them), anything
 * else (pods, extended resources) as a count. Amounts are rounded up, as requests are.
 */
export function resourceRequests(requests: Readonly<Record<string, number>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, amount] of Object.entries(requests)) {
    if (!Number.isFinite(amount) || amount < 0) throw new Error(`request ${name} = ${amount} is not a non-negative amount`);
    const whole = Math.ceil(amount);
    if (name === 'cpu') out[name] = cpuQuantity(whole);
    else if (name === 'memory' || name === 'ephemeral-storage') out[name] = byteQuantity(whole);
    else out[name] = String(whole);
  }
  return out;
}

export function cpuQuantity(cpuMillis: number): string {
  return cpuMillis % 1000 === 0 ? String(cpuMillis / 1000) : `${cpuMillis}m`;
}

export function byteQuantity(bytes: number): string {
  if (bytes > 0 && bytes % 1024 ** 2 === 0) return `${bytes / 1024 ** 2}Mi`;
  if (bytes > 0 && bytes % 1024 === 0) return `${bytes / 1024}Ki`;
  return String(bytes);
}
