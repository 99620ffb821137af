// The executor end to end: real KubeWriter against the fake Kubernetes API, EC2 behind a stateful mock,
// the real DynamoStateStore on dynalite, a fake clock and a fake Lambda deadline.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { actOnPass, executePlan, recordActionInStore, resumeCommands } from '../../src/app/act/executeCommands.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import {
  CrashingStore,
  FAST,
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

// Distinct in their first 8 characters: the fake API's `kubeNode` derives the instance id from them.
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

/** An old node with two workload pods, a daemonset pod, a mirror pod and a finished pod. */
function busyNode(name: string, prefix = 'web') {
  return [
    kubeNode(name),
    kubePod('default', `${prefix}-1`, { node: name }),
    kubePod('default', `${prefix}-2`, { node: name }),
    kubePod('kube-system', `aws-node-${prefix}`, { node: name, owner: { kind: 'DaemonSet', name: 'aws-node' } }),
    kubePod('kube-system', `kube-proxy-${prefix}`, {
      node: name,
      owner: { kind: 'Node', name },
      annotations: { 'kubernetes.io/config.mirror': 'abc' },
    }),
    kubePod('default', `${prefix}-job`, { node: name, phase: 'Succeeded', owner: { kind: 'Job', name: 'batch' } }),
  ];
}

async function start(objects: readonly unknown[]): Promise<World> {
  world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), ...objects]);
  return world;
}

describe('a replace, across several invocations', () => {
  it('taints, launches, waits for Ready on the next invocation, evicts, terminates, finishes', async () => {
    const w = await start(busyNode(OLD));
    const oldInstance = instanceIdOf(OLD);

    // Invocation 1: 2 minutes of Lambda time; the replacement does not show up.
    const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(2 * MINUTE), FAST);
    expect(first.skipped).toEqual([]);
    expect(first.commands).toHaveLength(1);
    expect(first.commands[0]).toMatchObject({ id: 'cmd-1', from: 'new', step: 'launched', waitingFor: 'replacement', evicted: 0 });
    expect(w.ec2.fleetRequests).toHaveLength(1);
    const launched = w.ec2.launched();
    expect(launched).toHaveLength(1);
    const newInstance = launched[0]!.id;
    expect(launched[0]!.tags).toMatchObject({ 'eks-consolidator/managed': 'true', 'eks-consolidator/command': 'cmd-1', 'karpenter.sh/nodepool': 'default' });
    expect(nodeSpec(w.api, OLD)).toMatchObject({ unschedulable: true, taints: [{ key: 'eks-consolidator.io/disrupting', effect: 'NoSchedule' }] });
    expect(evictions(w.api)).toEqual([]);
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(events(w.api, 'DisruptionLaunching').map((e) => e.node)).toEqual([OLD]);
    expect(w.actions).toHaveLength(1); // the taint started the stabilization window
    let [stored] = await w.commands();
    expect(stored).toMatchObject({ step: 'launched', launched: [{ index: 0, ref: newInstance, instanceId: newInstance }] });
    expect(stored!.replacements).toMatchObject([{ nodePool: 'default', actuator: 'ec2', instanceTypes: ['m5.large', 'm5a.large'] }]);
    expect(JSON.parse(stored!.detail!)).toMatchObject({ instances: { [OLD]: oldInstance }, retireVia: { [OLD]: 'ec2' }, launchedAt: expect.any(Number) });

    // Between invocations the replacement registers and becomes Ready.
    w.clock.nowMs += MINUTE;
    w.registerNode(newInstance, NEW, true);

    // Invocation 2: resumed from the store.
    const second = await resumeCommands(w.deps(2 * MINUTE), FAST);
    expect(second.commands[0]).toMatchObject({
      from: 'launched',
      step: 'done',
      evicted: 2,
      replacementNodeName: NEW,
      terminatedInstances: [oldInstance],
      errors: [],
    });
    expect(evictions(w.api).map((e) => e.pod).sort()).toEqual(['default/web-1', 'default/web-2']);
    expect(w.ec2.fleetRequests).toHaveLength(1);
    expect(w.ec2.terminateCalls).toEqual([oldInstance]);
    expect(deletedNodes(w.api)).toContain(OLD);
    expect(w.api.store.get('Node', OLD)).toBeUndefined();
    expect(w.api.store.get('Node', NEW)).toBeDefined();
    expect(events(w.api, 'DisruptionTerminating').map((e) => e.node)).toEqual([OLD]);
    [stored] = await w.commands();
    expect(stored).toMatchObject({ step: 'done', launched: [{ index: 0, ref: newInstance, nodeName: NEW }] });

    // Nothing left to do.
    const third = await resumeCommands(w.deps(2 * MINUTE), FAST);
    expect(third.commands).toEqual([]);
  });
});

describe('a crash after every step', () => {
  /** A replace whose replacement registers Ready as soon as it is launched. */
  async function replaceWorld(): Promise<World> {
    const w = await start([...busyNode(OLD), ...busyNode(OLD2, 'api')]);
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, true);
    return w;
  }

  it('resumes to the end without a second launch or a second termination', async () => {
    // A clean run tells how many times the command is written.
    const clean = await replaceWorld();
    const counting = new CrashingStore(clean.store, Infinity);
    const report = await executePlan(passResult([replaceDecision([OLD, OLD2])]), clean.deps(10 * MINUTE, { store: counting }), FAST);
    expect(report.commands[0]?.step).toBe('done');
    const writes = counting.puts;
    expect(writes).toBeGreaterThanOrEqual(6);
    await clean.close();
    world = undefined;

    for (let crashAt = 1; crashAt <= writes; crashAt += 1) {
      const w = await replaceWorld();
      const crashing = new CrashingStore(w.store, crashAt);
      const crashed = await executePlan(passResult([replaceDecision([OLD, OLD2])]), w.deps(10 * MINUTE, { store: crashing }), FAST);
      const what = `crash at write ${crashAt}`;
      if (crashAt === 1) {
        // Nothing is done before the command is stored.
        expect(crashed.skipped, what).toHaveLength(1);
        expect(w.api.mutatingRequests(), what).toEqual([]);
        expect(await w.commands(), what).toEqual([]);
      } else {
        expect(crashed.commands[0]?.stoppedBecause, what).toBe('error');
        for (let pass = 0; pass < 3; pass += 1) {
          w.clock.nowMs += MINUTE;
          await resumeCommands(w.deps(10 * MINUTE), FAST);
        }
        const [cmd] = await w.commands();
        expect(cmd?.step, what).toBe('done');
        expect(w.ec2.fleetRequests, what).toHaveLength(1);
        expect(w.ec2.launched().map((i) => i.state), what).toEqual(['pending']);
        const terminated = [...w.ec2.terminateCalls].sort();
        expect(terminated, what).toEqual([instanceIdOf(OLD), instanceIdOf(OLD2)].sort());
        expect(w.api.store.get('Node', OLD), what).toBeUndefined();
        expect(w.api.store.get('Node', OLD2), what).toBeUndefined();
      }
      await w.close();
      world = undefined;
    }
  });
});

describe('a PodDisruptionBudget refusing an eviction', () => {
  it('keeps the node until the budget allows, with one DisruptionBlocked event', async () => {
    const w = await start(busyNode(OLD));
    w.api.setEvictionPolicy(({ name }) => (name === 'web-1' ? 'blockByPdb' : 'allow'));
    const oldInstance = instanceIdOf(OLD);

    const first = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(2 * MINUTE), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'evicting', waitingFor: 'pods', evicted: 1, blocked: 1, remainingPods: 1 });
    // Retried every round, never forced.
    expect(evictions(w.api).filter((e) => e.pod === 'default/web-1').length).toBeGreaterThan(1);
    expect(evictions(w.api).every((e) => e.pod !== 'default/web-1' || e.status === 429)).toBe(true);
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(deletedNodes(w.api)).toEqual([]);
    expect(events(w.api, 'DisruptionBlocked')).toEqual([
      expect.objectContaining({ node: OLD, message: expect.stringContaining('PodDisruptionBudget refuses to evict default/web-1') }),
    ]);
    let [stored] = await w.commands();
    expect(stored?.step).toBe('evicting');
    expect(JSON.parse(stored!.detail!)).toMatchObject({ evicted: 1, blocked: ['default/web-1'], waitingFor: ['default/web-1'] });

    // The next pass: still refused; still one event.
    w.clock.nowMs += 5 * MINUTE;
    const second = await resumeCommands(w.deps(2 * MINUTE), FAST);
    expect(second.commands[0]).toMatchObject({ step: 'evicting', blocked: 1 });
    expect(events(w.api, 'DisruptionBlocked')).toHaveLength(1);
    expect(w.ec2.terminateCalls).toEqual([]);

    // The budget allows it now.
    w.api.setEvictionPolicy('allow');
    w.clock.nowMs += 5 * MINUTE;
    const third = await resumeCommands(w.deps(2 * MINUTE), FAST);
    expect(third.commands[0]).toMatchObject({ step: 'done', evicted: 1, blocked: 0, terminatedInstances: [oldInstance] });
    expect(deletedNodes(w.api)).toEqual([OLD]);
    [stored] = await w.commands();
    expect(JSON.parse(stored!.detail!)).toMatchObject({ evicted: 2 });
  });
});

describe('a replacement that never becomes Ready', () => {
  it('is rolled back after the timeout: new instance terminated, old nodes untainted and uncordoned', async () => {
    const w = await start([...busyNode(OLD), ...busyNode(OLD2, 'api')]);
    // OLD2 was cordoned by someone else before: the rollback leaves it cordoned.
    w.api.store.put({ ...kubeNode(OLD2), spec: { ...(kubeNode(OLD2)['spec'] as object), unschedulable: true } });

    const first = await executePlan(passResult([replaceDecision([OLD, OLD2])]), w.deps(4 * MINUTE), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement' });
    const newInstance = w.ec2.launched()[0]!.id;
    // It registers, but never turns Ready.
    w.registerNode(newInstance, NEW, false);

    const second = await resumeCommands(w.deps(4 * MINUTE), FAST);
    expect(second.commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement' });
    w.clock.nowMs += 2 * MINUTE;
    const third = await resumeCommands(w.deps(4 * MINUTE), FAST);
    expect(third.commands[0]).toMatchObject({ step: 'rolledBack' });

    expect(w.ec2.terminateCalls).toEqual([newInstance]);
    expect(w.api.store.get('Node', NEW)).toBeUndefined();
    expect(nodeSpec(w.api, OLD)).toEqual(expect.not.objectContaining({ unschedulable: true }));
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(nodeSpec(w.api, OLD2)).toMatchObject({ unschedulable: true });
    expect(nodeSpec(w.api, OLD2)?.taints ?? []).toEqual([]);
    expect(evictions(w.api)).toEqual([]);
    expect(events(w.api, 'DisruptionBlocked').map((e) => [e.node, e.type]).sort()).toEqual([
      [OLD, 'Warning'],
      [OLD2, 'Warning'],
    ]);
    const [stored] = await w.commands();
    expect(stored?.step).toBe('rolledBack');
    expect(JSON.parse(stored!.detail!).note).toMatch(/did not become Ready within 10 min/);

    // Final: a later pass does nothing more.
    const after = await resumeCommands(w.deps(4 * MINUTE), FAST);
    expect(after.commands).toEqual([]);
    expect(w.ec2.terminateCalls).toEqual([newInstance]);
  });

  it('is rolled back at once when EC2 has no capacity', async () => {
    const w = await start(busyNode(OLD));
    w.ec2.fleetErrors = [{ ErrorCode: 'InsufficientInstanceCapacity', ErrorMessage: 'We currently do not have sufficient m5.large capacity' }];
    const report = await executePlan(passResult([replaceDecision([OLD])]), w.deps(2 * MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'rolledBack' });
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.unschedulable).toBeUndefined();
    expect(events(w.api, 'DisruptionBlocked')[0]?.message).toMatch(/InsufficientInstanceCapacity/);
  });
});

describe('an emptiness delete', () => {
  it('taints, terminates and deletes the node in one invocation, and starts the stabilization window', async () => {
    const w = await start([
      kubeNode(OLD),
      kubePod('kube-system', 'aws-node-x', { node: OLD, owner: { kind: 'DaemonSet', name: 'aws-node' } }),
    ]);
    const report = await executePlan(passResult([deleteDecision([OLD])]), w.deps(2 * MINUTE, { onAction: recordActionInStore(w.store) }), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'done', action: 'delete', evicted: 0, terminatedInstances: [instanceIdOf(OLD)] });
    expect(w.ec2.fleetRequests).toEqual([]);
    expect(evictions(w.api)).toEqual([]);
    expect(w.ec2.terminateCalls).toEqual([instanceIdOf(OLD)]);
    expect(deletedNodes(w.api)).toEqual([OLD]);
    // Tainted before anything else happened to it.
    const writes = w.api.mutatingRequests().map((r) => `${r.method} ${r.path}`);
    expect(writes[0]).toBe(`PATCH /api/v1/nodes/${OLD}`);
    expect(events(w.api, 'DisruptionTerminating')).toHaveLength(1);
    expect((await w.store.load(w.clock.nowMs)).cluster.lastActionAt).toBe(w.clock.nowMs);
  });
});

describe('termination waits for every pod that must leave', () => {
  it('never terminates while a pod is still terminating or protected, then does', async () => {
    const w = await start([
      kubeNode(OLD),
      { ...kubePod('default', 'slow', { node: OLD }), metadata: { ...(kubePod('default', 'slow', { node: OLD })['metadata'] as object), deletionTimestamp: '2026-11-21T11:59:00Z' } },
      kubePod('default', 'precious', { node: OLD, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
    ]);
    for (let pass = 0; pass < 3; pass += 1) {
      const report = await (pass === 0
        ? executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(3 * MINUTE), FAST)
        : resumeCommands(w.deps(3 * MINUTE), FAST));
      expect(report.commands[0]).toMatchObject({ step: 'evicting', remainingPods: 2 });
      w.clock.nowMs += MINUTE;
    }
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(deletedNodes(w.api)).toEqual([]);
    expect(evictions(w.api)).toEqual([]); // neither is evicted: one is leaving, one is protected
    expect(events(w.api, 'DisruptionBlocked')).toHaveLength(1);

    // The slow pod finishes; the protected one goes away.
    w.api.store.delete('Pod', 'slow', 'default');
    w.api.store.delete('Pod', 'precious', 'default');
    const last = await resumeCommands(w.deps(3 * MINUTE), FAST);
    expect(last.commands[0]).toMatchObject({ step: 'done' });
    expect(w.ec2.terminateCalls).toEqual([instanceIdOf(OLD)]);
  });

  it('goes back to draining when a pod turns up between the drain and the termination', async () => {
    const w = await start([kubeNode(OLD), kubePod('default', 'web-1', { node: OLD })]);
    // Evicting web-1 lets another pod land on the node (one that tolerates everything).
    w.api.setEvictionPolicy(({ name }) => {
      if (name === 'web-1') w.api.store.put(kubePod('default', 'sneaky', { node: OLD }));
      return 'allow';
    });
    const report = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(2 * MINUTE), FAST);
    expect(report.commands[0]?.step).toBe('done');
    expect(evictions(w.api).map((e) => e.pod)).toEqual(['default/web-1', 'default/sneaky']);
    // Terminated once, after both had left.
    expect(w.ec2.terminateCalls).toEqual([instanceIdOf(OLD)]);
    const order = w.api.requests.filter((r) => r.method !== 'GET').map((r) => r.path);
    expect(order.indexOf(`/api/v1/nodes/${OLD}`, 1)).toBeGreaterThan(order.indexOf('/api/v1/namespaces/default/pods/sneaky/eviction'));
  });
});

describe('starting commands', () => {
  it('skips decisions the cluster has moved away from, and nodes already in a command', async () => {
    const w = await start([
      kubeNode(OLD),
      kubeNode(OLD2, { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] }),
    ]);
    const report = await executePlan(
      passResult([deleteDecision(['gone-node']), deleteDecision([OLD2]), deleteDecision([OLD]), deleteDecision([OLD])]),
      w.deps(2 * MINUTE),
      FAST,
    );
    expect(report.skipped).toEqual([
      { decision: 0, nodes: ['gone-node'], why: 'node gone-node no longer exists' },
      { decision: 1, nodes: [OLD2], why: expect.stringContaining('already carries karpenter.sh/disrupted') },
      { decision: 3, nodes: [OLD], why: expect.stringContaining('already part of an unfinished command') },
    ]);
    expect(report.commands.map((c) => c.step)).toEqual(['done']);
  });

  it('launches every replacement of an m-to-n repack, waits for all of them, then drains', async () => {
    const w = await start([...busyNode(OLD), ...busyNode(OLD2, 'api')]);
    const one = replaceDecision([OLD]).replacements[0]!;
    const repack = replaceDecision([OLD, OLD2], { replacements: [one, one], move: 'm-to-n' });
    const first = await executePlan(passResult([repack]), w.deps(2 * MINUTE), FAST);
    expect(first.skipped).toEqual([]);
    expect(first.commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement', evicted: 0 });
    const launched = w.ec2.launched();
    expect(launched.map((i) => i.tags['eks-consolidator/command']).sort()).toEqual(['cmd-1', 'cmd-1#1']);

    // Only one of the two registers: nothing is evicted yet.
    w.registerNode(launched[0]!.id, NEW, true);
    const second = await resumeCommands(w.deps(2 * MINUTE), FAST);
    expect(second.commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement', evicted: 0 });
    expect(evictions(w.api)).toEqual([]);

    w.registerNode(launched[1]!.id, 'ip-10-8-8-8.ec2.internal', true);
    const third = await resumeCommands(w.deps(2 * MINUTE), FAST);
    expect(third.commands[0]).toMatchObject({ step: 'done', evicted: 4 });
    expect(third.commands[0]!.replacements?.map((r) => r.nodeName)).toEqual([NEW, 'ip-10-8-8-8.ec2.internal']);
    expect(w.ec2.terminateCalls.sort()).toEqual([instanceIdOf(OLD), instanceIdOf(OLD2)].sort());
  });

  it('rolls back both replacements of a repack when one of them cannot be launched', async () => {
    const w = await start([...busyNode(OLD), ...busyNode(OLD2, 'api')]);
    const one = replaceDecision([OLD]).replacements[0]!;
    const repack = replaceDecision([OLD, OLD2], { replacements: [one, { ...one, instanceTypes: ['m5.xlarge'] }], move: 'm-to-n' });
    // The first fleet launches; the second finds no capacity.
    w.ec2.onLaunch = () => {
      w.ec2.fleetErrors = [{ ErrorCode: 'InsufficientInstanceCapacity', ErrorMessage: 'no m5.xlarge' }];
    };
    const report = await executePlan(passResult([repack]), w.deps(4 * MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'rolledBack', evicted: 0 });
    expect(report.commands[0]!.endedBecause).toMatch(/replacement 2 could not be launched/);
    const launched = w.ec2.launched();
    expect(launched).toHaveLength(1);
    expect(w.ec2.terminateCalls).toEqual([launched[0]!.id]);
    expect(evictions(w.api)).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
  });

  it('does not start a later decision that planned pods onto the replacement of a decision not started', async () => {
    const w = await start([kubeNode(OLD), kubeNode(OLD2)]);
    const gone = replaceDecision(['ip-10-3-3-3.ec2.internal']);
    const dependent = { ...deleteDecision([OLD2], 'single-node'), podDestinations: { 'default/web-1': 'replacement-1' } };
    const report = await executePlan(passResult([gone, dependent]), w.deps(2 * MINUTE), FAST);
    expect(report.skipped).toEqual([
      { decision: 0, nodes: ['ip-10-3-3-3.ec2.internal'], why: 'node ip-10-3-3-3.ec2.internal no longer exists' },
      { decision: 1, nodes: [OLD2], why: 'it moves pods onto replacement-1, the replacement of a decision that was not started' },
    ]);
    expect(report.commands).toEqual([]);
    expect(w.api.mutatingRequests()).toEqual([]);
    expect(w.ec2.launched()).toEqual([]);
  });

  it('does nothing for a dry run, and stops at the margin when time is short', async () => {
    const w = await start([kubeNode(OLD)]);
    const dry = passResult([deleteDecision([OLD])]);
    const dryReport = await executePlan({ ...dry, plan: { ...dry.plan, dryRun: true } }, w.deps(2 * MINUTE), FAST);
    expect(dryReport.commands).toEqual([]);
    const late = await executePlan(passResult([deleteDecision([OLD])]), w.deps(20_000), FAST);
    expect(late.skipped[0]?.why).toMatch(/ran out of time/);
    expect(w.api.mutatingRequests()).toEqual([]);
  });

  it('resumes stored work before new decisions in actOnPass', async () => {
    const w = await start([...busyNode(OLD), kubeNode(OLD2)]);
    await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    w.registerNode(w.ec2.launched()[0]!.id, NEW, true);
    const report = await actOnPass(passResult([deleteDecision([OLD2]), deleteDecision([OLD])]), w.deps(5 * MINUTE), FAST);
    expect(report.commands.map((c) => [c.id, c.from, c.step])).toEqual([
      ['cmd-1', 'launched', 'done'],
      ['cmd-2', 'new', 'done'],
    ]);
    // The resumed command finished before the new decisions were started: OLD is gone by then.
    expect(report.skipped).toEqual([{ decision: 1, nodes: [OLD], why: `node ${OLD} no longer exists` }]);
  });
});

describe('failures in the middle of a step', () => {
  it('records a failed eviction in the command and retries it in the next round', async () => {
    const w = await start(busyNode(OLD));
    w.api.fail({ method: 'POST', path: /\/pods\/web-1\/eviction$/, status: 500, message: 'etcd is having a bad day' });
    const first = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(2 * MINUTE), FAST);
    expect(first.commands[0]?.errors[0]).toMatch(/evictions refused on .*default\/web-1.*etcd is having a bad day/);
    const [stored] = await w.commands();
    expect(JSON.parse(stored!.detail!).errors[0]).toMatch(/evict Pod default\/web-1 failed/);
    // The other pod went at once; web-1 in the next polling round, once the API answered again.
    expect(first.commands[0]).toMatchObject({ step: 'done', evicted: 2 });
    expect(evictions(w.api).filter((e) => e.pod === 'default/web-1').map((e) => e.status)).toEqual([500, 201]);
  });

  it('stops when the pass lease is lost while waiting', async () => {
    const w = await start(busyNode(OLD));
    w.api.setEvictionPolicy('blockByPdb');
    const report = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(5 * MINUTE, { renewLease: async () => false }), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'evicting', stoppedBecause: 'lease' });
    // One round only: no polling without the lease.
    expect(evictions(w.api).filter((e) => e.pod === 'default/web-1')).toHaveLength(1);
  });
});
