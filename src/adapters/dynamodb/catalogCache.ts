// The catalog cache in the product's DynamoDB table (tableSchema.ts), beside the cluster state:
// pk = CATALOG#<region>, sk = V1 (manifest) and V1#<n> (chunks). A region's catalog is megabytes of
// JSON and a DynamoDB item holds 400 KB, so it is stored gzipped (about 120 KB for a real region), and
// split into chunk items when even that is too big. The manifest item is written last and names the chunk generation it belongs to: a reader
// never assembles a half-written set, and a crash mid-write leaves the previous manifest (and its
// chunks, unless overwritten, which the generation check detects) rather than garbage.
import { createHash, randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  GetItemCommand,
  PutItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { Catalog } from '../../core/model/types.ts';
import type { CachedCatalog, CatalogCache } from '../../core/ports/catalog.ts';
import { callAws, CatalogSourceError } from '../aws/errors.ts';
import { PARTITION_KEY, SORT_KEY } from './tableSchema.ts';

const MANIFEST_SK = 'V1';
const chunkSk = (index: number): string => `${MANIFEST_SK}#${index}`;

/** Room under the 400 KB item limit for keys and the other attributes. */
export const DEFAULT_MAX_CHUNK_BYTES = 350_000;
const ITEM_LIMIT_BYTES = 400 * 1024;

export interface DynamoDbCatalogCacheOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The catalog's region: one cached catalog per region (`CATALOG#<region>`). */
  readonly region: string;
  /** Largest gzip payload per item; smaller values only matter to tests. */
  readonly maxChunkBytes?: number;
}

interface StoredDocument {
  readonly pricesAsOf: number;
  readonly catalog: Catalog;
}

export class DynamoDbCatalogCache implements CatalogCache {
  private readonly maxChunkBytes: number;
  private readonly pk: string;

  constructor(private readonly options: DynamoDbCatalogCacheOptions) {
    this.maxChunkBytes = options.maxChunkBytes ?? DEFAULT_MAX_CHUNK_BYTES;
    if (!(this.maxChunkBytes > 0 && this.maxChunkBytes <= ITEM_LIMIT_BYTES - 10_000)) {
      throw new RangeError(`maxChunkBytes must be in (0, ${ITEM_LIMIT_BYTES - 10_000}]`);
    }
    this.pk = `CATALOG#${options.region}`;
  }

  async get(): Promise<CachedCatalog | undefined> {
    const manifest = await this.getItem(MANIFEST_SK);
    if (manifest === undefined) return undefined;

    const chunkCount = Number(manifest.chunkCount?.N ?? '0');
    let payload: Buffer;
    if (chunkCount === 0) {
      const inline = manifest.data?.B;
      if (inline === undefined) throw this.corrupt('the manifest has neither data nor chunks');
      payload = Buffer.from(inline);
    } else {
      const generation = manifest.generation?.S;
      const parts: Buffer[] = [];
      for (let index = 0; index < chunkCount; index += 1) {
        const chunk = await this.getItem(chunkSk(index));
        // A chunk missing or from another generation: a writer is mid-way. Not an error, just no cache.
        if (chunk?.data?.B === undefined || chunk.generation?.S !== generation) return undefined;
        parts.push(Buffer.from(chunk.data.B));
      }
      payload = Buffer.concat(parts);
    }

    if (manifest.sha256?.S !== undefined && sha256(payload) !== manifest.sha256.S) {
      throw this.corrupt('checksum mismatch');
    }
    let document: StoredDocument;
    try {
      document = JSON.parse(gunzipSync(payload).toString('utf8')) as StoredDocument;
    } catch (error) {
      throw this.corrupt(`cannot decode: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (
      !Number.isFinite(document?.pricesAsOf) ||
      typeof document.catalog?.region !== 'string' ||
      !Array.isArray(document.catalog.instanceTypes)
    ) {
      throw this.corrupt('not a dated catalog');
    }
    return { catalog: document.catalog, pricesAsOf: document.pricesAsOf };
  }

  async put(entry: CachedCatalog): Promise<void> {
    const document: StoredDocument = { pricesAsOf: entry.pricesAsOf, catalog: entry.catalog };
    const payload = gzipSync(Buffer.from(JSON.stringify(document), 'utf8'));
    const manifest: Record<string, AttributeValue> = {
      pricesAsOf: { N: String(entry.pricesAsOf) },
      byteLength: { N: String(payload.length) },
      sha256: { S: sha256(payload) },
    };

    if (payload.length <= this.maxChunkBytes) {
      await this.putItem(MANIFEST_SK, { ...manifest, chunkCount: { N: '0' }, data: { B: payload } });
      return;
    }
    const generation = randomUUID();
    const chunkCount = Math.ceil(payload.length / this.maxChunkBytes);
    // Chunks first, one at a time, so that the manifest below is only written once all of them are.
    for (let index = 0; index < chunkCount; index += 1) {
      const data = payload.subarray(index * this.maxChunkBytes, (index + 1) * this.maxChunkBytes);
      await this.putItem(chunkSk(index), { generation: { S: generation }, data: { B: data } });
    }
    await this.putItem(MANIFEST_SK, { ...manifest, chunkCount: { N: String(chunkCount) }, generation: { S: generation } });
  }

  private async getItem(sk: string): Promise<Record<string, AttributeValue> | undefined> {
    const answer = await callAws('dynamodb:GetItem', () =>
      this.options.client.send(
        new GetItemCommand({
          TableName: this.options.tableName,
          Key: { [PARTITION_KEY]: { S: this.pk }, [SORT_KEY]: { S: sk } },
          // The manifest may have just been replaced; a stale read would pair it with the wrong chunks.
          ConsistentRead: true,
        }),
      ),
    );
    return answer.Item;
  }

  private async putItem(sk: string, attributes: Record<string, AttributeValue>): Promise<void> {
    await callAws('dynamodb:PutItem', () =>
      this.options.client.send(
        new PutItemCommand({
          TableName: this.options.tableName,
          Item: { [PARTITION_KEY]: { S: this.pk }, [SORT_KEY]: { S: sk }, ...attributes },
        }),
      ),
    );
  }

  private corrupt(problem: string): CatalogSourceError {
    return new CatalogSourceError('catalog cache', `${this.pk} ${MANIFEST_SK}: ${problem}`);
  }
}

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');
