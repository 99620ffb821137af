// Fault injection in an adversarial world, ec2 actuator (the world, the table and the invariants:
// adversarialWorld.ts). `SHOW_FAULT_TABLE=1` prints the table; `ADVERSARIAL_ROW=<part of a row id>`
// runs only the matching rows.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { executePlan, resumeCommands } from '../../src/app/act/executeCommands.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { attachControlPlane, ORDINAL } from '../support/fakeScheduler.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { describeAdversarial } from './adversarialWorld.ts';
import { FAST, POOL, T0, deleteDecision, fullPass, passResult, replaceDecision, startWorld, type World } from './harness.ts';

describeAdversarial('ec2');

// What the table found, reduced to one command.
describe('found by the adversarial world', () => {
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

  it('a replacement EC2 does not list yet (eventual consistency) is waited for, not rolled back and left running', async () => {
    const w = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), kubeNode(OLD), kubePod('default', 'web-1', { node: OLD })]);
    world = w;
    // For a minute after its launch, DescribeInstances answers InvalidInstanceID.NotFound for the new
    // instance, as EC2 does (its API is eventually consistent); the instance is pending all along.
    w.ec2.clock = () => w.clock.nowMs;
    w.ec2.describeLagMs = MINUTE;
    const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    const [launched] = w.ec2.launched();
    expect(launched).toBeDefined();
    const ended = { step: first.commands[0]?.step, instance: launched!.state };
    // The bug: the command rolls back at once ("the instance ... is unknown to EC2"), and the rollback's
    // TerminateInstances, asked after a DescribeInstances that does not know the instance either, is
    // skipped as "already gone": the instance runs on, owned by nobody.
    expect(ended).not.toEqual({ step: 'rolledBack', instance: 'pending' });
    expect(first.commands[0]?.step).toBe('launched');

    w.clock.nowMs += 2 * MINUTE;
    w.registerNode(launched!.id, NEW, true);
    const second = await resumeCommands(w.deps(2 * MINUTE), FAST);
    expect(second.commands[0]?.step).toBe('done');
  });

  it('a PodDisruptionBudget that paces a large pod\'s eviction does not let the small pods evicted meanwhile take its place', async () => {
    const X = 'ip-10-3-3-3.ec2.internal';
    const [N1, N2, N3] = ['ip-10-4-4-4.ec2.internal', 'ip-10-5-5-5.ec2.internal', 'ip-10-6-6-6.ec2.internal'];
    const workload = (name: string, replicas: number, cpu: string) => ({
      kind: 'ReplicaSet',
      metadata: { name, namespace: 'default', uid: `uid-${name}` },
      spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', resources: { requests: { cpu, memory: '128Mi' } } }] } } },
      status: { replicas, readyReplicas: replicas },
    });
    const podOf = (name: string, app: string, ordinal: number, node: string, cpu: string) => {
      const pod = kubePod('default', name, { node, cpu, labels: { app }, owner: { kind: 'ReplicaSet', name: app } });
      return { ...pod, metadata: { ...(pod['metadata'] as object), annotations: { [ORDINAL]: String(ordinal) } } };
    };
    // X: two replicas of `big` (800m, a budget of one unavailable) and one small pod (250m). Room elsewhere:
    // 900m on N1, 900m on N2, 250m on N3: one big pod on N1, one on N2, the small one on N3. The pool
    // launches m5.large only, so deleting X is the one move.
    const w = await startWorld(
      db,
      [
        kubeNode(X),
        kubeNode(N1),
        kubeNode(N2),
        kubeNode(N3),
        workload('big', 2, '800m'),
        workload('small', 1, '250m'),
        workload('fill-1', 1, '1030m'),
        workload('fill-2', 1, '1030m'),
        workload('fill-3', 1, '1680m'),
        { kind: 'PodDisruptionBudget', metadata: { name: 'big', namespace: 'default' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'big' } } } },
        podOf('big-a', 'big', 0, X, '800m'),
        podOf('big-b', 'big', 1, X, '800m'),
        podOf('small-a', 'small', 0, X, '250m'),
        podOf('fill-1-a', 'fill-1', 0, N1, '1030m'),
        podOf('fill-2-a', 'fill-2', 0, N2, '1030m'),
        podOf('fill-3-a', 'fill-3', 0, N3, '1680m'),
      ],
      { spare: false, pool: { ...POOL, requirements: [...POOL.requirements, { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }] } },
    );
    world = w;
    w.api.setClock(() => w.clock.nowMs);
    // Kube-scheduler places each recreated pod on the least allocated node that fits it; a pod is Ready 20 s
    // after it is bound, and the budget counts it from then.
    const plane = attachControlPlane(w.api, { now: () => w.clock.nowMs, readyDelayMs: 20_000 });
    // The planner itself no longer takes this move: bound smallest first, the small pod takes the room of
    // a large one (its check binds the evicted pods in orders the plan does not choose).
    w.clock.nowMs = T0;
    await fullPass(w, { owner: 'pass-0', budgetMs: 2 * MINUTE, actuator: 'ec2', karpenterPresence: 'absent' });
    expect(await w.commands()).toEqual([]);
    // A command started anyway (by an older build, or a plan the cluster changed under) is still carried
    // out safely: the drain evicts the largest pods first and holds the small one back behind the PDB.
    await executePlan({ ...passResult([deleteDecision([X], 'single-node')]), cluster: await w.cluster() }, { ...w.deps(2 * MINUTE), newCommandId: undefined }, { ...FAST, maxWaitMs: 0 });
    for (let pass = 1; pass < 3; pass += 1) {
      w.clock.nowMs = T0 + pass * 5 * MINUTE;
      await fullPass(w, { owner: `pass-${pass}`, budgetMs: 2 * MINUTE, actuator: 'ec2', karpenterPresence: 'absent' });
    }
    plane.tick();
    expect((await w.commands()).map((c) => `${c.method} ${c.nodes.join(',')} ${c.step}`)).toEqual([`single-node ${X} done`]);
    // The bug: the plan and the proof place big, big, small (largest first). The drain evicts big-a, is
    // refused big-b (429: big-a's successor is not Ready yet) and evicts small-a in the same round; small-a's
    // successor goes to the least allocated node, N2; 20 s later big-b goes, and its successor (800m) has no
    // node with room: Pending for good.
    expect(plane.pending()).toEqual([]);
  });
});
