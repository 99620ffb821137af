// Nothing we launched is ever lost: each pass sweeps the capacity this product launched that no
// unfinished command owns (an instance or a NodeClaim with no Node past the Ready timeout, or whose Node
// is gone) and removes our taints that no unfinished command owns, before planning and whether or not
// planning then fails. Against the fake Kubernetes API, the stateful EC2 fake and DynamoDB on dynalite.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { makeActor, resumeCommands, executePlan } from '../../src/app/act/executeCommands.ts';
import { runPass } from '../../src/app/runPass.ts';
import { StateKeys } from '../../src/adapters/dynamodb/tableSchema.ts';
import { COMMAND_ANNOTATION } from '../../src/core/ports/actuator.ts';
import { findOrphans, commandOfLaunchKey } from '../../src/core/disruption/orphans.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { FAST, T0, events, instanceIdOf, karpenterPassResult, nodeSpec, passResult, replaceDecision, startWorld, type World } from './harness.ts';
import { m5Catalog } from '../builders.ts';

const OLD = 'ip-10-1-1-7.ec2.internal';
const NEW = 'ip-10-9-9-9.ec2.internal';
const MINUTE = 60_000;

let db: LocalDynamo;
let world: World | undefined;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.stop();
});
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const raw = (w: World) => DynamoDBDocumentClient.from(w.dbClient);
const pk = StateKeys.cluster('test');

async function deleteRecord(w: World, id: string): Promise<void> {
  await raw(w).send(new DeleteCommand({ TableName: w.tableName, Key: { pk, sk: StateKeys.command(id) } }));
}

/** A replace whose replacement never registers, started at T0: its instance runs, its old node is tainted. */
async function startedReplace(w: World): Promise<{ commandId: string; instanceId: string }> {
  w.api.setEvictionPolicy('allow');
  const report = await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
  const cmd = report.commands[0]!;
  expect(cmd.step).toBe('launched');
  return { commandId: cmd.id, instanceId: cmd.launchedInstanceId! };
}

async function passes(w: World, count: number, everyMs = 5 * MINUTE) {
  const reports = [];
  for (let i = 0; i < count; i += 1) {
    w.clock.nowMs += everyMs;
    reports.push(await resumeCommands(w.deps(2 * MINUTE), { ...FAST, maxWaitMs: 0 }));
  }
  return reports;
}

const state = (w: World, id: string) => w.ec2.instances.get(id)?.state;

describe('the sweep of what lost commands left behind (ec2)', () => {
  it('a command record lost mid-launch: the old node is given back at once, the instance terminated once the Ready timeout has passed', async () => {
    const w = (world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), kubeNode(OLD), kubePod('default', 'web-1', { node: OLD })]));
    const { commandId, instanceId } = await startedReplace(w);
    await deleteRecord(w, commandId);

    // Five minutes after the launch: the taint goes, the young instance is left to register.
    const [early] = await passes(w, 1);
    expect(early!.cleanedTaints).toEqual([OLD]);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(state(w, instanceId)).toBe('pending');

    // Past the 10-minute Ready timeout with no Node: rolled back like a replacement, by a command of its own.
    const [late] = await passes(w, 2);
    expect(state(w, instanceId)).toBe('shutting-down');
    expect(late!.commands).toContainEqual(expect.objectContaining({ id: `orphan-${instanceId}`, step: 'rolledBack', from: 'new' }));
    const stored = (await w.commands()).find((c) => c.id === `orphan-${instanceId}`);
    expect(stored).toMatchObject({ step: 'rolledBack', reason: 'Orphaned', nodes: [] });
    expect(stored!.detail).toContain(`instance ${instanceId} (launched by command ${commandId}) has had no Node`);
    // The next passes find nothing more to do.
    const after = await passes(w, 2);
    expect(after.flatMap((r) => r.commands.map((c) => c.id))).toEqual([]);
    expect(w.ec2.terminateCalls).toEqual([instanceId]);
    expect(w.terminatedWithPods).toEqual([]);
  });

  it('a Node that registers for an orphan after its command started is drained first, through the Eviction API', async () => {
    const w = (world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), kubeNode(OLD)]));
    const { commandId, instanceId } = await startedReplace(w);
    await deleteRecord(w, commandId);
    // The first termination attempt fails: the orphan's command stays at rollingBack for the next pass.
    let failures = 1_000;
    w.ec2.fault = (command) => (command === 'TerminateInstancesCommand' && failures-- > 0 ? { error: Object.assign(new Error('Rate exceeded'), { name: 'RequestLimitExceeded' }) } : undefined);
    await passes(w, 3);
    expect((await w.commands()).find((c) => c.id === `orphan-${instanceId}`)?.step).toBe('rollingBack');
    expect(state(w, instanceId)).toBe('pending');

    // Meanwhile its Node registers and a pod lands on it: the pod leaves through the Eviction API first.
    w.registerNode(instanceId, NEW, true);
    w.api.store.put(kubePod('default', 'landed', { node: NEW }));
    w.api.setEvictionPolicy('blockByPdb');
    failures = 0;
    await passes(w, 1);
    expect(state(w, instanceId)).toBe('pending');
    expect(nodeSpec(w.api, NEW)).toMatchObject({ unschedulable: true, taints: [{ key: 'eks-consolidator.io/disrupting' }] });
    w.api.setEvictionPolicy('allow');
    await passes(w, 2);
    expect(state(w, instanceId)).toBe('shutting-down');
    expect(w.api.store.get('Pod', 'landed', 'default')).toBeUndefined();
    expect(w.terminatedWithPods).toEqual([]);
    expect((await w.commands()).find((c) => c.id === `orphan-${instanceId}`)?.step).toBe('rolledBack');
  });

  it('an instance whose command is still unfinished belongs to that command: its own rollback removes it, the sweep adds nothing', async () => {
    const w = (world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), kubeNode(OLD)]));
    const { commandId, instanceId } = await startedReplace(w);
    const reports = await passes(w, 3);
    expect(reports.flatMap((r) => r.commands.map((c) => c.id))).not.toContainEqual(expect.stringMatching(/^orphan-/));
    expect((await w.commands()).find((c) => c.id === commandId)?.step).toBe('rolledBack');
    expect(state(w, instanceId)).toBe('shutting-down');
  });

  it('an instance of a command whose record this build cannot read is never swept', async () => {
    const w = (world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), kubeNode(OLD)]));
    const { commandId, instanceId } = await startedReplace(w);
    const item = (await raw(w).send(new GetCommand({ TableName: w.tableName, Key: { pk, sk: StateKeys.command(commandId) } }))).Item!;
    await raw(w).send(new PutCommand({ TableName: w.tableName, Item: { ...item, step: 'draining' } }));
    const reports = await passes(w, 4);
    expect(state(w, instanceId)).toBe('pending');
    expect(reports.flatMap((r) => r.commands.map((c) => c.id))).toEqual([]);
    expect(w.ec2.terminateCalls).toEqual([]);
  });

  it('a replacement of a finished command stays while its Node is there, and is removed once its Node is deleted', async () => {
    const w = (world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), kubeNode(OLD), kubePod('default', 'web-1', { node: OLD })]));
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, true);
    w.api.setEvictionPolicy('allow');
    const report = await executePlan(passResult([replaceDecision([OLD])]), w.deps(5 * MINUTE), FAST);
    expect(report.commands[0]!.step).toBe('done');
    const instanceId = report.commands[0]!.launchedInstanceId!;
    await passes(w, 3);
    expect(state(w, instanceId)).toBe('pending');
    expect(w.ec2.terminateCalls).toEqual([instanceIdOf(OLD)]);

    // Someone deletes its Node; the machine keeps running, paid.
    w.api.store.delete('Node', NEW);
    await passes(w, 1);
    expect(state(w, instanceId)).toBe('shutting-down');
    expect(w.terminatedWithPods).toEqual([]);
  });

  it('an instance that is not ours (no managed tag) is never listed, whatever its age', async () => {
    const w = (world = await startWorld(db, [kubeNode(OLD)]));
    w.ec2.addExisting('i-0someoneelses');
    await passes(w, 4);
    expect(state(w, 'i-0someoneelses')).toBe('running');
    expect(w.ec2.terminateCalls).toEqual([]);
  });
});

describe('the sweep (karpenter)', () => {
  it('a NodeClaim of a lost command that never registers is deleted after the Ready timeout', async () => {
    const w = (world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), kubeNode(OLD, { labels: { 'karpenter.sh/nodepool': 'default' } })], {
      karpenter: { neverRegister: () => true, registrationTimeoutMs: 24 * 60 * MINUTE },
    }));
    const report = await executePlan(karpenterPassResult([replaceDecision([OLD])]), w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
    const cmd = report.commands[0]!;
    expect(cmd.step).toBe('launched');
    const claim = cmd.replacements![0]!.ref;
    await deleteRecord(w, cmd.id);
    await passes(w, 1);
    expect(w.api.store.get('NodeClaim', claim)).toBeDefined();
    await passes(w, 2);
    const left = w.api.store.get('NodeClaim', claim);
    expect(left === undefined || (left['metadata'] as Record<string, unknown>)['deletionTimestamp'] !== undefined).toBe(true);
    expect((await w.commands()).find((c) => c.id === `orphan-${claim}`)?.step).toBe('rolledBack');
  });
});

describe('orphaned taints, before planning', () => {
  it('are removed even when the pass then fails, and a node being deleted is left alone', async () => {
    const ours = (name: string, extra: Record<string, unknown> = {}) => {
      const node = kubeNode(name, { taints: [{ key: 'eks-consolidator.io/disrupting', effect: 'NoSchedule' }], unschedulable: true });
      node['metadata'] = { ...(node['metadata'] as object), annotations: { [COMMAND_ANNOTATION]: 'cmd-lost' }, ...extra };
      return node;
    };
    const DELETING = 'ip-10-3-3-3.ec2.internal';
    const w = (world = await startWorld(db, [ours(OLD), ours(DELETING, { deletionTimestamp: new Date(T0).toISOString(), finalizers: ['karpenter.sh/termination'] })]));
    const actor = makeActor(w.deps(MINUTE), FAST);
    const failing = {
      readCluster: () => w.cluster(),
      loadCatalog: async () => ({ catalog: m5Catalog(), warnings: [] }),
      loadNodePools: async () => {
        throw new Error('NodePool "default": spec.disruption.budgets[0].nodes: not a percentage');
      },
      state: w.store,
    };
    const settings = { nowMs: T0, gates: { spotToSpotConsolidation: false } as never, dryRun: false, persistState: true, scope: 'all' as const, owner: 'pass-1', leaseTtlMs: 6 * MINUTE };
    for (let pass = 0; pass < 2; pass += 1) await expect(runPass(failing, settings, actor)).rejects.toThrow(/not a percentage/);
    expect(actor.report().cleanedTaints).toEqual([OLD]);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.unschedulable).toBeUndefined();
    expect(nodeSpec(w.api, DELETING)).toMatchObject({ unschedulable: true, taints: [{ key: 'eks-consolidator.io/disrupting' }] });
    expect(events(w.api, 'DisruptionTaintRemoved').map((e) => e.node)).toEqual([OLD]);
  });
});

describe('findOrphans', () => {
  const base = { unfinished: new Set<string>(), unreadable: new Set<string>(), claims: [], nodes: [], nowMs: T0, readyTimeoutMs: 10 * MINUTE };
  const instance = (over: Record<string, unknown> = {}) => ({ instanceId: 'i-1', launchKey: 'cmd-a#1', launchedAt: T0 - 11 * MINUTE, state: 'running' as const, ...over });
  it.each([
    ['old, no Node, no owner', {}, [], ['i-1']],
    ['younger than the Ready timeout', { launchedAt: T0 - 9 * MINUTE }, [], []],
    ['no launch time known', { launchedAt: undefined }, [], []],
    ['owned by an unfinished command (second replacement)', {}, ['cmd-a'], []],
    ['shutting down already', { state: 'shutting-down' }, [], []],
  ])('%s', (_name, over, unfinished, expected) => {
    const found = findOrphans({ ...base, unfinished: new Set(unfinished as string[]), instances: [instance(over)] });
    expect(found.map((o) => o.ref)).toEqual(expected);
  });

  it('an instance with a Node is not an orphan; a claim whose Node is gone is', () => {
    const node = { name: 'n1', instanceId: 'i-1' } as never;
    expect(findOrphans({ ...base, instances: [instance()], nodes: [node] })).toEqual([]);
    const claim = { name: 'default-abc', nodeName: 'gone-node', commandId: 'cmd-z', deleting: false, createdAt: T0 - 20 * MINUTE };
    expect(findOrphans({ ...base, instances: [], claims: [claim] }).map((o) => [o.actuator, o.ref])).toEqual([['karpenter', 'default-abc']]);
    expect(findOrphans({ ...base, instances: [], claims: [{ ...claim, deleting: true }] })).toEqual([]);
    expect(findOrphans({ ...base, unreadable: new Set(['cmd-z']), instances: [], claims: [claim] })).toEqual([]);
  });

  it.each([
    ['cmd-abc', 'cmd-abc'],
    ['cmd-abc#2', 'cmd-abc'],
    ['cmd#x', 'cmd#x'],
    ['', undefined],
  ])('launch key %j belongs to command %j', (key, id) => {
    expect(commandOfLaunchKey(key)).toBe(id);
  });
});

