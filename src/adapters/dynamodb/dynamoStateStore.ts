// The Lambda's state: the `StateStore` port on one DynamoDB table (layout in tableSchema.ts).
//
// - Every record carries `version`; writes are conditional on the version read, so two overlapping
//   passes cannot overwrite each other's records unnoticed (`StateConflictError`).
// - The lease (`LEASE` item) is a conditional update: taken when free, expired or already ours. Each
//   taking bumps the item's fencing token (`token`, never reset: releasing only ends the lease, and the
//   item has no TTL), and every record this store writes while holding the lease carries that token
//   (`fence`) on the condition that the stored record's fence is not newer: once a later lease holder
//   has written a record, a pass that lost its lease can no longer overwrite it.
// - Expired items are ignored on read (`expiresAtMs` against the pass time): TTL deletion is late.
// - SDK errors become domain errors: a failed condition is a conflict (or a refused lease), anything
//   else a `StateStoreError` naming the operation.

import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { applyChanges, diffPassState } from '../../core/state/diff.ts';
import { StateConflictError, StateCorruptError, StateStoreError } from '../../core/state/errors.ts';
import { LEDGER_RETENTION_MS, readLedgerEntry, type LedgerEntry } from '../../core/state/ledger.ts';
import type { StateStore, UnreadableRecord } from '../../core/state/ports.ts';
import {
  commandExpiresAt,
  type ClusterState,
  type DisruptionCommand,
  type LeaseState,
  type NodeState,
  type PassState,
} from '../../core/state/types.ts';
import {
  epochMsTime,
  readClusterState,
  readCommand,
  readNodeState,
  RecordReader,
  sortCommands,
  writeClusterState,
  writeCommand,
  writeNodeState,
  type Fail,
} from '../state/recordCodec.ts';
import { PARTITION_KEY, SORT_KEY, StateKeys, TTL_ATTRIBUTE } from './tableSchema.ts';

/** Epoch-ms twin of the TTL attribute: exact expiry for reads and conditions. */
const EXPIRES_AT_MS = 'expiresAtMs';
/** The fencing token a record was written under. */
const FENCE = 'fence';

export interface DynamoStateStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The cluster this state belongs to (the partition). */
  readonly clusterName: string;
  /** Used only when an operation is not given the pass time (default `Date.now`). */
  readonly clock?: () => number;
  /** Items per Query page (default: DynamoDB's 1 MB pages). */
  readonly pageSize?: number;
  /** Conditional writes in flight at once during `save` (default 16). */
  readonly writeConcurrency?: number;
}

type Item = Record<string, unknown>;

export class DynamoStateStore implements StateStore {
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly pk: string;
  private readonly ledgerPk: string;
  private readonly clock: () => number;
  private readonly pageSize: number | undefined;
  private readonly writeConcurrency: number;
  private loadedAtMs: number | undefined;
  /** The lease this store holds: its owner and fencing token (written into every record). */
  private held: { readonly owner: string; readonly token: number } | undefined;

  constructor(options: DynamoStateStoreOptions) {
    this.doc = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.table = options.tableName;
    this.pk = StateKeys.cluster(options.clusterName);
    this.ledgerPk = StateKeys.ledger(options.clusterName);
    this.clock = options.clock ?? Date.now;
    this.pageSize = options.pageSize;
    this.writeConcurrency = options.writeConcurrency ?? 16;
  }

  /** Command and node records skipped since the last `takeUnreadable`, by key. */
  private readonly unreadable = new Map<string, UnreadableRecord>();
  /** Ids of the command records the last listing skipped (not cleared by `takeUnreadable`). */
  private unreadableIds = new Set<string>();
  /**
   * Node records the last `load` skipped, by node name, with the stored `version` attribute when it was
   * a number: `save` writes a fresh record over one, on the condition that it is still that item.
   */
  private readonly unreadableNodes = new Map<string, number | undefined>();

  async load(nowMs?: number): Promise<PassState> {
    const now = nowMs ?? this.clock();
    this.loadedAtMs = now;
    this.unreadableNodes.clear();
    const nodes: Record<string, NodeState> = {};
    const commands: DisruptionCommand[] = [];
    let cluster: ClusterState = { version: 0 };
    for (const item of await this.queryAll('load', now)) {
      const sk = String(item[SORT_KEY]);
      if (sk === StateKeys.meta) cluster = decodeCluster(item);
      else if (sk.startsWith(StateKeys.nodePrefix)) {
        const node = this.decodeNodeOrSkip(item);
        if (node !== undefined) nodes[node.name] = node;
      } else if (sk.startsWith(StateKeys.commandPrefix)) {
        const command = this.decodeCommandOrSkip(item);
        if (command !== undefined) commands.push(command);
      }
    }
    return { nodes, cluster, commands: sortCommands(commands) };
  }

  async save(next: PassState, previous: PassState, nowMs?: number): Promise<PassState> {
    const now = nowMs ?? this.loadedAtMs ?? this.clock();
    const changes = diffPassState(next, previous);
    const writes: (() => Promise<string | undefined>)[] = [];
    for (const record of changes.putNodes) writes.push(() => this.putNode(record, now));
    for (const record of changes.deleteNodes) writes.push(() => this.deleteNode(record));
    if (changes.cluster) {
      const cluster = changes.cluster;
      writes.push(() => this.putCluster(cluster));
    }
    const conflicts = (await runLimited(writes, this.writeConcurrency)).filter((c): c is string => c !== undefined);
    if (conflicts.length > 0) throw new StateConflictError(conflicts.sort(), 'save');
    return applyChanges(next, changes);
  }

  async acquireLease(owner: string, nowMs: number, ttlMs: number): Promise<boolean> {
    const token = await this.updateLease('acquireLease', {
      UpdateExpression: 'SET #owner = :me, #until = :until, #token = if_not_exists(#token, :zero) + :one REMOVE #ttl',
      ConditionExpression: 'attribute_not_exists(#pk) OR attribute_not_exists(#owner) OR #until <= :now OR #owner = :me',
      ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#owner': 'owner', '#until': 'leaseUntilMs', '#token': 'token', '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':me': owner, ':until': nowMs + ttlMs, ':now': nowMs, ':zero': 0, ':one': 1 },
    });
    if (token === undefined) return false;
    this.held = { owner, token };
    return true;
  }

  async renewLease(owner: string, nowMs: number, ttlMs: number): Promise<boolean> {
    const token = await this.updateLease('renewLease', {
      UpdateExpression: 'SET #until = :until',
      // The same taking of the lease: a lease taken again since (even by the same owner) is another one.
      ConditionExpression: 'attribute_exists(#pk) AND #owner = :me' + (this.held?.owner === owner ? ' AND #token = :token' : ''),
      ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#owner': 'owner', '#until': 'leaseUntilMs', ...(this.held?.owner === owner ? { '#token': 'token' } : {}) },
      ExpressionAttributeValues: { ':me': owner, ':until': nowMs + ttlMs, ...(this.held?.owner === owner ? { ':token': this.held.token } : {}) },
    });
    if (token === undefined && this.held?.owner === owner) this.held = undefined;
    return token !== undefined;
  }

  async releaseLease(owner: string): Promise<void> {
    if (this.held?.owner === owner) this.held = undefined;
    // Ends the lease but keeps the item and its token: the fencing token must never go back.
    await this.conditional('releaseLease', () =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: this.key(StateKeys.lease),
          UpdateExpression: 'REMOVE #owner SET #until = :zero',
          ConditionExpression: '#owner = :me',
          ExpressionAttributeNames: { '#owner': 'owner', '#until': 'leaseUntilMs' },
          ExpressionAttributeValues: { ':me': owner, ':zero': 0 },
        }),
      ),
    );
  }

  async readLease(): Promise<LeaseState | undefined> {
    const { Item } = await this.call('readLease', () =>
      this.doc.send(new GetCommand({ TableName: this.table, Key: this.key(StateKeys.lease), ConsistentRead: true })),
    );
    if (!Item || Item['owner'] === undefined) return undefined;
    const r = RecordReader.of(Item, '', corrupt(StateKeys.lease), epochMsTime);
    return { owner: r.string('owner'), until: r.time('leaseUntilMs') };
  }

  async putCommand(cmd: DisruptionCommand, expectedVersion?: number): Promise<DisruptionCommand> {
    const stored: DisruptionCommand = { ...cmd, version: (expectedVersion ?? 0) + 1 };
    const expiresAtMs = commandExpiresAt(stored);
    const ok = await this.conditional('putCommand', () =>
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            ...this.key(StateKeys.command(cmd.id)),
            ...writeCommand(stored, epochMsTime),
            ...(expiresAtMs === undefined ? {} : ttl(expiresAtMs)),
            ...this.fenceAttribute(),
          },
          ...this.fenced(versionCondition(expectedVersion ?? 0)),
        }),
      ),
    );
    if (!ok) throw new StateConflictError([`command ${cmd.id}`], 'putCommand');
    return stored;
  }

  async appendLedger(entry: LedgerEntry): Promise<void> {
    await this.call('appendLedger', () =>
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            [PARTITION_KEY]: this.ledgerPk,
            [SORT_KEY]: `${new Date(entry.at).toISOString()}#${Math.random().toString(36).slice(2, 8)}`,
            entry: JSON.stringify(entry),
            ...ttl(entry.at + LEDGER_RETENTION_MS),
            ...this.fenceAttribute(),
          },
        }),
      ),
    );
  }

  async listLedger(): Promise<LedgerEntry[]> {
    const entries: LedgerEntry[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.call('listLedger', () =>
        this.doc.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': PARTITION_KEY },
            ExpressionAttributeValues: { ':pk': this.ledgerPk },
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        ),
      );
      for (const item of page.Items ?? []) {
        const sk = `${this.ledgerPk}/${String(item[SORT_KEY])}`;
        let raw: unknown;
        try {
          raw = JSON.parse(String(item['entry']));
        } catch {
          throw new StateCorruptError(sk, 'entry', 'not JSON');
        }
        entries.push(readLedgerEntry(raw, corrupt(sk)));
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return entries.sort((a, b) => a.at - b.at);
  }

  async listCommands(nowMs?: number): Promise<DisruptionCommand[]> {
    const now = nowMs ?? this.clock();
    const items = await this.queryAll('listCommands', now, StateKeys.commandPrefix);
    this.unreadableIds = new Set();
    return sortCommands(items.map((item) => this.decodeCommandOrSkip(item)).filter((c): c is DisruptionCommand => c !== undefined));
  }

  unreadableCommandIds(): ReadonlySet<string> {
    return new Set(this.unreadableIds);
  }

  takeUnreadable(): readonly UnreadableRecord[] {
    const taken = [...this.unreadable.values()];
    this.unreadable.clear();
    return taken;
  }

  /**
   * A command this build cannot read is skipped and kept for `takeUnreadable`, not thrown: the others
   * still resume or roll back (Karpenter's controllers reconcile each object on its own, likewise).
   */
  private decodeCommandOrSkip(item: Item): DisruptionCommand | undefined {
    try {
      return decodeCommand(item);
    } catch (error) {
      if (!(error instanceof StateCorruptError)) throw error;
      const key = String(item[SORT_KEY]);
      this.unreadable.set(key, { key, problem: error.message });
      this.unreadableIds.add(key.slice(StateKeys.commandPrefix.length));
      return undefined;
    }
  }

  /**
   * A node record this build cannot read is skipped and reported like a command: the pass observes the
   * node afresh (as if it had no record) and its save replaces the unreadable item.
   */
  private decodeNodeOrSkip(item: Item): NodeState | undefined {
    try {
      return decodeNode(item);
    } catch (error) {
      if (!(error instanceof StateCorruptError)) throw error;
      const key = String(item[SORT_KEY]);
      this.unreadable.set(key, { key, problem: error.message });
      const version = item['version'];
      this.unreadableNodes.set(key.slice(StateKeys.nodePrefix.length), typeof version === 'number' ? version : undefined);
      return undefined;
    }
  }

  // --- writes -----------------------------------------------------------------------------------

  private async putNode(record: NodeState, nowMs: number): Promise<string | undefined> {
    const item = { ...this.key(StateKeys.node(record.name)), ...writeNodeState({ ...record, version: record.version + 1 }, epochMsTime) };
    // The core's `expiresAt` is ms; DynamoDB's TTL attribute must be seconds.
    delete item.expiresAt;
    const replacing = record.version === 0 && this.unreadableNodes.has(record.name);
    const unreadableVersion = this.unreadableNodes.get(record.name);
    const condition = replacing
      ? unreadableVersion === undefined
        ? { ConditionExpression: 'attribute_exists(#pk)', ExpressionAttributeNames: { '#pk': PARTITION_KEY } }
        : { ConditionExpression: '#v = :expected', ExpressionAttributeNames: { '#v': 'version' }, ExpressionAttributeValues: { ':expected': unreadableVersion } }
      : record.version === 0
        ? {
            // New to us: absent, or present but expired (TTL has not deleted it yet; load ignored it).
            ConditionExpression: 'attribute_not_exists(#pk) OR #expMs <= :now',
            ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#expMs': EXPIRES_AT_MS },
            ExpressionAttributeValues: { ':now': nowMs },
          }
        : versionCondition(record.version);
    const ok = await this.conditional('save', () =>
      this.doc.send(new PutCommand({ TableName: this.table, Item: { ...item, ...ttl(record.expiresAt), ...this.fenceAttribute() }, ...this.fenced(condition) })),
    );
    if (ok && replacing) this.unreadableNodes.delete(record.name);
    return ok ? undefined : `node ${record.name}`;
  }

  private async deleteNode(record: NodeState): Promise<string | undefined> {
    const ok = await this.conditional('save', () =>
      this.doc.send(
        new DeleteCommand({
          TableName: this.table,
          Key: this.key(StateKeys.node(record.name)),
          // Already gone is fine: someone else finished the job.
          ...this.fenced({
            ConditionExpression: 'attribute_not_exists(#pk) OR #v = :expected',
            ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#v': 'version' },
            ExpressionAttributeValues: { ':expected': record.version },
          }),
        }),
      ),
    );
    return ok ? undefined : `node ${record.name}`;
  }

  private async putCluster(cluster: ClusterState): Promise<string | undefined> {
    const ok = await this.conditional('save', () =>
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...this.key(StateKeys.meta), ...writeClusterState({ ...cluster, version: cluster.version + 1 }, epochMsTime), ...this.fenceAttribute() },
          ...this.fenced(versionCondition(cluster.version)),
        }),
      ),
    );
    return ok ? undefined : 'cluster';
  }

  /** The lease item updated on `condition`; its fencing token, or undefined when the condition failed. */
  private async updateLease(operation: string, parts: ConditionParts & { readonly UpdateExpression: string }): Promise<number | undefined> {
    try {
      const { Attributes } = await this.doc.send(
        new UpdateCommand({ TableName: this.table, Key: this.key(StateKeys.lease), ReturnValues: 'ALL_NEW', ...parts }),
      );
      const token = Attributes?.['token'];
      return typeof token === 'number' ? token : 0;
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return undefined;
      throw new StateStoreError(operation, { cause: error });
    }
  }

  private fenceAttribute(): Item {
    return this.held === undefined ? {} : { [FENCE]: this.held.token };
  }

  /** `condition` AND the stored record was not written under a newer lease than ours. */
  private fenced(condition: ConditionParts): ConditionParts {
    if (this.held === undefined) return condition;
    return {
      ConditionExpression: `(${condition.ConditionExpression}) AND (attribute_not_exists(#fence) OR #fence <= :fence)`,
      ExpressionAttributeNames: { ...condition.ExpressionAttributeNames, '#fence': FENCE },
      ExpressionAttributeValues: { ...(condition.ExpressionAttributeValues ?? {}), ':fence': this.held.token },
    };
  }

  // --- reads ------------------------------------------------------------------------------------

  /** Every unexpired item of the cluster (optionally under a sort-key prefix), following every page. */
  private async queryAll(operation: string, nowMs: number, skPrefix?: string): Promise<Item[]> {
    const items: Item[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const input: QueryCommandInput = {
        TableName: this.table,
        KeyConditionExpression: skPrefix ? '#pk = :pk AND begins_with(#sk, :prefix)' : '#pk = :pk',
        // Coarse filter on the TTL seconds saves transfer; the exact check on ms follows.
        FilterExpression: 'attribute_not_exists(#ttl) OR #ttl >= :nowSec',
        ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#ttl': TTL_ATTRIBUTE, ...(skPrefix ? { '#sk': SORT_KEY } : {}) },
        ExpressionAttributeValues: { ':pk': this.pk, ':nowSec': Math.floor(nowMs / 1000), ...(skPrefix ? { ':prefix': skPrefix } : {}) },
        ConsistentRead: true,
        ...(this.pageSize ? { Limit: this.pageSize } : {}),
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      };
      const page = await this.call(operation, () => this.doc.send(new QueryCommand(input)));
      for (const item of page.Items ?? []) {
        const expiresAtMs = item[EXPIRES_AT_MS];
        if (typeof expiresAtMs === 'number' && expiresAtMs <= nowMs) continue;
        items.push(item);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
  }

  // --- plumbing ---------------------------------------------------------------------------------

  private key(sk: string): Item {
    return { [PARTITION_KEY]: this.pk, [SORT_KEY]: sk };
  }

  private async call<T>(operation: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw new StateStoreError(operation, { cause: error });
    }
  }

  /** True when written, false when the condition failed; any other failure is a `StateStoreError`. */
  private async conditional(operation: string, send: () => Promise<unknown>): Promise<boolean> {
    try {
      await send();
      return true;
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return false;
      throw new StateStoreError(operation, { cause: error });
    }
  }
}

interface ConditionParts {
  readonly ConditionExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues?: Record<string, unknown>;
}

/** 0: the record must not exist yet; otherwise its stored version must be `expected`. */
function versionCondition(expected: number): ConditionParts {
  return expected === 0
    ? { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PARTITION_KEY } }
    : {
        ConditionExpression: '#v = :expected',
        ExpressionAttributeNames: { '#v': 'version' },
        ExpressionAttributeValues: { ':expected': expected },
      };
}

function ttl(expiresAtMs: number): Item {
  return { [TTL_ATTRIBUTE]: Math.ceil(expiresAtMs / 1000), [EXPIRES_AT_MS]: expiresAtMs };
}

function corrupt(record: string): Fail {
  return (field, problem) => {
    throw new StateCorruptError(record, field, problem);
  };
}

function decodeNode(item: Item): NodeState {
  const sk = String(item[SORT_KEY]);
  const fail = corrupt(sk);
  // The record's `expiresAt` in core terms is the ms twin of the TTL attribute.
  const node = readNodeState(RecordReader.of({ ...item, expiresAt: item[EXPIRES_AT_MS] }, '', fail, epochMsTime));
  if (StateKeys.node(node.name) !== sk) fail('name', `"${node.name}" does not match the key`);
  return node;
}

function decodeCluster(item: Item): ClusterState {
  return readClusterState(RecordReader.of(item, '', corrupt(StateKeys.meta), epochMsTime));
}

function decodeCommand(item: Item): DisruptionCommand {
  const fail = corrupt(String(item[SORT_KEY]));
  return readCommand(RecordReader.of(item, '', fail, epochMsTime), fail, epochMsTime);
}

/** Runs the tasks with at most `limit` in flight; results in task order. */
async function runLimited<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
  return results;
}
