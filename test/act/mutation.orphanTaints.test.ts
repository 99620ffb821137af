// Mutation-testing gaps (npm run mutation) in the cleanup of taints our lost or finished commands left
// (ActSession.clearOrphanedTaints): which nodes are given back, which are left alone, and that one
// failure does not stop the rest.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { executePlan } from '../../src/app/act/executeCommands.ts';
import { COMMAND_ANNOTATION } from '../../src/core/ports/actuator.ts';
import { kubeNode } from '../support/fakeKubeApi.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { FAST, events, nodeSpec, passResult, startWorld, type World } from './harness.ts';

const A = 'ip-10-5-1-1.ec2.internal';
const B = 'ip-10-5-1-2.ec2.internal';
const C = 'ip-10-5-1-3.ec2.internal';
const D = 'ip-10-5-1-4.ec2.internal';
const MINUTE = 60_000;
const OURS = { key: 'eks-consolidator.io/disrupting', effect: 'NoSchedule' };
const KARPENTERS = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' };

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

/** A node tainted, cordoned and marked by `command`. */
function marked(name: string, command: string, taints: Record<string, string>[] = [OURS]): Record<string, unknown> {
  const node = kubeNode(name, { taints, unschedulable: true });
  node['metadata'] = { ...(node['metadata'] as object), annotations: { [COMMAND_ANNOTATION]: command } };
  return node;
}

/** The pass's snapshot of those nodes (what `start` reads the marks from). */
const snapshot = (nodes: { name: string; command?: string; uid?: string; deleting?: boolean }[]) =>
  ({
    ...passResult([]),
    cluster: {
      nodes: nodes.map((n) => ({ name: n.name, uid: n.uid ?? `uid-node-${n.name}`, deleting: n.deleting ?? false, annotations: n.command === undefined ? {} : { [COMMAND_ANNOTATION]: n.command } })),
      pods: [],
    },
  }) as never;

const clean = (w: World, name: string) => {
  expect(nodeSpec(w.api, name)?.taints ?? []).toEqual([]);
  expect(nodeSpec(w.api, name)?.unschedulable).toBeUndefined();
};

describe('taints no unfinished command owns', () => {
  it('are removed (ours, and Karpenter\'s old one under our mark); a node cordoned before its command stays cordoned', async () => {
    const w = (world = await startWorld(db, [marked(A, 'cmd-lost', [OURS, KARPENTERS]), marked(B, 'cmd-ended')], { spare: false }));
    await w.store.putCommand({ id: 'cmd-ended', createdAt: w.clock.nowMs, nodes: [B], method: 'single-node', reason: 'Underutilized', step: 'rolledBack', updatedAt: w.clock.nowMs, version: 0, detail: JSON.stringify({ cordonedBefore: [B] }) });
    const report = await executePlan(snapshot([{ name: A, command: 'cmd-lost' }, { name: B, command: 'cmd-ended' }]), w.deps(MINUTE), FAST);
    expect(report.cleanedTaints).toEqual([A, B]);
    clean(w, A);
    expect(nodeSpec(w.api, B)).toMatchObject({ unschedulable: true });
    expect(nodeSpec(w.api, B)?.taints ?? []).toEqual([]);
    expect(events(w.api, 'DisruptionTaintRemoved').map((e) => [e.node, e.message])).toEqual([
      [A, 'Removed the disruption taint left by command cmd-lost, which no longer runs (its record is lost)'],
      [B, 'Removed the disruption taint left by command cmd-ended, which no longer runs (it ended rolledBack)'],
    ]);
  });

  it('a node of an unfinished command, one of another machine now, one being deleted, one whose mark is gone: left alone', async () => {
    const deleting = marked(C, 'cmd-lost');
    (deleting['metadata'] as Record<string, unknown>)['deletionTimestamp'] = '2026-11-21T11:59:00Z';
    (deleting['metadata'] as Record<string, unknown>)['finalizers'] = ['karpenter.sh/termination'];
    const unmarked = kubeNode(D, { taints: [OURS], unschedulable: true });
    const w = (world = await startWorld(db, [marked(A, 'cmd-running'), marked(B, 'cmd-lost'), deleting, unmarked], { spare: false }));
    // Stored after the pass listed its commands: found when the cleanup looks again.
    let listed = 0;
    const late = new Proxy(w.store, {
      get: (target, key) =>
        key === 'listCommands'
          ? async (now?: number) => {
              if (listed++ === 0) return [];
              await target.putCommand({ id: 'cmd-running', createdAt: w.clock.nowMs, nodes: [A], method: 'single-node', reason: 'Underutilized', step: 'evicting', updatedAt: w.clock.nowMs, version: 0 }).catch(() => undefined);
              return target.listCommands(now);
            }
          : Reflect.get(target, key, target),
    });
    const report = await executePlan(
      snapshot([
        { name: A, command: 'cmd-running' },
        { name: B, command: 'cmd-lost', uid: 'uid-of-an-earlier-machine' },
        { name: C, command: 'cmd-lost' },
        { name: D, command: 'cmd-lost' },
      ]),
      w.deps(MINUTE, { store: late }),
      FAST,
    );
    expect(report.cleanedTaints).toBeUndefined();
    for (const name of [A, B, C, D]) expect(nodeSpec(w.api, name), name).toMatchObject({ unschedulable: true, taints: [OURS] });
    expect(w.api.mutatingRequests()).toEqual([]);
  });

  it('a snapshot node being deleted or without a mark is not even looked at; nothing is done without the lease', async () => {
    const w = (world = await startWorld(db, [marked(A, 'cmd-lost'), marked(B, 'cmd-lost')], { spare: false }));
    await executePlan(snapshot([{ name: A, command: 'cmd-lost', deleting: true }, { name: B }]), w.deps(MINUTE), FAST);
    const lostLease = await executePlan(snapshot([{ name: A, command: 'cmd-lost' }]), w.deps(MINUTE, { renewLease: async () => false }), { ...FAST, leaseRenewEveryMs: 0 });
    expect(lostLease.cleanedTaints).toBeUndefined();
    expect(w.api.requests.filter((r) => r.path.startsWith('/api/v1/nodes/'))).toEqual([]);
  });

  it('one node that cannot be cleaned is reported; the next one still is, and a refused Event is only noted', async () => {
    const w = (world = await startWorld(db, [marked(A, 'cmd-lost'), marked(B, 'cmd-lost')], { spare: false }));
    w.api.fail({ method: 'PATCH', path: `/api/v1/nodes/${A}`, status: 500, message: 'etcd timeout', times: Infinity });
    w.api.fail({ method: 'POST', path: /\/events$/, status: 403, message: 'forbidden', times: Infinity });
    const report = await executePlan(snapshot([{ name: A, command: 'cmd-lost' }, { name: B, command: 'cmd-lost' }]), w.deps(MINUTE), FAST);
    expect(report.cleanedTaints).toEqual([B]);
    clean(w, B);
    expect(report.errors).toEqual([expect.stringMatching(new RegExp(`^clearing the taint of ${A}: `)), expect.stringMatching(new RegExp(`^event on ${B}: `))]);
  });
});
