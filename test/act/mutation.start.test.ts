// Mutation-testing gaps (npm run mutation) in how a decision becomes a command (startCommand.ts): each
// reason a decision is not started leaves the cluster untouched and no command behind; what a started
// command records about its nodes decides what it may later touch.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { executePlan } from '../../src/app/act/executeCommands.ts';
import { commandIdFor } from '../../src/app/act/startCommand.ts';
import type { StateStore } from '../../src/core/state/ports.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { parseDetail } from '../../src/app/act/commandDetail.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { FAST, KARPENTER_POOL, deleteDecision, instanceIdOf, karpenterPassResult, passResult, replaceDecision, startWorld, type World } from './harness.ts';

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

async function start(objects: readonly unknown[]): Promise<World> {
  world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), ...objects]);
  return world;
}

const untouched = async (w: World) => {
  expect(w.api.mutatingRequests()).toEqual([]);
  expect(await w.commands()).toEqual([]);
  expect(w.ec2.fleetRequests).toEqual([]);
};

describe('decisions that are not started', () => {
  it('names no node, a node being deleted, a node whose instance cannot be retired', async () => {
    const deleting = kubeNode(OLD);
    (deleting['metadata'] as Record<string, unknown>)['deletionTimestamp'] = '2026-11-21T11:59:00Z';
    (deleting['metadata'] as Record<string, unknown>)['finalizers'] = ['example.com/hold'];
    const noProvider = kubeNode(OLD2);
    delete (noProvider['spec'] as Record<string, unknown>)['providerID'];
    const w = await start([deleting, noProvider]);
    const report = await executePlan(passResult([deleteDecision([]), deleteDecision([OLD]), deleteDecision([OLD2])]), w.deps(MINUTE), FAST);
    expect(report.skipped).toEqual([
      { decision: 0, nodes: [], why: 'the decision names no node' },
      { decision: 1, nodes: [OLD], why: `node ${OLD} is already being deleted` },
      { decision: 2, nodes: [OLD2], why: `node ${OLD2} has no EC2 providerID, so its instance cannot be terminated` },
    ]);
    await untouched(w);
  });

  it('a node that already carries our taint (a command lost with its record, not yet cleaned)', async () => {
    const w = await start([kubeNode(OLD, { taints: [{ key: 'eks-consolidator.io/disrupting', effect: 'NoSchedule' }] })]);
    const report = await executePlan(passResult([deleteDecision([OLD])]), w.deps(MINUTE), FAST);
    expect(report.skipped).toEqual([{ decision: 0, nodes: [OLD], why: `node ${OLD} already carries eks-consolidator.io/disrupting (another disruption is in progress)` }]);
    await untouched(w);
  });

  it('a replacement whose pool is unknown, or that Karpenter should launch without a NodeClaim template or without access', async () => {
    const w = await start([kubeNode(OLD)]);
    const unknownPool = replaceDecision([OLD], { replacements: [{ ...replaceDecision([OLD]).replacements[0]!, nodePool: 'gpu' }] });
    const noTemplate = { ...karpenterPassResult([replaceDecision([OLD])]), nodePools: [{ ...KARPENTER_POOL, nodeClaimTemplate: undefined }] };
    expect((await executePlan(passResult([unknownPool]), w.deps(MINUTE), FAST)).skipped).toEqual([{ decision: 0, nodes: [OLD], why: 'NodePool "gpu" of the replacement is not known' }]);
    expect((await executePlan(noTemplate, w.deps(MINUTE), FAST)).skipped).toEqual([
      { decision: 0, nodes: [OLD], why: 'NodePool "default" has no spec.template.spec.nodeClassRef, so no NodeClaim can be built for its replacement' },
    ]);
    // This world serves no NodeClaims: neither a replacement nor an old node can go through Karpenter.
    const noAccess = 'this deployment has no access to Karpenter NodeClaims, so the karpenter actuator cannot act';
    expect((await executePlan(karpenterPassResult([replaceDecision([OLD])]), w.deps(MINUTE), FAST)).skipped).toEqual([{ decision: 0, nodes: [OLD], why: noAccess }]);
    expect((await executePlan(karpenterPassResult([deleteDecision([OLD])]), w.deps(MINUTE), FAST)).skipped).toEqual([{ decision: 0, nodes: [OLD], why: noAccess }]);
    await untouched(w);
  });

  /** A command another pass stored (not acted on yet), and a store whose first listing predates it. */
  async function storedByAnotherPass(w: World, id: string, nodes: string[]): Promise<StateStore> {
    await w.store.putCommand({ id, createdAt: w.clock.nowMs, nodes, method: 'single-node', reason: 'Empty', step: 'tainted', updatedAt: w.clock.nowMs, version: 0, detail: '{}' });
    let listed = 0;
    return new Proxy(w.store, {
      get: (target, key) => (key === 'listCommands' ? async (now?: number) => (listed++ === 0 ? [] : target.listCommands(now)) : Reflect.get(target, key, target)),
    });
  }

  it('a command id another pass already stored: not started twice', async () => {
    const w = await start([kubeNode(OLD)]);
    const late = await storedByAnotherPass(w, 'same', [OLD]);
    const report = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE, { newCommandId: () => 'same', store: late }), FAST);
    expect(report.skipped).toEqual([{ decision: 0, nodes: [OLD], why: 'command same for this decision was already started by another pass' }]);
    expect(report.commands).toEqual([]);
    expect(w.api.mutatingRequests()).toEqual([]);
    expect((await w.commands()).map((c) => [c.id, c.step, c.version])).toEqual([['same', 'tainted', 1]]);
  });

  it('an overlapping command stored by another pass meanwhile: the new one steps aside before touching anything', async () => {
    const w = await start([kubeNode(OLD), kubeNode(OLD2)]);
    const late = await storedByAnotherPass(w, 'theirs', [OLD]);
    const report = await executePlan(passResult([deleteDecision([OLD2, OLD], 'multi-node')]), w.deps(MINUTE, { newCommandId: () => 'ours', store: late }), FAST);
    expect(report.skipped).toEqual([{ decision: 0, nodes: [OLD2, OLD], why: `command theirs of another pass already covers node ${OLD}` }]);
    expect(report.commands).toEqual([]);
    expect(w.api.mutatingRequests()).toEqual([]);
    const ours = (await w.commands()).find((c) => c.id === 'ours');
    expect(ours?.step).toBe('rolledBack');
    expect(JSON.parse(ours!.detail!).note).toBe(`stepped aside before acting: command theirs of another pass already covers node ${OLD}`);
  });

  it('a finished command on the same node, or an unfinished one on other nodes, does not make it step aside', async () => {
    const w = await start([kubeNode(OLD), kubeNode(OLD2)]);
    await w.store.putCommand({ id: 'finished', createdAt: w.clock.nowMs, nodes: [OLD], method: 'emptiness', reason: 'Empty', step: 'rolledBack', updatedAt: w.clock.nowMs, version: 0 });
    const late = await storedByAnotherPass(w, 'elsewhere', [OLD2]);
    const report = await executePlan(passResult([deleteDecision([OLD])]), w.deps(MINUTE, { newCommandId: () => 'ours', store: late }), FAST);
    expect(report.skipped).toEqual([]);
    expect(report.commands.map((c) => [c.id, c.step])).toEqual([['ours', 'done']]);
  });

  it('a store that fails for another reason: the decision is reported as not started', async () => {
    const w = await start([kubeNode(OLD)]);
    const broken: StateStore = new Proxy(w.store, {
      get: (target, key) => (key === 'putCommand' ? async () => Promise.reject(new Error('ProvisionedThroughputExceeded')) : Reflect.get(target, key, target)),
    });
    const report = await executePlan(passResult([deleteDecision([OLD])]), w.deps(MINUTE, { store: broken }), FAST);
    expect(report.skipped).toEqual([{ decision: 0, nodes: [OLD], why: 'could not start: ProvisionedThroughputExceeded' }]);
    await untouched(w);
  });
});

describe('what a started command records', () => {
  it('the machines it decided about, how each is retired, and which were already cordoned', async () => {
    const w = await start([kubeNode(OLD), kubeNode(OLD2, { unschedulable: true })]);
    w.api.fail({ method: 'PATCH', path: /\/nodes\//, status: 500, times: Infinity });
    await executePlan(passResult([{ ...deleteDecision([OLD, OLD2], 'multi-node'), summary: 'two idle nodes' }]), w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
    const [cmd] = await w.commands();
    expect(JSON.parse(cmd!.detail!)).toMatchObject({
      taintKey: 'eks-consolidator.io/disrupting',
      instances: { [OLD]: instanceIdOf(OLD), [OLD2]: instanceIdOf(OLD2) },
      uids: { [OLD]: `uid-node-${OLD}`, [OLD2]: `uid-node-${OLD2}` },
      retireVia: { [OLD]: 'ec2', [OLD2]: 'ec2' },
      cordonedBefore: [OLD2],
      note: 'two idle nodes',
    });
    expect(cmd).toMatchObject({ nodes: [OLD, OLD2], method: 'multi-node', reason: 'Underutilized', step: 'tainted' });
    expect(cmd!.replacements).toBeUndefined();
  });

  it('the same decision on the same machines in the same plan gets the same id; anything else another', () => {
    const decision = replaceDecision([OLD]);
    const id = commandIdFor(decision, { [OLD]: 'i-1' }, { [OLD]: 'u-1' }, '2026-11-21T12:00:00Z');
    expect(id).toMatch(/^cmd-[0-9a-f]{24}$/);
    expect(commandIdFor(decision, { [OLD]: 'i-1' }, { [OLD]: 'u-1' }, '2026-11-21T12:00:00Z')).toBe(id);
    const others = [
      commandIdFor(decision, { [OLD]: 'i-2' }, { [OLD]: 'u-1' }, '2026-11-21T12:00:00Z'),
      commandIdFor(decision, { [OLD]: 'i-1' }, { [OLD]: 'u-2' }, '2026-11-21T12:00:00Z'),
      commandIdFor(decision, { [OLD]: 'i-1' }, { [OLD]: 'u-1' }, '2026-11-21T12:05:00Z'),
      commandIdFor(decision, { [OLD]: 'i-1' }, { [OLD]: 'u-1' }),
      commandIdFor({ ...decision, method: 'multi-node' }, { [OLD]: 'i-1' }, { [OLD]: 'u-1' }, '2026-11-21T12:00:00Z'),
      commandIdFor({ ...decision, replacements: [{ ...decision.replacements[0]!, capacityType: 'spot' }] }, { [OLD]: 'i-1' }, { [OLD]: 'u-1' }, '2026-11-21T12:00:00Z'),
      commandIdFor({ ...decision, replacements: [{ ...decision.replacements[0]!, instanceTypes: ['m5.large'] }] }, { [OLD]: 'i-1' }, { [OLD]: 'u-1' }, '2026-11-21T12:00:00Z'),
      commandIdFor({ ...decision, action: 'delete', replacements: [] }, { [OLD]: 'i-1' }, { [OLD]: 'u-1' }, '2026-11-21T12:00:00Z'),
    ];
    expect(new Set([id, ...others]).size).toBe(others.length + 1);
  });
});

describe('what a started command checks and records', () => {
  it('a taint that is not a disruption taint does not keep a node from being started', async () => {
    const w = await start([kubeNode(OLD, { taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }] })]);
    const report = await executePlan(passResult([deleteDecision([OLD])]), w.deps(MINUTE), FAST);
    expect(report.skipped).toEqual([]);
    expect(report.commands.map((c) => c.step)).toEqual(['done']);
  });

  it('an unfinished command of another pass that shares one node (and has others) makes it step aside', async () => {
    const w = await start([kubeNode(OLD)]);
    // The other pass stores its command after this pass listed the unfinished ones, just before this
    // pass stores its own: only the check after the write can see it.
    const other = { id: 'cmd-other', createdAt: w.clock.nowMs, nodes: [OLD, 'ip-10-9-9-9.ec2.internal'], method: 'multi-node' as const, reason: 'Underutilized', step: 'tainted' as const, updatedAt: w.clock.nowMs, version: 0 };
    let raced = false;
    const store = new Proxy(w.store, {
      get: (target, key) =>
        key === 'putCommand'
          ? async (...args: Parameters<typeof target.putCommand>) => {
              if (!raced) {
                raced = true;
                await target.putCommand(other);
              }
              return target.putCommand(...args);
            }
          : Reflect.get(target, key, target),
    });
    const report = await executePlan(passResult([deleteDecision([OLD])]), w.deps(MINUTE, { store }), FAST);
    expect(report.skipped).toEqual([{ decision: 0, nodes: [OLD], why: `command cmd-other of another pass already covers node ${OLD}` }]);
    expect(w.api.mutatingRequests()).toEqual([]);
  });

  it('records per replacement what the plan sends it: only pods it lists and sends to this decision\'s own replacement', async () => {
    const w = await start([
      kubeNode(OLD2),
      kubeNode(OLD),
      kubePod('default', 'web-1', { node: OLD, cpu: '300m', memory: '256Mi' }),
      kubePod('default', 'web-2', { node: OLD, cpu: '200m', memory: '128Mi' }),
      kubePod('default', 'web-3', { node: OLD }),
    ]);
    // Decision 2 of the pass: its replacement is replacement-2. web-3 goes to an existing node, and a
    // pod the cluster no longer has is left out.
    const replace = replaceDecision([OLD], {
      podDestinations: { 'default/web-1': 'replacement-2', 'default/web-2': 'replacement-2', 'default/web-3': OLD2, 'default/gone': 'replacement-2' },
    });
    const report = await executePlan({ ...passResult([deleteDecision([OLD2]), replace]), cluster: await w.cluster() }, { ...w.deps(MINUTE), newCommandId: undefined }, { ...FAST, maxWaitMs: 0 });
    expect(report.skipped).toEqual([]);
    const command = (await w.commands()).find((c) => c.nodes.includes(OLD))!;
    expect(parseDetail(command.detail).requests).toEqual({ '0': { pods: 2, cpu: 500, memory: 384 * 1024 ** 2 } });
  });
});
