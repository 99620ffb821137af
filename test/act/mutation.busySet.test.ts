// Mutation-testing gaps (npm run mutation): the replacement of an unfinished command is as busy as its
// old nodes. A later decision that names it (planned on a snapshot in which the command did not yet
// hold it) must not be started: the command would taint and drain the node its own pods are moving to.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { executePlan } from '../../src/app/act/executeCommands.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { FAST, deleteDecision, evictions, nodeSpec, passResult, replaceDecision, startWorld, type World } from './harness.ts';

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

describe('the busy set of a new pass', () => {
  it('never starts a decision on the replacement of an unfinished command: it is not tainted, its pods stay', async () => {
    const w = (world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), kubeNode(OLD), kubePod('default', 'web-1', { node: OLD })]));
    w.ec2.onLaunch = (id) => w.registerNode(id, NEW, true);
    // The replace reaches its drain and stays there: a PodDisruptionBudget holds web-1.
    w.api.setEvictionPolicy('blockByPdb');
    const first = await executePlan(passResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'evicting', replacementNodeName: NEW });
    // A pod already moved to the replacement; the next pass decides to delete the replacement.
    w.api.store.put(kubePod('default', 'moved', { node: NEW }));
    w.api.setEvictionPolicy('allow');

    const second = await executePlan(passResult([deleteDecision([NEW], 'single-node')]), w.deps(MINUTE), FAST);
    expect(second.skipped).toEqual([{ decision: 0, nodes: [NEW], why: `node ${NEW} is already part of an unfinished command` }]);
    expect(second.commands).toEqual([]);
    expect(nodeSpec(w.api, NEW)?.taints ?? []).toEqual([]);
    expect(nodeSpec(w.api, NEW)?.unschedulable).toBeUndefined();
    expect(evictions(w.api).map((e) => e.pod)).not.toContain('default/moved');
    expect(w.api.store.get('Node', NEW)).toBeDefined();
    expect((await w.commands()).map((c) => c.nodes)).toEqual([[OLD]]);
  });

  it('a node of a command started earlier in the same pass is busy for the later decisions', async () => {
    const w = (world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), kubeNode(OLD), kubePod('default', 'web-1', { node: OLD })]));
    w.api.setEvictionPolicy('blockByPdb');
    const report = await executePlan(passResult([deleteDecision([OLD], 'single-node'), deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), FAST);
    expect(report.commands).toHaveLength(1);
    expect(report.skipped).toEqual([{ decision: 1, nodes: [OLD], why: `node ${OLD} is already part of an unfinished command` }]);
    // Not even a record that steps aside: the second decision never became a command.
    expect((await w.commands()).map((c) => c.id)).toEqual([report.commands[0]!.id]);
  });
});
