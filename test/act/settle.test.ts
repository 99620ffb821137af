// The wait before a command's first eviction (src/app/act/proveLive.ts `unsettled`): the commands of a
// pass drain one after another, each once kube-scheduler has placed the pods evicted before it. Here in
// a world with a control plane (evicted pods recreated by their controllers and bound by a
// least-allocated scheduler): a StatefulSet's pod takes its grace period to leave and comes back under
// the same name only then, while another command's pods, evicted meanwhile, would be bound into the
// room the plan and the proof kept for it.
import { describe, expect, it } from 'vitest';
import { executePlan } from '../../src/app/act/executeCommands.ts';
import { attachControlPlane, ORDINAL } from '../support/fakeScheduler.ts';
import { kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { FAST, deleteDecision, evictions, passResult, replaceDecision, useWorlds } from './harness.ts';

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

describe('the commands of a pass drain one after another', () => {
  // A holds db-0 (a StatefulSet's, 1500m, 30 s to terminate), B two web pods (400m each). S is empty
  // (2 cpu), T has 1000m free. The plan: delete A (db-0 onto S, the one node with room for it) and
  // delete B (its pods onto T). Started together, B's pods were evicted while db-0 was still
  // terminating: kube-scheduler put them on S, the least allocated node, and db-0 came back to no room.
  it.each([
    ['waiting for kube-scheduler (the default)', [], undefined],
    ['without the wait (settle timeout 0: the proof goes ahead after one round)', ['default/db-0'], 0],
  ])('%s: pods Pending at the end %j', async (_name, pendingAtEnd, settleTimeoutMs) => {
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
    w.api.setPodTermination((pod) => (String((pod['metadata'] as { name: string }).name).startsWith('db-') ? 30_000 : 0));
    const plane = attachControlPlane(w.api, { now: () => w.clock.nowMs });

    const report = await executePlan(passResult([deleteDecision([A]), deleteDecision([B])]), w.deps(10 * MINUTE), {
      ...FAST,
      ...(settleTimeoutMs === undefined ? {} : { settleTimeoutMs }),
    });
    plane.tick();
    expect(report.commands.map((c) => c.step)).toEqual(['done', 'done']);
    expect(plane.pending()).toEqual(pendingAtEnd);
    if (pendingAtEnd.length === 0) {
      // B's pods were evicted only once db-0 was back and bound: after its 30 s of terminating.
      const evictedAt = w.api.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/eviction')).map((r) => r.path.split('/')[6]);
      expect(evictedAt).toEqual(['db-0', 'web-a', 'web-b']);
      expect(plane.bindings.find((b) => b.pod === 'default/db-0')).toMatchObject({ node: S, at: expect.any(Number) });
      const dbBound = plane.bindings.find((b) => b.pod === 'default/db-0')!.at;
      const webBound = plane.bindings.filter((b) => b.pod.startsWith('default/web-')).map((b) => b.at);
      expect(webBound.every((at) => at >= dbBound)).toBe(true);
    }
  });
});

describe('a command whose pods the plan puts on another command\'s replacement', () => {
  const OLD = 'ip-10-5-5-5.ec2.internal';
  const D = 'ip-10-6-6-6.ec2.internal';
  const NEW = 'ip-10-9-9-9.ec2.internal';

  // Decision 1 replaces OLD (two small pods) with an m5.large; decision 2 deletes D, its 1500m pod planned
  // onto that m5.large (replacement-1): no other node has room for it. The replacement registers Ready
  // after the first poll.
  it.each([
    ['waits until that command has drained into it, then moves its pods there', true, ['done', 'done']],
    ['(without the wait: proven before the replacement exists, it is rolled back)', false, ['done', 'rolledBack']],
  ])('%s', async (_name, planned, steps) => {
    const w = await worlds.start(
      [
        kubeNode(OLD, { cpu: '2' }),
        kubeNode(D, { cpu: '2' }),
        kubePod('default', 'web-1', { node: OLD }),
        kubePod('default', 'web-2', { node: OLD }),
        kubePod('default', 'batch-1', { node: D, cpu: '1500m' }),
      ],
      { spare: false },
    );
    const destinations: Record<string, string> = planned ? { 'default/batch-1': 'replacement-1' } : {};
    const decisions = [
      replaceDecision([OLD], { podDestinations: { 'default/web-1': 'replacement-1', 'default/web-2': 'replacement-1' } }),
      { ...deleteDecision([D], 'single-node'), podDestinations: destinations },
    ];
    const deps = w.deps(10 * MINUTE, {
      sleep: async (ms) => {
        w.clock.nowMs += ms;
        const launched = w.ec2.launched()[0];
        if (launched !== undefined && w.api.store.get('Node', NEW) === undefined) w.registerNode(launched.id, NEW, true);
      },
    });
    const report = await executePlan(passResult(decisions), deps, FAST);
    expect(report.commands.map((c) => c.step)).toEqual(steps);
    const evicted = evictions(w.api).map((e) => e.pod);
    if (planned) {
      // The replace command's pods first, then the delete's, once the replacement held them.
      expect(evicted).toEqual(['default/web-1', 'default/web-2', 'default/batch-1']);
      expect((await w.commands()).find((c) => c.nodes.includes(D))?.detail).toContain('"awaits"');
    } else {
      expect(evicted).toEqual(['default/web-1', 'default/web-2']);
      expect(report.commands[1]?.endedBecause).toMatch(/default\/batch-1 would have no place/);
    }
  });
});
