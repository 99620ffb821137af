// The state table: one DynamoDB table, single-table design, shared by every cluster the product manages.
// Exported so that infra (serverless resources), tests and local invokes create exactly the table the
// store expects.
//
//   pk = CLUSTER#<cluster>   sk = META          the cluster record (ClusterState)
//                            sk = LEASE         who runs the pass now (owner, leaseUntilMs)
//                            sk = NODE#<node>   one record per node (NodeState), with a TTL
//                            sk = CMD#<id>      disruption commands (finished ones with a TTL)
//   pk = LEDGER#<cluster>    sk = <ISO time>#<n> one ledger entry per real pass, with a TTL;
//                                               a partition of its own so that a pass's load never reads it
//
// `expiresAt` (epoch SECONDS, DynamoDB's TTL format) lets stale records age out. TTL deletion lags (hours
// in DynamoDB, never in dynalite), so the store also stores `expiresAtMs` and ignores expired items itself.

import {
  CreateTableCommand,
  DescribeTableCommand,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';

export const PARTITION_KEY = 'pk';
export const SORT_KEY = 'sk';
/** DynamoDB TTL attribute: epoch seconds. */
export const TTL_ATTRIBUTE = 'expiresAt';

export const StateKeys = {
  cluster: (clusterName: string): string => `CLUSTER#${clusterName}`,
  meta: 'META',
  lease: 'LEASE',
  nodePrefix: 'NODE#',
  node: (nodeName: string): string => `NODE#${nodeName}`,
  commandPrefix: 'CMD#',
  command: (id: string): string => `CMD#${id}`,
  ledger: (clusterName: string): string => `LEDGER#${clusterName}`,
} as const;

/** CreateTable input (without the name). On-demand billing: a pass writes in short bursts. */
export const stateTableDefinition = {
  AttributeDefinitions: [
    { AttributeName: PARTITION_KEY, AttributeType: 'S' },
    { AttributeName: SORT_KEY, AttributeType: 'S' },
  ],
  KeySchema: [
    { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
    { AttributeName: SORT_KEY, KeyType: 'RANGE' },
  ],
  BillingMode: 'PAY_PER_REQUEST',
} as const satisfies Omit<CreateTableCommandInput, 'TableName'>;

/** The CloudFormation resource (serverless.yml `resources`), with TTL and point-in-time recovery on. */
export function stateTableCloudFormation(tableName?: string): Record<string, unknown> {
  return {
    Type: 'AWS::DynamoDB::Table',
    Properties: {
      ...(tableName ? { TableName: tableName } : {}),
      AttributeDefinitions: stateTableDefinition.AttributeDefinitions,
      KeySchema: stateTableDefinition.KeySchema,
      BillingMode: stateTableDefinition.BillingMode,
      TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    },
  };
}

/**
 * Creates the table (tests, local invoke), waits until it is ACTIVE and turns TTL on. An existing table
 * is left as it is. Backends without UpdateTimeToLive (dynalite) skip that step: the store does not rely
 * on TTL to hide expired records anyway.
 */
export async function createStateTable(client: DynamoDBClient, tableName: string, timeoutMs = 30_000): Promise<void> {
  try {
    await client.send(new CreateTableCommand({ TableName: tableName, ...stateTableDefinition }));
  } catch (error) {
    if ((error as Error).name !== 'ResourceInUseException') throw error;
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') break;
    if (Date.now() > deadline) throw new Error(`table ${tableName} not ACTIVE after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      }),
    );
  } catch (error) {
    const name = (error as Error).name;
    // dynalite: unknown operation; DynamoDB: TTL already on.
    if (!/UnknownOperation|ValidationException|NotImplemented/i.test(name)) throw error;
  }
}
