// Builds the real adapters from the configuration, once per Lambda container (the handler keeps the
// result across warm invocations): the cluster source, the catalog source (live EC2/Pricing data
// behind the DynamoDB cache, the bundled list as a last resort), the NodePools, the DynamoDB state
// store, the Kubernetes writer for events, and the actuator.
//
//   CLUSTER_SOURCE=eks       endpoint and CA from EKS DescribeCluster, a token from the function's role
//   CLUSTER_SOURCE=file:...  a `kubectl get -o json` dump; the bundled catalog is used as is (no AWS
//                            call but DynamoDB), for local invokes and demos (dry runs only, see config)
//
// A dry run must change nothing anywhere: `passDependencies(true)` hands out a catalog cache that reads
// but never writes, and the handler neither takes the lease nor saves state nor acts.
import { awsDeadlines } from '../adapters/aws/deadlines.ts';
import type { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EC2Client } from '@aws-sdk/client-ec2';
import { EKSClient, type EKSClientConfig } from '@aws-sdk/client-eks';
import { PricingClient } from '@aws-sdk/client-pricing';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { createLiveCatalogSource } from '../adapters/aws/liveCatalogSource.ts';
import { pricingEndpointRegion } from '../adapters/aws/pricing.ts';
import { Ec2InstanceLauncher } from '../adapters/aws/ec2Launcher.ts';
import { Ec2InstanceDirectory } from '../adapters/aws/instanceDirectory.ts';
import { bundledCatalogPath, DEMO_RECORDED_AT, demoClusterPath } from '../adapters/catalog/bundledPaths.ts';
import { DynamoDbCatalogCache } from '../adapters/dynamodb/catalogCache.ts';
import { DynamoStateStore } from '../adapters/dynamodb/dynamoStateStore.ts';
import { readCatalogFile, readClusterFile, readNodePoolsFile } from '../adapters/files/index.ts';
import { callKube, eksKubeConfig, listAllPages } from '../adapters/kubernetes/kubeClient.ts';
import type { AwsCredentials } from '../adapters/kubernetes/eksToken.ts';
import { KubeWriter } from '../adapters/kubernetes/kubeWriter.ts';
import { KubeNodeClaims } from '../adapters/kubernetes/nodeClaims.ts';
import { KubeNodeOperations } from '../adapters/kubernetes/nodeOperations.ts';
import { LiveClusterSource } from '../adapters/kubernetes/liveClusterSource.ts';
import { InputError } from '../core/errors.ts';
import { parseNodePools } from '../core/input/nodePools.ts';
import { shiftClusterTimes } from '../core/model/shiftTimes.ts';
import type { Catalog, NodePool } from '../core/model/types.ts';
import type { InstanceLauncher, NodeClaimApi, NodeOperations } from '../core/ports/actuator.ts';
import type { CatalogCache, CatalogLoad, CatalogOrigin } from '../core/ports/catalog.ts';
import type { InstanceDirectory } from '../core/ports/instances.ts';
import type { StateStore } from '../core/state/ports.ts';
import { makeActor, recordActionInStore, type ActDeps, type ActOptions, type ExecutionReport } from './act/executeCommands.ts';
import type { ProveWorld } from './act/proveLive.ts';
import type { Config } from './config.ts';
import type { EventWriter } from './observability/events.ts';
import { DISRUPTING_MESSAGE, disruptingNodesFields } from './observability/disruptionLog.ts';
import type { Actor, PassDependencies, PassScope } from './runPass.ts';

// ---------------------------------------------------------------------------------------------------
// The actuator seam. The handler calls `actuator.act(result, context)` while it holds the lease, in a
// non-dry run only. `createActuator` below connects the executor; tests inject their own.

export interface ActContext {
  /** The lease owner: unique per invocation (the Lambda request id and a random nonce). */
  readonly owner: string;
  readonly scope: PassScope;
  /** The pass time, epoch ms. */
  readonly nowMs: number;
  /** Epoch ms by which acting must have stopped (the Lambda's remaining time minus a margin). */
  readonly deadlineMs: number;
  /** The Lambda's remaining time now (`context.getRemainingTimeInMillis`). */
  readonly remainingMs: () => number;
  readonly log: Logger;
}

/** One invocation's acting: runPass's `Actor`, and what it did. */
export interface ActuatorSession extends Actor {
  report(): unknown;
}

export interface Actuator {
  /**
   * Starts the acting of one non-dry invocation. runPass calls the session's `resume` as soon as it holds
   * the lease (before reading anything) and its `act` after saving the pass (see runPass.ts `Actor`).
   */
  begin(context: ActContext): ActuatorSession;
}

/** Everything an actuator may need, built from the configuration. */
export interface ActuatorParts {
  readonly config: Config;
  readonly store: StateStore;
  /** Taint, evict, delete, events. Absent for a file cluster source (which only allows dry runs). */
  readonly nodes?: NodeOperations;
  /** EC2 Fleet launches tagged `eks-consolidator/managed=true` and `kubernetes.io/cluster/<name>=owned`. */
  readonly instances: InstanceLauncher;
  readonly loadNodePools: () => Promise<readonly NodePool[]>;
  /** The live cluster, the NodePools and the catalog, for the proof before a command's first eviction. */
  readonly readWorld: () => Promise<ProveWorld>;
  /** Karpenter's NodeClaims (the karpenter actuator); absent for a file cluster source. */
  readonly nodeClaims?: NodeClaimApi;
  readonly clock: () => number;
}

export type ActuatorFactory = (parts: ActuatorParts) => Actuator;

/**
 * The production actuator: an `ActSession` (src/app/act/executeCommands.ts) that resumes every
 * unfinished command before the pass reads anything, then starts this pass's decisions, in one polling
 * loop that stops starting work when the Lambda's remaining time runs short and renews the lease before
 * every step.
 */
export function createActuator(tuning: ActTuning = {}): ActuatorFactory {
  return (parts) => ({
    begin(context) {
      const nodes = parts.nodes;
      if (nodes === undefined) {
        const refuse = async () => {
          throw new Error('a cluster read from a file cannot be acted on (CLUSTER_SOURCE=file: allows dry runs only)');
        };
        return { resume: refuse, act: refuse, report: () => undefined };
      }
      const deps: ActDeps = {
        store: parts.store,
        nodes,
        instances: parts.instances,
        ...(parts.nodeClaims === undefined ? {} : { nodeClaims: parts.nodeClaims }),
        readWorld: parts.readWorld,
        now: parts.clock,
        remainingMs: context.remainingMs,
        onAction: recordActionInStore(parts.store),
        loadNodePools: parts.loadNodePools,
        renewLease: () => parts.store.renewLease(context.owner, parts.clock(), parts.config.leaseTtlMs),
        onCommandStarted: ({ commandId, decision, nodes: seen }) => context.log.info(DISRUPTING_MESSAGE, disruptingNodesFields(commandId, decision, seen)),
        ...(tuning.sleep === undefined ? {} : { sleep: tuning.sleep }),
      };
      return makeActor(
        deps,
        {
          replacementReadyTimeoutMs: parts.config.replacementReadyTimeoutMs,
          drainTimeoutMs: parts.config.drainTimeoutMs,
          ...tuning.options,
          // The emptiness function runs every minute and shares the lease: it moves each command one step
          // and leaves the waiting to later invocations, instead of holding the lease through its run
          // (which would keep the consolidation function out for as long as a drain lasts).
          ...(context.scope === 'emptiness' ? { maxWaitMs: 0 } : {}),
        },
        (report) => logReport(report, context.log),
      );
    },
  });
}

/** Test and tuning knobs of the executor (poll interval, wait budget, a fake sleep). */
export interface ActTuning {
  readonly options?: ActOptions;
  readonly sleep?: (ms: number) => Promise<void>;
}

function logReport(report: ExecutionReport, log: Logger): void {
  for (const command of report.commands) {
    const fields = { command: command.id, nodes: command.nodes, from: command.from, step: command.step, evicted: command.evicted, blocked: command.blocked };
    if (command.errors.length > 0) log.warn('disruption command', { ...fields, errors: command.errors, stoppedBecause: command.stoppedBecause });
    else log.info('disruption command', { ...fields, waitingFor: command.waitingFor, stoppedBecause: command.stoppedBecause });
  }
  for (const command of report.commands) {
    if (command.step === 'abandoned' || command.step === 'rolledBack') {
      log.warn(command.step === 'abandoned' ? 'disruption abandoned' : 'disruption rolled back', { command: command.id, nodes: command.nodes, why: command.endedBecause });
    }
  }
  for (const skipped of report.skipped) log.info('decision not started', { ...skipped });
  for (const node of report.cleanedTaints ?? []) log.info('removed a disruption taint no command owns', { node });
  for (const error of report.errors) log.warn('actuator error', { error });
}

// ---------------------------------------------------------------------------------------------------
// The runtime

export interface WiringOverrides {
  /** Credentials for every AWS client and the EKS token (default: the SDK's chain, i.e. the role). */
  readonly credentials?: AwsCredentials;
  /** A ready KubeConfig (skips DescribeCluster and the EKS token). */
  readonly kubeConfig?: KubeConfig;
  readonly dynamoDb?: DynamoDBClient;
  readonly actuator?: ActuatorFactory;
  /** Executor tuning for the default actuator (tests: a fake sleep, short waits). */
  readonly act?: ActTuning;
  readonly clock?: () => number;
}

/** What the last `loadCatalog` of an invocation reported (for the response and the logs). */
export interface CatalogInfo {
  source?: CatalogOrigin;
  pricesAsOf?: number;
}

export interface Runtime {
  readonly config: Config;
  readonly store: StateStore;
  /** Absent for a file cluster source. */
  readonly events?: EventWriter;
  readonly actuator: Actuator;
  /** The dependencies of one pass; a dry run's never write (catalog cache included). */
  passDependencies(dryRun: boolean, catalogInfo?: CatalogInfo): PassDependencies;
}

export async function buildRuntime(config: Config, overrides: WiringOverrides = {}): Promise<Runtime> {
  const clock = overrides.clock ?? Date.now;
  const aws = { region: config.region, ...awsDeadlines(), ...(overrides.credentials === undefined ? {} : { credentials: overrides.credentials }) };
  const dynamoDb =
    overrides.dynamoDb ??
    new DynamoDBClient({ ...aws, ...(config.dynamoDbEndpoint === undefined ? {} : { endpoint: config.dynamoDbEndpoint }) });
  const store = new DynamoStateStore({ client: dynamoDb, tableName: config.tableName, clusterName: config.clusterName, clock });
  const ec2 = new EC2Client(aws);
  const bundled = memoize(() => readCatalogFile(bundledCatalogPath));

  const kubeConfig = config.clusterSource.kind === 'eks' ? await clusterKubeConfig(config, overrides, aws, clock) : undefined;

  const readCluster =
    config.clusterSource.kind === 'file'
      ? ((path: string) => async () => {
          const cluster = await readClusterFile(path);
          // The embedded demo is replayed at the current time, as the CLI does (bundledPaths.ts).
          return path === demoClusterPath ? shiftClusterTimes(cluster, clock() - DEMO_RECORDED_AT) : cluster;
        })(config.clusterSource.path)
      : ((source: LiveClusterSource) => () => source.read())(new LiveClusterSource(kubeConfig!));

  const loadNodePools =
    config.nodePoolsSource.kind === 'file'
      ? memoize(((path: string) => () => readNodePoolsFile(path))(config.nodePoolsSource.path))
      : () => readNodePoolsFromKubernetes(kubeConfig!);

  const cache = new DynamoDbCatalogCache({ client: dynamoDb, tableName: config.tableName, region: config.region });
  const pricing = new PricingClient({ ...aws, region: pricingEndpointRegion(config.region) });
  const catalogSource = (dryRun: boolean) =>
    config.clusterSource.kind === 'file'
      ? { load: async (): Promise<CatalogLoad> => bundledLoad(await bundled()) }
      : createLiveCatalogSource({
          region: config.region,
          ec2,
          pricing,
          cache: dryRun ? readOnly(cache) : cache,
          bundled,
          maxAgeMs: config.catalogMaxAgeMs,
        });

  const writerOptions = { now: clock, instance: process.env['AWS_LAMBDA_LOG_STREAM_NAME'] ?? 'eks-consolidator' };
  const kubeWriter = kubeConfig === undefined ? undefined : new KubeWriter(kubeConfig, writerOptions);
  const nodes = kubeConfig === undefined ? undefined : new KubeNodeOperations(kubeConfig, { ...writerOptions, writer: kubeWriter! });
  const instances = new Ec2InstanceLauncher({
    client: ec2,
    // The launcher tags its launches as this cluster's and checks the pool's launch template against
    // the IAM policy (serverless.yml ConsolidatorPolicy) before launching.
    clusterName: config.clusterName,
  });
  // The proof before a first eviction reads what a pass reads: the cluster now, the pools, the catalog
  // (the cache as it stands: acting never refreshes prices).
  const proofCatalog = catalogSource(true);
  const readWorld = async (): Promise<ProveWorld> => {
    const [cluster, nodePools, catalog] = await Promise.all([readCluster(), loadNodePools(), proofCatalog.load(clock())]);
    return { cluster, nodePools, catalog: catalog.catalog };
  };
  const nodeClaims = kubeConfig === undefined ? undefined : new KubeNodeClaims(kubeConfig);
  const actuator = (overrides.actuator ?? createActuator(overrides.act))({
    config,
    store,
    instances,
    loadNodePools,
    readWorld,
    clock,
    ...(nodes === undefined ? {} : { nodes }),
    ...(nodeClaims === undefined ? {} : { nodeClaims }),
  });

  return {
    config,
    store,
    ...(kubeWriter === undefined ? {} : { events: kubeWriter }),
    actuator,
    passDependencies(dryRun, catalogInfo) {
      const source = catalogSource(dryRun);
      return {
        readCluster,
        loadNodePools,
        state: store,
        loadCatalog: async (nowMs) => {
          const load = await source.load(nowMs);
          if (catalogInfo) {
            catalogInfo.source = load.source;
            catalogInfo.pricesAsOf = load.pricesAsOf;
          }
          return { catalog: load.catalog, warnings: load.warnings };
        },
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// The interruption function's runtime: EC2 to tell our instances from others, the Kubernetes writes of
// a drain. No state table, no catalog: it acts on one notice and keeps nothing.

export interface InterruptionRuntime {
  readonly config: Config;
  readonly instances: InstanceDirectory;
  /** Taint, cordon, evict, events. Absent for a file cluster source, which has no API to act on. */
  readonly nodes?: NodeOperations;
}

export async function buildInterruptionRuntime(config: Config, overrides: WiringOverrides = {}): Promise<InterruptionRuntime> {
  const clock = overrides.clock ?? Date.now;
  const aws = { region: config.region, ...awsDeadlines(), ...(overrides.credentials === undefined ? {} : { credentials: overrides.credentials }) };
  const instances = new Ec2InstanceDirectory({ client: new EC2Client(aws), clusterName: config.clusterName });
  if (config.clusterSource.kind !== 'eks') return { config, instances };
  const kubeConfig = await clusterKubeConfig(config, overrides, aws, clock);
  const nodes = new KubeNodeOperations(kubeConfig, { now: clock, instance: process.env['AWS_LAMBDA_LOG_STREAM_NAME'] ?? 'eks-consolidator' });
  return { config, instances, nodes };
}

// ---------------------------------------------------------------------------------------------------
// Pieces

/** The EKS cluster's KubeConfig (endpoint and CA from DescribeCluster, a refreshed token), or the override. */
async function clusterKubeConfig(config: Config, overrides: WiringOverrides, aws: EKSClientConfig, clock: () => number): Promise<KubeConfig> {
  if (overrides.kubeConfig !== undefined) return overrides.kubeConfig;
  const connection = await eksKubeConfig({
    clusterName: config.clusterName,
    region: config.region,
    eksClient: new EKSClient(aws),
    ...(overrides.credentials === undefined ? {} : { credentials: overrides.credentials }),
    now: clock,
  });
  return connection.kubeConfig;
}

/** NodePools (karpenter.sh/v1) as the cluster's API holds them, through the same parser as a file. */
export async function readNodePoolsFromKubernetes(kubeConfig: KubeConfig, pageSize = 500): Promise<NodePool[]> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const resource = 'nodepools.karpenter.sh';
  const items = await listAllPages(
    resource,
    async (page) => {
      // A custom object list comes back as plain JSON: `metadata.continue`, items with kind/apiVersion.
      const answer = (await callKube('list', resource, () =>
        api.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', ...page }),
      )) as { items?: unknown[]; metadata?: { continue?: string } };
      const token = answer.metadata?.continue;
      return { items: answer.items ?? [], ...(token ? { metadata: { _continue: token } } : {}) };
    },
    pageSize,
  );
  const objects = items.map((item) => ({ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', ...(item as object) }));
  try {
    const pools = parseNodePools(objects, { fromApiServer: true });
    if (pools.length === 0) throw new InputError('', '', 'no NodePool (karpenter.sh/v1) found in the cluster');
    return pools;
  } catch (error) {
    if (error instanceof InputError && error.file === undefined) throw error.inFile('Kubernetes API (nodepools.karpenter.sh)');
    throw error;
  }
}

/** Reads through to the cache, never writes: a dry run leaves the table as it found it. */
export function readOnly(cache: CatalogCache): CatalogCache {
  return { get: () => cache.get(), put: async () => {} };
}

function bundledLoad(catalog: Catalog): CatalogLoad {
  return { catalog, pricesAsOf: catalog.pricesAsOf ?? 0, source: 'bundled', warnings: [] };
}

/** One shared promise; a rejection is not kept (the next call tries again). */
function memoize<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= load().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
