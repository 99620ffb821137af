// Promises of docs/safety.md, "The promises", against the fake Kubernetes API, EC2 behind a stateful
// mock and the real DynamoDB store on dynalite. Each case is one of the outside safety audit's
// reproductions (C2, C3, C4, H1, M4): each fails on the build before the fix.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoStateStore } from '../../src/adapters/dynamodb/dynamoStateStore.ts';
import { actOnPass, executePlan, makeActor, resumeCommands } from '../../src/app/act/executeCommands.ts';
import { runPass } from '../../src/app/runPass.ts';
import { InputError } from '../../src/core/errors.ts';
import { COMMAND_ANNOTATION } from '../../src/core/ports/actuator.ts';
import { StateConflictError } from '../../src/core/state/errors.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { startDynalite, uniqueTableName, type LocalDynamo } from '../support/dynalite.ts';
import { createStateTable } from '../../src/adapters/dynamodb/tableSchema.ts';
import { m5Catalog } from '../builders.ts';
import {
  FAST,
  POOL,
  T0,
  deleteDecision,
  deletedNodes,
  events,
  evictions,
  instanceIdOf,
  nodeSpec,
  passResult,
  replaceDecision,
  startWorld,
  type World,
} from './harness.ts';

const OLD = 'ip-10-1-1-7.ec2.internal';
const OLD2 = 'ip-10-2-1-8.ec2.internal';
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

async function start(objects: readonly unknown[]): Promise<World> {
  world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), ...objects]);
  return world;
}

function workloadNode(name: string, ...pods: string[]) {
  return [kubeNode(name), ...pods.map((p) => kubePod('default', p, { node: name }))];
}

describe('a command acts only on the machine it decided about', () => {
  it('a node name reused by another machine mid-command: its pods are not evicted, its Node is not deleted', async () => {
    const w = await start(workloadNode(OLD, 'web-1'));
    w.api.setEvictionPolicy('blockByPdb');
    const first = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(2 * MINUTE), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'evicting', blocked: 1 });

    // The old machine dies; a different machine registers with the same (IP-based) name and runs a pod.
    w.api.store.delete('Pod', 'web-1', 'default');
    w.api.store.delete('Node', OLD);
    w.api.store.put({
      ...kubeNode(OLD),
      metadata: { ...(kubeNode(OLD)['metadata'] as object), uid: 'uid-the-newcomer' },
      spec: { providerID: 'aws:///us-east-1a/i-0differentmachine' },
    });
    w.ec2.addExisting('i-0differentmachine');
    w.api.store.put(kubePod('default', 'innocent', { node: OLD }));
    w.api.setEvictionPolicy('allow');

    w.clock.nowMs += 5 * MINUTE;
    const second = await resumeCommands(w.deps(2 * MINUTE), FAST);
    expect(second.commands[0]?.step).toBe('done');
    expect(evictions(w.api).map((e) => e.pod)).not.toContain('default/innocent');
    expect(w.api.store.get('Pod', 'innocent', 'default')).toBeDefined();
    expect(w.api.store.get('Node', OLD)).toBeDefined();
    expect(deletedNodes(w.api)).toEqual([]);
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    const [stored] = await w.commands();
    expect(JSON.parse(stored!.detail!).gone).toEqual([OLD]);
  });

  it('a decision whose node is no longer the machine the plan saw is not started', async () => {
    const w = await start(workloadNode(OLD, 'web-1'));
    const result = passResult([deleteDecision([OLD], 'single-node')]);
    const planned = { ...result, cluster: { nodes: [{ name: OLD, uid: 'uid-of-an-earlier-machine', instanceId: instanceIdOf(OLD), annotations: {} }] } } as never;
    const report = await executePlan(planned, w.deps(2 * MINUTE), FAST);
    expect(report.skipped).toEqual([{ decision: 0, nodes: [OLD], why: expect.stringContaining('no longer the machine the plan was made for') }]);
    expect(w.api.mutatingRequests()).toEqual([]);
  });

  it('deletes Node objects with a uid precondition, and taints only the recorded uid', async () => {
    const w = await start([kubeNode(OLD)]);
    const deps = w.deps(2 * MINUTE);
    expect(await deps.nodes.deleteNode(OLD, { uid: 'uid-someone-else' })).toBe('gone');
    expect(w.api.store.get('Node', OLD)).toBeDefined();
    expect(await deps.nodes.taintAndCordon(OLD, { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }, { uid: 'uid-someone-else' })).toBe('gone');
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(await deps.nodes.deleteNode(OLD, { uid: `uid-node-${OLD}` })).toBe('deleted');
    expect(w.api.store.get('Node', OLD)).toBeUndefined();
  });
});

describe('unfinished commands progress or roll back whatever else fails', () => {
  it('a NodePool that fails validation does not strand a never-joined instance or a taint', async () => {
    const w = await start(workloadNode(OLD, 'web-1'));
    await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    const launched = w.ec2.launched()[0]!.id;
    expect(nodeSpec(w.api, OLD)).toMatchObject({ unschedulable: true });
    w.clock.nowMs += 30 * MINUTE;

    const badPools = async (): Promise<never> => {
      throw new InputError('NodePool "default"', 'spec.disruption.consolidationPolicy', '"Bogus" is not supported').inFile('nodepools.yaml');
    };
    for (let pass = 0; pass < 3; pass += 1) {
      const actor = makeActor(w.deps(2 * MINUTE, { loadNodePools: badPools }), FAST);
      await expect(
        runPass(
          {
            readCluster: async () => ({ nodes: [], pods: [], pdbs: [], daemonSets: [], workloads: [], namespaces: [] }),
            loadCatalog: async () => ({ catalog: m5Catalog(), warnings: [] }),
            loadNodePools: badPools,
            state: w.store,
          },
          { nowMs: w.clock.nowMs, gates: { spotToSpotConsolidation: false }, dryRun: false, persistState: false, scope: 'all', owner: `pass-${pass}`, leaseTtlMs: 10 * MINUTE },
          actor,
        ),
      ).rejects.toThrow(/consolidationPolicy/);
      w.clock.nowMs += 5 * MINUTE;
    }
    const [cmd] = await w.commands();
    expect(cmd?.step).toBe('rolledBack');
    expect(w.ec2.terminateCalls).toEqual([launched]);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.unschedulable).toBeUndefined();
  });
});

describe('one bad record never blocks the rest', () => {
  it('a stored command this build cannot read is skipped and reported; an overdue command beside it still rolls back', async () => {
    const w = await start(workloadNode(OLD, 'web-1'));
    await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    const launched = w.ec2.launched()[0]!.id;
    const [good] = await w.commands();
    // A record a newer build wrote: a step this build does not know.
    await w.store.putCommand({ ...good!, id: 'cmd-from-newer-build', nodes: ['ip-10-4-4-4.ec2.internal'], version: 0 });
    const doc = DynamoDBDocumentClient.from(w.dbClient);
    await doc.send(new UpdateCommand({ TableName: w.tableName, Key: { pk: 'CLUSTER#test', sk: 'CMD#cmd-from-newer-build' }, UpdateExpression: 'SET #s = :s', ExpressionAttributeNames: { '#s': 'step' }, ExpressionAttributeValues: { ':s': 'draining' } }));
    w.clock.nowMs += 30 * MINUTE;
    const report = await resumeCommands(w.deps(2 * MINUTE), FAST);
    expect(report.errors).toEqual([]);
    expect(report.commands.map((c) => [c.id, c.step])).toEqual([[good!.id, 'rolledBack']]);
    expect(w.ec2.terminateCalls).toEqual([launched]);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(w.store.takeUnreadable().map((u) => u.key)).toEqual(['CMD#cmd-from-newer-build']);
  });
});

describe('a rollback never kills a pod', () => {
  it('evicts what is bound to a not-Ready replacement through the Eviction API before terminating it', async () => {
    const w = await start(workloadNode(OLD, 'web-1'));
    await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    const launched = w.ec2.launched()[0]!.id;
    w.registerNode(launched, NEW, false);
    // An agent that tolerates not-ready nodes lands on it.
    w.api.store.put(kubePod('default', 'tolerant-agent', { node: NEW }));
    w.clock.nowMs += 11 * MINUTE;

    const report = await resumeCommands(w.deps(3 * MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'rolledBack', evicted: 1 });
    expect(evictions(w.api)).toEqual([{ pod: 'default/tolerant-agent', status: 201 }]);
    expect(w.terminatedWithPods).toEqual([]);
    expect(w.ec2.terminateCalls).toEqual([launched]);
    expect(w.api.store.get('Node', NEW)).toBeUndefined();
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
  });

  it('keeps a replacement whose pods a PodDisruptionBudget will not let go, and gives it back after the drain timeout', async () => {
    const w = await start(workloadNode(OLD, 'web-1'));
    await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    const launched = w.ec2.launched()[0]!.id;
    w.registerNode(launched, NEW, false);
    w.api.store.put(kubePod('default', 'guarded', { node: NEW }));
    w.api.setEvictionPolicy('blockByPdb');
    w.clock.nowMs += 11 * MINUTE;

    const waiting = await resumeCommands(w.deps(2 * MINUTE), FAST);
    expect(waiting.commands[0]).toMatchObject({ step: 'rollingBack', waitingFor: 'pods' });
    expect(w.ec2.terminateCalls).toEqual([]);
    // The old node is given back at once, so evicted pods have somewhere to go.
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);

    // Passes every 5 minutes: the drain timeout is measured on the command's clock, which a single jump
    // of the wall clock cannot move by more than 15 minutes.
    let ended = waiting;
    for (let pass = 0; pass < 14 && ended.commands[0]?.step !== 'abandoned'; pass += 1) {
      w.clock.nowMs += 5 * MINUTE;
      ended = await resumeCommands(w.deps(2 * MINUTE), FAST);
    }
    expect(ended.commands[0]).toMatchObject({ step: 'abandoned', endedBecause: expect.stringContaining('was kept') });
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(w.terminatedWithPods).toEqual([]);
    expect(nodeSpec(w.api, NEW)?.taints ?? []).toEqual([]);
    expect(nodeSpec(w.api, NEW)?.unschedulable).toBeUndefined();
  });
});

describe('one actor, fenced', () => {
  it('two overlapping invocations on one decision: one command, one CreateFleet, one replacement', async () => {
    const w = await start([...workloadNode(OLD, 'web-1'), ...workloadNode(OLD2, 'api-1')]);
    const decision = passResult([replaceDecision([OLD, OLD2])]);
    const [a, b] = await Promise.all([
      actOnPass(decision, w.deps(MINUTE, { newCommandId: undefined }), FAST),
      actOnPass(decision, w.deps(MINUTE, { newCommandId: undefined }), FAST),
    ]);
    const started = [...a.commands, ...b.commands].filter((c) => c.from === 'new');
    expect(started).toHaveLength(1);
    expect([...a.skipped, ...b.skipped].map((s) => s.why)).toEqual([expect.stringMatching(/already started by another pass|already carries|another pass already covers/)]);
    expect(await w.commands()).toHaveLength(1);
    expect(w.ec2.fleetRequests).toHaveLength(1);
    expect(w.ec2.launched()).toHaveLength(1);
  });

  it('a pass that lost its lease cannot overwrite what a later lease holder wrote (DynamoDB)', async () => {
    const tableName = uniqueTableName('fence');
    await createStateTable(db.client, tableName);
    const make = () => new DynamoStateStore({ client: db.newClient(), tableName, clusterName: 'c' });
    const stale = make();
    const later = make();
    expect(await stale.acquireLease('pass-1', T0, MINUTE)).toBe(true);
    // The stale pass stalls; its lease expires and another pass takes it.
    expect(await later.acquireLease('pass-2', T0 + 2 * MINUTE, MINUTE)).toBe(true);
    const base = await later.load(T0 + 2 * MINUTE);
    await later.save({ ...base, cluster: { ...base.cluster, lastActionAt: T0 + 2 * MINUTE } }, base, T0 + 2 * MINUTE);
    // The stale pass wakes up and writes on the version it now reads: refused by the fence.
    const seen = await stale.load(T0 + 2 * MINUTE);
    await expect(stale.save({ ...seen, cluster: { ...seen.cluster, lastActionAt: T0 } }, seen, T0 + 2 * MINUTE)).rejects.toBeInstanceOf(StateConflictError);
    expect(await stale.renewLease('pass-1', T0 + 2 * MINUTE, MINUTE)).toBe(false);
    expect((await later.load(T0 + 2 * MINUTE)).cluster.lastActionAt).toBe(T0 + 2 * MINUTE);
    // Released leases keep the token: the next holder's token is higher still.
    await later.releaseLease('pass-2');
    expect(await stale.acquireLease('pass-3', T0 + 3 * MINUTE, MINUTE)).toBe(true);
    const again = await stale.load(T0 + 3 * MINUTE);
    await stale.save({ ...again, cluster: { ...again.cluster, lastActionAt: T0 + 3 * MINUTE } }, again, T0 + 3 * MINUTE);
  });

  it('renews the lease inside a long eviction round, and stops at the first step after losing it', async () => {
    const pods = Array.from({ length: 8 }, (_, i) => `web-${i}`);
    const w = await start(workloadNode(OLD, ...pods));
    // Each eviction takes 20 s of wall time.
    w.api.setEvictionPolicy(() => {
      w.clock.nowMs += 20_000;
      return 'allow';
    });
    const renewals: number[] = [];
    const report = await executePlan(
      passResult([deleteDecision([OLD], 'single-node')]),
      w.deps(10 * MINUTE, {
        renewLease: async () => {
          renewals.push(w.clock.nowMs);
          return renewals.length < 3;
        },
      }),
      FAST,
    );
    // Renewed during the round (every 30 s), lost at the third renewal: no eviction after that.
    expect(renewals.length).toBe(3);
    expect(report.commands[0]).toMatchObject({ stoppedBecause: 'lease' });
    const lastRenewal = renewals[2]!;
    expect(evictions(w.api).length).toBeLessThan(pods.length);
    expect(w.clock.nowMs).toBe(lastRenewal);
    expect(w.ec2.terminateCalls).toEqual([]);
  });
});

describe('drains end', () => {
  it('gives up a drain that makes no progress for an hour: untainted, uncordoned, an event', async () => {
    const w = await start(workloadNode(OLD, 'web-1'));
    w.api.setEvictionPolicy('blockByPdb');
    await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(2 * MINUTE), FAST);
    let ended;
    for (let pass = 0; pass < 20 && ended === undefined; pass += 1) {
      w.clock.nowMs += 5 * MINUTE;
      const startedAt = w.clock.nowMs;
      const r = await resumeCommands(w.deps(MINUTE), FAST);
      if (r.commands[0]?.step === 'abandoned') ended = r;
      // Held for the whole hour; given up at the first pass after it.
      else expect(startedAt - T0).toBeLessThan(60 * MINUTE);
      if (ended) expect(w.clock.nowMs - T0).toBeGreaterThanOrEqual(60 * MINUTE);
    }
    expect(ended).toBeDefined();
    expect(ended!.commands[0]).toMatchObject({ step: 'abandoned', endedBecause: expect.stringMatching(/no progress for 60 min.*default\/web-1/) });
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.unschedulable).toBeUndefined();
    expect(events(w.api, 'DisruptionAbandoned')).toEqual([expect.objectContaining({ node: OLD, type: 'Warning' })]);
    expect(w.ec2.terminateCalls).toEqual([]);
  });

  it.each([
    ['a pod under two PodDisruptionBudgets (500)', 500, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.'],
    ['a webhook that refuses evictions (403)', 403, 'admission webhook "deny-evictions.example.com" denied the request'],
    ['an admission error (400)', 400, 'eviction is not allowed for this pod'],
  ])('gives up a drain whose evictions fail with %s, and gives the node back', async (_name, status, text) => {
    const w = await start(workloadNode(OLD, 'web-1'));
    w.api.fail({ method: 'POST', path: /\/eviction$/, status, message: text, times: Infinity });
    const first = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(2 * MINUTE), FAST);
    expect(first.commands[0], JSON.stringify(first.commands[0])).toMatchObject({ step: 'evicting' });
    expect(first.commands[0]!.errors.join(' ')).toMatch(/evictions refused on .*default\/web-1/);
    let ended;
    for (let pass = 0; pass < 20 && ended === undefined; pass += 1) {
      w.clock.nowMs += 5 * MINUTE;
      const r = await resumeCommands(w.deps(MINUTE), FAST);
      if (r.commands[0]?.step === 'abandoned') ended = r;
    }
    expect(ended!.commands[0]).toMatchObject({ step: 'abandoned', endedBecause: expect.stringMatching(/no progress for 60 min/) });
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.unschedulable).toBeUndefined();
    expect(events(w.api, 'DisruptionAbandoned')).toEqual([expect.objectContaining({ node: OLD, type: 'Warning' })]);
    expect(events(w.api, 'DisruptionBlocked').map((e) => e.message)).toContainEqual(expect.stringContaining('the Eviction API refuses default/web-1'));
    expect(w.ec2.terminateCalls).toEqual([]);
  });

  it('never evicts a bare pod that landed on a draining node (nothing would recreate it); the drain waits, then gives the node back', async () => {
    const w = await start(workloadNode(OLD, 'web-1'));
    w.api.setEvictionPolicy('blockByPdb');
    await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(2 * MINUTE), FAST);
    // Someone starts a debug pod on the cordoned node (a toleration of the cordon, or nodeName set).
    w.api.store.put(kubePod('default', 'debug-shell', { node: OLD, owner: null }));
    w.api.setEvictionPolicy('allow');
    let last;
    for (let pass = 0; pass < 20 && last?.commands[0]?.step !== 'abandoned'; pass += 1) {
      w.clock.nowMs += 5 * MINUTE;
      last = await resumeCommands(w.deps(MINUTE), FAST);
    }
    expect(last!.commands[0]).toMatchObject({ step: 'abandoned' });
    expect(evictions(w.api).map((e) => e.pod)).not.toContain('default/debug-shell');
    expect(w.api.store.get('Pod', 'debug-shell', 'default')).toBeDefined();
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(events(w.api, 'DisruptionBlocked').map((e) => e.message)).toContainEqual(expect.stringContaining('default/debug-shell has karpenter.sh/do-not-disrupt or no controller'));
  });

  it('a drain that keeps moving is not given up', async () => {
    const pods = Array.from({ length: 14 }, (_, i) => `web-${i}`);
    const w = await start(workloadNode(OLD, ...pods));
    // One eviction allowed per pass, as a PDB with maxUnavailable 1 and slow pods would.
    let allowed = 1;
    w.api.setEvictionPolicy(() => (allowed-- > 0 ? 'allow' : 'blockByPdb'));
    await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), FAST);
    for (let pass = 0; pass < 16; pass += 1) {
      w.clock.nowMs += 5 * MINUTE;
      allowed = 1;
      await resumeCommands(w.deps(MINUTE), FAST);
    }
    const [cmd] = await w.commands();
    expect(cmd?.step).toBe('done');
    expect(w.ec2.terminateCalls).toEqual([instanceIdOf(OLD)]);
  }, 120_000);

  it('removes our taint when no stored command owns it, and leaves Karpenter\'s alone', async () => {
    const disrupted = [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }];
    const ours = { ...kubeNode(OLD, { taints: disrupted, unschedulable: true }) };
    (ours['metadata'] as Record<string, unknown>)['annotations'] = { [COMMAND_ANNOTATION]: 'cmd-lost-with-the-table' };
    const w = await start([ours, kubeNode(OLD2, { taints: disrupted, unschedulable: true })]);
    const result = passResult([]);
    const snapshot = {
      ...result,
      cluster: {
        nodes: [
          { name: OLD, uid: `uid-node-${OLD}`, annotations: { [COMMAND_ANNOTATION]: 'cmd-lost-with-the-table' } },
          { name: OLD2, uid: `uid-node-${OLD2}`, annotations: {} },
        ],
      },
    } as never;
    const report = await actOnPass(snapshot, w.deps(MINUTE), FAST);
    expect(report.cleanedTaints).toEqual([OLD]);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.unschedulable).toBeUndefined();
    expect((w.api.store.get('Node', OLD)!['metadata'] as Record<string, unknown>)['annotations']).toEqual({});
    expect(nodeSpec(w.api, OLD2)).toMatchObject({ unschedulable: true, taints: disrupted });
  });

  it('marks the nodes it taints with its command', async () => {
    const w = await start(workloadNode(OLD, 'web-1'));
    w.api.setEvictionPolicy('blockByPdb');
    const report = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), FAST);
    const annotations = (w.api.store.get('Node', OLD)!['metadata'] as Record<string, unknown>)['annotations'] as Record<string, string>;
    expect(annotations[COMMAND_ANNOTATION]).toBe(report.commands[0]!.id);
    expect(POOL.name).toBe('default');
  });
});
