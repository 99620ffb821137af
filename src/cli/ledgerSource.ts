// Where `replay --from-ledger` reads the real passes' ledger (core/state/ledger.ts):
// - a state file the CLI's `--state` wrote (FILE);
// - the Lambda's DynamoDB table, `dynamodb://TABLE/CLUSTER`: the ledger items of that cluster, read
//   with the caller's AWS credentials and region (AWS_REGION / profile; AWS_ENDPOINT_URL_DYNAMODB for
//   a local endpoint), with Query only: nothing is written, no lease is taken.
import { awsDeadlines } from '../adapters/aws/deadlines.ts';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { FileStateStore } from '../adapters/state/fileStateStore.ts';
import { InputError } from '../core/errors.ts';
import type { LedgerEntry } from '../core/state/ledger.ts';

const DYNAMODB = /^dynamodb:\/\/([^/]+)\/([^/]+)$/;

export interface LedgerRead {
  readonly entries: readonly LedgerEntry[];
  /** Names the source in the report (the file's base name, or the cluster). */
  readonly label: string;
}

export async function readLedger(source: string, options: { dynamoClient?: DynamoDBClient } = {}): Promise<LedgerRead> {
  if (source.startsWith('dynamodb:')) {
    const match = DYNAMODB.exec(source);
    if (!match) throw new InputError('', '--from-ledger', `"${source}" is not dynamodb://TABLE/CLUSTER`);
    const [, tableName, clusterName] = match as unknown as [string, string, string];
    // Loaded only here: the AWS SDK costs a quarter of a second at every start of the CLI otherwise.
    const [{ DynamoDBClient: Client }, { DynamoStateStore }] = await Promise.all([import('@aws-sdk/client-dynamodb'), import('../adapters/dynamodb/dynamoStateStore.ts')]);
    const client = options.dynamoClient ?? new Client({ ...awsDeadlines() });
    try {
      const entries = await new DynamoStateStore({ client, tableName, clusterName }).listLedger();
      if (entries.length === 0) {
        throw new InputError('', '--from-ledger', `table ${tableName} has no ledger entries for cluster ${clusterName} (only real passes record them)`);
      }
      return { entries, label: clusterName };
    } finally {
      if (options.dynamoClient === undefined) client.destroy();
    }
  }
  if (!(await stat(source).catch(() => undefined))?.isFile()) throw new InputError('', '', 'no such state file').inFile(source);
  const entries = await new FileStateStore(source).listLedger();
  if (entries.length === 0) throw new InputError('', 'ledger', 'the state file has no ledger entries (only real passes record them)').inFile(source);
  return { entries, label: basename(source).replace(/\.json$/, '') };
}
