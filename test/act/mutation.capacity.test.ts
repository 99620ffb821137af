// Mutation-testing gaps (npm run mutation) in the two actuators' capacity sides (capacity/ec2.ts,
// capacity/karpenter.ts), against small in-memory fakes of the ports: which replacement counts as
// initialized, which has failed, which instance or NodeClaim is retired, and which Node is deleted.
import { describe, expect, it } from 'vitest';
import { ec2Capacity } from '../../src/app/act/capacity/ec2.ts';
import { karpenterCapacity } from '../../src/app/act/capacity/karpenter.ts';
import { initialized } from '../../src/app/act/capacity/initialized.ts';
import { launchKey } from '../../src/app/act/capacity/types.ts';
import type { Node } from '../../src/core/model/types.ts';
import type { InstanceLauncher, InstanceState, NodeClaimApi, NodeClaimView, NodeLookup, NodeOperations } from '../../src/core/ports/actuator.ts';
import { defaultNodePool } from '../../src/core/input/nodePools.ts';
import { node } from '../builders.ts';

const POOL = defaultNodePool();

const REPLACEMENT = { instanceTypes: ['m5.large'], capacityType: 'on-demand' as const, zones: ['us-east-1a'], pricePerHour: 0.096, nodePool: 'default', worstPricePerHour: 0.096 };

/** The Kubernetes side: Nodes by name, and every write made. */
function fakeNodes(nodes: Node[] = []) {
  const calls: string[] = [];
  const lookup = (n: Node | undefined): NodeLookup => (n === undefined ? { exists: false } : { exists: true, ready: n.ready, node: n });
  const api: NodeOperations = {
    taintAndCordon: async () => 'tainted',
    untaintAndUncordon: async () => 'untainted',
    getNode: async (name) => {
      calls.push(`get ${name}`);
      return lookup(nodes.find((n) => n.name === name));
    },
    findNodeByInstanceId: async (id) => {
      calls.push(`find ${id}`);
      return lookup(nodes.find((n) => n.instanceId === id));
    },
    listNodes: async () => nodes,
    listPodsOnNode: async () => [],
    evictPod: async () => 'evicted',
    deleteNode: async (name, options) => {
      calls.push(`delete ${name}${options?.uid === undefined ? '' : ` uid=${options.uid}`}`);
      return 'deleted';
    },
    createEvent: async () => undefined,
  };
  return { api, calls };
}

function fakeInstances(states: Record<string, InstanceState> = {}) {
  const calls: string[] = [];
  const launcher: InstanceLauncher = {
    launch: async (request) => {
      calls.push(`launch ${request.commandId}`);
      return { instanceId: 'i-new', instanceType: 'm5.large', zone: 'us-east-1b', reused: false };
    },
    findByCommand: async (key) => (key === 'cmd-1#1' ? { instanceId: 'i-found', reused: true } : undefined),
    terminate: async (id, options) => {
      calls.push(`terminate ${id} ours=${options.requireOurTag}`);
      return states[id] === 'terminated' ? 'alreadyGone' : 'terminating';
    },
    describe: async (id) => states[id] ?? 'notFound',
    listOurs: async () => [],
  };
  return { launcher, calls };
}

const fresh = (name: string, instanceId: string, over: Partial<Node> = {}) => node({ name, instanceId, providerId: `aws:///us-east-1a/${instanceId}`, uid: `uid-${name}`, ...over });

describe('initialized', () => {
  it('is Ready and free of every start-up taint', () => {
    expect(initialized(node({ ready: true }))).toBe(true);
    expect(initialized(node({ ready: false }))).toBe(false);
    expect(initialized(node({ taints: [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', effect: 'NoSchedule' }] }))).toBe(false);
    expect(initialized(node({ taints: [{ key: 'example.com/other', effect: 'NoSchedule' }] }))).toBe(true);
  });
});

describe('the ec2 actuator', () => {
  it('launches with the per-replacement idempotency key, and finds a lost launch by it', async () => {
    const { launcher, calls } = fakeInstances();
    const capacity = ec2Capacity(launcher, fakeNodes().api);
    expect(capacity.kind).toBe('ec2');
    const launched = await capacity.launch({ commandId: 'cmd-1', index: 1, nodePool: POOL, replacement: REPLACEMENT, requests: {} });
    expect(launched).toEqual({ ref: 'i-new', instanceId: 'i-new', reused: false, description: 'instance i-new (m5.large in us-east-1b)' });
    expect(calls).toEqual(['launch cmd-1#1']);
    expect(launchKey('cmd-1', 0)).toBe('cmd-1');
    expect(await capacity.find('cmd-1', 1)).toEqual({ ref: 'i-found', instanceId: 'i-found' });
    expect(await capacity.find('cmd-1', 0)).toBeUndefined();
  });

  it('describes a launch without type or zone plainly', async () => {
    const launcher: InstanceLauncher = { ...fakeInstances().launcher, launch: async () => ({ instanceId: 'i-bare', reused: true }) };
    const launched = await ec2Capacity(launcher, fakeNodes().api).launch({ commandId: 'c', index: 0, nodePool: POOL, replacement: REPLACEMENT, requests: {} });
    expect(launched.description).toBe('instance i-bare');
    expect(launched.reused).toBe(true);
    const typed: InstanceLauncher = { ...fakeInstances().launcher, launch: async () => ({ instanceId: 'i-t', instanceType: 'm5.large', reused: false }) };
    expect((await ec2Capacity(typed, fakeNodes().api).launch({ commandId: 'c', index: 0, nodePool: POOL, replacement: REPLACEMENT, requests: {} })).description).toBe('instance i-t (m5.large)');
  });

  it('a replacement is initialized only when its own Node is Ready without start-up taints', async () => {
    const ready = fresh('new', 'i-new');
    const { api, calls } = fakeNodes([ready]);
    const capacity = ec2Capacity(fakeInstances({ 'i-new': 'running' }).launcher, api);
    expect(await capacity.status({ index: 0, ref: 'i-new', nodeName: 'new' })).toEqual({ state: 'initialized', node: ready, instanceId: 'i-new' });
    // Its recorded name found it: one GET, no search by instance id (a list of every Node).
    expect(calls).toEqual(['get new']);
    // Found by instance id when the name is not known yet.
    expect(await capacity.status({ index: 0, ref: 'i-new' })).toMatchObject({ state: 'initialized', node: { name: 'new' } });

    const tainted = fresh('new', 'i-new', { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
    expect(await ec2Capacity(fakeInstances().launcher, fakeNodes([tainted]).api).status({ index: 0, ref: 'i-new', nodeName: 'new' })).toEqual({ state: 'pending', node: tainted, instanceId: 'i-new' });
    const notReady = fresh('new', 'i-new', { ready: false });
    expect(await ec2Capacity(fakeInstances().launcher, fakeNodes([notReady]).api).status({ index: 0, ref: 'i-new', nodeName: 'new' })).toMatchObject({ state: 'pending' });
  });

  it('a Node under the recorded name but of another instance is not the replacement', async () => {
    const impostor = fresh('new', 'i-other');
    const { api, calls } = fakeNodes([impostor]);
    const status = await ec2Capacity(fakeInstances({ 'i-new': 'running' }).launcher, api).status({ index: 0, ref: 'i-new', nodeName: 'new' });
    expect(status).toEqual({ state: 'pending', instanceId: 'i-new' });
    expect(calls).toEqual(['get new', 'find i-new']);
  });

  it('a replacement whose Node is being deleted, or whose instance is gone, has failed', async () => {
    const deleting = fresh('new', 'i-new', { deleting: true });
    expect(await ec2Capacity(fakeInstances().launcher, fakeNodes([deleting]).api).status({ index: 0, ref: 'i-new', nodeName: 'new' })).toEqual({
      state: 'failed',
      why: 'its Node new is being deleted',
      node: deleting,
    });
    for (const state of ['shutting-down', 'terminated', 'stopping', 'stopped'] as const) {
      expect(await ec2Capacity(fakeInstances({ 'i-new': state }).launcher, fakeNodes().api).status({ index: 0, ref: 'i-new' })).toEqual({ state: 'failed', why: `the instance i-new is ${state}` });
    }
    // Unknown to EC2: not yet listed when it never registered (EC2 is eventually consistent), gone when it had.
    expect(await ec2Capacity(fakeInstances().launcher, fakeNodes().api).status({ index: 0, ref: 'i-new' })).toEqual({ state: 'pending', instanceId: 'i-new' });
    expect(await ec2Capacity(fakeInstances().launcher, fakeNodes().api).status({ index: 0, ref: 'i-new', nodeName: 'new' })).toEqual({ state: 'failed', why: 'the instance i-new is unknown to EC2' });
    for (const state of ['pending', 'running'] as const) {
      expect(await ec2Capacity(fakeInstances({ 'i-new': state }).launcher, fakeNodes().api).status({ index: 0, ref: 'i-new' })).toEqual({ state: 'pending', instanceId: 'i-new' });
    }
  });

  it('removes a replacement only as our own instance, then its Node (that uid only)', async () => {
    const { launcher, calls } = fakeInstances();
    const nodes = fakeNodes();
    const capacity = ec2Capacity(launcher, nodes.api);
    await capacity.remove({ index: 0, ref: 'i-new' }, fresh('new', 'i-new'));
    await capacity.remove({ index: 0, ref: 'i-new2' }, fresh('new2', 'i-new2', { uid: undefined }));
    await capacity.remove({ index: 0, ref: 'i-new3' }, undefined);
    expect(calls).toEqual(['terminate i-new ours=true', 'terminate i-new2 ours=true', 'terminate i-new3 ours=true']);
    expect(nodes.calls).toEqual(['delete new uid=uid-new', 'delete new2']);
  });

  it('retires an old node by terminating its instance (not only ours) then deleting its Node; refuses one without an instance', async () => {
    const { launcher, calls } = fakeInstances({ 'i-gone': 'terminated' });
    const nodes = fakeNodes();
    const capacity = ec2Capacity(launcher, nodes.api);
    expect(await capacity.prepareRetire(fresh('old', 'i-old'))).toEqual({});
    expect(await capacity.prepareRetire(node({ name: 'bare', instanceId: undefined }))).toEqual({ refused: 'node bare has no EC2 providerID, so its instance cannot be terminated' });
    expect(await capacity.retire({ name: 'old', uid: 'uid-old', instanceId: 'i-old' })).toBe(true);
    expect(await capacity.retire({ name: 'gone', instanceId: 'i-gone' })).toBe(false);
    await expect(capacity.retire({ name: 'bare' })).rejects.toThrow('no EC2 instance id is known for node bare');
    expect(calls).toEqual(['terminate i-old ours=false', 'terminate i-gone ours=false']);
    expect(nodes.calls).toEqual(['delete old uid=uid-old', 'delete gone']);
  });

  it('after retirement deletes a Node that registered again only when it is the same instance', async () => {
    const again = fresh('old', 'i-old', { uid: 'uid-again' });
    const same = fakeNodes([again]);
    await ec2Capacity(fakeInstances().launcher, same.api).afterRetire({ name: 'old', instanceId: 'i-old' });
    expect(same.calls).toEqual(['get old', 'delete old uid=uid-again']);
    const other = fakeNodes([fresh('old', 'i-someone-else')]);
    await ec2Capacity(fakeInstances().launcher, other.api).afterRetire({ name: 'old', instanceId: 'i-old' });
    expect(other.calls).toEqual(['get old']);
    const none = fakeNodes([]);
    await ec2Capacity(fakeInstances().launcher, none.api).afterRetire({ name: 'old', instanceId: 'i-old' });
    expect(none.calls).toEqual(['get old']);
  });
});

// ---------------------------------------------------------------------------------------------------

function fakeClaims(claims: NodeClaimView[]) {
  const calls: string[] = [];
  const api: NodeClaimApi = {
    create: async (request) => {
      calls.push(`create ${request.commandId}/${request.index} ${JSON.stringify(request.requests)}`);
      return { claim: { name: 'default-abc', deleting: false, instanceId: 'i-claimed' }, reused: true };
    },
    get: async (name) => claims.find((c) => c.name === name),
    findForNode: async (n) => claims.find((c) => c.nodeName === n.name),
    delete: async (name) => {
      calls.push(`delete ${name}`);
      return claims.some((c) => c.name === name) ? 'deleted' : 'gone';
    },
    listOurs: async () => claims.filter((c) => c.commandId !== undefined),
  };
  return { api, calls };
}

const TRUE = { status: 'True' as const };

describe('the karpenter actuator', () => {
  it('creates a NodeClaim with the requests it must hold; finds a lost one by command and index', async () => {
    const { api, calls } = fakeClaims([
      { name: 'c0', commandId: 'cmd-1', deleting: false },
      { name: 'c1', commandId: 'cmd-1', replacementIndex: 1, instanceId: 'i-1', deleting: false },
      { name: 'other', commandId: 'cmd-2', replacementIndex: 1, deleting: false },
    ]);
    const capacity = karpenterCapacity(api, fakeNodes().api);
    expect(capacity.kind).toBe('karpenter');
    expect(await capacity.launch({ commandId: 'cmd-1', index: 2, nodePool: POOL, replacement: REPLACEMENT, requests: { cpu: 500 } })).toEqual({
      ref: 'default-abc',
      instanceId: 'i-claimed',
      reused: true,
      description: 'NodeClaim default-abc',
    });
    expect(calls).toEqual(['create cmd-1/2 {"cpu":500}']);
    // toStrictEqual: no instanceId key at all when the claim has none.
    expect(await capacity.find('cmd-1', 0)).toStrictEqual({ ref: 'c0' });
    // Another command's claim at the same index is not this command's.
    expect(await capacity.find('cmd-2', 0)).toBeUndefined();
    expect(await capacity.find('cmd-2', 1)).toStrictEqual({ ref: 'other' });
    expect(await capacity.find('cmd-1', 1)).toEqual({ ref: 'c1', instanceId: 'i-1' });
    expect(await capacity.find('cmd-1', 2)).toBeUndefined();
  });

  it('a claim is initialized only when Karpenter says so and its own Node is Ready, initialized and not going away', async () => {
    const ready = fresh('new', 'i-1');
    const claim: NodeClaimView = { name: 'c1', nodeName: 'new', instanceId: 'i-1', initialized: TRUE, deleting: false };
    const status = (c: NodeClaimView, nodes: Node[]) => karpenterCapacity(fakeClaims([c]).api, fakeNodes(nodes).api).status({ index: 0, ref: 'c1' });
    expect(await status(claim, [ready])).toEqual({ state: 'initialized', node: ready, instanceId: 'i-1' });
    expect(await status({ ...claim, initialized: { status: 'False' } }, [ready])).toEqual({ state: 'pending', node: ready, instanceId: 'i-1' });
    expect(await status({ ...claim, initialized: undefined }, [ready])).toMatchObject({ state: 'pending' });
    expect(await status(claim, [fresh('new', 'i-1', { ready: false })])).toMatchObject({ state: 'pending' });
    expect(await status(claim, [fresh('new', 'i-1', { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] })])).toMatchObject({ state: 'pending' });
    expect(await status(claim, [fresh('new', 'i-1', { deleting: true })])).toMatchObject({ state: 'pending' });
    // No Node yet, or a Node of another instance under its name: not its Node.
    expect(await status({ ...claim, nodeName: undefined }, [ready])).toStrictEqual({ state: 'pending', instanceId: 'i-1' });
    expect(await status(claim, [fresh('new', 'i-other')])).toEqual({ state: 'pending', instanceId: 'i-1' });
    expect(await status(claim, [])).toEqual({ state: 'pending', instanceId: 'i-1' });
    // A Node whose instance is not known yet, or a claim not launched yet, is taken by name.
    expect(await status(claim, [fresh('new', 'i-1', { instanceId: undefined })])).toMatchObject({ state: 'initialized' });
    expect(await status({ ...claim, instanceId: undefined }, [ready])).toStrictEqual({ state: 'initialized', node: ready });
  });

  it('a claim deleted, being deleted or that Karpenter could not launch has failed, with its Node when it has one', async () => {
    const n = fresh('new', 'i-1');
    const status = (claims: NodeClaimView[]) => karpenterCapacity(fakeClaims(claims).api, fakeNodes([n]).api).status({ index: 0, ref: 'c1' });
    expect(await status([])).toEqual({ state: 'failed', why: 'NodeClaim c1 no longer exists (Karpenter or someone else deleted it)' });
    expect(await status([{ name: 'c1', nodeName: 'new', instanceId: 'i-1', initialized: TRUE, deleting: true }])).toEqual({ state: 'failed', why: 'NodeClaim c1 is being deleted', node: n });
    expect(await status([{ name: 'c1', deleting: true }])).toEqual({ state: 'failed', why: 'NodeClaim c1 is being deleted' });
    expect(await status([{ name: 'c1', launched: { status: 'False', reason: 'InsufficientCapacity', message: 'no m5.large' }, deleting: false }])).toEqual({
      state: 'failed',
      why: 'Karpenter could not launch NodeClaim c1: InsufficientCapacity: no m5.large',
    });
    expect(await status([{ name: 'c1', launched: { status: 'False', reason: '', message: '' }, deleting: false }])).toMatchObject({ why: 'Karpenter could not launch NodeClaim c1: no reason given' });
    expect(await status([{ name: 'c1', launched: { status: 'False', message: 'quota' }, deleting: false }])).toMatchObject({ why: 'Karpenter could not launch NodeClaim c1: quota' });
    expect(await status([{ name: 'c1', launched: { status: 'Unknown' }, deleting: false }])).toEqual({ state: 'pending' });
  });

  it('retires an old node by deleting its NodeClaim; refuses a node without one or whose claim is going', async () => {
    const { api, calls } = fakeClaims([
      { name: 'claim-old', nodeName: 'old', deleting: false },
      { name: 'claim-going', nodeName: 'going', deleting: true },
    ]);
    const capacity = karpenterCapacity(api, fakeNodes().api);
    expect(await capacity.prepareRetire(fresh('old', 'i-old'))).toEqual({ handle: 'claim-old' });
    expect(await capacity.prepareRetire(fresh('going', 'i-going'))).toEqual({ refused: 'the NodeClaim claim-going of node going is already being deleted' });
    expect(await capacity.prepareRetire(fresh('plain', 'i-plain'))).toEqual({ refused: 'node plain has no NodeClaim, and the karpenter actuator retires nodes only through Karpenter' });
    expect(await capacity.retire({ name: 'old', handle: 'claim-old' })).toBe(true);
    expect(await capacity.retire({ name: 'x', handle: 'claim-x' })).toBe(false);
    await expect(capacity.retire({ name: 'old' })).rejects.toThrow('no NodeClaim is known for node old');
    await capacity.remove({ index: 0, ref: 'claim-old' }, undefined);
    await capacity.afterRetire({ name: 'old' });
    expect(calls).toEqual(['delete claim-old', 'delete claim-x', 'delete claim-old']);
  });
});
