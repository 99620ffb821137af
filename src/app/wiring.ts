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
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EC2Client } from '@aws-sdk/client-ec2';
import { EKSClient } from '@aws-sdk/client-eks';
import { PricingClient } from '@aws-sdk/client-pricing';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { createLiveCatalogSource } from '../adapters/aws/liveCatalogSource.ts';
import { pricingEndpointRegion } from '../adapters/aws/pricing.ts';
import { bundledCatalogPath } from '../adapters/catalog/bundledPaths.ts';
import { DynamoDbCatalogCache } from '../adapters/dynamodb/catalogCache.ts';
import { DynamoStateStore } from '../adapters/dynamodb/dynamoStateStore.ts';
import { readCatalogFile, readClusterFile, readNodePoolsFile } from '../adapters/files/index.ts';
import { callKube, eksKubeConfig, listAllPages } from '../adapters/kubernetes/kubeClient.ts';
import type { AwsCredentials } from '../adapters/kubernetes/eksToken.ts';
import { KubeWriter } from '../adapters/kubernetes/kubeWriter.ts';
import { LiveClusterSource } from '../adapters/kubernetes/liveClusterSource.ts';
import { InputError } from '../core/errors.ts';
import { parseNodePools } from '../core/input/nodePools.ts';
import type { Catalog, NodePool } from '../core/model/types.ts';
import type { CatalogCache, CatalogLoad, CatalogOrigin } from '../core/ports/catalog.ts';
import type { StateStore } from '../core/state/ports.ts';
import type { Config } from './config.ts';
import type { EventWriter } from './observability/events.ts';
import type { Logger } from './observability/logger.ts';
import type { PassDependencies, PassResult, PassScope } from './runPass.ts';

// ---------------------------------------------------------------------------------------------------
// The actuator seam. The handler calls `actuator.act(result, context)` while it holds the lease, in a
// non-dry run only. `createActuator` below is the one place that connects the real implementation.

export interface ActContext {
  /** The lease owner (the Lambda request id). */
  readonly owner: string;
  readonly scope: PassScope;
  /** The pass time, epoch ms. */
  readonly nowMs: number;
  /** Epoch ms by which acting must have stopped (the Lambda's remaining time minus a margin). */
  readonly deadlineMs: number;
  readonly log: Logger;
}

export interface Actuator {
  /** Resumes unfinished commands first, then carries out the pass's decisions; returns a report. */
  act(result: PassResult, context: ActContext): Promise<unknown>;
}

/** Everything an actuator may need, built from the configuration. */
export interface ActuatorParts {
  readonly config: Config;
  readonly store: StateStore;
  /** Absent for a file cluster source (which only allows dry runs). */
  readonly kubeWriter?: KubeWriter;
  readonly ec2: EC2Client;
  readonly clock: () => number;
}

export type ActuatorFactory = (parts: ActuatorParts) => Actuator;

/**
 * The production actuator. Until `src/app/act/executeCommands.ts` lands it carries nothing out and says
 * so; connecting it is the body below (resumeCommands, then executePlan, within `deadlineMs`).
 */
export const createActuator: ActuatorFactory = () => ({
  async act(result, context) {
    context.log.warn('actuator not connected: decisions were planned and state recorded, nothing was carried out', {
      decisions: result.plan.decisions.length,
    });
    return { carriedOut: 0, note: 'actuator not connected in this build' };
  },
});

// ---------------------------------------------------------------------------------------------------
// The runtime

export interface WiringOverrides {
  /** Credentials for every AWS client and the EKS token (default: the SDK's chain, i.e. the role). */
  readonly credentials?: AwsCredentials;
  /** A ready KubeConfig (skips DescribeCluster and the EKS token). */
  readonly kubeConfig?: KubeConfig;
  readonly dynamoDb?: DynamoDBClient;
  readonly actuator?: ActuatorFactory;
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
  const aws = { region: config.region, ...(overrides.credentials === undefined ? {} : { credentials: overrides.credentials }) };
  const dynamoDb =
    overrides.dynamoDb ??
    new DynamoDBClient({ ...aws, ...(config.dynamoDbEndpoint === undefined ? {} : { endpoint: config.dynamoDbEndpoint }) });
  const store = new DynamoStateStore({ client: dynamoDb, tableName: config.tableName, clusterName: config.clusterName, clock });
  const ec2 = new EC2Client(aws);
  const bundled = memoize(() => readCatalogFile(bundledCatalogPath));

  let kubeConfig: KubeConfig | undefined;
  if (config.clusterSource.kind === 'eks') {
    kubeConfig =
      overrides.kubeConfig ??
      (
        await eksKubeConfig({
          clusterName: config.clusterName,
          region: config.region,
          eksClient: new EKSClient(aws),
          ...(overrides.credentials === undefined ? {} : { credentials: overrides.credentials }),
          now: clock,
        })
      ).kubeConfig;
  }

  const readCluster =
    config.clusterSource.kind === 'file'
      ? ((path: string) => () => readClusterFile(path))(config.clusterSource.path)
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

  const kubeWriter =
    kubeConfig === undefined
      ? undefined
      : new KubeWriter(kubeConfig, { now: clock, instance: process.env['AWS_LAMBDA_LOG_STREAM_NAME'] ?? 'eks-consolidator' });
  const actuator = (overrides.actuator ?? createActuator)({
    config,
    store,
    ec2,
    clock,
    ...(kubeWriter === undefined ? {} : { kubeWriter }),
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
// Pieces

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
    const pools = parseNodePools(objects);
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
