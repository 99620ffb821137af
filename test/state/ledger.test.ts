// The ledger (docs/replay.md, "The Lambda's ledger"): what a real pass records, how both stores keep it,
// and `replay --from-ledger` reading it back.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoStateStore } from '../../src/adapters/dynamodb/dynamoStateStore.ts';
import { createStateTable } from '../../src/adapters/dynamodb/tableSchema.ts';
import { FileStateStore } from '../../src/adapters/state/fileStateStore.ts';
import { runPass } from '../../src/app/runPass.ts';
import { InputError } from '../../src/core/errors.ts';
import { parseFeatureGates } from '../../src/core/featureGates.ts';
import type { Decision, Plan } from '../../src/core/plan.ts';
import { reportFromLedger } from '../../src/core/replay/fromLedger.ts';
import { ledgerEntryFor, LEDGER_RETENTION_MS, type LedgerEntry } from '../../src/core/state/ledger.ts';
import type { DisruptionCommand } from '../../src/core/state/types.ts';
import { startDynalite, uniqueTableName, type LocalDynamo } from '../support/dynalite.ts';
import { cluster, hours, m5Catalog, minutes, node, nodePool, on, pod, T0 } from '../builders.ts';

const decision = (overrides: Partial<Decision> = {}): Decision => ({
  method: 'single-node',
  reason: 'Underutilized',
  action: 'replace',
  nodes: ['old'],
  replacements: [{ instanceTypes: ['m5.large'], capacityType: 'on-demand', zones: ['us-east-1a'], pricePerHour: 0.096, nodePool: 'default', worstPricePerHour: 0.096 }],
  currentPricePerHour: 0.192,
  replacementPricePerHour: 0.096,
  savingsPerHour: 0.096,
  disruptionCost: 3,
  evictedPods: ['default/a', 'default/b'],
  ...overrides,
});
const plan = (decisions: Decision[]): Plan => ({ dryRun: false, evaluatedAt: '', decisions, nodes: [] });
const command = (overrides: Partial<DisruptionCommand>): DisruptionCommand => ({
  id: 'cmd-1',
  createdAt: T0 - minutes(20),
  nodes: ['older'],
  method: 'single-node',
  reason: 'Underutilized',
  replacements: [{ instanceTypes: ['m5.large'], capacityType: 'on-demand', zones: ['us-east-1a'], pricePerHour: 0.096 }],
  step: 'done',
  launched: [{ index: 0, ref: 'i-fresh', nodeName: 'fresh' }],
  updatedAt: T0 - minutes(15),
  version: 3,
  ...overrides,
});

describe('ledgerEntryFor', () => {
  it('records planned prices, the realised price of a finished replacement, and a replacement disrupted again soon', () => {
    const fresh = node({ name: 'fresh', instanceType: 'm5.xlarge', createdAt: T0 - minutes(12) });
    const entry = ledgerEntryFor({
      plan: plan([decision({ nodes: ['fresh'], currentPricePerHour: 0.192 })]),
      cluster: cluster({ nodes: [fresh, node({ name: 'b' })], pods: [...on('fresh', pod()), pod({ name: 'waiting' })] }),
      catalog: m5Catalog(),
      commands: [command({})],
      nowMs: T0,
    });
    expect(entry).toMatchObject({ at: T0, nodes: 2, pods: 2, pendingPods: 1 });
    expect(entry.clusterCostPerHour).toBeCloseTo(0.192 + 0.096, 6);
    expect(entry.decisions).toEqual([
      { method: 'single-node', action: 'replace', nodes: ['fresh'], replacementType: 'm5.large', currentPricePerHour: 0.192, plannedPricePerHour: 0.096, plannedSavingsPerHour: 0.096, podsEvicted: 2 },
    ]);
    // Planned an m5.large at $0.096/h; what came up is an m5.xlarge at $0.192/h.
    expect(entry.realised).toEqual([{ commandId: 'cmd-1', nodes: ['older'], replacementNode: 'fresh', plannedPricePerHour: 0.096, realisedPricePerHour: 0.192 }]);
    expect(entry.reReplaced).toEqual([{ node: 'fresh', launchedAt: T0 - minutes(12), minutesAfterLaunch: 12 }]);
  });

  it.each([
    ['launched 40 minutes before', { createdAt: T0 - minutes(40) }, {}],
    ['not a replacement', {}, { launched: [{ index: 0, ref: 'i-someone-else', nodeName: 'someone-else' }] }],
  ] as const)('does not count a node %s as re-replaced', (_name, nodeOverrides, commandOverrides) => {
    const entry = ledgerEntryFor({
      plan: plan([decision({ nodes: ['fresh'] })]),
      cluster: cluster({ nodes: [node({ name: 'fresh', createdAt: T0 - minutes(12), ...nodeOverrides })] }),
      catalog: m5Catalog(),
      commands: [command(commandOverrides)],
      nowMs: T0,
    });
    expect(entry.reReplaced).toEqual([]);
  });

  it('records a move with several replacements like any other (every decision is carried out)', () => {
    const two = decision({ nodes: ['a', 'b', 'c'], move: 'm-to-n', replacements: [decision().replacements[0]!, decision().replacements[0]!], currentPricePerHour: 0.288, replacementPricePerHour: 0.192, savingsPerHour: 0.096 });
    const entry = ledgerEntryFor({ plan: plan([two]), cluster: cluster({ nodes: [] }), catalog: m5Catalog(), commands: [], nowMs: T0 });
    expect(entry.decisions).toEqual([
      { method: 'single-node', action: 'replace', nodes: ['a', 'b', 'c'], replacementType: 'm5.large', currentPricePerHour: 0.288, plannedPricePerHour: 0.192, plannedSavingsPerHour: 0.096, podsEvicted: 2 },
    ]);
  });
});

const entryAt = (at: number, overrides: Partial<LedgerEntry> = {}): LedgerEntry => ({
  at,
  clusterCostPerHour: 1,
  nodes: 3,
  pods: 10,
  pendingPods: 0,
  decisions: [],
  realised: [],
  reReplaced: [],
  ...overrides,
});

describe('FileStateStore ledger', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ekc-ledger-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps entries in the state file, oldest first, and drops those past the retention', async () => {
    const store = new FileStateStore(join(dir, 'keep.json'));
    await store.appendLedger(entryAt(T0 - LEDGER_RETENTION_MS - hours(1)));
    await store.appendLedger(entryAt(T0 + minutes(5)));
    await store.appendLedger(entryAt(T0));
    expect((await store.listLedger()).map((e) => e.at)).toEqual([T0, T0 + minutes(5)]);
    expect((await store.load()).nodes).toEqual({}); // the state itself is untouched
  });

  it('names the file and the field of a bad entry', async () => {
    const path = join(dir, 'bad.json');
    const store = new FileStateStore(path);
    await store.appendLedger(entryAt(T0));
    const doc = JSON.parse(readFileSync(path, 'utf8'));
    doc.ledger[0].clusterCostPerHour = 'cheap';
    writeFileSync(path, JSON.stringify(doc));
    await expect(store.listLedger()).rejects.toThrow(InputError);
    await expect(store.listLedger()).rejects.toThrow(`${path}: ledger[0].clusterCostPerHour: not a number`);
  });

  it('is written by a real pass and not by a dry run', async () => {
    const path = join(dir, 'pass.json');
    const store = new FileStateStore(path);
    const empty = node({ name: 'empty' });
    const busy = node({ name: 'busy' });
    const deps = { readCluster: async () => cluster({ nodes: [empty, busy], pods: on('busy', pod()) }), loadCatalog: async () => ({ catalog: m5Catalog(), warnings: [] }), loadNodePools: async () => [nodePool()], state: store };
    const settings = { nowMs: T0, gates: parseFeatureGates(undefined, 'FEATURE_GATES'), persistState: true, scope: 'all' as const, owner: 'test', leaseTtlMs: minutes(5), karpenterPresence: 'absent' as const };
    await runPass(deps, { ...settings, dryRun: true });
    expect(await store.listLedger()).toEqual([]);
    await runPass(deps, { ...settings, dryRun: false });
    const [entry] = await store.listLedger();
    expect(entry!.decisions.map((d) => [d.method, d.nodes])).toEqual([['emptiness', ['empty']]]);
    expect(entry!.clusterCostPerHour).toBeCloseTo(2 * 0.096, 6);
  });
});

describe('DynamoStateStore ledger', () => {
  let db: LocalDynamo;
  beforeAll(async () => {
    db = await startDynalite();
  });
  afterAll(async () => {
    await db.stop();
  });

  it('appends and lists entries in a partition that a pass never loads', async () => {
    const tableName = uniqueTableName();
    await createStateTable(db.client, tableName);
    const store = new DynamoStateStore({ client: db.client, tableName, clusterName: 'prod', clock: () => T0 });
    await store.appendLedger(entryAt(T0 + minutes(5), { decisions: [{ method: 'emptiness', action: 'delete', nodes: ['x'], currentPricePerHour: 0.1, plannedPricePerHour: 0, plannedSavingsPerHour: 0.1, podsEvicted: 0 }] }));
    await store.appendLedger(entryAt(T0));
    const entries = await store.listLedger();
    expect(entries.map((e) => e.at)).toEqual([T0, T0 + minutes(5)]);
    expect(entries[1]!.decisions[0]!.nodes).toEqual(['x']);
    const state = await store.load(T0);
    expect(state).toEqual({ nodes: {}, cluster: { version: 0 }, commands: [] });
    // Another cluster's ledger is its own.
    expect(await new DynamoStateStore({ client: db.client, tableName, clusterName: 'staging', clock: () => T0 }).listLedger()).toEqual([]);
  });
});

describe('reportFromLedger and replay --from-ledger', () => {
  const entries = [
    entryAt(T0, { clusterCostPerHour: 1, decisions: [{ method: 'single-node', action: 'replace', nodes: ['a'], replacementType: 'm5.large', currentPricePerHour: 0.2, plannedPricePerHour: 0.1, plannedSavingsPerHour: 0.1, podsEvicted: 4 }] }),
    entryAt(T0 + minutes(5), { clusterCostPerHour: 0.9, pendingPods: 2, realised: [{ commandId: 'c', nodes: ['a'], replacementNode: 'r', plannedPricePerHour: 0.1, realisedPricePerHour: 0.12 }] }),
    entryAt(T0 + minutes(10), { clusterCostPerHour: 0.9, decisions: [{ method: 'emptiness', action: 'delete', nodes: ['r'], currentPricePerHour: 0.12, plannedPricePerHour: 0, plannedSavingsPerHour: 0.12, podsEvicted: 0 }], reReplaced: [{ node: 'r', launchedAt: T0 + minutes(1), minutesAfterLaunch: 9 }] }),
  ];

  it('adds up cost, savings (realised where known), evictions, regret and pending minutes', () => {
    const report = reportFromLedger(entries, 'prod');
    const s = report.configs[0]!.summary;
    expect(report).toMatchObject({ source: 'ledger', passes: 3, intervalMs: minutes(5), startedAt: '2026-11-21T12:00:00Z', endedAt: '2026-11-21T12:15:00Z' });
    expect(s.totalCostDollars).toBeCloseTo((1 + 0.9 + 0.9) * (5 / 60), 4);
    // Replacement realised at $0.12 instead of $0.10: saves $0.08/h for 15 minutes; the delete $0.12/h for 5.
    expect(s.savingsDollars).toBeCloseTo(0.08 * 0.25 + 0.12 * (5 / 60), 4);
    expect(s).toMatchObject({ podsEvicted: 4, nodesDisrupted: 2, nodesReplaced: 1, regret: 1, pendingPodMinutes: 10, decisions: 2 });
    expect(report.configs[0]!.decisions.map((d) => d.regret)).toEqual([0, 1]);
  });

  it('reads a state file through the CLI, in every format', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ekc-from-ledger-'));
    try {
      const path = join(dir, 'prod.json');
      writeFileSync(path, JSON.stringify({ format: 'eks-consolidator/state', version: 1, ledger: entries }));
      const bin = join(import.meta.dirname, '../../bin/eks-consolidator.mjs');
      const json = spawnSync(process.execPath, [bin, 'replay', '--from-ledger', path], { encoding: 'utf8', timeout: 60_000 });
      expect(json.status).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual(JSON.parse(JSON.stringify(reportFromLedger(entries, 'prod'))));
      const table = spawnSync(process.execPath, [bin, 'replay', '--from-ledger', path, '--format', 'table'], { encoding: 'utf8', timeout: 60_000 });
      expect(table.stdout).toMatch(/^prod\s+\$0\.9000/m);
      const mixed = spawnSync(process.execPath, [bin, 'replay', '--from-ledger', path, '--churn', 'daily=0.5'], { encoding: 'utf8', timeout: 60_000 });
      expect(mixed.status).toBe(2);
      expect(mixed.stderr).toContain('--from-ledger: shows recorded passes; leave out --churn');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('replay --from-ledger dynamodb://TABLE/CLUSTER', () => {
  let local: LocalDynamo;
  beforeAll(async () => {
    local = await startDynalite();
  });
  afterAll(() => local.stop());

  it("reads the Lambda's ledger from its state table, one cluster's entries, and refuses a cluster without any", async () => {
    const tableName = uniqueTableName('ledger-cli');
    await createStateTable(local.client, tableName);
    const prod = new DynamoStateStore({ client: local.client, tableName, clusterName: 'prod', clock: () => T0 });
    const entries = [entryAt(T0, { clusterCostPerHour: 1 }), entryAt(T0 + minutes(5), { clusterCostPerHour: 0.75 })];
    for (const entry of entries) await prod.appendLedger(entry);
    await new DynamoStateStore({ client: local.client, tableName, clusterName: 'staging', clock: () => T0 }).appendLedger(entryAt(T0, { clusterCostPerHour: 9 }));
    const bin = join(import.meta.dirname, '../../bin/eks-consolidator.mjs');
    const env = { ...process.env, AWS_ENDPOINT_URL_DYNAMODB: local.endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
    // dynalite runs in this process: the CLI must be run without blocking it (no spawnSync).
    const cli = (args: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000, env }, (error, stdout, stderr) =>
          resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
        );
      });
    const json = await cli(['replay', '--from-ledger', `dynamodb://${tableName}/prod`]);
    expect(json.stderr).toBe('');
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(JSON.stringify(reportFromLedger(entries, 'prod'))));
    const none = await cli(['replay', '--from-ledger', `dynamodb://${tableName}/dev`]);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain(`table ${tableName} has no ledger entries for cluster dev`);
    const bad = await cli(['replay', '--from-ledger', 'dynamodb://only-a-table']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('is not dynamodb://TABLE/CLUSTER');
  });
});

describe('ledgerEntryFor, finished commands', () => {
  it.each([
    // The command finished at T0 - 20m.
    ['that finished after the previous search', T0 - minutes(30), 1],
    ['that finished before the previous search (already reported)', T0 - minutes(10), 0],
  ])('reports a command %s', (_name, finishedAfterMs, count) => {
    const entry = ledgerEntryFor({
      plan: plan([]),
      cluster: cluster({ nodes: [node({ name: 'fresh', createdAt: T0 - minutes(40) })] }),
      catalog: m5Catalog(),
      commands: [command({ updatedAt: T0 - minutes(20) })],
      nowMs: T0,
      finishedAfterMs,
    });
    expect(entry.realised).toHaveLength(count);
  });
});
