// Mutation-testing gaps (npm run mutation) in how a command launches its replacements and waits for
// them (commandRunner.ts): several replacements launched over several passes, what the record keeps
// about each (its instance, when the first was launched), what the events and notes say about which
// replacement of how many, which ones were late, and the proof before the first eviction made once.
import { describe, expect, it } from 'vitest';
import { executePlan, resumeCommands } from '../../src/app/act/executeCommands.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { FAST, KARPENTER_NODE_LABELS, T0, deleteDecision, events, evictions, instanceIdOf, karpenterPassResult, nodeSpec, passResult, replaceDecision, useWorlds, type World, type WorldOptions } from './harness.ts';

const OLD = 'ip-10-1-1-7.ec2.internal';
const NEW = 'ip-10-9-9-9.ec2.internal';
const NEW2 = 'ip-10-9-9-8.ec2.internal';
const MINUTE = 60_000;

const worlds = useWorlds();

const oldNode = (labels?: Record<string, string>) => [
  kubeNode(OLD, labels === undefined ? {} : { labels }),
  kubePod('default', 'web-1', { node: OLD }),
  kubePod('default', 'web-2', { node: OLD }),
];

function start(objects: readonly unknown[] = oldNode(), options: WorldOptions = {}): Promise<World> {
  return worlds.start([kubeDaemonSet('kube-system', 'aws-node'), ...objects], options);
}

/** A move of OLD into two new nodes (an m-to-n repack). */
function twoReplacements() {
  const one = replaceDecision([OLD]).replacements[0]!;
  return replaceDecision([OLD], { replacements: [one, one], move: 'm-to-n' });
}

/** CreateFleet throttled while `on()` says so: a launch that may succeed later. */
function throttleWhile(w: World, on: () => boolean): void {
  w.ec2.fault = (command) => (command === 'CreateFleetCommand' && on() ? { error: Object.assign(new Error('Rate exceeded'), { name: 'RequestLimitExceeded' }) } : undefined);
}

const stored = async (w: World) => (await w.commands())[0]!;
const noteOf = async (w: World) => (JSON.parse((await stored(w)).detail ?? '{}') as { note?: string }).note;
const unreadableWorld = async () => {
  throw new Error('the API server is overloaded');
};

describe('launching several replacements', () => {
  it('each launch event says which replacement of how many, and through what', async () => {
    const w = await start();
    await executePlan(passResult([twoReplacements()]), w.deps(MINUTE), FAST);
    expect(events(w.api, 'DisruptionLaunching').map((e) => [e.node, e.message])).toEqual([
      [OLD, expect.stringMatching(/^Launching replacement 1 of 2, on-demand \(m5\.large or m5a\.large\) through EC2 before disrupting this node: /)],
      [OLD, expect.stringMatching(/^Launching replacement 2 of 2, on-demand .* through EC2 /)],
    ]);
  });

  it('three allowed types or more: the first, and how many others', async () => {
    const w = await start();
    const one = replaceDecision([OLD]).replacements[0]!;
    await executePlan(passResult([replaceDecision([OLD], { replacements: [{ ...one, instanceTypes: ['m5.large', 'm5a.large', 'm6i.large'] }] })]), w.deps(MINUTE), FAST);
    expect(events(w.api, 'DisruptionLaunching').map((e) => e.message)).toEqual([expect.stringMatching(/^Launching a on-demand \(m5\.large or one of 2 other types\) through EC2 /)]);
  });

  it('one replacement: "a" replacement; through Karpenter, a NodeClaim', async () => {
    const w = await start(oldNode(KARPENTER_NODE_LABELS), { karpenter: {} });
    await executePlan(karpenterPassResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    expect(events(w.api, 'DisruptionLaunching').map((e) => e.message)).toEqual([expect.stringMatching(/^Launching a on-demand \(m5\.large or m5a\.large\) through a Karpenter NodeClaim before disrupting this node: /)]);
  });

  it('a launch cut short is resumed by the next pass, which launches only what is missing', async () => {
    const w = await start();
    let launches = 0;
    w.ec2.onLaunch = () => {
      launches += 1;
    };
    throttleWhile(w, () => launches >= 1);
    const first = await executePlan(passResult([twoReplacements()]), w.deps(MINUTE), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'tainted', stoppedBecause: 'error' });
    expect((await stored(w)).launched?.map((l) => l.index)).toEqual([0]);

    throttleWhile(w, () => false);
    w.clock.nowMs += MINUTE;
    const second = await resumeCommands(w.deps(MINUTE), FAST);
    expect(second.commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement' });
    const ids = w.ec2.launched().map((i) => i.id);
    expect(ids).toHaveLength(2);
    // Each launch recorded with its instance, at once.
    expect((await stored(w)).launched).toEqual([
      { index: 0, ref: ids[0], instanceId: ids[0] },
      { index: 1, ref: ids[1], instanceId: ids[1] },
    ]);
  });

  it('the Ready timeout counts from the first launch, not from the last one', async () => {
    const w = await start();
    let launches = 0;
    let throttled = true;
    w.ec2.onLaunch = () => {
      launches += 1;
    };
    throttleWhile(w, () => launches >= 1 && throttled);
    await executePlan(passResult([twoReplacements()]), w.deps(MINUTE), FAST);
    // The second launch succeeds 6 minutes later; neither replacement ever becomes Ready.
    throttled = false;
    w.clock.nowMs = T0 + 6 * MINUTE;
    const second = await resumeCommands(w.deps(30_000), FAST);
    expect(second.commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement' });
    // 10 minutes after the first launch (FAST's Ready timeout): rolled back, although the second launch is 4 minutes old.
    w.clock.nowMs = T0 + 10 * MINUTE;
    const ended = await resumeCommands(w.deps(30_000), FAST);
    expect(ended.commands[0]).toMatchObject({ step: 'rolledBack', evicted: 0 });
    expect(ended.commands[0]!.endedBecause).toMatch(/^replacements i-\w+, i-\w+ did not become Ready within 10 min$/);
  });
});

describe('waiting for the replacements', () => {
  it('at exactly the Ready timeout the command rolls back, naming only the replacement that is late', async () => {
    const w = await start();
    const first = await executePlan(passResult([twoReplacements()]), w.deps(30_000), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement' });
    const [ready, late] = w.ec2.launched().map((i) => i.id);
    w.registerNode(ready!, NEW, true);
    w.clock.nowMs = T0 + 9 * MINUTE;
    const waiting = await resumeCommands(w.deps(30_000), FAST);
    expect(waiting.commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement' });
    // A 30 s budget is the margin: no polling, the look is at exactly 10 minutes.
    w.clock.nowMs = T0 + 10 * MINUTE;
    const ended = await resumeCommands(w.deps(30_000), FAST);
    expect(ended.commands[0]).toMatchObject({ step: 'rolledBack', evicted: 0, endedBecause: `replacement ${late} did not become Ready within 10 min` });
    expect(evictions(w.api)).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
  });

  it('the note names every replacement once all are Ready (the step stops there when the cluster cannot be read)', async () => {
    const w = await start();
    w.ec2.onLaunch = (id) => w.registerNode(id, w.ec2.launched().length === 1 ? NEW : NEW2, true);
    const report = await executePlan(passResult([twoReplacements()]), w.deps(MINUTE, { readWorld: unreadableWorld }), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'replacementReady', stoppedBecause: 'error', evicted: 0 });
    const [a, b] = w.ec2.launched().map((i) => i.id);
    expect(await noteOf(w)).toBe(`replacements ${NEW} (${a}), ${NEW2} (${b}) ready`);
  });

  it('one replacement Ready: "replacement ... ready"', async () => {
    const w = await start();
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, true);
    await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE, { readWorld: unreadableWorld }), FAST);
    expect(await noteOf(w)).toBe(`replacement ${NEW} (${w.ec2.launched()[0]!.id}) ready`);
  });

  it('a NodeClaim learns its instance after it was created: the record keeps it from then on', async () => {
    const w = await start(oldNode(KARPENTER_NODE_LABELS), { karpenter: { launchDelayMs: MINUTE, registerDelayMs: 5 * MINUTE } });
    const first = await executePlan(karpenterPassResult([replaceDecision([OLD])]), w.deps(30_000), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement' });
    expect((await stored(w)).launched?.[0]?.instanceId).toBeUndefined();
    w.clock.nowMs += 2 * MINUTE;
    await resumeCommands(w.deps(30_000), FAST);
    const instance = w.karpenter!.launchedInstances.at(-1);
    expect(instance).toMatch(/^i-/);
    expect((await stored(w)).launched?.[0]).toMatchObject({ index: 0, instanceId: instance });
  });
});

describe('a replacement that fails before it is Ready', () => {
  it('its instance terminated (a spot reclaim): the command rolls back in the same look, saying which replacement', async () => {
    const w = await start();
    await executePlan(passResult([twoReplacements()]), w.deps(30_000), FAST);
    const [first, second] = w.ec2.launched().map((i) => i.id);
    w.ec2.instances.get(second!)!.state = 'terminated';
    w.clock.nowMs += MINUTE;
    const report = await resumeCommands(w.deps(30_000), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'rolledBack', evicted: 0, endedBecause: expect.stringMatching(/^replacement 2 failed: /) });
    expect(w.ec2.terminateCalls).toContain(first);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
  });
});

describe('the record of a replace that lost its replacement', () => {
  it('a command past its launch with no replacement recorded is rolled back before any eviction', async () => {
    const w = await start();
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, true);
    await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE, { readWorld: unreadableWorld }), FAST);
    const cmd = await stored(w);
    expect(cmd.step).toBe('replacementReady');
    // An older or damaged record: the replacement is not in it.
    await w.store.putCommand({ ...cmd, launched: [] }, cmd.version);
    w.clock.nowMs += MINUTE;
    const report = await resumeCommands(w.deps(MINUTE), FAST);
    expect(report.commands[0]?.endedBecause).toContain('a replacement was never recorded');
    expect(evictions(w.api)).toEqual([]);
    expect(w.api.store.get('Pod', 'web-1', 'default')).toBeDefined();
  });
});

describe('the proof before the first eviction', () => {
  it('names the first pod with no place and counts the others', async () => {
    // Two pods of 1.5 CPU each: the m5.large replacement (1930m) takes one, nothing takes the other.
    const w = await start([kubeNode(OLD, { cpu: '3920m' }), kubePod('default', 'big-1', { node: OLD, cpu: '1500m' }), kubePod('default', 'big-2', { node: OLD, cpu: '1500m' }), kubePod('default', 'big-3', { node: OLD, cpu: '1500m' })], { spare: false });
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, true);
    const report = await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'rolledBack', evicted: 0 });
    expect(report.commands[0]!.endedBecause).toMatch(/^pod default\/big-\d would have no place on the cluster as it is now: .* \(and 1 more pod\(s\)\)$/);
  });

  it('is made once: a drain that goes on over later passes does not read the cluster to prove it again', async () => {
    const w = await start();
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, true);
    w.api.setEvictionPolicy(({ name }) => (name === 'web-2' ? 'blockByPdb' : 'allow'));
    const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
    expect(first.commands[0]).toMatchObject({ step: 'evicting', evicted: 1, blocked: 1 });
    expect(JSON.parse((await stored(w)).detail!)).toMatchObject({ proven: true });
    w.api.setEvictionPolicy('allow');
    w.clock.nowMs += MINUTE;
    let reads = 0;
    const report = await resumeCommands(
      w.deps(MINUTE, {
        readWorld: async () => {
          reads += 1;
          throw new Error('not to be read');
        },
      }),
      FAST,
    );
    expect(report.commands[0]).toMatchObject({ step: 'done', errors: [] });
    expect(reads).toBe(0);
  });
});

describe('rolling back a replacement that already runs pods', () => {
  /**
   * A replace whose replacement joined Ready (nothing evicted yet: the cluster could not be read), then
   * received `others` (pods someone else scheduled there, filling it): the proof of the next pass fails
   * (OLD's pods have nowhere to go, there is no spare node), so the command rolls back.
   */
  async function rollingBackWith(others: readonly { name: string; cpu: string }[]): Promise<{ w: World; instance: string }> {
    const w = await start(oldNode(), { spare: false });
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, true);
    await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE, { readWorld: unreadableWorld }), FAST);
    expect((await stored(w)).step).toBe('replacementReady');
    for (const o of others) w.api.store.put(kubePod('default', o.name, { node: NEW, cpu: o.cpu }));
    return { w, instance: w.ec2.launched()[0]!.id };
  }

  it('its pods are evicted through the Eviction API, then it is removed; the old node is given back', async () => {
    const { w, instance } = await rollingBackWith([{ name: 'other-1', cpu: '1800m' }]);
    w.clock.nowMs += MINUTE;
    const report = await resumeCommands(w.deps(MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'rolledBack', endedBecause: expect.stringMatching(/would have no place on the cluster as it is now/) });
    expect(evictions(w.api)).toEqual([{ pod: 'default/other-1', status: 201 }]);
    expect(w.ec2.terminateCalls).toEqual([instance]);
    expect(w.terminatedWithPods).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(events(w.api, 'DisruptionBlocked').map((e) => [e.node, e.type, e.message])).toEqual([[OLD, 'Warning', expect.stringMatching(/^Disruption rolled back, the node stays: /)]]);
  });

  it('pods that will not leave it: it is tainted meanwhile, and kept as an ordinary node once the drain timeout has passed with no progress', async () => {
    const { w, instance } = await rollingBackWith([
      { name: 'other-1', cpu: '900m' },
      { name: 'other-2', cpu: '900m' },
    ]);
    // other-2 is held by a PodDisruptionBudget for good; other-1 for the first 30 minutes.
    let release = false;
    w.api.setEvictionPolicy(({ name }) => (name === 'other-2' || (name === 'other-1' && !release) ? 'blockByPdb' : 'allow'));
    w.clock.nowMs = T0 + MINUTE;
    const first = await resumeCommands(w.deps(30_000), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'rollingBack', waitingFor: 'pods' });
    expect(nodeSpec(w.api, NEW)).toMatchObject({ unschedulable: true, taints: [expect.objectContaining({ key: 'eks-consolidator.io/disrupting' })] });
    // Passes every 5 minutes (the command's clock advances at most 15 minutes per look). other-1 leaves
    // 30 minutes in: that is progress, and the 60-minute wait starts again from it.
    const passAt = async (minute: number) => {
      w.clock.nowMs = T0 + minute * MINUTE;
      // A 30 s budget is the margin: no polling, each look is at that instant.
      return (await resumeCommands(w.deps(30_000), FAST)).commands[0]!;
    };
    for (let minute = 6; minute <= 26; minute += 5) expect(await passAt(minute)).toMatchObject({ step: 'rollingBack' });
    release = true;
    expect(await passAt(31)).toMatchObject({ step: 'rollingBack' });
    expect(evictions(w.api).filter((e) => e.status === 201).map((e) => e.pod)).toEqual(['default/other-1']);
    for (let minute = 36; minute <= 86; minute += 5) expect(await passAt(minute)).toMatchObject({ step: 'rollingBack' });
    // Exactly 60 minutes after the last progress.
    const ended = { commands: [await passAt(91)] };
    expect(ended.commands[0]).toMatchObject({ step: 'abandoned' });
    expect(ended.commands[0]!.endedBecause).toMatch(new RegExp(`; replacement ${NEW.replace(/\./g, '\\.')} was kept because its pods could not be evicted within 60 min$`));
    expect(w.ec2.terminateCalls).not.toContain(instance);
    expect(nodeSpec(w.api, NEW)?.taints ?? []).toEqual([]);
    expect(nodeSpec(w.api, NEW)?.unschedulable).toBeFalsy();
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(events(w.api, 'DisruptionAbandoned').map((e) => [e.node, e.type, e.message])).toEqual([[OLD, 'Warning', expect.stringMatching(/^Disruption given up, the node stays: /)]]);
  });

  it('a replacement that never became Ready, with a pod stuck terminating on it: the pod does not hold it, it is removed', async () => {
    const w = await start(oldNode(), { spare: false });
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, false);
    await executePlan(passResult([replaceDecision([OLD])]), w.deps(30_000), FAST);
    const instance = w.ec2.launched()[0]!.id;
    // A pod evicted from it long ago that its (not Ready) kubelet never confirmed gone.
    const stuck = kubePod('default', 'stuck-1', { node: NEW });
    const meta = stuck['metadata'] as Record<string, unknown>;
    w.api.store.put({ ...stuck, metadata: { ...meta, deletionTimestamp: new Date(T0).toISOString(), finalizers: ['example.com/wait'] } });
    w.clock.nowMs = T0 + 10 * MINUTE;
    const ended = await resumeCommands(w.deps(30_000), FAST);
    expect(ended.commands[0]).toMatchObject({ step: 'rolledBack', endedBecause: expect.stringMatching(/did not become Ready within 10 min/) });
    expect(w.ec2.terminateCalls).toEqual([instance]);
  });
});

describe('a launch whose answer was lost', () => {
  it('is found and removed when the command rolls back, and recorded with its instance', async () => {
    const w = await start();
    // The first CreateFleet launches but its answer is lost (a client timeout); any later one is throttled.
    let calls = 0;
    w.ec2.fault = (command) => {
      if (command !== 'CreateFleetCommand') return undefined;
      calls += 1;
      return calls === 1 ? { error: Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }), after: true } : { error: Object.assign(new Error('Rate exceeded'), { name: 'RequestLimitExceeded' }) };
    };
    const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'tainted', stoppedBecause: 'error' });
    const [instance] = w.ec2.launched().map((i) => i.id);
    expect(instance).toBeDefined();
    expect((await stored(w)).launched ?? []).toEqual([]);
    // At the Ready timeout the launch cannot even be tried again (the NodePools cannot be read): rolled back.
    w.clock.nowMs = T0 + 10 * MINUTE;
    const ended = await resumeCommands(w.deps(MINUTE, { loadNodePools: async () => Promise.reject(new Error('S3 is down')) }), FAST);
    expect(ended.commands[0]).toMatchObject({ step: 'rolledBack', endedBecause: expect.stringMatching(/^no replacement could be launched within 10 min: the NodePools could not be read/) });
    expect(w.ec2.terminateCalls).toEqual([instance]);
    expect((await stored(w)).launched).toEqual([{ index: 0, ref: instance, instanceId: instance }]);
  });
});

describe('a drain that takes longer than the drain timeout', () => {
  /** Passes every 5 minutes from minute `from` to `to`; the step of each. */
  async function passes(w: World, from: number, to: number): Promise<string[]> {
    const steps: string[] = [];
    for (let minute = from; minute <= to; minute += 5) {
      w.clock.nowMs = T0 + minute * MINUTE;
      steps.push((await resumeCommands(w.deps(30_000), FAST)).commands[0]?.step ?? 'none');
      if (steps.at(-1) === 'done' || steps.at(-1) === 'abandoned') break;
    }
    return steps;
  }

  it('a PodDisruptionBudget that lets one pod go every 25 minutes: never given up while pods leave; each eviction is an action', async () => {
    const w = await start([kubeNode(OLD), ...['web-1', 'web-2', 'web-3', 'web-4'].map((name) => kubePod('default', name, { node: OLD }))]);
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, true);
    let nextAllowedMs = T0;
    w.api.setEvictionPolicy(() => {
      if (w.clock.nowMs < nextAllowedMs) return 'blockByPdb';
      nextAllowedMs = w.clock.nowMs + 25 * MINUTE;
      return 'allow';
    });
    const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(30_000), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'evicting', evicted: 1 });
    const steps = await passes(w, 5, 120);
    expect(steps.at(-1)).toBe('done');
    expect(steps).not.toContain('abandoned');
    expect(evictions(w.api).filter((e) => e.status === 201).map((e) => e.pod)).toHaveLength(4);
    // An action at each pass that evicted (the first also tainted, the last also retired), none at the
    // passes a PodDisruptionBudget held.
    expect(w.actions.map((t) => (t - T0) / MINUTE)).toEqual([0, 25, 50, 75]);
  });

  it('the pods still there changing (one deleted by its owner) is progress too', async () => {
    const w = await start();
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, true);
    w.api.setEvictionPolicy('blockByPdb');
    const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(30_000), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'evicting', evicted: 0, blocked: 2 });
    expect(await passes(w, 5, 40)).not.toContain('abandoned');
    // Its Deployment scaled down: web-2 is deleted, not evicted.
    w.api.store.delete('Pod', 'web-2', 'default');
    expect(await passes(w, 45, 95)).not.toContain('abandoned');
    // 60 minutes after that change, nothing else having moved: given up.
    const ended = await passes(w, 100, 110);
    expect(ended.at(-1)).toBe('abandoned');
    const cmd = await stored(w);
    expect(JSON.parse(cmd.detail!)).toMatchObject({ note: expect.stringMatching(/^abandoned: the drain made no progress for 60 min: pods are still on the old nodes \(still waiting for default\/web-1\)/) });
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
  });
});

describe('the order of a drain', () => {
  it('a pod whose eviction is refused (not by a PDB) holds back the smaller ones, as a PDB refusal does', async () => {
    const w = await start([
      kubeNode(OLD, { cpu: '3920m' }),
      kubePod('default', 'big-1', { node: OLD, cpu: '1200m' }),
      kubePod('default', 'small-1', { node: OLD, cpu: '100m' }),
      kubePod('default', 'small-2', { node: OLD, cpu: '100m' }),
    ]);
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, true);
    // big-1's first eviction fails with a 500 (etcd), the next one goes through.
    w.api.fail({ method: 'POST', path: /\/pods\/big-1\/eviction$/, status: 500, message: 'etcd is having a bad day', times: 1 });
    const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(30_000), { ...FAST, maxWaitMs: 0 });
    expect(first.commands[0]).toMatchObject({ step: 'evicting', evicted: 0 });
    expect(first.commands[0]!.errors.join(' ')).toMatch(/evictions refused on ip-10-1-1-7\.ec2\.internal: default\/big-1 \(.*etcd is having a bad day/);
    // The smaller pods wait: kube-scheduler could give the room kept for big-1 to them.
    expect(w.api.store.get('Pod', 'small-1', 'default')).toBeDefined();
    expect(w.api.store.get('Pod', 'small-2', 'default')).toBeDefined();
    w.clock.nowMs += 5 * MINUTE;
    const second = await resumeCommands(w.deps(MINUTE), FAST);
    expect(second.commands[0]).toMatchObject({ step: 'done', evicted: 3 });
    expect(evictions(w.api).filter((e) => e.status === 201).map((e) => e.pod)).toEqual(['default/big-1', 'default/small-1', 'default/small-2']);
  });
});

describe('what the report and the events say about the old nodes', () => {
  it('an old node whose instance someone else already terminated: retired, but not reported as terminated by this command', async () => {
    const w = await start([kubeNode(OLD)]);
    w.ec2.instances.get(instanceIdOf(OLD))!.state = 'terminated';
    const report = await executePlan(passResult([deleteDecision([OLD])]), w.deps(MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'done', terminatedInstances: [] });
    expect(w.api.store.get('Node', OLD)).toBeUndefined();
  });

  it('an eviction refused on the second old node: the event is on that node, listing the refused pods in order', async () => {
    const OLD2 = 'ip-10-2-1-8.ec2.internal';
    const w = await start([kubeNode(OLD), kubePod('default', 'web-1', { node: OLD }), kubeNode(OLD2), kubePod('default', 'web-9', { node: OLD2 }), kubePod('default', 'web-8', { node: OLD2 })]);
    w.api.fail({ method: 'POST', path: /\/pods\/web-[89]\/eviction$/, status: 500, message: 'etcd is having a bad day', times: Infinity });
    const report = await executePlan(passResult([deleteDecision([OLD, OLD2], 'multi-node')]), w.deps(30_000), { ...FAST, maxWaitMs: 0 });
    expect(report.commands[0]).toMatchObject({ step: 'evicting', evicted: 1 });
    const refused = events(w.api, 'DisruptionBlocked').filter((e) => e.message.includes('Eviction API refuses'));
    expect(refused.map((e) => [e.node, e.type])).toEqual([[OLD2, 'Warning']]);
    expect(refused[0]!.message).toMatch(/^Cannot drain the node yet: the Eviction API refuses default\/web-8 \(.*\), default\/web-9 \(.*\); retrying until the drain timeout/);
  });
});

describe('machines that come back under the same name', () => {
  it('an old node whose kubelet registers it again after its retirement is deleted again (same instance, new uid)', async () => {
    const w = await start([kubeNode(OLD)]);
    let registered = false;
    w.api.afterRequest((r) => {
      if (registered || r.method !== 'DELETE' || r.path !== `/api/v1/nodes/${OLD}`) return;
      registered = true;
      const node = kubeNode(OLD);
      w.api.store.put({ ...node, metadata: { ...(node['metadata'] as object), uid: 'uid-registered-again' } });
    });
    const report = await executePlan(passResult([deleteDecision([OLD])]), w.deps(MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'done' });
    expect(registered).toBe(true);
    expect(w.api.store.get('Node', OLD)).toBeUndefined();
  });

  it('another machine under an old node\'s name between the look and the taint is not tainted', async () => {
    const w = await start([kubeNode(OLD)]);
    // The third read of the node (after the command's start and its identity check: the read the taint
    // is written on) finds another machine.
    let reads = 0;
    w.api.beforeRequest((r) => {
      if (r.method !== 'GET' || r.path !== `/api/v1/nodes/${OLD}`) return;
      reads += 1;
      if (reads === 3) w.api.store.put({ ...kubeNode(OLD), metadata: { ...(kubeNode(OLD)['metadata'] as object), uid: 'uid-another-machine' }, spec: { providerID: 'aws:///us-east-1a/i-0another' } });
    });
    const report = await executePlan(passResult([deleteDecision([OLD])]), w.deps(MINUTE), FAST);
    expect(reads).toBeGreaterThanOrEqual(3);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.unschedulable).toBeUndefined();
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(w.api.store.get('Node', OLD)).toBeDefined();
    expect(report.commands[0]!.step).toBe('done');
  });
});

describe('a command whose pass loses its lease', () => {
  it('writes nothing more once the lease is lost (another pass may hold the command now)', async () => {
    const w = await start();
    // The lease is checked (and renewed) before every step; it is lost once the first pod is evicted,
    // in the middle of the eviction round.
    let lost = false;
    w.api.afterRequest((r) => {
      if (r.method === 'POST' && r.path.endsWith('/eviction')) lost = true;
    });
    let writesAfterLoss = 0;
    const store = new Proxy(w.store, {
      get(target, property) {
        if (property === 'putCommand') {
          return async (...args: Parameters<typeof target.putCommand>) => {
            if (lost) writesAfterLoss += 1;
            return target.putCommand(...args);
          };
        }
        const value = Reflect.get(target, property) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const report = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(10 * MINUTE, { store, renewLease: async () => !lost }), { ...FAST, leaseRenewEveryMs: 0 });
    expect(report.commands[0]).toMatchObject({ stoppedBecause: 'lease', evicted: 1 });
    expect(evictions(w.api)).toHaveLength(1);
    expect(writesAfterLoss).toBe(0);
  });
});
