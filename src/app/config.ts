// The Lambda's configuration: read once per container (at cold start) from the environment, checked,
// and typed. A bad value is a `ConfigError` whose message names the variable, what it holds and what
// it should hold, so that a misconfigured stage says so in its first log line.
//
//   CLUSTER_NAME                        required; the EKS cluster (also the state table partition)
//   AWS_REGION                          required (Lambda sets it); the cluster's region
//   TABLE_NAME                          required; the DynamoDB state table
//   CLUSTER_SOURCE                      `eks` (default) | `file:<path>` (local invoke and demos: dry runs only)
//   NODEPOOLS_SOURCE                    `kubernetes` (default: karpenter.sh/v1 NodePools from the cluster)
//                                       | `file:<path>` (a YAML/JSON file shipped in the package)
//   FEATURE_GATES                       Karpenter's syntax, e.g. `SpotToSpotConsolidation=true`
//   DRY_RUN                             `true` (default: safe by default) | `false`
//   REPLACEMENT_BOUND                   `2` (default): a replacement is at most 2x the largest node a move
//                                       removes; `off`; or e.g. `3,maxPods=110`
//   PLAN_WAVES                          the later passes a plan projects (laterWaves.ts): `default` (20
//                                       waves, about twice the pass's own work), `N` waves, or `off`; default
//                                       `default` for a dry run, `off` when acting (the actuator uses none)
//   CATALOG_MAX_AGE_HOURS               12; how long a cached live catalog is used without asking AWS
//   FUNCTION_TIMEOUT_SECONDS            the function's own timeout (serverless.yml sets it from the same
//                                       value); default 300
//   LEASE_TTL_SECONDS                   the pass lease; must exceed FUNCTION_TIMEOUT_SECONDS, so a lease
//                                       cannot expire under a live invocation (default: timeout + 60)
//   REPLACEMENT_READY_TIMEOUT_SECONDS   600; how long the actuator waits for a replacement node
//   DRAIN_TIMEOUT_SECONDS               3600; a drain without progress this long is given up (the old
//                                       nodes are untainted and uncordoned)
//   KARPENTER                           `auto` (default) | `present` | `absent`: whether Karpenter's own
//                                       disruption controller runs next to this product (auto: detected
//                                       from node labels, or assumed when NodePools come from the API)
//   ACTUATOR                            `auto` (default) | `karpenter` | `ec2`: how decisions are carried out;
//                                       karpenter: NodeClaims (nodes stay in Karpenter's lifecycle), ec2:
//                                       CreateFleet from launch templates; auto: karpenter for the pools
//                                       Karpenter serves (as KARPENTER detects it), ec2 for the others
//   MAX_NODES_PER_COMMAND               100; the most nodes one decision disrupts (a positive whole
//                                       number; 100 is the cap of Karpenter's multi-node consolidation)
//   PREFERENCE_POLICY                   `Respect` (default) | `Ignore`: Karpenter's setting of that name;
//                                       Respect holds pods to their preferred affinities and ScheduleAnyway
//                                       spread until nothing fits, Ignore reads only what pods require
//   DYNAMODB_ENDPOINT                   optional; e.g. `http://127.0.0.1:8000` (dynalite) for local runs
//   LOG_LEVEL                           `debug` | `info` (default) | `warn` | `error`
//
// Relative `file:` paths are resolved against the working directory: in Lambda that is the task root,
// where serverless.yml `package.patterns` puts the files; `sls invoke local` runs in .esbuild/.build,
// where serverless-esbuild copies the same files.
import { isAbsolute, resolve } from 'node:path';
import { InputError } from '../core/errors.ts';
import type { KarpenterPresence } from '../core/disruption/coexistence.ts';
import { parseFeatureGates, type FeatureGates } from '../core/featureGates.ts';
import { parseReplacementBound, type ReplacementBound } from '../core/disruption/sizeBound.ts';
import { parsePlanWaves, type PlanWaves } from '../core/disruption/laterWaves.ts';
import { parsePreferencePolicy, type PreferencePolicy } from '../core/scheduling/preferences.ts';
import { parseActuatorSetting, type ActuatorSetting } from '../core/disruption/actuatorChoice.ts';
import { parseMaxNodesPerCommand } from '../core/disruption/commandCap.ts';

export type ClusterSourceConfig = { readonly kind: 'eks' } | { readonly kind: 'file'; readonly path: string };
export type NodePoolsSourceConfig = { readonly kind: 'kubernetes' } | { readonly kind: 'file'; readonly path: string };
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Config {
  readonly clusterName: string;
  readonly region: string;
  readonly tableName: string;
  readonly clusterSource: ClusterSourceConfig;
  readonly nodePoolsSource: NodePoolsSourceConfig;
  readonly gates: FeatureGates;
  /** How large a replacement may be (null: unbounded). */
  readonly replacementBound: ReplacementBound | null;
  readonly planWaves: PlanWaves;
  /** The default for every invocation; an event may only make a run drier (see handlers/pass.ts). */
  readonly dryRun: boolean;
  readonly catalogMaxAgeMs: number;
  readonly leaseTtlMs: number;
  /** The function's timeout as deployed; the lease TTL exceeds it. */
  readonly functionTimeoutMs: number;
  readonly replacementReadyTimeoutMs: number;
  readonly drainTimeoutMs: number;
  readonly karpenter: KarpenterPresence;
  /** Which actuator acts on the pools; the plan's `actuators` says what `auto` chose per pool. */
  readonly actuator: ActuatorSetting;
  /** The most nodes one decision disrupts. */
  readonly maxNodesPerCommand: number;
  /** Karpenter's preference policy (core/scheduling/preferences.ts). */
  readonly preferencePolicy: PreferencePolicy;
  readonly dynamoDbEndpoint?: string;
  readonly logLevel: LogLevel;
}

/** A configuration variable is missing or holds a value that cannot be used. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    /** The environment variable, e.g. `LEASE_TTL_SECONDS`. */
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`configuration: ${variable}: ${problem}`);
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

/** Reads and checks every variable; throws the first `ConfigError` found. */
export function loadConfig(env: Env, baseDir: string = process.cwd()): Config {
  const clusterName = required(env, 'CLUSTER_NAME');
  // EKS cluster names: 1-100 characters, letters, digits, hyphens and underscores, starting alphanumeric.
  if (!/^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/.test(clusterName)) {
    throw new ConfigError('CLUSTER_NAME', `${JSON.stringify(clusterName)} is not an EKS cluster name (letters, digits, - and _, up to 100)`);
  }
  const region = required(env, 'AWS_REGION');
  if (!/^[a-z]{2}(-[a-z]+)+-\d+$/.test(region)) {
    throw new ConfigError('AWS_REGION', `${JSON.stringify(region)} is not an AWS region such as us-east-1`);
  }
  const tableName = required(env, 'TABLE_NAME');
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
    throw new ConfigError('TABLE_NAME', `${JSON.stringify(tableName)} is not a DynamoDB table name (3-255 of A-Z a-z 0-9 _ - .)`);
  }

  const clusterSource = source(env, 'CLUSTER_SOURCE', 'eks', baseDir) as ClusterSourceConfig;
  const nodePoolsSource = source(env, 'NODEPOOLS_SOURCE', 'kubernetes', baseDir) as NodePoolsSourceConfig;
  if (nodePoolsSource.kind === 'kubernetes' && clusterSource.kind !== 'eks') {
    throw new ConfigError('NODEPOOLS_SOURCE', 'is `kubernetes` (the default) but CLUSTER_SOURCE is a file: there is no API to read NodePools from; use file:<path>');
  }

  let gates: FeatureGates;
  try {
    gates = parseFeatureGates(env['FEATURE_GATES'], 'FEATURE_GATES');
  } catch (error) {
    if (error instanceof InputError) throw new ConfigError('FEATURE_GATES', error.problem);
    throw error;
  }

  let replacementBound: ReplacementBound | null;
  try {
    replacementBound = parseReplacementBound(env['REPLACEMENT_BOUND'], 'REPLACEMENT_BOUND');
  } catch (error) {
    if (error instanceof InputError) throw new ConfigError('REPLACEMENT_BOUND', error.problem);
    throw error;
  }

  const dryRun = boolean(env, 'DRY_RUN', true);
  if (!dryRun && clusterSource.kind === 'file') {
    throw new ConfigError('DRY_RUN', 'is false but CLUSTER_SOURCE is a file: a cluster read from a file cannot be acted on; set DRY_RUN=true');
  }

  let planWaves: PlanWaves;
  try {
    planWaves = env['PLAN_WAVES'] === undefined ? (dryRun ? 'default' : 0) : parsePlanWaves(env['PLAN_WAVES'], 'PLAN_WAVES');
  } catch (error) {
    if (error instanceof InputError) throw new ConfigError('PLAN_WAVES', error.problem);
    throw error;
  }

  const karpenter = (optional(env, 'KARPENTER')?.toLowerCase() ?? 'auto') as KarpenterPresence;
  if (!['auto', 'present', 'absent'].includes(karpenter)) {
    throw new ConfigError('KARPENTER', `${JSON.stringify(env['KARPENTER'])} is not auto, present or absent`);
  }

  let actuator: ActuatorSetting;
  let maxNodesPerCommand: number;
  try {
    actuator = parseActuatorSetting(env['ACTUATOR'], 'ACTUATOR');
  } catch (error) {
    if (error instanceof InputError) throw new ConfigError('ACTUATOR', error.problem);
    throw error;
  }
  try {
    maxNodesPerCommand = parseMaxNodesPerCommand(env['MAX_NODES_PER_COMMAND'], 'MAX_NODES_PER_COMMAND');
  } catch (error) {
    if (error instanceof InputError) throw new ConfigError('MAX_NODES_PER_COMMAND', error.problem);
    throw error;
  }

  let preferencePolicy: PreferencePolicy;
  try {
    preferencePolicy = parsePreferencePolicy(env['PREFERENCE_POLICY'], 'PREFERENCE_POLICY');
  } catch (error) {
    if (error instanceof InputError) throw new ConfigError('PREFERENCE_POLICY', error.problem);
    throw error;
  }

  const dynamoDbEndpoint = optional(env, 'DYNAMODB_ENDPOINT');
  if (dynamoDbEndpoint !== undefined && !/^https?:\/\/[^\s/]+/.test(dynamoDbEndpoint)) {
    throw new ConfigError('DYNAMODB_ENDPOINT', `${JSON.stringify(dynamoDbEndpoint)} is not an http(s) URL`);
  }

  const logLevel = (optional(env, 'LOG_LEVEL')?.toLowerCase() ?? 'info') as LogLevel;
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `${JSON.stringify(env['LOG_LEVEL'])} is not debug, info, warn or error`);
  }

  const functionTimeoutSeconds = number(env, 'FUNCTION_TIMEOUT_SECONDS', 300, { min: 1, max: 900, integer: true });
  const leaseTtlSeconds = number(env, 'LEASE_TTL_SECONDS', functionTimeoutSeconds + 60, { min: 30, max: 3_600, integer: true });
  // A lease shorter than the invocation could expire under a live pass and let a second one act too.
  if (leaseTtlSeconds <= functionTimeoutSeconds) {
    throw new ConfigError(
      'LEASE_TTL_SECONDS',
      `${leaseTtlSeconds} must be longer than the function timeout (FUNCTION_TIMEOUT_SECONDS=${functionTimeoutSeconds}), so that the lease cannot expire while a pass still runs`,
    );
  }

  return {
    clusterName,
    region,
    tableName,
    clusterSource,
    nodePoolsSource,
    gates,
    replacementBound,
    planWaves,
    dryRun,
    catalogMaxAgeMs: number(env, 'CATALOG_MAX_AGE_HOURS', 12, { min: 0, max: 24 * 30 }) * 3_600_000,
    leaseTtlMs: leaseTtlSeconds * 1000,
    functionTimeoutMs: functionTimeoutSeconds * 1000,
    replacementReadyTimeoutMs: number(env, 'REPLACEMENT_READY_TIMEOUT_SECONDS', 600, { min: 30, max: 3_600, integer: true }) * 1000,
    karpenter,
    actuator,
    maxNodesPerCommand,
    preferencePolicy,
    drainTimeoutMs: number(env, 'DRAIN_TIMEOUT_SECONDS', 3_600, { min: 60, max: 7 * 24 * 3_600, integer: true }) * 1000,
    ...(dynamoDbEndpoint === undefined ? {} : { dynamoDbEndpoint }),
    logLevel,
  };
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function required(env: Env, name: string): string {
  const value = optional(env, name);
  if (value === undefined) throw new ConfigError(name, 'is required but not set');
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const value = optional(env, name);
  if (value === undefined) return fallback;
  const lower = value.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw new ConfigError(name, `${JSON.stringify(value)} is not true or false`);
}

function number(env: Env, name: string, fallback: number, range: { min: number; max: number; integer?: boolean }): number {
  const value = optional(env, name);
  if (value === undefined) return fallback;
  const parsed = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(parsed) || (range.integer && !Number.isInteger(parsed))) {
    throw new ConfigError(name, `${JSON.stringify(value)} is not ${range.integer ? 'a whole number' : 'a number'}`);
  }
  if (parsed < range.min || parsed > range.max) {
    throw new ConfigError(name, `${value} is outside ${range.min}..${range.max}`);
  }
  return parsed;
}

function source(env: Env, name: string, fallback: 'eks' | 'kubernetes', baseDir: string): ClusterSourceConfig | NodePoolsSourceConfig {
  const value = optional(env, name) ?? fallback;
  if (value === fallback) return { kind: fallback };
  if (value.startsWith('file:')) {
    const path = value.slice('file:'.length);
    if (path === '') throw new ConfigError(name, '`file:` needs a path, e.g. file:demo/cluster.json');
    return { kind: 'file', path: isAbsolute(path) ? path : resolve(baseDir, path) };
  }
  throw new ConfigError(name, `${JSON.stringify(value)} is neither \`${fallback}\` nor file:<path>`);
}
