// Karpenter NodePool objects (`karpenter.sh/v1`, as of Karpenter v1.14) -> the model's NodePool, with
// Karpenter's defaults and validation (docs/file-formats.md, "The NodePools"; Karpenter's
// disruption-controls design). Unknown fields are refused as the CRD's structural schema refuses them
// (nodePoolSchema.ts); `karpenter.sh/v1beta1` is refused with what to convert, because its fields mean
// other things (its WhenUnderutilized is every method, say).
//
// Defaults, when a field is absent:
//   consolidationPolicy WhenEmptyOrUnderutilized; consolidateAfter 15s (Karpenter's disruption-controls
//   design keeps the old consolidation delay); consolidationGracePeriod none; expireAfter 720h; savings
//   threshold 0 cents; budgets one budget of 10% of the pool's nodes; weight 0; no limits; on-demand
//   only (below).
import { CronExpressionParser } from 'cron-parser';
import { InputError } from '../errors.ts';
import type { Budget, DisruptionReason, Labels, NodeClaimTemplateSource, NodePool, Requirement } from '../model/types.ts';
import { LabelKeys } from '../model/types.ts';
import { parseResources } from '../quantity.ts';
import { parseDurationOrNever, parseGoDurationDetailed } from './duration.ts';
import { parseConsolidationPolicy } from './consolidationPolicy.ts';
import { cut, Fields, isRecord, show, type JsonRecord } from './fields.ts';
import { dnsSubdomainProblem } from './names.ts';
import { DISRUPTION_SHAPE, NODE_POOL_SHAPE, rejectUnknownFields } from './nodePoolSchema.ts';
import { parseRequirement, parseTaints } from './selectors.ts';

const API_VERSION = 'karpenter.sh/v1';
/** What a v1beta1 NodePool must change to become v1 (Karpenter's v1 migration), for the error message. */
const V1BETA1_CONVERSION =
  'karpenter.sh/v1beta1 is not supported: convert the NodePool to karpenter.sh/v1 (move spec.disruption.expireAfter to ' +
  'spec.template.spec.expireAfter, replace consolidationPolicy WhenUnderutilized with WhenEmptyOrUnderutilized, set ' +
  'spec.disruption.consolidateAfter, move spec.template.spec.kubelet to the EC2NodeClass, and give nodeClassRef a group ' +
  'and kind instead of apiVersion); `kubectl get nodepools.v1.karpenter.sh -o yaml` prints the converted objects';
/** The CRD's list limits. */
const MAX_REQUIREMENTS = 100;
const MAX_BUDGETS = 50;
/** Reasons a budget may be limited to (Karpenter's three; Expired is not budgeted). */
const BUDGET_REASONS: readonly DisruptionReason[] = ['Empty', 'Underutilized', 'Drifted'];

export const DEFAULT_CONSOLIDATE_AFTER_MS = 15_000;
export const DEFAULT_EXPIRE_AFTER_MS = 720 * 3_600_000;
export const DEFAULT_BUDGETS: readonly Budget[] = [{ nodes: { percent: 10 } }];
/**
 * A pool that says nothing about capacity type launches on-demand only, as Karpenter does: spot must
 * be asked for explicitly.
 */
export const DEFAULT_CAPACITY_TYPE_REQUIREMENT: Requirement = {
  key: LabelKeys.capacityType,
  operator: 'In',
  values: ['on-demand'],
};
/** Labels Karpenter sets itself; a requirement on them could never be met by a new node. */
const RESTRICTED_REQUIREMENT_KEYS: ReadonlySet<string> = new Set([LabelKeys.nodePool, LabelKeys.hostname]);
/** NodePool annotations with this prefix are launch settings for the actuator (`launch`). */
const LAUNCH_ANNOTATION_PREFIX = 'eks-consolidator/';

/**
 * Hands a pool's consolidation over to eks-consolidator while Karpenter keeps provisioning it: the
 * annotation holds a JSON object shaped like `spec.disruption` (consolidationPolicy, consolidateAfter,
 * budgets, ...), which this product uses instead of `spec.disruption`; `spec.disruption` is then what
 * Karpenter reads, and should stop Karpenter's own consolidation (`consolidateAfter: Never`).
 */
export const HANDOVER_ANNOTATION = 'eks-consolidator.io/disruption';

/** The pool used when no NodePool file is given: every default above. */
export function defaultNodePool(): NodePool {
  return {
    name: 'default',
    weight: 0,
    templateLabels: {},
    templateTaints: [],
    requirements: [DEFAULT_CAPACITY_TYPE_REQUIREMENT],
    expireAfterMs: DEFAULT_EXPIRE_AFTER_MS,
    consolidationPolicy: 'WhenEmptyOrUnderutilized',
    consolidateAfterMs: DEFAULT_CONSOLIDATE_AFTER_MS,
    consolidationGracePeriodMs: null,
    savingsThresholdCents: 0,
    budgets: DEFAULT_BUDGETS,
    limits: {},
  };
}

/** `nodes`: a count (int or digit string) or a percentage `N%` with N in 0..100. */
function parseBudgetNodes(f: Fields, raw: unknown, path: string): Budget['nodes'] {
  // Karpenter defaults a budget's nodes to 10% when the field is left out.
  if (raw === undefined || raw === null) return { percent: 10 };
  const problem = `${show(raw)} must be a non-negative node count or a percentage from 0% to 100%`;
  if (typeof raw === 'number') {
    if (!Number.isSafeInteger(raw) || raw < 0) f.fail(path, problem);
    return { count: raw };
  }
  if (typeof raw !== 'string') return f.fail(path, problem);
  const percent = /^(\d{1,3})%$/.exec(raw);
  if (percent) {
    const value = Number(percent[1]);
    if (value > 100) f.fail(path, problem);
    return { percent: value };
  }
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) f.fail(path, problem);
  return { count: Number(raw) };
}

/** Five-field cron (minute hour day-of-month month day-of-week) or a macro; always UTC. */
const CRON_MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/**
 * Validates a budget schedule and returns it as five fields (macros expanded, so whoever evaluates it
 * needs no macro table). The cron library also takes seconds and 4-field forms; Kubernetes CronJob
 * syntax does not, so the field count is checked here.
 */
export function normalizeSchedule(f: Fields, raw: unknown, path: string): string {
  const text = f.string(raw, path).trim();
  const expanded = CRON_MACROS[text.toLowerCase()] ?? text;
  if (/^(CRON_)?TZ=/.test(expanded)) f.fail(path, `${show(raw)}: time zones are not supported, schedules are in UTC`);
  const fields = expanded.split(/\s+/);
  if (fields.length !== 5) {
    f.fail(path, `${show(raw)} is not a cron schedule: expected 5 fields (minute hour day-of-month month day-of-week) or a macro such as @daily`);
  }
  try {
    // A fixed start date: validation must not depend on when it runs.
    CronExpressionParser.parse(expanded, { tz: 'UTC', currentDate: 0 });
  } catch (error) {
    f.fail(path, `${show(raw)} is not a valid cron schedule: ${error instanceof Error ? error.message : String(error)}`);
  }
  return fields.join(' ');
}

/**
 * A budget window: whole hours and minutes only (`8h`, `90m`, `1h30m`; Go's printed `1h30m0s` too),
 * because cron schedules tick in minutes (Karpenter's disruption-controls design).
 */
function parseBudgetDuration(f: Fields, raw: unknown, path: string): number {
  const text = f.string(raw, path);
  const parsed = f.at(path, () => parseGoDurationDetailed(text));
  const minutesOnly = parsed.components.every(
    (c, i) =>
      (/^\d+$/.test(c.number) && (c.unit === 'h' || c.unit === 'm')) ||
      (c.unit === 's' && /^0+$/.test(c.number) && i === parsed.components.length - 1 && i > 0),
  );
  if (!minutesOnly || parsed.ms < 0 || text.startsWith('-') || text.startsWith('+')) {
    f.fail(path, `${show(text)} must be whole hours and minutes such as 8h, 90m or 1h30m (schedules have minute resolution)`);
  }
  return parsed.ms;
}

function parseBudget(f: Fields, raw: unknown, path: string): Budget {
  const b = f.record(raw, path);
  const nodes = parseBudgetNodes(f, b['nodes'], `${path}.nodes`);
  const hasSchedule = b['schedule'] !== undefined && b['schedule'] !== null;
  const hasDuration = b['duration'] !== undefined && b['duration'] !== null;
  if (hasSchedule && !hasDuration) f.fail(path, 'schedule requires duration');
  if (hasDuration && !hasSchedule) f.fail(path, 'duration requires schedule');
  const schedule = hasSchedule ? normalizeSchedule(f, b['schedule'], `${path}.schedule`) : undefined;
  const durationMs = hasDuration ? parseBudgetDuration(f, b['duration'], `${path}.duration`) : undefined;
  const reasons = f.optArray(b['reasons'], `${path}.reasons`).map((r, i) => f.oneOf(r, `${path}.reasons[${i}]`, BUDGET_REASONS));
  return {
    nodes,
    ...(schedule === undefined ? {} : { schedule, durationMs }),
    // An empty reasons list means the same as none: the budget applies to every reason.
    ...(reasons.length > 0 ? { reasons: [...new Set(reasons)] } : {}),
  };
}

/**
 * `consolidationSavingsThresholdCents` (Karpenter's savings-threshold design): a non-negative decimal,
 * as text or a number.
 */
function parseSavingsThreshold(f: Fields, raw: unknown, path: string): number {
  if (raw === undefined || raw === null) return 0;
  const problem = `${show(raw)} must be a non-negative number of cents, such as "0.5"`;
  if (typeof raw === 'number') {
    if (!Number.isFinite(raw) || raw < 0) f.fail(path, problem);
    return raw;
  }
  if (typeof raw !== 'string' || !/^\+?(\d+\.?\d*|\.\d+)$/.test(raw.trim())) return f.fail(path, problem);
  return Number(raw.trim());
}

function parseWeight(f: Fields, raw: unknown, path: string): number {
  const weight = f.optInteger(raw, path);
  if (weight === undefined) return 0;
  if (weight < 1 || weight > 100) f.fail(path, `${weight} must be an integer from 1 to 100`);
  return weight;
}

function nillableDuration(f: Fields, raw: unknown, path: string, fallback: number | null): number | null {
  if (raw === undefined || raw === null) return fallback;
  return f.at(path, () => parseDurationOrNever(raw));
}

function parseLaunch(f: Fields, templateSpec: JsonRecord, annotations: Record<string, string>): Record<string, unknown> | undefined {
  const launch: Record<string, unknown> = {};
  const nodeClassRef = f.optRecord(templateSpec['nodeClassRef'], 'spec.template.spec.nodeClassRef');
  if (nodeClassRef) launch['nodeClassRef'] = structuredClone(nodeClassRef);
  for (const [key, value] of Object.entries(annotations)) {
    if (key.startsWith(LAUNCH_ANNOTATION_PREFIX)) launch[key] = value;
  }
  return Object.keys(launch).length > 0 ? launch : undefined;
}

/**
 * The NodePool's own annotations Karpenter's hash controller (controllers/nodepool/hash) writes; a claim
 * carrying them is compared against its pool for static drift (nodeclaim/disruption/drift.go).
 */
const NODEPOOL_HASH_ANNOTATIONS = ['karpenter.sh/nodepool-hash', 'karpenter.sh/nodepool-hash-version'] as const;
/** The CRD's pattern for NodeClaim and NodePool `terminationGracePeriod` (no `Never`, no fractions). */
const TERMINATION_GRACE_PERIOD = /^([0-9]+(s|m|h))+$/;

interface TemplateParts {
  readonly metadata: JsonRecord;
  readonly annotations: Labels;
  readonly templateMeta: JsonRecord;
  readonly templateSpec: JsonRecord;
  /** The pool's requirements as written (no default added), already checked. */
  readonly requirements: readonly Requirement[];
}

/**
 * What a NodeClaim built from this pool copies besides labels and taints, the way Karpenter's
 * provisioner copies it (`NodeClaimTemplate.ToNodeClaim` in apis/v1/nodepool.go, then
 * provisioning/scheduling/nodeclaimtemplate.go). Only a pool with a `nodeClassRef` has one: Karpenter
 * cannot launch a NodeClaim without a node class, so a pool without one cannot be acted on through it.
 */
function parseNodeClaimTemplate(f: Fields, parts: TemplateParts): NodeClaimTemplateSource | undefined {
  const refPath = 'spec.template.spec.nodeClassRef';
  const ref = f.optRecord(parts.templateSpec['nodeClassRef'], refPath);
  if (ref === undefined) return undefined;
  const group = f.string(ref['group'], `${refPath}.group`);
  // The CRD's pattern: a group is an API group name, never `group/version`.
  if (group.includes('/')) f.fail(`${refPath}.group`, `${show(group)} must be an API group without a version, such as "karpenter.k8s.aws"`);
  const nodeClassRef = { group, kind: f.string(ref['kind'], `${refPath}.kind`), name: f.string(ref['name'], `${refPath}.name`) };

  const uid = f.optString(parts.metadata['uid'], 'metadata.uid');
  const hashAnnotations: Record<string, string> = {};
  for (const key of NODEPOOL_HASH_ANNOTATIONS) {
    const value = parts.annotations[key];
    if (value !== undefined) hashAnnotations[key] = value;
  }
  // expireAfter's value is checked where the pool reads it (expireAfterMs); YAML's bare 0 is `0s`.
  const rawExpireAfter = parts.templateSpec['expireAfter'];
  const expireAfter = typeof rawExpireAfter === 'string' ? rawExpireAfter : rawExpireAfter === 0 ? '0s' : undefined;
  const gracePath = 'spec.template.spec.terminationGracePeriod';
  const terminationGracePeriod = f.optString(parts.templateSpec['terminationGracePeriod'], gracePath);
  if (terminationGracePeriod !== undefined && !TERMINATION_GRACE_PERIOD.test(terminationGracePeriod)) {
    f.fail(gracePath, `${show(terminationGracePeriod)} must be a duration of whole hours, minutes and seconds such as 24h or 1h30m (the CRD's pattern; Never is not allowed)`);
  }
  return {
    ...(uid === undefined || uid === '' ? {} : { nodePoolUid: uid }),
    annotations: f.stringMap(parts.templateMeta['annotations'], 'spec.template.metadata.annotations'),
    hashAnnotations,
    startupTaints: parseTaints(f, parts.templateSpec['startupTaints'], 'spec.template.spec.startupTaints'),
    nodeClassRef,
    ...(expireAfter === undefined ? {} : { expireAfter }),
    ...(terminationGracePeriod === undefined ? {} : { terminationGracePeriod }),
    requirements: parts.requirements.map((r) => ({
      key: r.key,
      operator: r.operator,
      ...(r.values.length > 0 ? { values: [...r.values] } : {}),
      ...(r.minValues === undefined ? {} : { minValues: r.minValues }),
    })),
  };
}

export interface NodePoolParseOptions {
  /**
   * The objects come from the cluster's API server, which has already checked them against the CRD
   * installed there: unknown fields are then not refused, since a Karpenter newer than v1.14 may have
   * added fields, and refusing them would stop every pass after a Karpenter upgrade.
   */
  readonly fromApiServer?: boolean;
}

function parseNodePool(raw: JsonRecord, index: number, options: NodePoolParseOptions): NodePool {
  const rawName = isRecord(raw['metadata']) ? raw['metadata']['name'] : undefined;
  // A name too long to be valid is cut here too: every message about the pool starts with it.
  const f: Fields = new Fields(typeof rawName === 'string' && rawName !== '' ? `NodePool "${cut(rawName, 80)}"` : `NodePool (document ${index + 1})`);
  const apiVersion = f.optString(raw['apiVersion'], 'apiVersion');
  if (apiVersion === 'karpenter.sh/v1beta1') f.fail('apiVersion', V1BETA1_CONVERSION);
  if (apiVersion !== undefined && apiVersion !== API_VERSION) f.fail('apiVersion', `${show(apiVersion)} is not supported; use ${API_VERSION}`);
  if (!options.fromApiServer) rejectUnknownFields(f, raw, NODE_POOL_SHAPE, '');
  const metadata = f.record(raw['metadata'], 'metadata');
  const name = f.string(metadata['name'], 'metadata.name');
  const nameProblem = dnsSubdomainProblem(name);
  if (nameProblem !== undefined) f.fail('metadata.name', nameProblem);
  const annotations = f.stringMap(metadata['annotations'], 'metadata.annotations');
  const spec = f.record(raw['spec'] ?? {}, 'spec');
  const template = f.optRecord(spec['template'], 'spec.template') ?? {};
  const templateMeta = f.optRecord(template['metadata'], 'spec.template.metadata') ?? {};
  const templateSpec = f.optRecord(template['spec'], 'spec.template.spec') ?? {};
  const specDisruption = f.optRecord(spec['disruption'], 'spec.disruption') ?? {};
  const handover = annotations[HANDOVER_ANNOTATION];
  const disruption = handover === undefined ? specDisruption : parseHandover(f, handover);

  const requirementsRaw = f.optArray(templateSpec['requirements'], 'spec.template.spec.requirements');
  if (requirementsRaw.length > MAX_REQUIREMENTS) f.fail('spec.template.spec.requirements', `has ${requirementsRaw.length} entries; Karpenter allows at most ${MAX_REQUIREMENTS}`);
  const requirements = requirementsRaw.map((r, i) => {
    const path = `spec.template.spec.requirements[${i}]`;
    const requirement = parseRequirement(f, r, path, 'karpenter');
    if (RESTRICTED_REQUIREMENT_KEYS.has(requirement.key)) {
      f.fail(`${path}.key`, `${show(requirement.key)} is set by Karpenter on every node and cannot be required`);
    }
    if (isRestrictedKarpenterDomain(requirement.key)) f.fail(`${path}.key`, `${show(requirement.key)}: the karpenter.sh label domain is restricted`);
    return requirement;
  });
  const templateLabels = f.stringMap(templateMeta['labels'], 'spec.template.metadata.labels');
  for (const key of Object.keys(templateLabels)) {
    const path = `spec.template.metadata.labels["${key}"]`;
    if (RESTRICTED_REQUIREMENT_KEYS.has(key)) f.fail(path, `label ${show(key)} is restricted (Karpenter sets it)`);
    if (isRestrictedKarpenterDomain(key)) f.fail(path, `label ${show(key)}: the karpenter.sh label domain is restricted`);
  }
  // What a NodeClaim copies is the requirements as written: read them before the default is added.
  const writtenRequirements = [...requirements];
  if (!requirements.some((r) => r.key === LabelKeys.capacityType)) requirements.push(DEFAULT_CAPACITY_TYPE_REQUIREMENT);

  const budgets = parseBudgets(f, disruption['budgets']);
  const replicas = parseReplicas(f, spec);

  const launch = parseLaunch(f, templateSpec, annotations);
  const nodeClaimTemplate = parseNodeClaimTemplate(f, { metadata, annotations, templateMeta, templateSpec, requirements: writtenRequirements });
  // Karpenter never consolidates a static pool, whatever spec.disruption says.
  const karpenterConsolidates =
    replicas !== undefined ? false : handover === undefined ? wouldConsolidate(disruption['consolidateAfter'], budgets) : karpenterView(f, specDisruption);
  const policy = parseConsolidationPolicy(f, disruption['consolidationPolicy'], 'spec.disruption.consolidationPolicy', handover !== undefined);
  return {
    name,
    weight: parseWeight(f, spec['weight'], 'spec.weight'),
    templateLabels,
    templateTaints: parseTaints(f, templateSpec['taints'], 'spec.template.spec.taints'),
    requirements,
    expireAfterMs: nillableDuration(f, templateSpec['expireAfter'], 'spec.template.spec.expireAfter', DEFAULT_EXPIRE_AFTER_MS),
    consolidationPolicy: policy.policy,
    ...(policy.balancedK !== undefined ? { balancedK: policy.balancedK } : {}),
    consolidateAfterMs: nillableDuration(f, disruption['consolidateAfter'], 'spec.disruption.consolidateAfter', DEFAULT_CONSOLIDATE_AFTER_MS),
    // Unset and Never both mean no grace period (Karpenter's consolidationGracePeriod design).
    consolidationGracePeriodMs: nillableDuration(f, disruption['consolidationGracePeriod'], 'spec.disruption.consolidationGracePeriod', null),
    savingsThresholdCents: parseSavingsThreshold(f, disruption['consolidationSavingsThresholdCents'], 'spec.disruption.consolidationSavingsThresholdCents'),
    budgets,
    limits: parseResources(spec['limits'], 'spec.limits', f.object),
    ...(launch ? { launch } : {}),
    ...(nodeClaimTemplate ? { nodeClaimTemplate } : {}),
    ...(replicas === undefined ? {} : { replicas }),
    karpenterConsolidates,
    ...(handover === undefined ? {} : { handedOver: true }),
  };
}

/** The handover annotation's JSON object, in place of `spec.disruption`. */
function parseHandover(f: Fields, text: string): JsonRecord {
  const path = `metadata.annotations["${HANDOVER_ANNOTATION}"]`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return f.fail(path, `is not JSON (${error instanceof Error ? error.message : String(error)}); write it like spec.disruption, e.g. {"consolidationPolicy":"WhenEmptyOrUnderutilized","consolidateAfter":"1m"}`);
  }
  const record = f.record(value, path);
  // An annotation's value is a string to the API server, which never looks inside it: the refusal is ours.
  rejectUnknownFields(f, record, DISRUPTION_SHAPE, path, "the annotation takes the fields of Karpenter v1.14's spec.disruption only (eks-consolidator checks it; the API server does not)");
  return record;
}

/**
 * `budgets`. An explicit `budgets: []` is kept empty: Kubernetes applies the default only to an
 * absent field, and a pool with no budget is not limited by one.
 */
function parseBudgets(f: Fields, raw: unknown): readonly Budget[] {
  if (raw === undefined || raw === null) return DEFAULT_BUDGETS;
  const list = f.array(raw, 'spec.disruption.budgets');
  if (list.length > MAX_BUDGETS) f.fail('spec.disruption.budgets', `has ${list.length} budgets; Karpenter allows at most ${MAX_BUDGETS}`);
  return list.map((b, i) => parseBudget(f, b, `spec.disruption.budgets[${i}]`));
}

/**
 * `spec.replicas` (Karpenter v1.14, alpha): a static pool keeps that many nodes and is never
 * consolidated. The CRD refuses `weight` and any limit but `nodes` on such a pool.
 */
function parseReplicas(f: Fields, spec: JsonRecord): number | undefined {
  const replicas = f.optInteger(spec['replicas'], 'spec.replicas');
  if (replicas === undefined) return undefined;
  if (replicas < 0) f.fail('spec.replicas', `${replicas} must not be negative`);
  if (spec['weight'] !== undefined && spec['weight'] !== null) f.fail('spec.weight', 'is not supported on a static NodePool (spec.replicas is set)');
  const limits = f.optRecord(spec['limits'], 'spec.limits') ?? {};
  const other = Object.keys(limits).filter((key) => key !== 'nodes');
  if (other.length > 0) f.fail(`spec.limits.${other[0]}`, 'only limits.nodes is supported on a static NodePool (spec.replicas is set)');
  return replicas;
}

/** Karpenter reserves label keys in the karpenter.sh domain, except the two it lets users require. */
function isRestrictedKarpenterDomain(key: string): boolean {
  if (key === LabelKeys.capacityType || key === LabelKeys.nodePool) return false;
  const slash = key.indexOf('/');
  return slash > 0 && key.slice(0, slash).endsWith('karpenter.sh');
}

/** Whether Karpenter, reading `spec.disruption` as given, would consolidate the pool. */
function karpenterView(f: Fields, specDisruption: JsonRecord): boolean {
  return wouldConsolidate(specDisruption['consolidateAfter'], parseBudgets(f, specDisruption['budgets']));
}

/**
 * Consolidation is off when consolidateAfter is Never, or when a budget without a schedule allows 0
 * nodes for both consolidation reasons (the most restrictive budget wins, Karpenter's disruption-controls
 * design).
 */
function wouldConsolidate(consolidateAfter: unknown, budgets: readonly Budget[]): boolean {
  if (consolidateAfter === 'Never') return false;
  const zeroAlways = (reason: DisruptionReason) =>
    budgets.some((b) => b.schedule === undefined && (b.reasons === undefined || b.reasons.includes(reason)) && ('count' in b.nodes ? b.nodes.count === 0 : b.nodes.percent === 0));
  return !(zeroAlways('Empty') && zeroAlways('Underutilized'));
}

/**
 * Yields the documents, flattening `List`s (`kubectl get nodepools -o json`); items of a typed list
 * (`NodePoolList`) may leave out their kind. Empty YAML documents are skipped.
 */
function* flatten(docs: readonly unknown[], path: string, itemKind?: string): Generator<{ doc: unknown; where: string }> {
  for (const [i, doc] of docs.entries()) {
    // Empty YAML documents are skipped; an empty entry in a List's items is an error (below).
    if ((doc === null || doc === undefined) && path === '') continue;
    const where = path === '' ? `document ${i + 1}` : `${path}.items[${i}]`;
    if (isRecord(doc) && typeof doc['kind'] === 'string' && doc['kind'].endsWith('List') && (Object.hasOwn(doc, 'items') || doc['kind'] === 'List') && !Array.isArray(doc['items'])) {
      throw new InputError(where, 'items', doc['items'] === undefined ? `is required in a ${doc['kind']}` : `must be a list, got ${show(doc['items'])}`);
    }
    if (isRecord(doc) && doc['kind'] === undefined && itemKind !== undefined) {
      yield { doc: { ...doc, kind: itemKind }, where };
    } else if (isRecord(doc) && typeof doc['kind'] === 'string' && doc['kind'].endsWith('List') && Array.isArray(doc['items'])) {
      yield* flatten(doc['items'], where, doc['kind'] === 'List' ? undefined : doc['kind'].slice(0, -'List'.length));
    } else {
      yield { doc, where };
    }
  }
}

/**
 * Parses NodePool documents. Objects of other kinds (an EC2NodeClass kept in the same file, say) are
 * skipped; a document that is not an object or has no kind is an error. Pool names must be unique.
 */
export function parseNodePools(docs: readonly unknown[], options: NodePoolParseOptions = {}): NodePool[] {
  const pools: NodePool[] = [];
  const firstSeen = new Map<string, number>();
  let index = 0;
  for (const { doc, where } of flatten(docs, '')) {
    if (!isRecord(doc)) throw new InputError(where, '', `must be an object, got ${show(doc)}`);
    if (typeof doc['kind'] !== 'string' || doc['kind'] === '') throw new InputError(where, 'kind', 'is required');
    if (doc['kind'] !== 'NodePool') continue;
    const pool = parseNodePool(doc, index++, options);
    const earlier = firstSeen.get(pool.name);
    if (earlier !== undefined) {
      throw new InputError(`NodePool "${pool.name}"`, 'metadata.name', `duplicate NodePool name (also NodePool number ${earlier + 1})`);
    }
    firstSeen.set(pool.name, pools.length);
    pools.push(pool);
  }
  return pools;
}
