// The wait before a command's first eviction (src/app/act/proveLive.ts `unsettled`): the commands of a
// pass drain one after another, each once kube-scheduler has placed the pods evicted before it. Here in
// a world with a control plane (evicted pods recreated by their controllers and bound by a
// least-allocated scheduler): a StatefulSet's pod takes its grace period to leave and comes back under
// the same name only then, while another command's pods, evicted meanwhile, would be bound into the
// room the plan and the proof kept for it.
import { describe, expect, it } from 'vitest';
import { executePlan, resumeCommands } from '../../src/app/act/executeCommands.ts';
import { SETTLE_DELAY_MS } from '../../src/app/act/proveLive.ts';
import { attachControlPlane, ORDINAL } from '../support/fakeScheduler.ts';
import { kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { FAST, T0, deleteDecision, evictions, passResult, replaceDecision, useWorlds } from './harness.ts';

const [A, B, S, T] = ['ip-10-1-1-1.ec2.internal', 'ip-10-2-2-2.ec2.internal', 'ip-10-3-3-3.ec2.internal', 'ip-10-4-4-4.ec2.internal'];
const MINUTE = 60_000;
const worlds = useWorlds();

const workload = (kind: 'StatefulSet' | 'ReplicaSet', name: string, replicas: number, cpu: string) => ({
  apiVersion: 'apps/v1',
  kind,
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', resources: { requests: { cpu, memory: '128Mi' } } }] } },
    ...(kind === 'StatefulSet' ? { serviceName: name } : {}),
  },
  status: { replicas, readyReplicas: replicas },
});
const podOf = (kind: 'StatefulSet' | 'ReplicaSet', name: string, app: string, ordinal: number, node: string, cpu: string) => {
  const pod = kubePod('default', name, { node, cpu, labels: { app }, owner: { kind, name: app } });
  return { ...pod, metadata: { ...(pod['metadata'] as object), annotations: { [ORDINAL]: String(ordinal) } } };
};

/**
 * A holds db-0 (a StatefulSet's, 1500m, `dbGraceMs` to terminate), B two web pods (400m each); S is
 * empty (2 cpu), T has 1000m free.
 */
async function dbWorld(dbGraceMs: number) {
  const w = await worlds.start(
    [
      kubeNode(A, { cpu: '2' }),
      kubeNode(B, { cpu: '2' }),
      kubeNode(S, { cpu: '2' }),
      kubeNode(T, { cpu: '2' }),
      workload('StatefulSet', 'db', 1, '1500m'),
      workload('ReplicaSet', 'web', 2, '400m'),
      workload('ReplicaSet', 'fill', 1, '1000m'),
      podOf('StatefulSet', 'db-0', 'db', 0, A, '1500m'),
      podOf('ReplicaSet', 'web-a', 'web', 0, B, '400m'),
      podOf('ReplicaSet', 'web-b', 'web', 1, B, '400m'),
      podOf('ReplicaSet', 'fill-a', 'fill', 0, T, '1000m'),
    ],
    { spare: false },
  );
  w.api.setClock(() => w.clock.nowMs);
  w.api.setPodTermination((pod) => (String((pod['metadata'] as { name: string }).name).startsWith('db-') ? dbGraceMs : 0));
  return w;
}

describe('the commands of a pass drain one after another', () => {
  // dbWorld with db-0 30 s to terminate. The plan: delete A (db-0 onto S, the one node with room for it) and
  // delete B (its pods onto T). Started together, B's pods were evicted while db-0 was still
  // terminating: kube-scheduler put them on S, the least allocated node, and db-0 came back to no room.
  it.each([
    ['waiting for kube-scheduler (the default)', [], undefined],
    ['without the wait (settle timeout 0: the proof goes ahead after one round)', ['default/db-0'], 0],
  ])('%s: pods Pending at the end %j', async (_name, pendingAtEnd, settleTimeoutMs) => {
    const w = await dbWorld(30_000);
    const plane = attachControlPlane(w.api, { now: () => w.clock.nowMs });

    const report = await executePlan(passResult([deleteDecision([A]), deleteDecision([B])]), w.deps(10 * MINUTE), {
      ...FAST,
      ...(settleTimeoutMs === undefined ? {} : { settleTimeoutMs }),
    });
    plane.tick();
    expect(report.commands.map((c) => c.step)).toEqual(['done', 'done']);
    expect(plane.pending()).toEqual(pendingAtEnd);
    if (pendingAtEnd.length === 0) {
      // B waited three polls for its turn without a request on its node: tainted once (each poll used
      // to taint it again, two requests a node), looked up again only when its drain starts.
      const tainted = w.api.requests.findIndex((r) => r.method === 'PATCH' && r.path.endsWith(`/nodes/${B}`));
      const drained = w.api.requests.findIndex((r) => r.method === 'POST' && r.path.endsWith('/web-a/eviction'));
      expect(w.api.requests.slice(tainted + 1, drained).filter((r) => r.path.endsWith(`/nodes/${B}`)).length).toBeLessThanOrEqual(2);
      // B's pods were evicted only once db-0 was back and bound: after its 30 s of terminating.
      expect(evictions(w.api).map((e) => e.pod)).toEqual(['default/db-0', 'default/web-a', 'default/web-b']);
      expect(plane.bindings.find((b) => b.pod === 'default/db-0')).toMatchObject({ node: S, at: expect.any(Number) });
      const dbBound = plane.bindings.find((b) => b.pod === 'default/db-0')!.at;
      const webBound = plane.bindings.filter((b) => b.pod.startsWith('default/web-')).map((b) => b.at);
      expect(webBound.every((at) => at >= dbBound)).toBe(true);
    }
  });
});

describe('the wait is recorded with the command', () => {
  // As above, but db-0 takes 10 minutes to terminate and every invocation ends after one round: the
  // second command waits across invocations, and the 2-minute timeout counts from its first wait.
  it('a later invocation keeps counting from the first wait: the second command evicts 2 minutes after it', async () => {
    const w = await dbWorld(10 * MINUTE);
    attachControlPlane(w.api, { now: () => w.clock.nowMs });
    const start = w.clock.nowMs;
    const once = { ...FAST, maxWaitMs: 0 };
    const first = await executePlan(passResult([deleteDecision([A]), deleteDecision([B])]), w.deps(10 * MINUTE), once);
    expect(first.commands.map((c) => [c.evicted, c.waitingFor])).toEqual([[1, 'pods'], [0, 'scheduler']]);
    const noteOfB = async () => JSON.parse((await w.commands()).find((c) => c.nodes.includes(B))!.detail ?? '{}') as { note?: string; settlingSince?: number };
    expect(await noteOfB()).toMatchObject({ note: expect.stringMatching(/^waiting before the first eviction: pods were evicted 0 s ago/), settlingSince: start });
    let evictedAt: number | undefined;
    for (let k = 1; k <= 8 && evictedAt === undefined; k += 1) {
      w.clock.nowMs = start + k * 30_000;
      const report = await resumeCommands(w.deps(10 * MINUTE), once);
      if ((report.commands.find((c) => c.nodes.includes(B))?.evicted ?? 0) > 0) evictedAt = w.clock.nowMs - start;
      else expect((await noteOfB()).note).toBe('waiting before the first eviction: StatefulSet pod default/db-0 is terminating and its successor is not placed yet');
    }
    expect(evictedAt).toBe(2 * MINUTE);
  });
});

describe('a command whose pods the plan puts on another command\'s replacement', () => {
  const E = 'ip-10-7-1-1.ec2.internal';
  const OLD = 'ip-10-5-5-5.ec2.internal';
  const D = 'ip-10-6-6-6.ec2.internal';
  const NEW = 'ip-10-9-9-9.ec2.internal';
  const objects = [
    kubeNode(E, { cpu: '2' }),
    kubeNode(OLD, { cpu: '2' }),
    kubeNode(D, { cpu: '2' }),
    kubePod('default', 'web-1', { node: OLD }),
    kubePod('default', 'web-2', { node: OLD }),
    kubePod('default', 'batch-1', { node: D, cpu: '1500m' }),
  ];
  // Decision 1 deletes E (empty), decision 2 replaces OLD (two small pods) with an m5.large, decision 3
  // deletes D, its 1500m pod planned onto that m5.large (replacement-2): no other node has room for it.
  const decisions = (destinations: Record<string, string>) => [
    deleteDecision([E]),
    replaceDecision([OLD], { podDestinations: { 'default/web-1': 'replacement-2', 'default/web-2': 'replacement-2' } }),
    { ...deleteDecision([D], 'single-node'), podDestinations: destinations },
  ];
  const stepsByNode = async (w: Awaited<ReturnType<typeof worlds.start>>) => Object.fromEntries((await w.commands()).map((c) => [c.nodes[0], c.step]));

  it.each([
    ['waits until that command has drained into it, then moves its pods there', true, 'done'],
    ['(without that in the plan: proven at once, before the replacement exists and with OLD just tainted by its command, it has no room and is rolled back)', false, 'rolledBack'],
  ])('%s', async (_name, planned, stepOfD) => {
    const w = await worlds.start(objects, { spare: false });
    // The first invocation ends after one round, before the replacement registers. Command ids count
    // down, so the store lists the waiting command before the one it waits for (the order resume finds).
    let id = 10;
    const newCommandId = () => `cmd-${--id}`;
    await executePlan(passResult(decisions(planned ? { 'default/batch-1': 'replacement-2' } : {})), w.deps(10 * MINUTE, { newCommandId }), { ...FAST, maxWaitMs: 0 });
    const d = (await w.commands()).find((c) => c.nodes.includes(D))!;
    if (planned) {
      expect(d.step).toBe('tainted');
      const replaceId = (await w.commands()).find((c) => c.nodes.includes(OLD))!.id;
      expect(JSON.parse(d.detail ?? '{}')).toMatchObject({
        awaits: [replaceId],
        note: `waiting before the first eviction: command ${replaceId}, onto whose replacement the plan moves this command's pods, has not drained into it yet (launched)`,
      });
    }
    w.clock.nowMs += MINUTE;
    w.registerNode(w.ec2.launched()[0]!.id, NEW, true);
    // One round per invocation: the replace command drains and ends in one, the delete goes on in a
    // later one, where the command it waited for is no longer among the unfinished ones.
    for (let k = 0; k < 4 && (await w.commands()).some((c) => !['done', 'rolledBack'].includes(c.step)); k += 1) {
      w.clock.nowMs += 30_000;
      await resumeCommands(w.deps(10 * MINUTE), { ...FAST, maxWaitMs: 0 });
    }
    expect(await stepsByNode(w)).toEqual({ [E]: 'done', [OLD]: 'done', [D]: stepOfD });
    const evicted = evictions(w.api).map((e) => e.pod);
    // The replace command's pods first, then (with the wait) the delete's, once the replacement held them.
    expect(evicted).toEqual(planned ? ['default/web-1', 'default/web-2', 'default/batch-1'] : ['default/web-1', 'default/web-2']);
  });

  it('a command it waits for that ends without draining (its replacement never came) lets it go on, proven on the cluster as it is then', async () => {
    const w = await worlds.start(objects, { spare: false });
    await executePlan(passResult(decisions({ 'default/batch-1': 'replacement-2' })), w.deps(2 * 60 * MINUTE), FAST);
    // The replace command rolled back after the Ready timeout and gave OLD back: batch-1 has room there now.
    expect(await stepsByNode(w)).toEqual({ [E]: 'done', [OLD]: 'rolledBack', [D]: 'done' });
    expect(evictions(w.api).map((e) => e.pod)).toEqual(['default/batch-1']);
    const rolledBackAt = (await w.commands()).find((c) => c.nodes.includes(OLD))!.updatedAt;
    expect(rolledBackAt).toBeGreaterThanOrEqual(T0 + 10 * MINUTE);
  });
});

describe('a command that waits only for the last eviction to settle', () => {
  // Three deletes of one small pod each, room for all of them on K. Each command evicts once the one
  // before it has settled (SETTLE_DELAY_MS after its eviction), and looks again then, not a whole poll
  // later: a pass of twenty such deletes used to take twenty polls.
  it('looks again when the settle delay ends: the three deletes drain in two sleeps of the delay, not two polls', async () => {
    const K = 'ip-10-8-8-8.ec2.internal';
    const w = await worlds.start(
      [kubeNode(K, { cpu: '4' }), kubeNode(A, { cpu: '2' }), kubeNode(B, { cpu: '2' }), kubeNode(S, { cpu: '2' }), ...[A, B, S].map((n, i) => kubePod('default', `web-${i}`, { node: n, cpu: '200m' }))],
      { spare: false },
    );
    const sleeps: number[] = [];
    const sleep = async (ms: number) => {
      sleeps.push(ms);
      w.clock.nowMs += ms;
    };
    const report = await executePlan(passResult([A, B, S].map((n) => deleteDecision([n], 'single-node'))), w.deps(10 * MINUTE, { sleep }), FAST);
    expect(report.commands.map((c) => [c.step, c.evicted])).toEqual([['done', 1], ['done', 1], ['done', 1]]);
    expect(sleeps).toEqual([SETTLE_DELAY_MS, SETTLE_DELAY_MS]);
    expect(FAST.pollIntervalMs).toBeGreaterThan(SETTLE_DELAY_MS);
  });

  it('looks again then also while another command waits for something else (its replacement to be Ready)', async () => {
    const K = 'ip-10-8-8-8.ec2.internal';
    const OLD = 'ip-10-5-5-5.ec2.internal';
    const w = await worlds.start(
      [kubeNode(K, { cpu: '4' }), kubeNode(OLD, { cpu: '2' }), kubeNode(A, { cpu: '2' }), kubeNode(B, { cpu: '2' }), ...[A, B].map((n, i) => kubePod('default', `web-${i}`, { node: n, cpu: '200m' }))],
      { spare: false },
    );
    const sleeps: number[] = [];
    const sleep = async (ms: number) => {
      sleeps.push(ms);
      w.clock.nowMs += ms;
    };
    // The replacement never registers: that command waits for it until the invocation's time runs out.
    const report = await executePlan(passResult([replaceDecision([OLD]), deleteDecision([A], 'single-node'), deleteDecision([B], 'single-node')]), w.deps(2 * MINUTE, { sleep }), FAST);
    expect(report.commands.map((c) => [c.nodes[0], c.step])).toEqual([[OLD, 'launched'], [A, 'done'], [B, 'done']]);
    expect(sleeps[0]).toBe(SETTLE_DELAY_MS);
    expect(sleeps.slice(1).every((ms) => ms === FAST.pollIntervalMs)).toBe(true);
  });
});
