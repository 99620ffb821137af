// A real DynamoDB API for tests: dynalite in-process on loopback. Conditional writes and paged queries
// work; TTL expiry, transactions (on dynalite's own TODO list) and ReturnValuesOnConditionCheckFailure
// do not.
// No AWS credentials or network: the client gets dummy credentials and the loopback endpoint.
//
//   let db: LocalDynamo;
//   beforeAll(async () => { db = await startDynalite(); });
//   afterAll(() => db.stop());
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

// dynalite ships no type declarations; it is CommonJS, so load it through require.
const dynalite = createRequire(import.meta.url)('dynalite') as (options: { createTableMs?: number; deleteTableMs?: number; updateTableMs?: number }) => Server;

export interface LocalDynamo {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** A client for the endpoint (region us-east-1, dummy credentials). Destroyed by `stop`. */
  readonly client: DynamoDBClient;
  /** Another client for the same endpoint (e.g. a second "pass"); destroyed by `stop`. */
  newClient(): DynamoDBClient;
  stop(): Promise<void>;
}

export async function startDynalite(): Promise<LocalDynamo> {
  // In-memory (no path), tables ACTIVE at once.
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  // Node closes an idle keep-alive connection after 5 s, and a client without retries (below) that
  // reuses it at that moment fails with ECONNRESET: keep idle connections open longer than any pause.
  (server as { keepAliveTimeout?: number }).keepAliveTimeout = 10 * 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const clients: DynamoDBClient[] = [];
  const newClient = (): DynamoDBClient => {
    const client = new DynamoDBClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
    });
    clients.push(client);
    return client;
  };
  const client = newClient();
  return {
    endpoint,
    client,
    newClient,
    stop: async () => {
      for (const c of clients) c.destroy();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

let tableSeq = 0;
/** A table name unique within the test process (tests can share one dynalite). */
export function uniqueTableName(prefix = 'state'): string {
  return `${prefix}-${process.pid}-${++tableSeq}`;
}
