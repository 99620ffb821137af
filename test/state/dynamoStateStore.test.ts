// The Lambda's state store against a real DynamoDB API (dynalite on loopback; no AWS, no network).
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoStateStore, type DynamoStateStoreOptions } from '../../src/adapters/dynamodb/dynamoStateStore.ts';
import { createStateTable, stateTableCloudFormation, StateKeys, TTL_ATTRIBUTE } from '../../src/adapters/dynamodb/tableSchema.ts';
import { StateConflictError, StateCorruptError, StateStoreError } from '../../src/core/state/errors.ts';
import { observeNodes } from '../../src/core/state/observe.ts';
import { emptyPassState, type DisruptionCommand, type NodeState, type PassState } from '../../src/core/state/types.ts';
import { startDynalite, uniqueTableName, type LocalDynamo } from '../support/dynalite.ts';
import { cluster, hours, minutes, node, nodeState, on, pod, T0 } from '../builders.ts';
import type { Pod } from '../../src/core/model/types.ts';

let db: LocalDynamo;
let tableName: string;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.stop();
});
beforeEach(async () => {
  tableName = uniqueTableName();
  await createStateTable(db.client, tableName);
});

const storeFor = (overrides: Partial<DynamoStateStoreOptions> = {}, client: DynamoDBClient = db.client): DynamoStateStore =>
  new DynamoStateStore({ client, tableName, clusterName: 'prod', clock: () => T0, ...overrides });

const raw = (): DynamoDBDocumentClient => DynamoDBDocumentClient.from(db.client);

const command = (overrides: Partial<DisruptionCommand> = {}): DisruptionCommand => ({
  id: 'cmd-1',
  createdAt: T0,
  nodes: ['a', 'b'],
  method: 'multi-node',
  reason: 'Underutilized',
  replacements: [{ instanceTypes: ['m5.xlarge'], capacityType: 'spot', zones: ['us-east-1a', 'us-east-1b'], pricePerHour: 0.07 }],
  step: 'tainted',
  updatedAt: T0,
  version: 0,
  ...overrides,
});

describe('table', () => {
  it('is created with pk/sk keys, idempotently', async () => {
    await createStateTable(db.client, tableName); // again: no error
    const { Table } = await db.client.send(new DescribeTableCommand({ TableName: tableName }));
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(stateTableCloudFormation('t')).toMatchObject({
      Type: 'AWS::DynamoDB::Table',
      Properties: { TableName: 't', TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true } },
    });
  });
});

describe('DynamoStateStore', () => {
  it('an empty table is an empty state', async () => {
    expect(await storeFor().load(T0)).toEqual(emptyPassState());
  });

  it('round-trips nodes and the cluster record; writes only what changed', async () => {
    const store = storeFor();
    const next: PassState = {
      nodes: {
        a: nodeState({ name: 'a', version: 0, nodeCreatedAt: T0 - hours(5), graceProtectedUntil: T0 + hours(1), lastEvaluatedAt: T0 }),
        b: nodeState({ name: 'b', version: 0, podCount: 0, emptySince: T0 - minutes(7) }),
      },
      cluster: { version: 0, lastActionAt: T0 - minutes(1), lastFingerprint: 'f', lastPassFoundNothing: false, lastSearchAt: T0 },
      commands: [],
    };
    const saved = await store.save(next, emptyPassState(), T0);
    const loaded = await storeFor().load(T0);
    expect(loaded).toEqual(saved);
    expect(loaded.nodes.a!.version).toBe(1);
    expect(loaded.cluster.version).toBe(1);

    // A node record changed behind our back would make an unconditional write visible; an unchanged
    // record is not written at all, so it is not touched.
    await raw().send(new PutCommand({ TableName: tableName, Item: { ...(await getItem('NODE#b')), podCount: 42 } }));
    const again = await store.save({ ...loaded, nodes: { ...loaded.nodes, a: { ...loaded.nodes.a!, lastEvaluatedAt: T0 + 1 } } }, loaded, T0);
    expect(again.nodes.a!.version).toBe(2);
    expect((await getItem('NODE#b'))?.podCount).toBe(42);
  });

  it('node records carry the TTL attribute in epoch seconds', async () => {
    const store = storeFor();
    await store.save({ ...emptyPassState(), nodes: { a: nodeState({ name: 'a', version: 0, expiresAt: T0 + hours(24) + 500 }) } }, emptyPassState(), T0);
    const item = await getItem('NODE#a');
    expect(item?.[TTL_ATTRIBUTE]).toBe(Math.ceil((T0 + hours(24) + 500) / 1000));
    expect(item?.expiresAtMs).toBe(T0 + hours(24) + 500);
  });

  it('ignores expired items on load (TTL deletes late), and a new record may replace an expired one', async () => {
    const store = storeFor();
    await store.save(
      { ...emptyPassState(), nodes: { old: nodeState({ name: 'old', version: 0, expiresAt: T0 + 1500 }), live: nodeState({ name: 'live', version: 0 }) } },
      emptyPassState(),
      T0,
    );
    expect(Object.keys((await store.load(T0 + 1499)).nodes).sort()).toEqual(['live', 'old']);
    const later = await store.load(T0 + 1500); // same second for the TTL attribute, expired by ms
    expect(Object.keys(later.nodes)).toEqual(['live']);
    expect(await getItem('NODE#old')).toBeDefined(); // still stored: nothing deleted it
    // The pass sees the node again: the record is new to it (version 0) and replaces the expired one.
    const saved = await store.save({ ...later, nodes: { ...later.nodes, old: nodeState({ name: 'old', version: 0 }) } }, later, T0 + 1500);
    expect(saved.nodes.old!.version).toBe(1);
    // The store's clock is used when no pass time is given.
    expect(Object.keys((await storeFor({ clock: () => T0 + 2000 }).load()).nodes).sort()).toEqual(['live', 'old']);
  });

  it('a conditional-write conflict on a node record is a StateConflictError; other records are still written', async () => {
    const seed = await storeFor().save(
      { ...emptyPassState(), nodes: { a: nodeState({ name: 'a', version: 0 }), b: nodeState({ name: 'b', version: 0 }) } },
      emptyPassState(),
      T0,
    );
    const passOne = storeFor();
    const passTwo = storeFor({}, db.newClient());
    const readByOne = await passOne.load(T0);
    const readByTwo = await passTwo.load(T0);
    await passOne.save({ ...readByOne, nodes: { ...readByOne.nodes, a: { ...readByOne.nodes.a!, lastEvaluatedAt: T0 } } }, readByOne, T0);

    const twoWants: PassState = {
      ...readByTwo,
      nodes: { a: { ...readByTwo.nodes.a!, lastEvaluatedAt: T0 + 5 }, b: { ...readByTwo.nodes.b!, podCount: 9 }, c: nodeState({ name: 'c', version: 0 }) },
    };
    const error = await passTwo.save(twoWants, readByTwo, T0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateConflictError);
    expect((error as StateConflictError).records).toEqual(['node a']);

    const now = await storeFor().load(T0);
    expect(now.nodes.a!.lastEvaluatedAt).toBe(T0);
    expect(now.nodes.b!.podCount).toBe(9);
    expect(now.nodes.c!.version).toBe(1);
    expect(seed.nodes.a!.version).toBe(1);
  });

  it('two passes creating the same new node: one wins, the other conflicts', async () => {
    const fresh: PassState = { ...emptyPassState(), nodes: { n: nodeState({ name: 'n', version: 0 }) } };
    await storeFor().save(fresh, emptyPassState(), T0);
    await expect(storeFor().save(fresh, emptyPassState(), T0)).rejects.toBeInstanceOf(StateConflictError);
  });

  it('the cluster record is versioned too; deleting a gone node tolerates it being gone already', async () => {
    const store = storeFor();
    const s1 = await store.save({ ...emptyPassState(), nodes: { gone: nodeState({ name: 'gone', version: 0 }) }, cluster: { version: 0, lastSearchAt: T0 } }, emptyPassState(), T0);
    const stale = await store.load(T0);
    await store.save({ ...s1, nodes: {}, cluster: { ...s1.cluster, lastSearchAt: T0 + 1 } }, s1, T0);
    const error = await store.save({ ...stale, nodes: {}, cluster: { ...stale.cluster, lastSearchAt: T0 + 2 } }, stale, T0).catch((e: unknown) => e);
    expect((error as StateConflictError).records).toEqual(['cluster']); // the delete of `gone` was fine
  });

  it('loads 2,000 node records across many pages', async () => {
    const nodes: Record<string, NodeState> = {};
    for (let i = 0; i < 2000; i++) {
      const name = `ip-10-0-${Math.floor(i / 250)}-${i % 250}.ec2.internal`;
      nodes[name] = nodeState({ name, version: 0, podSetFingerprint: 'f'.repeat(32), nodeCreatedAt: T0 - hours(1), lastEvaluatedAt: T0 });
    }
    await storeFor({ writeConcurrency: 32 }).save({ ...emptyPassState(), nodes }, emptyPassState(), T0);
    let pages = 0;
    const countingClient = db.newClient();
    countingClient.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'QueryCommand') pages++;
        return next(args);
      },
      { step: 'initialize', name: 'countQueries' },
    );
    const counting = storeFor({ pageSize: 150 }, countingClient);
    const loaded = await counting.load(T0);
    expect(Object.keys(loaded.nodes)).toHaveLength(2000);
    expect(pages).toBeGreaterThanOrEqual(14);
    // Default paging (1 MB pages) gets them all too.
    expect(Object.keys((await storeFor().load(T0)).nodes)).toHaveLength(2000);
  }, 60_000);

  it('lease: contention between two owners, expiry and takeover, release', async () => {
    const a = storeFor();
    const b = storeFor({}, db.newClient());
    const ttl = minutes(5);
    expect(await a.acquireLease('pass-a', T0, ttl)).toBe(true);
    expect(await b.acquireLease('pass-b', T0 + 1000, ttl)).toBe(false);
    expect(await a.acquireLease('pass-a', T0 + 1000, ttl)).toBe(true); // ours: extended
    expect(await b.renewLease('pass-b', T0 + 2000, ttl)).toBe(false);
    expect(await a.renewLease('pass-a', T0 + 2000, ttl)).toBe(true);
    expect(await a.readLease()).toEqual({ owner: 'pass-a', until: T0 + 2000 + ttl });

    expect(await b.acquireLease('pass-b', T0 + 2000 + ttl - 1, ttl)).toBe(false);
    expect(await b.acquireLease('pass-b', T0 + 2000 + ttl, ttl)).toBe(true); // expired: taken over
    expect(await a.renewLease('pass-a', T0 + 2000 + ttl, ttl)).toBe(false); // a learns it lost it

    await a.releaseLease('pass-a'); // not ours: nothing happens
    expect((await b.readLease())?.owner).toBe('pass-b');
    await b.releaseLease('pass-b');
    expect(await b.readLease()).toBeUndefined();
    expect(await a.acquireLease('pass-a', T0 + 2000 + ttl + 1, ttl)).toBe(true);
  });

  it('two owners racing for a free lease: exactly one gets it', async () => {
    const stores = Array.from({ length: 8 }, () => storeFor({}, db.newClient()));
    const results = await Promise.all(stores.map((s, i) => s.acquireLease(`pass-${i}`, T0, minutes(5))));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('commands: put, list, update on the version read, conflict on a stale version', async () => {
    const store = storeFor();
    const created = await store.putCommand(command());
    expect(created.version).toBe(1);
    await expect(store.putCommand(command())).rejects.toBeInstanceOf(StateConflictError);
    const launched = await store.putCommand({ ...created, step: 'launched', launched: [{ index: 0, ref: 'i-0abc', instanceId: 'i-0abc' }], updatedAt: T0 + 10 }, 1);
    expect(launched.version).toBe(2);
    const stale = await storeFor({}, db.newClient()).putCommand({ ...created, step: 'rolledBack' }, 1).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(StateConflictError);
    expect((stale as StateConflictError).records).toEqual(['command cmd-1']);

    await store.putCommand(command({ id: 'cmd-0', createdAt: T0 - 5, step: 'done', updatedAt: T0 - 5 }));
    const listed = await store.listCommands(T0);
    expect(listed.map((c) => [c.id, c.step, c.version])).toEqual([
      ['cmd-0', 'done', 1],
      ['cmd-1', 'launched', 2],
    ]);
    expect(listed[1]).toEqual({ ...launched });
    expect((await store.load(T0)).commands).toEqual(listed);
    // Finished commands age out; in-flight ones never do.
    expect((await store.listCommands(T0 + hours(24 * 8))).map((c) => c.id)).toEqual(['cmd-1']);
  });

  it('a node record this build cannot read is skipped and reported; the next save replaces it, and the other records are untouched', async () => {
    const store = storeFor();
    await store.save({ ...emptyPassState(), nodes: { y: nodeState({ name: 'y', version: 0 }) } }, emptyPassState(), T0);
    await raw().send(
      new PutCommand({ TableName: tableName, Item: { pk: StateKeys.cluster('prod'), sk: 'NODE#x', name: 'x', podSetFingerprint: 'f', podCount: 'many', version: 3, expiresAtMs: T0 + hours(1) } }),
    );
    const loaded = await store.load(T0);
    expect(Object.keys(loaded.nodes)).toEqual(['y']);
    expect(store.takeUnreadable()).toEqual([{ key: 'NODE#x', problem: 'NODE#x: podCount: not a number' }]);
    // The pass observes x afresh (version 0) and its save writes over the unreadable item.
    const saved = await store.save({ ...loaded, nodes: { ...loaded.nodes, x: nodeState({ name: 'x', version: 0, podCount: 2 }) } }, loaded, T0);
    expect(saved.nodes.x!.version).toBe(1);
    expect((await storeFor().load(T0)).nodes.x).toMatchObject({ name: 'x', podCount: 2, version: 1 });
  });

  it('a node record that changed after it was found unreadable is not overwritten: a conflict', async () => {
    const store = storeFor();
    await raw().send(
      new PutCommand({ TableName: tableName, Item: { pk: StateKeys.cluster('prod'), sk: 'NODE#x', name: 'x', podSetFingerprint: 'f', podCount: 'many', version: 3, expiresAtMs: T0 + hours(1) } }),
    );
    const loaded = await store.load(T0);
    await raw().send(
      new PutCommand({ TableName: tableName, Item: { pk: StateKeys.cluster('prod'), sk: 'NODE#x', name: 'x', podSetFingerprint: 'f', podCount: 'many', version: 4, expiresAtMs: T0 + hours(1) } }),
    );
    const error = await store.save({ ...loaded, nodes: { x: nodeState({ name: 'x', version: 0 }) } }, loaded, T0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateConflictError);
  });

  it('a record of the cluster itself that cannot be read is still a StateCorruptError naming it', async () => {
    await raw().send(new PutCommand({ TableName: tableName, Item: { pk: StateKeys.cluster('prod'), sk: StateKeys.meta, version: 'one' } }));
    const error = await storeFor().load(T0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateCorruptError);
    expect((error as Error).message).toMatch(/version/);
  });

  it('a command record this build cannot read is skipped and reported once; the others are still listed and loaded', async () => {
    const store = storeFor();
    await store.putCommand(command({ id: 'cmd-good' }));
    await raw().send(
      new PutCommand({
        TableName: tableName,
        Item: { ...(await getItem('CMD#cmd-good')), sk: 'CMD#cmd-from-newer-build', id: 'cmd-from-newer-build', step: 'draining' },
      }),
    );
    expect((await store.listCommands(T0)).map((c) => c.id)).toEqual(['cmd-good']);
    expect((await store.load(T0)).commands.map((c) => c.id)).toEqual(['cmd-good']);
    expect(store.takeUnreadable()).toEqual([{ key: 'CMD#cmd-from-newer-build', problem: expect.stringMatching(/^CMD#cmd-from-newer-build: step: not one of/) }]);
    expect(store.takeUnreadable()).toEqual([]);
    // Still known to the sweep of orphaned capacity, which must not take what such a command launched.
    expect([...store.unreadableCommandIds()]).toEqual(['cmd-from-newer-build']);
  });

  it('other SDK errors become StateStoreErrors naming the operation', async () => {
    const store = new DynamoStateStore({ client: db.client, tableName: 'no-such-table', clusterName: 'prod' });
    const error = await store.load(T0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateStoreError);
    expect((error as StateStoreError).operation).toBe('load');
    expect((error as Error).message).toMatch(/ResourceNotFoundException/);
    await expect(store.acquireLease('a', T0, 1000)).rejects.toThrow(/acquireLease failed/);
  });

  it('clusters are separate partitions', async () => {
    await storeFor({ clusterName: 'one' }).save({ ...emptyPassState(), nodes: { a: nodeState({ name: 'a', version: 0 }) } }, emptyPassState(), T0);
    expect((await storeFor({ clusterName: 'two' }).load(T0)).nodes).toEqual({});
  });

  it('a pass observes, saves, and the next pass sees the pod that left', async () => {
    const n = node({ name: 'n1' });
    const [web, api] = on('n1', pod({ name: 'web' }), pod({ name: 'api' }));
    const runPass = async (pods: Pod[], now: number): Promise<PassState> => {
      const store = storeFor();
      expect(await store.acquireLease('lambda', now, minutes(4))).toBe(true);
      const previous = await store.load(now);
      const saved = await store.save({ ...previous, nodes: observeNodes(cluster({ nodes: [n], pods }), previous, now) }, previous, now);
      await store.releaseLease('lambda');
      return saved;
    };
    await runPass([web!, api!], T0);
    const s = await runPass([web!], T0 + minutes(3));
    expect(s.nodes.n1!.lastPodEventAt).toBe(T0 + minutes(3));
    expect(s.nodes.n1!.version).toBe(2);
    const quiet = await runPass([web!], T0 + minutes(6));
    expect(quiet.nodes.n1!.version).toBe(2); // unchanged: not rewritten
  });
});

async function getItem(sk: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await raw().send(new GetCommand({ TableName: tableName, Key: { pk: StateKeys.cluster('prod'), sk } }));
  return Item;
}
