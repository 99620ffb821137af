// Mutation-testing gaps (npm run mutation) in one invocation's acting (executeCommands.ts): what it
// does when the store, the lease or the clock say no, how long it waits, and when it tells the
// stabilization window. Each case asserts what the cluster and the store end up with.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { actOnPass, executePlan, makeActor, recordActionInStore, resumeCommands, type ExecutionReport } from '../../src/app/act/executeCommands.ts';
import { StateConflictError } from '../../src/core/state/errors.ts';
import type { StateStore } from '../../src/core/state/ports.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { FAST, POOL, T0, deleteDecision, evictions, instanceIdOf, nodeSpec, passResult, replaceDecision, startWorld, type World } from './harness.ts';

const OLD = 'ip-10-1-1-7.ec2.internal';
const OLD2 = 'ip-10-2-1-8.ec2.internal';
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

async function start(objects: readonly unknown[] = [kubeNode(OLD), kubePod('default', 'web-1', { node: OLD })]): Promise<World> {
  world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), ...objects]);
  return world;
}

/** The store, with `listCommands` failing. */
function unlistable(store: StateStore): StateStore {
  return new Proxy(store, {
    get: (target, key) => (key === 'listCommands' ? async () => Promise.reject(new Error('throttled')) : Reflect.get(target, key, target)),
  });
}

describe('starting nothing when it cannot be safe', () => {
  it('a pass without the lease, or whose commands cannot be listed, starts nothing and writes nothing', async () => {
    const w = await start();
    const noLease = await executePlan({ ...passResult([deleteDecision([OLD])]), leaseAcquired: false }, w.deps(MINUTE), FAST);
    expect(noLease).toEqual({ commands: [], skipped: [], errors: [] });

    const blind = await actOnPass(passResult([deleteDecision([OLD]), deleteDecision([OLD2])]), w.deps(MINUTE, { store: unlistable(w.store) }), FAST);
    expect(blind.skipped).toEqual([
      { decision: 0, nodes: [OLD], why: 'the stored commands could not be listed' },
      { decision: 1, nodes: [OLD2], why: 'the stored commands could not be listed' },
    ]);
    expect(blind.errors).toEqual(['listing commands: throttled', 'listing commands: throttled']);
    expect(blind.commands).toEqual([]);
    expect(w.api.mutatingRequests()).toEqual([]);
    expect(await w.commands()).toEqual([]);
  });

  it('a lease lost before a decision starts: that decision and the later ones are skipped', async () => {
    const w = await start([kubeNode(OLD), kubeNode(OLD2)]);
    let renewals = 0;
    const report = await executePlan(
      passResult([deleteDecision([OLD]), deleteDecision([OLD2])]),
      // Renewed at every check (leaseRenewEveryMs 0): held for the first decision's start, lost after.
      w.deps(MINUTE, { renewLease: async () => ++renewals <= 1 }),
      { ...FAST, leaseRenewEveryMs: 0 },
    );
    expect(report.skipped).toEqual([{ decision: 1, nodes: [OLD2], why: 'the pass lease was lost' }]);
    expect(report.commands.map((c) => [c.nodes, c.stoppedBecause])).toEqual([[[OLD], 'lease']]);
    expect(nodeSpec(w.api, OLD2)?.taints ?? []).toEqual([]);
    expect((await w.commands()).map((c) => c.nodes)).toEqual([[OLD]]);
  });

  it('a lease whose renewal fails is lost: reported, and nothing more is done', async () => {
    const w = await start();
    w.api.setEvictionPolicy('blockByPdb');
    const report = await executePlan(
      passResult([deleteDecision([OLD], 'single-node')]),
      w.deps(10 * MINUTE, {
        renewLease: async () => {
          throw new Error('DynamoDB is unreachable');
        },
      }),
      FAST,
    );
    expect(report.errors).toEqual(['renewing the lease: DynamoDB is unreachable']);
    expect(report.commands[0]).toMatchObject({ step: 'evicting', stoppedBecause: 'lease' });
    // One eviction round, no polling after the lease was lost.
    expect(evictions(w.api)).toHaveLength(1);
  });

  it('a decision that fails to start is skipped with its reason; the next one still starts', async () => {
    const w = await start([kubeNode(OLD), kubeNode(OLD2)]);
    let ids = 0;
    const report = await executePlan(
      passResult([deleteDecision([OLD]), deleteDecision([OLD2])]),
      w.deps(MINUTE, {
        newCommandId: () => {
          ids += 1;
          if (ids === 1) throw new Error('no entropy');
          return `cmd-${ids}`;
        },
      }),
      FAST,
    );
    expect(report.skipped).toEqual([{ decision: 0, nodes: [OLD], why: 'could not start: no entropy' }]);
    expect(report.commands.map((c) => [c.id, c.step])).toEqual([['cmd-2', 'done']]);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
  });
});

describe('waiting', () => {
  it('polls until the wait budget is spent, then leaves the command to the next pass', async () => {
    const w = await start();
    w.api.setEvictionPolicy('blockByPdb');
    const report = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(60 * MINUTE), { ...FAST, maxWaitMs: 30_000 });
    expect(report.commands[0]).toMatchObject({ step: 'evicting', waitingFor: 'pods' });
    // Three sleeps of 10 s fit in 30 s: four rounds.
    expect(w.clock.nowMs - T0).toBe(30_000);
    expect(evictions(w.api)).toHaveLength(4);
  });

  it('stops polling when the next round would end inside the margin', async () => {
    const w = await start();
    w.api.setEvictionPolicy('blockByPdb');
    // 75 s of Lambda time, a 30 s margin, 10 s polls: sleeps while 10 s more leave 30 s.
    await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(75_000), FAST);
    expect(w.clock.nowMs - T0).toBe(40_000);
    expect(evictions(w.api)).toHaveLength(5);
  });

  it('by default a replacement has ten minutes to become Ready', async () => {
    const w = await start();
    const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), {});
    expect(first.commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement' });
    w.clock.nowMs = T0 + 9 * MINUTE;
    expect((await resumeCommands(w.deps(MINUTE), {})).commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement' });
    w.clock.nowMs = T0 + 11 * MINUTE;
    expect((await resumeCommands(w.deps(MINUTE), {})).commands[0]).toMatchObject({ step: 'rolledBack' });
  });

  it('options left undefined keep their defaults', async () => {
    const w = await start();
    w.api.setEvictionPolicy('blockByPdb');
    await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), { pollIntervalMs: undefined, maxWaitMs: 20_000, marginMs: undefined });
    // Default poll 10 s within 20 s of waiting.
    expect(w.clock.nowMs - T0).toBe(20_000);
  });
});

describe('one invocation', () => {
  it('uses the pass\'s NodePools (not read again), and does not wait once every command is done', async () => {
    const w = await start([kubeNode(OLD), kubeNode(OLD2), kubePod('default', 'web-1', { node: OLD2 })]);
    w.ec2.onLaunch = (id) => w.registerNode(id, 'ip-10-9-9-9.ec2.internal', true);
    let reads = 0;
    const report = await executePlan(
      passResult([deleteDecision([OLD]), replaceDecision([OLD2])]),
      w.deps(MINUTE, {
        loadNodePools: async () => {
          reads += 1;
          return [];
        },
      }),
      FAST,
    );
    expect(report.commands.map((c) => c.step)).toEqual(['done', 'done']);
    expect(reads).toBe(0);
    // Both finished in the first round: no sleep.
    expect(w.clock.nowMs).toBe(T0);
  });
});

describe('the stabilization window', () => {
  it('is told at the first action and once more at the end with the last one', async () => {
    const w = await start([kubeNode(OLD), kubePod('default', 'web-1', { node: OLD }), kubePod('default', 'web-2', { node: OLD })]);
    // web-2 may go only in the second round.
    let round = 0;
    w.api.setEvictionPolicy(({ name }) => (name === 'web-2' && round++ === 0 ? 'blockByPdb' : 'allow'));
    await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(10 * MINUTE), FAST);
    expect(w.actions).toEqual([T0, T0 + 10_000]);
  });

  it('a failure to record it is reported, not fatal', async () => {
    const w = await start([kubeNode(OLD)]);
    const report = await executePlan(
      passResult([deleteDecision([OLD])]),
      w.deps(MINUTE, {
        onAction: async () => {
          throw new Error('table is gone');
        },
      }),
      FAST,
    );
    expect(report.errors).toEqual(['recording the action time: table is gone']);
    expect(report.commands[0]).toMatchObject({ step: 'done', terminatedInstances: [instanceIdOf(OLD)] });
  });

  it('recordActionInStore keeps the latest time, and retries a conflicting write once', async () => {
    const w = await start([]);
    const record = recordActionInStore(w.store);
    await record(T0);
    await record(T0 - MINUTE); // older: kept as it is
    expect((await w.store.load(T0)).cluster.lastActionAt).toBe(T0);

    let conflicts = 1;
    const racing: StateStore = new Proxy(w.store, {
      get: (target, key) =>
        key === 'save'
          ? async (...args: Parameters<StateStore['save']>) => {
              if (conflicts-- > 0) throw new StateConflictError(['cluster'], 'save');
              return target.save(...args);
            }
          : Reflect.get(target, key, target),
    });
    await recordActionInStore(racing)(T0 + MINUTE);
    expect((await w.store.load(T0)).cluster.lastActionAt).toBe(T0 + MINUTE);

    conflicts = 2;
    await expect(recordActionInStore(racing)(T0 + 2 * MINUTE)).rejects.toBeInstanceOf(StateConflictError);
    const failing: StateStore = new Proxy(w.store, {
      get: (target, key) => (key === 'save' ? async () => Promise.reject(new Error('disk full')) : Reflect.get(target, key, target)),
    });
    await expect(recordActionInStore(failing)(T0 + 3 * MINUTE)).rejects.toThrow('disk full');
  });
});

describe('the actor runPass drives', () => {
  it('with a pass result starts its decisions, then reports', async () => {
    const w = await start([kubeNode(OLD)]);
    const reports: ExecutionReport[] = [];
    const actor = makeActor(w.deps(MINUTE), FAST, (r) => reports.push(r));
    await actor.act(passResult([deleteDecision([OLD])]));
    expect(reports.map((r) => r.commands.map((c) => [c.from, c.step]))).toEqual([[['new', 'done']]]);
  });

  it('tells who started what, with the nodes as the pass saw them', async () => {
    const w = await start([kubeNode(OLD)]);
    const started: unknown[] = [];
    const seen = { name: OLD, uid: `uid-node-${OLD}`, annotations: {}, instanceType: 'm5.large' };
    await executePlan({ ...passResult([deleteDecision([OLD])]), cluster: { nodes: [seen], pods: [] } } as never, w.deps(MINUTE, { onCommandStarted: (s) => started.push(s) }), FAST);
    expect(started).toEqual([{ commandId: 'cmd-1', decision: deleteDecision([OLD]), nodes: [seen] }]);
  });

  it('waits on a real timer when no sleep is given', async () => {
    const w = await start();
    w.api.setEvictionPolicy('blockByPdb');
    const report = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE, { sleep: undefined }), { ...FAST, pollIntervalMs: 5, maxWaitMs: 10 });
    expect(report.commands[0]).toMatchObject({ step: 'evicting', waitingFor: 'pods' });
    expect(evictions(w.api)).toHaveLength(3);
  });

  it('the sweep before planning: a list that fails is reported, and the commands resumed still run', async () => {
    const w = await start();
    w.api.setEvictionPolicy('blockByPdb');
    await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
    w.api.setEvictionPolicy('allow');
    const deps = w.deps(MINUTE);
    const broken = {
      ...deps,
      nodes: new Proxy(deps.nodes, { get: (t, k) => (k === 'listNodes' ? async () => Promise.reject(new Error('nodes is forbidden')) : Reflect.get(t, k, t)) }),
    };
    const report = await resumeCommands(broken, FAST);
    expect(report.errors).toEqual(['listing the nodes (sweep): nodes is forbidden']);
    expect(report.commands.map((c) => c.step)).toEqual(['done']);
    const noInstances = await resumeCommands(
      { ...deps, instances: new Proxy(deps.instances, { get: (t, k) => (k === 'listOurs' ? async () => Promise.reject(new Error('UnauthorizedOperation')) : Reflect.get(t, k, t)) }) },
      FAST,
    );
    expect(noInstances.errors).toEqual(['listing the instances we launched: UnauthorizedOperation']);
    const noClaims = await resumeCommands({ ...deps, nodeClaims: { listOurs: async () => Promise.reject(new Error('nodeclaims is forbidden')) } as never }, FAST);
    expect(noClaims.errors).toEqual(['listing the NodeClaims we created: nodeclaims is forbidden']);
  });

  it('without a pass result only drives what it resumed, and reports', async () => {
    const w = await start();
    w.api.setEvictionPolicy('blockByPdb');
    await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
    w.api.setEvictionPolicy('allow');
    const reports: ExecutionReport[] = [];
    const actor = makeActor(w.deps(MINUTE), FAST, (r) => reports.push(r));
    await actor.resume();
    await actor.act(undefined);
    expect(reports).toHaveLength(1);
    expect(reports[0]!.commands.map((c) => [c.from, c.step])).toEqual([['evicting', 'done']]);
    expect(actor.report()).toEqual(reports[0]);
  });

  it('resumed commands without NodePools from the pass read them once; without a reader the pool is unknown', async () => {
    const w = await start();
    const first = await executePlan({ ...passResult([replaceDecision([OLD])]), nodePools: undefined }, w.deps(MINUTE, { loadNodePools: undefined }), FAST);
    expect(first.skipped).toEqual([{ decision: 0, nodes: [OLD], why: 'NodePool "default" of the replacement is not known' }]);
    let reads = 0;
    const loadNodePools = async () => {
      reads += 1;
      return [POOL];
    };
    const report = await executePlan({ ...passResult([replaceDecision([OLD])]), nodePools: undefined }, w.deps(MINUTE, { loadNodePools }), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'launched' });
    expect(reads).toBe(1);
  });
});

describe('the lease and the time left, before anything is started', () => {
  it('a lease lost once stays lost, even if a later renewal would succeed', async () => {
    const w = await start([kubeNode(OLD), kubeNode(OLD2)]);
    let renewals = 0;
    const report = await executePlan(
      passResult([deleteDecision([OLD]), deleteDecision([OLD2])]),
      // Every check renews; only the first renewal fails.
      w.deps(10 * MINUTE, { renewLease: async () => (renewals += 1) > 1 }),
      { ...FAST, leaseRenewEveryMs: 0 },
    );
    expect(report.skipped.map((s) => s.why)).toEqual(['the pass lease was lost', 'the pass lease was lost']);
    expect(renewals).toBe(1);
    expect(w.api.mutatingRequests()).toEqual([]);
  });

  it.each([
    ['less time left than the margin: the sweep does not even list the nodes', FAST.marginMs! - 1, 0],
    ['exactly the margin left: the sweep runs', FAST.marginMs!, 1],
  ])('%s', async (_name, budgetMs, lists) => {
    const w = await start();
    const deps = w.deps(budgetMs);
    let listed = 0;
    const nodes = new Proxy(deps.nodes, {
      get: (t, k) => (k === 'listNodes' ? async () => ((listed += 1), t.listNodes()) : Reflect.get(t, k, t)),
    });
    await resumeCommands({ ...deps, nodes }, FAST);
    expect(listed).toBe(lists);
  });

  it('a decision is started with exactly the margin left, and skipped with less', async () => {
    const exact = await start([kubeNode(OLD)]);
    const started = await executePlan(passResult([deleteDecision([OLD])]), exact.deps(FAST.marginMs!), { ...FAST, maxWaitMs: 0 });
    expect(started.skipped).toEqual([]);
    expect(started.commands).toHaveLength(1);
    await exact.close();
    world = undefined;
    const short = await start([kubeNode(OLD)]);
    const skipped = await executePlan(passResult([deleteDecision([OLD])]), short.deps(FAST.marginMs! - 1), { ...FAST, maxWaitMs: 0 });
    expect(skipped.skipped.map((s) => s.why)).toEqual(['the invocation ran out of time before starting it']);
  });
});
