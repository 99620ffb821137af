// Mutation-testing gaps (npm run mutation) in the command's state machine (commandRunner.ts): what a
// command does when its replacement goes away, when the proof fails, when a launch cannot be made, and
// what a rollback leaves. Each case asserts what the cluster sees: pods evicted or not, taints, the
// instances terminated, the step the command ends at.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CreateFleetCommand } from '@aws-sdk/client-ec2';
import { executePlan, resumeCommands } from '../../src/app/act/executeCommands.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { CrashingStore, FAST, T0, deleteDecision, deletedNodes, events, evictions, instanceIdOf, nodeSpec, passResult, replaceDecision, startWorld, type World } from './harness.ts';

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

async function start(objects: readonly unknown[] = [kubeNode(OLD), kubePod('default', 'web-1', { node: OLD }), kubePod('default', 'web-2', { node: OLD })]): Promise<World> {
  world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), ...objects]);
  return world;
}

const untainted = (w: World, node: string) => {
  expect(nodeSpec(w.api, node)?.taints ?? []).toEqual([]);
  expect(nodeSpec(w.api, node)?.unschedulable).toBeUndefined();
};

/**
 * A replace stored at `replacementReady` with nothing evicted yet: launched, the replacement joined
 * Ready, then the proof could not read the cluster (the invocation stops; nothing moved).
 */
async function readyNotEvicted(w: World): Promise<string> {
  const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
  expect(first.commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement' });
  const instance = w.ec2.launched()[0]!.id;
  w.clock.nowMs += MINUTE;
  w.registerNode(instance, NEW, true);
  const unreadable = await resumeCommands(
    w.deps(MINUTE, {
      readWorld: async () => {
        throw new Error('the API server is overloaded');
      },
    }),
    FAST,
  );
  expect(unreadable.commands[0]).toMatchObject({ step: 'replacementReady', stoppedBecause: 'error', evicted: 0 });
  return instance;
}

describe('a replacement that goes away before the drain', () => {
  it('its Node and instance gone: rolled back, nothing evicted, the old node given back', async () => {
    const w = await start();
    const instance = await readyNotEvicted(w);
    // A spot interruption: the instance terminates, its Node is removed.
    w.api.store.delete('Node', NEW);
    w.ec2.instances.get(instance)!.state = 'terminated';
    w.clock.nowMs += MINUTE;

    const report = await resumeCommands(w.deps(MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'rolledBack', evicted: 0, endedBecause: expect.stringContaining(`replacement ${NEW} disappeared`) });
    expect(evictions(w.api)).toEqual([]);
    expect(w.api.store.get('Pod', 'web-1', 'default')).toBeDefined();
    untainted(w, OLD);
    expect(w.ec2.terminateCalls).not.toContain(instanceIdOf(OLD));
    expect(events(w.api, 'DisruptionBlocked').map((e) => [e.node, e.type])).toEqual([[OLD, 'Warning']]);
  });

  it('its Node deleted while the instance still runs: it is not Ready, so nothing is evicted', async () => {
    const w = await start();
    await readyNotEvicted(w);
    w.api.store.delete('Node', NEW);
    for (let pass = 1; pass <= 3; pass += 1) {
      w.clock.nowMs += 10 * MINUTE;
      const waiting = await resumeCommands(w.deps(MINUTE), FAST);
      expect(waiting.commands[0]).toMatchObject({ step: 'replacementReady', waitingFor: 'replacement', evicted: 0 });
    }
    expect(evictions(w.api)).toEqual([]);
    expect(w.api.store.get('Pod', 'web-1', 'default')).toBeDefined();
    expect(nodeSpec(w.api, OLD)).toMatchObject({ unschedulable: true });
    expect(w.ec2.terminateCalls).toEqual([]);
  });

  // The wait for a replacement that vanished before the first eviction counts from when it was ready
  // (on the command's clock), not from the command's last write.
  it('its Node deleted while the instance still runs: the drain timeout gives the old node back', async () => {
    const w = await start();
    await readyNotEvicted(w);
    w.api.store.delete('Node', NEW);
    let ended;
    for (let pass = 1; pass <= 9 && ended === undefined; pass += 1) {
      w.clock.nowMs += 10 * MINUTE;
      const r = await resumeCommands(w.deps(MINUTE), FAST);
      if (r.commands[0]?.step === 'abandoned') ended = r;
    }
    expect(ended?.commands[0]).toMatchObject({ step: 'abandoned', endedBecause: expect.stringMatching(/no progress for 60 min: a replacement is not Ready/) });
    expect(evictions(w.api)).toEqual([]);
    untainted(w, OLD);
  });
});

/** CreateFleet answers a throttling error from now on: a launch that may succeed later. */
function throttleLaunches(w: World): void {
  w.ec2.mock.on(CreateFleetCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'RequestLimitExceeded' }));
}

describe('old nodes that go away on their own', () => {
  it('a node deleted just before its taint: nothing is launched, evicted or terminated, and the command ends', async () => {
    const w = await start();
    const remove = w.api.beforeRequest((r) => {
      if (r.method === 'PATCH' && r.path === `/api/v1/nodes/${OLD}`) w.api.store.delete('Node', OLD);
    });
    const report = await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    remove();
    expect(report.commands[0]).toMatchObject({ step: 'done', evicted: 0 });
    expect(JSON.parse((await w.commands())[0]!.detail!)).toMatchObject({ gone: [OLD], note: 'every old node was already gone; nothing to do' });
    expect(w.ec2.fleetRequests).toEqual([]);
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(w.actions).toEqual([]);
  });

  it('every old node gone after a replacement was launched: the replacement is rolled back', async () => {
    const w = await start();
    const one = replaceDecision([OLD]).replacements[0]!;
    // The first replacement launches; the second one's launch is throttled (tried again later).
    w.ec2.onLaunch = () => throttleLaunches(w);
    const first = await executePlan(passResult([replaceDecision([OLD], { replacements: [one, one], move: 'm-to-n' })]), w.deps(MINUTE), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'tainted', stoppedBecause: 'error' });
    const launched = w.ec2.launched().map((i) => i.id);
    expect(launched).toHaveLength(1);
    w.api.store.delete('Pod', 'web-1', 'default');
    w.api.store.delete('Pod', 'web-2', 'default');
    w.api.store.delete('Node', OLD);
    w.clock.nowMs += MINUTE;

    const report = await resumeCommands(w.deps(MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'rolledBack', endedBecause: 'every old node was already gone' });
    expect(w.ec2.terminateCalls).toEqual(launched);
    expect(evictions(w.api)).toEqual([]);
  });

  it('an older record without uids: a node now of another instance is left alone', async () => {
    const w = await start();
    await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    const [cmd] = await w.commands();
    const { uids: _uids, ...detail } = JSON.parse(cmd!.detail!);
    await w.store.putCommand({ ...cmd!, detail: JSON.stringify(detail) }, cmd!.version);
    // Another machine under the same name, same uid format (the record cannot tell by uid).
    w.api.store.put({ ...kubeNode(OLD), spec: { providerID: 'aws:///us-east-1a/i-0someoneelse' } });
    w.registerNode(w.ec2.launched()[0]!.id, NEW, true);
    w.clock.nowMs += MINUTE;
    const report = await resumeCommands(w.deps(MINUTE), FAST);
    expect(report.commands[0]?.step).toBe('done');
    expect(evictions(w.api)).toEqual([]);
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(deletedNodes(w.api)).toEqual([]);
    expect(report.commands[0]!.errors.join(' ')).toContain(`node ${OLD} is left alone: another machine (i-0someoneelse) now has its name`);
  });

  it('the same instance under a new Node object (it registered again) is left alone too', async () => {
    const w = await start();
    await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    w.api.store.put({ ...kubeNode(OLD), metadata: { ...(kubeNode(OLD)['metadata'] as object), uid: 'uid-registered-again' } });
    w.registerNode(w.ec2.launched()[0]!.id, NEW, true);
    w.clock.nowMs += MINUTE;
    const report = await resumeCommands(w.deps(MINUTE), FAST);
    expect(report.commands[0]?.step).toBe('done');
    expect(evictions(w.api)).toEqual([]);
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(w.api.store.get('Node', OLD)).toBeDefined();
  });
});

describe('a launch that may succeed later', () => {
  it('is tried again at the next passes, the taint kept, no action noted; past the Ready timeout it is rolled back', async () => {
    const w = await start();
    throttleLaunches(w);
    const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'tainted', stoppedBecause: 'error' });
    expect(first.commands[0]!.errors.join(' ')).toMatch(/RequestLimitExceeded|Rate exceeded/);
    expect(w.actions).toEqual([T0]);
    for (const minute of [5, 9]) {
      w.clock.nowMs = T0 + minute * MINUTE;
      const again = await resumeCommands(w.deps(MINUTE), FAST);
      expect(again.commands[0]).toMatchObject({ step: 'tainted', stoppedBecause: 'error' });
    }
    // Already tainted: nothing new was disrupted.
    expect(w.actions).toEqual([T0]);
    expect(nodeSpec(w.api, OLD)).toMatchObject({ unschedulable: true });
    w.clock.nowMs = T0 + 10 * MINUTE;
    const ended = await resumeCommands(w.deps(MINUTE), FAST);
    expect(ended.commands[0]).toMatchObject({ step: 'rolledBack', endedBecause: expect.stringMatching(/^no replacement could be launched within 10 min/) });
    untainted(w, OLD);
    expect(evictions(w.api)).toEqual([]);
  });

  it('a NodePool list that cannot be read (or no longer has the pool) is a launch to try again', async () => {
    const w = await start();
    throttleLaunches(w);
    await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    w.clock.nowMs += MINUTE;
    const unreadable = await resumeCommands(w.deps(MINUTE, { loadNodePools: async () => Promise.reject(new Error('S3 is down')) }), FAST);
    expect(unreadable.commands[0]).toMatchObject({ step: 'tainted', stoppedBecause: 'error' });
    expect(unreadable.commands[0]!.errors).toContain('the NodePools could not be read: S3 is down');
    const unknown = await resumeCommands(w.deps(MINUTE, { loadNodePools: async () => [] }), FAST);
    expect(unknown.commands[0]!.errors).toContain('NodePool "default" of the replacement is not known');
    expect(w.ec2.launched()).toEqual([]);
  });
});

describe('a replacement that goes away during the drain', () => {
  /** A replace in its drain: web-1 evicted, web-2 held by a PodDisruptionBudget. */
  async function draining(w: World): Promise<string> {
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, true);
    w.api.setEvictionPolicy(({ name }) => (name === 'web-2' ? 'blockByPdb' : 'allow'));
    const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
    expect(first.commands[0]).toMatchObject({ step: 'evicting', evicted: 1, blocked: 1 });
    return w.ec2.launched()[0]!.id;
  }

  it('gone: the drain is given up, the old node given back, the replacement kept (it holds the moved pods)', async () => {
    const w = await start();
    const instance = await draining(w);
    w.api.store.delete('Node', NEW);
    w.ec2.instances.get(instance)!.state = 'terminated';
    w.api.setEvictionPolicy('allow');
    w.clock.nowMs += MINUTE;
    const report = await resumeCommands(w.deps(MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'abandoned', endedBecause: expect.stringMatching(new RegExp(`^replacement ${NEW} disappeared .* before the old nodes were drained$`)) });
    expect(evictions(w.api).filter((e) => e.status === 201).map((e) => e.pod)).toEqual(['default/web-1']);
    untainted(w, OLD);
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(events(w.api, 'DisruptionAbandoned').map((e) => e.node)).toEqual([OLD]);
  });

  it('not Ready: no eviction while it is down, the drain goes on once it is back', async () => {
    const w = await start();
    const instance = await draining(w);
    w.registerNode(instance, NEW, false);
    w.api.setEvictionPolicy('allow');
    w.clock.nowMs += MINUTE;
    const down = await resumeCommands(w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
    expect(down.commands[0]).toMatchObject({ step: 'evicting', waitingFor: 'replacement', evicted: 0 });
    expect(evictions(w.api).filter((e) => e.pod === 'default/web-2' && e.status === 201)).toEqual([]);
    w.registerNode(instance, NEW, true);
    w.clock.nowMs += MINUTE;
    const back = await resumeCommands(w.deps(MINUTE), FAST);
    expect(back.commands[0]).toMatchObject({ step: 'done', evicted: 1, terminatedInstances: [instanceIdOf(OLD)] });
  });

  it('not Ready for longer than the drain timeout: given up, nothing more evicted', async () => {
    const w = await start();
    const instance = await draining(w);
    w.registerNode(instance, NEW, false);
    w.api.setEvictionPolicy('allow');
    let ended;
    for (let pass = 1; pass <= 9 && ended === undefined; pass += 1) {
      w.clock.nowMs += 10 * MINUTE;
      const r = await resumeCommands(w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
      if (r.commands[0]?.step === 'abandoned') ended = { r, pass };
      else expect(r.commands[0]).toMatchObject({ step: 'evicting', waitingFor: 'replacement' });
    }
    expect(ended?.pass).toBe(6);
    expect(ended?.r.commands[0]?.endedBecause).toMatch(/no progress for 60 min: a replacement is not Ready/);
    expect(evictions(w.api).filter((e) => e.status === 201).map((e) => e.pod)).toEqual(['default/web-1']);
    untainted(w, OLD);
  });
});

describe('what stops a tick', () => {
  it('a command another pass changed meanwhile: this invocation stops it without writing over it', async () => {
    const w = await start();
    w.api.setEvictionPolicy('blockByPdb');
    await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
    const [stored] = await w.commands();
    // Another pass writes the command between this pass's listing and its first write.
    let listed = 0;
    const racing = new Proxy(w.store, {
      get: (target, key) =>
        key === 'listCommands'
          ? async (now?: number) => {
              const found = await target.listCommands(now);
              if (listed++ === 0) await target.putCommand({ ...stored!, detail: JSON.stringify({ ...JSON.parse(stored!.detail!), note: 'theirs' }) }, stored!.version);
              return found;
            }
          : Reflect.get(target, key, target),
    });
    w.api.setEvictionPolicy('allow');
    w.clock.nowMs += 5 * MINUTE;
    const report = await resumeCommands(w.deps(MINUTE, { store: racing }), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'evicting', stoppedBecause: 'conflict' });
    expect(report.commands[0]!.errors.join(' ')).toMatch(/another pass changed command cmd-1/);
    expect(JSON.parse((await w.commands())[0]!.detail!).note).toBe('theirs');
    expect(w.ec2.terminateCalls).toEqual([]);
  });

  it('a store that fails: the tick stops, reported', async () => {
    const w = await start();
    const failing = new Proxy(w.store, {
      get: (target, key) => (key === 'putCommand' ? async (...args: Parameters<typeof target.putCommand>) => (args[1] === undefined ? target.putCommand(...args) : Promise.reject(new Error('disk full'))) : Reflect.get(target, key, target)),
    });
    const report = await executePlan(passResult([deleteDecision([OLD])]), w.deps(MINUTE, { store: failing }), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'tainted', stoppedBecause: 'error' });
    expect(report.commands[0]!.errors).toContain('could not record command cmd-1: disk full');
  });

  it('the Lambda running out of time mid-round: what was evicted is recorded, without an error, and the next pass goes on', async () => {
    const w = await start();
    // Each eviction takes 20 s: after the first, the invocation is inside its 30 s margin.
    w.api.setEvictionPolicy(() => {
      w.clock.nowMs += 20_000;
      return 'allow';
    });
    const report = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(45_000), FAST);
    expect(report.commands[0]).toMatchObject({ stoppedBecause: 'time', errors: [], evicted: 1 });
    expect(JSON.parse((await w.commands())[0]!.detail!).evicted).toBe(1);
    expect(w.ec2.terminateCalls).toEqual([]);
    w.clock.nowMs += MINUTE;
    const next = await resumeCommands(w.deps(5 * MINUTE), FAST);
    expect(next.commands[0]).toMatchObject({ step: 'done', evicted: 1 });
    expect(JSON.parse((await w.commands())[0]!.detail!).evicted).toBe(2);
  });

  it('an Event the API refuses is noted, and the command goes on', async () => {
    const w = await start();
    w.api.fail({ method: 'POST', path: /\/events$/, status: 403, message: 'events are forbidden', times: Infinity });
    const report = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'done', evicted: 2 });
    expect(report.commands[0]!.errors).toEqual([expect.stringMatching(new RegExp(`^event DisruptionTerminating on ${OLD}: `))]);
  });
});

describe('launches and pods nobody recorded', () => {
  it('a launch whose answer was lost (the Lambda died before recording it) is found and removed by the rollback', async () => {
    const w = await start();
    // The command is stored; CreateFleet answers; the store dies before the launch is recorded.
    const crashing = new CrashingStore(w.store, 2);
    const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE, { store: crashing }), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'tainted', stoppedBecause: 'error' });
    const [lost] = w.ec2.launched();
    expect((await w.commands())[0]!.launched ?? []).toEqual([]);
    // Past the Ready timeout, with the NodePools unreadable, the command gives up: its rollback must
    // still find the instance it launched.
    w.clock.nowMs += 11 * MINUTE;
    const report = await resumeCommands(w.deps(MINUTE, { loadNodePools: async () => Promise.reject(new Error('S3 is down')) }), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'rolledBack', endedBecause: expect.stringMatching(/^no replacement could be launched within 10 min/) });
    expect(w.ec2.terminateCalls).toEqual([lost!.id]);
    untainted(w, OLD);
  });

  it('a pod that turns up between the last eviction round and the termination sends the command back to draining', async () => {
    const w = await start([kubeNode(OLD), kubePod('default', 'web-1', { node: OLD })]);
    let podLists = 0;
    w.api.beforeRequest((r) => {
      if (r.method === 'GET' && r.path === '/api/v1/pods' && (r.query['fieldSelector'] ?? '').includes(OLD)) {
        podLists += 1;
        // The drain round lists twice (before and after its eviction); the third listing is the check
        // just before the termination.
        if (podLists === 3) w.api.store.put(kubePod('default', 'late', { node: OLD }));
      }
    });
    const report = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'done', terminatedInstances: [instanceIdOf(OLD)] });
    expect(evictions(w.api).map((e) => e.pod)).toEqual(['default/web-1', 'default/late']);
    expect(w.terminatedWithPods).toEqual([]);
    expect(w.ec2.terminateCalls).toEqual([instanceIdOf(OLD)]);
  });

  it('a failure whose record fails too is reported twice, and the command is left where it was', async () => {
    const w = await start();
    w.api.fail({ method: 'PATCH', path: `/api/v1/nodes/${OLD}`, status: 500, message: 'etcd timeout', times: Infinity });
    const failing = new Proxy(w.store, {
      get: (target, key) => (key === 'putCommand' ? async (...args: Parameters<typeof target.putCommand>) => (args[1] === undefined ? target.putCommand(...args) : Promise.reject(new Error('disk full'))) : Reflect.get(target, key, target)),
    });
    const report = await executePlan(passResult([deleteDecision([OLD])]), w.deps(MINUTE, { store: failing }), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'tainted', stoppedBecause: 'error' });
    expect(report.commands[0]!.errors).toEqual([expect.stringContaining('etcd timeout'), 'could not record command cmd-1: disk full']);
  });
});

describe('largest pods first', () => {
  it('smaller pods wait while a larger one is held by its PodDisruptionBudget, then all go', async () => {
    const w = await start([
      kubeNode(OLD),
      kubePod('default', 'db-0', { node: OLD, cpu: '1', memory: '1Gi' }),
      kubePod('default', 'web-1', { node: OLD }),
      kubePod('default', 'web-2', { node: OLD }),
    ]);
    w.api.setEvictionPolicy(({ name }) => (name === 'db-0' ? 'blockByPdb' : 'allow'));
    const first = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
    expect(first.commands[0]).toMatchObject({ step: 'evicting', evicted: 0, remainingPods: 3 });
    expect(evictions(w.api).map((e) => [e.pod, e.status])).toEqual([['default/db-0', 429]]);
    expect(events(w.api, 'DisruptionBlocked').map((e) => e.message)).toEqual([expect.stringContaining('and 2 smaller pod(s) wait so as not to take its place')]);
    w.api.setEvictionPolicy('allow');
    w.clock.nowMs += 5 * MINUTE;
    const next = await resumeCommands(w.deps(MINUTE), FAST);
    expect(next.commands[0]).toMatchObject({ step: 'done', evicted: 3 });
    expect(evictions(w.api).filter((e) => e.status === 201).map((e) => e.pod)).toEqual(['default/db-0', 'default/web-1', 'default/web-2']);
  });

  it('pods as large as the held one are not held back', async () => {
    const w = await start([kubeNode(OLD), kubePod('default', 'a-1', { node: OLD }), kubePod('default', 'b-1', { node: OLD })]);
    w.api.setEvictionPolicy(({ name }) => (name === 'a-1' ? 'blockByPdb' : 'allow'));
    const first = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
    expect(first.commands[0]).toMatchObject({ step: 'evicting', evicted: 1, blocked: 1 });
    expect(events(w.api, 'DisruptionBlocked').map((e) => e.message)).toEqual([expect.not.stringContaining('smaller pod')]);
  });
});
