// The DynamoDB catalog cache against a real DynamoDB implementation (dynalite, in-process, loopback).
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import {
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_CHUNK_BYTES, DynamoDbCatalogCache } from '../../src/adapters/dynamodb/catalogCache.ts';
import { stateTableDefinition } from '../../src/adapters/dynamodb/tableSchema.ts';
import type { Catalog, InstanceType, Offering } from '../../src/core/model/types.ts';
import { InMemoryCatalogCache } from '../../src/core/ports/catalog.ts';

// dynalite ships no type declarations; load it through require with the one signature used here.
const dynalite = createRequire(import.meta.url)('dynalite') as (options: { createTableMs: number }) => Server;

const TABLE = 'eks-consolidator-test';
const AS_OF = Date.parse('2026-11-21T12:00:00Z');
const Mi = 1024 ** 2;
let server: Server;
let client: DynamoDBClient;

beforeAll(async () => {
  server = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  await client.send(
    new CreateTableCommand({
      TableName: TABLE,
      // The product's table: pk/sk string keys.
      ...stateTableDefinition,
    }),
  );
});

afterAll(async () => {
  client?.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Deterministic pseudo-random numbers (mulberry32), so prices do not compress unrealistically well. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A region-sized catalog: 1,345 types, six zones, on-demand and spot in each, Karpenter-like labels. */
function syntheticCatalog(region: string, typeCount = 1345): Catalog {
  const next = random(42);
  const sizes = ['medium', 'large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge', '24xlarge', 'metal'];
  const zones = ['a', 'b', 'c', 'd', 'e', 'f'].map((z) => `${region}${z}`);
  const instanceTypes: InstanceType[] = [];
  for (let i = 0; i < typeCount; i += 1) {
    const family = `${'cmrtgpix'[i % 8]}${1 + (i % 9)}${['', 'g', 'a', 'i', 'gd', 'n'][Math.floor(i / 8) % 6]}${Math.floor(i / 480)}`;
    const size = sizes[i % sizes.length]!;
    const vcpu = 2 ** (1 + (i % 7));
    const memoryMiB = vcpu * 4096;
    const onDemand = Math.round(next() * 10_000) / 1000;
    const offerings: Offering[] = zones.flatMap((zone) => [
      { zone, capacityType: 'on-demand' as const, pricePerHour: onDemand, available: true },
      { zone, capacityType: 'spot' as const, pricePerHour: Math.round(onDemand * (0.2 + next() * 0.5) * 1e5) / 1e5, available: true },
    ]);
    instanceTypes.push({
      name: `${family}.${size}`,
      capacity: { cpu: vcpu * 1000, memory: memoryMiB * Mi, pods: 29 + i },
      allocatable: { cpu: vcpu * 1000 - 70, memory: (memoryMiB - 1200) * Mi, pods: 29 + i },
      labels: {
        'kubernetes.io/arch': i % 3 === 0 ? 'arm64' : 'amd64',
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': `${family}.${size}`,
        'karpenter.k8s.aws/instance-family': family,
        'karpenter.k8s.aws/instance-size': size,
        'karpenter.k8s.aws/instance-cpu': String(vcpu),
        'karpenter.k8s.aws/instance-memory': String(memoryMiB),
        'karpenter.k8s.aws/instance-hypervisor': 'nitro',
        'karpenter.k8s.aws/instance-ebs-bandwidth': String(Math.round(next() * 40000)),
      },
      offerings,
    });
  }
  return { region, instanceTypes, source: 'synthetic', pricesAsOf: AS_OF };
}

async function sortKeys(region: string): Promise<string[]> {
  const answer = await client.send(
    new QueryCommand({
      TableName: TABLE,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: `CATALOG#${region}` } },
    }),
  );
  return (answer.Items ?? []).map((item) => item.sk!.S!).sort();
}

describe('DynamoDB catalog cache', () => {
  it('has nothing before the first put', async () => {
    const cache = new DynamoDbCatalogCache({ client, tableName: TABLE, region: 'sa-east-1' });
    expect(await cache.get()).toBeUndefined();
  });

  it('round-trips a 1,345-type catalog through gzip chunks, manifest V1 plus V1#0..n', async () => {
    const catalog = syntheticCatalog('us-east-1');
    const json = JSON.stringify({ pricesAsOf: AS_OF, catalog });
    const gzipBytes = gzipSync(Buffer.from(json)).length;
    // A real region is ~2.5 MB of JSON but only ~120 KB gzipped, one item at the default chunk size;
    // small chunks here force the split path.
    const maxChunkBytes = 64 * 1024;
    expect(json.length).toBeGreaterThan(400 * 1024);
    const cache = new DynamoDbCatalogCache({ client, tableName: TABLE, region: 'us-east-1', maxChunkBytes });

    await cache.put({ catalog, pricesAsOf: AS_OF });
    const back = await new DynamoDbCatalogCache({ client, tableName: TABLE, region: 'us-east-1', maxChunkBytes }).get();

    expect(back?.pricesAsOf).toBe(AS_OF);
    expect(back?.catalog).toEqual(catalog);
    expect(back?.catalog.instanceTypes).toHaveLength(1345);
    const chunks = Math.ceil(gzipBytes / maxChunkBytes);
    expect(chunks).toBeGreaterThan(1);
    expect(await sortKeys('us-east-1')).toEqual(['V1', ...Array.from({ length: chunks }, (_, i) => `V1#${i}`)].sort());
  });

  it('with the default chunk size stays under the 400 KB item limit and round-trips', async () => {
    const catalog = syntheticCatalog('us-west-2');
    const cache = new DynamoDbCatalogCache({ client, tableName: TABLE, region: 'us-west-2' });
    await cache.put({ catalog, pricesAsOf: AS_OF });
    expect(DEFAULT_MAX_CHUNK_BYTES).toBeLessThan(400 * 1024);
    expect((await cache.get())?.catalog).toEqual(catalog);
  });

  it('keeps a small catalog inline in the manifest item', async () => {
    const catalog = syntheticCatalog('ca-central-1', 3);
    const cache = new DynamoDbCatalogCache({ client, tableName: TABLE, region: 'ca-central-1' });
    await cache.put({ catalog, pricesAsOf: AS_OF });
    expect(await sortKeys('ca-central-1')).toEqual(['V1']);
    expect(await cache.get()).toEqual({ catalog, pricesAsOf: AS_OF });
  });

  it('replaces the previous catalog, and the reader follows the newest manifest', async () => {
    const cache = new DynamoDbCatalogCache({ client, tableName: TABLE, region: 'eu-west-1', maxChunkBytes: 64 * 1024 });
    await cache.put({ catalog: syntheticCatalog('eu-west-1'), pricesAsOf: AS_OF });
    const smaller = syntheticCatalog('eu-west-1', 400);
    await cache.put({ catalog: smaller, pricesAsOf: AS_OF + 1000 });
    expect(await cache.get()).toEqual({ catalog: smaller, pricesAsOf: AS_OF + 1000 });
  });

  it('ignores chunks written without their manifest (a writer stopped half-way)', async () => {
    const region = 'eu-north-1';
    const cache = new DynamoDbCatalogCache({ client, tableName: TABLE, region, maxChunkBytes: 64 * 1024 });
    await cache.put({ catalog: syntheticCatalog(region), pricesAsOf: AS_OF });
    // A second writer got as far as overwriting chunk 0 with its own generation, then died.
    await client.send(
      new PutItemCommand({
        TableName: TABLE,
        Item: { pk: { S: `CATALOG#${region}` }, sk: { S: 'V1#0' }, generation: { S: 'other' }, data: { B: Buffer.from('x') } },
      }),
    );
    expect(await cache.get()).toBeUndefined();

    // Chunks with no manifest at all are no catalog either.
    const orphan = new DynamoDbCatalogCache({ client, tableName: TABLE, region: 'me-south-1' });
    await client.send(
      new PutItemCommand({
        TableName: TABLE,
        Item: { pk: { S: 'CATALOG#me-south-1' }, sk: { S: 'V1#0' }, generation: { S: 'g' }, data: { B: Buffer.from('x') } },
      }),
    );
    expect(await orphan.get()).toBeUndefined();
  });

  it('reports a corrupted payload instead of returning garbage', async () => {
    const region = 'ap-south-1';
    const cache = new DynamoDbCatalogCache({ client, tableName: TABLE, region });
    await cache.put({ catalog: syntheticCatalog(region, 5), pricesAsOf: AS_OF });
    const manifest = await client.send(
      new GetItemCommand({ TableName: TABLE, Key: { pk: { S: `CATALOG#${region}` }, sk: { S: 'V1' } } }),
    );
    await client.send(
      new PutItemCommand({ TableName: TABLE, Item: { ...manifest.Item!, data: { B: Buffer.from('not gzip') } } }),
    );
    await expect(cache.get()).rejects.toMatchObject({ name: 'CatalogSourceError', operation: 'catalog cache' });
  });

  it('names the DynamoDB call when the table does not exist', async () => {
    const cache = new DynamoDbCatalogCache({ client, tableName: 'missing-table', region: 'us-east-1' });
    await expect(cache.get()).rejects.toMatchObject({ name: 'CatalogSourceError', operation: 'dynamodb:GetItem' });
    await expect(cache.put({ catalog: syntheticCatalog('us-east-1', 1), pricesAsOf: AS_OF })).rejects.toMatchObject({
      operation: 'dynamodb:PutItem',
    });
  });

  it('rejects a chunk size that cannot fit an item', () => {
    expect(() => new DynamoDbCatalogCache({ client, tableName: TABLE, region: 'x', maxChunkBytes: 400 * 1024 })).toThrow(RangeError);
  });
});

describe('in-memory catalog cache', () => {
  it('returns copies, so callers cannot change what is stored', async () => {
    const cache = new InMemoryCatalogCache();
    expect(await cache.get()).toBeUndefined();
    await cache.put({ catalog: syntheticCatalog('us-east-1', 2), pricesAsOf: AS_OF });
    const first = (await cache.get())!;
    (first.catalog.instanceTypes as InstanceType[]).length = 0;
    expect((await cache.get())!.catalog.instanceTypes).toHaveLength(2);
    expect(cache.getCalls).toBe(3);
    expect(cache.putCalls).toBe(1);
  });
});
