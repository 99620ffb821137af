// KubeNodeClaims against the fake API server: Karpenter's NodeClaims through the real
// @kubernetes/client-node. Every answer is an outcome (reused, undefined, gone), never an HTTP code;
// anything else becomes a NodeClaimApiError naming the operation and the status.
import { afterEach, describe, expect, it } from 'vitest';
import { kubeConfigFromEndpoint } from '../../src/adapters/kubernetes/kubeClient.ts';
import { KubeNodeClaims, toNodeClaimView } from '../../src/adapters/kubernetes/nodeClaims.ts';
import { nodeClaimName } from '../../src/adapters/kubernetes/nodeClaimTemplate.ts';
import type { NodeClaimTemplateSource } from '../../src/core/model/types.ts';
import { NODECLAIM_COMMAND_ANNOTATION, NODECLAIM_INDEX_ANNOTATION, NodeClaimApiError, type NodeClaimRequest } from '../../src/core/ports/actuator.ts';
import { nodePool } from '../builders.ts';
import { KarpenterTerminationFinalizer, startFakeKubeApi, type FakeKubeApi, type FakeKubeApiOptions } from '../support/fakeKubeApi.ts';
import { attachKarpenter } from '../support/fakeKarpenter.ts';

const T0 = Date.parse('2026-11-21T12:00:00Z');
const PATH = '/apis/karpenter.sh/v1/nodeclaims';

const TEMPLATE: NodeClaimTemplateSource = {
  nodePoolUid: 'uid-pool-general',
  annotations: {},
  hashAnnotations: { 'karpenter.sh/nodepool-hash': '123', 'karpenter.sh/nodepool-hash-version': 'v3' },
  startupTaints: [],
  nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
  requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
};

const request = (overrides: Partial<NodeClaimRequest> = {}): NodeClaimRequest => ({
  commandId: 'cmd-1',
  index: 0,
  nodePool: nodePool({ name: 'general', nodeClaimTemplate: TEMPLATE }),
  replacement: { instanceTypes: ['m5.large', 'm5.xlarge'], capacityType: 'on-demand', zones: ['us-east-1a'], pricePerHour: 0.096, nodePool: 'general', worstPricePerHour: 0.192 },
  requests: { cpu: 1500, memory: 2 * 1024 ** 3, pods: 4 },
  ...overrides,
});
const NAME = nodeClaimName('general', 'cmd-1', 0);

interface ClaimOptions {
  readonly command?: string;
  readonly index?: number;
  readonly uid?: string;
  readonly providerID?: string;
  readonly nodeName?: string;
  readonly conditions?: readonly Record<string, unknown>[];
  readonly finalizers?: readonly string[];
  readonly deletionTimestamp?: string;
  readonly pool?: string;
}

/** A NodeClaim as Karpenter leaves it in the API (status included). */
function claim(name: string, o: ClaimOptions = {}): Record<string, unknown> {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      uid: o.uid ?? `uid-${name}`,
      creationTimestamp: '2026-11-21T11:00:00Z',
      labels: { 'karpenter.sh/nodepool': o.pool ?? 'general' },
      annotations: {
        ...(o.command === undefined ? {} : { [NODECLAIM_COMMAND_ANNOTATION]: o.command, [NODECLAIM_INDEX_ANNOTATION]: String(o.index ?? 0) }),
      },
      ...(o.finalizers === undefined ? {} : { finalizers: [...o.finalizers] }),
      ...(o.deletionTimestamp === undefined ? {} : { deletionTimestamp: o.deletionTimestamp }),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }],
    },
    status: {
      ...(o.providerID === undefined ? {} : { providerID: o.providerID }),
      ...(o.nodeName === undefined ? {} : { nodeName: o.nodeName }),
      ...(o.conditions === undefined ? {} : { conditions: o.conditions }),
    },
  };
}

let api: FakeKubeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(objects: readonly unknown[] = [], options: Partial<FakeKubeApiOptions> = {}, pageSize?: number) {
  api = await startFakeKubeApi({ karpenterCrds: true, now: () => T0, objects, ...options });
  const claims = new KubeNodeClaims(kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: api.token }), pageSize === undefined ? {} : { pageSize });
  return { api, claims };
}

async function apiErrorOf(promise: Promise<unknown>): Promise<NodeClaimApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(NodeClaimApiError);
    return error as NodeClaimApiError;
  }
  throw new Error('expected a NodeClaimApiError, but the call succeeded');
}

describe('create', () => {
  it('POSTs the NodeClaim built from the pool and answers with what the API stored', async () => {
    const { api, claims } = await start();
    const { claim: created, reused } = await claims.create(request());
    expect(reused).toBe(false);
    expect(created).toMatchObject({ name: NAME, nodePool: 'general', commandId: 'cmd-1', replacementIndex: 0, deleting: false, createdAt: T0 });
    expect(created.uid).toEqual(expect.any(String));
    const posts = api.mutatingRequests();
    expect(posts.map((r) => [r.method, r.path, r.status])).toEqual([['POST', PATH, 201]]);
    const stored = api.store.get('NodeClaim', NAME)!;
    expect(stored['metadata']).toMatchObject({
      labels: { 'karpenter.sh/nodepool': 'general', 'karpenter.k8s.aws/ec2nodeclass': 'default' },
      annotations: { [NODECLAIM_COMMAND_ANNOTATION]: 'cmd-1', [NODECLAIM_INDEX_ANNOTATION]: '0', 'karpenter.sh/nodepool-hash': '123' },
      ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: 'general', uid: 'uid-pool-general', blockOwnerDeletion: true }],
    });
    expect(stored['spec']).toMatchObject({ resources: { requests: { cpu: '1500m', memory: '2048Mi', pods: '4' } } });
  });

  it('is idempotent: a second create (the first answer lost) gets the same claim back, reused', async () => {
    const { api, claims } = await start();
    const first = await claims.create(request());
    const second = await claims.create(request());
    expect(second).toEqual({ claim: first.claim, reused: true });
    expect(api.store.list('NodeClaim')).toHaveLength(1);
    expect(api.requests.map((r) => [r.method, r.status])).toEqual([
      ['POST', 201],
      ['POST', 409],
      ['GET', 200],
    ]);
  });

  it('reuses a claim of ours that Karpenter has already launched, with its status', async () => {
    const existing = claim(NAME, { command: 'cmd-1', providerID: 'aws:///us-east-1a/i-0abc', conditions: [{ type: 'Launched', status: 'True' }] });
    const { claims } = await start([existing]);
    const { claim: got, reused } = await claims.create(request());
    expect(reused).toBe(true);
    expect(got).toMatchObject({ instanceId: 'i-0abc', launched: { status: 'True' } });
  });

  it.each<[string, ClaimOptions, RegExp]>([
    ['another command', { command: 'cmd-other' }, /belongs to command cmd-other, replacement 0, not command cmd-1, replacement 0; it is not adopted/],
    ['no command of ours (someone else made it)', {}, /belongs to no command of ours/],
    ['the same command but another replacement', { command: 'cmd-1', index: 5 }, /belongs to command cmd-1, replacement 5/],
  ])('never adopts a claim of that name made by %s', async (_name, owner, message) => {
    const { api, claims } = await start([claim(NAME, owner)]);
    const error = await apiErrorOf(claims.create(request()));
    expect(error.status).toBe(409);
    expect(error.operation).toBe('create nodeclaims.karpenter.sh');
    expect(error.message).toMatch(message);
    expect(api.store.get('NodeClaim', NAME)!['metadata']).toMatchObject({ uid: `uid-${NAME}` });
  });

  it('reports a claim that vanished between the 409 and the read back', async () => {
    const { api, claims } = await start([claim(NAME, { command: 'cmd-1' })]);
    api.fail({ method: 'GET', path: `${PATH}/${NAME}`, status: 404 });
    const error = await apiErrorOf(claims.create(request()));
    expect(error).toMatchObject({ status: 409 });
    expect(error.message).toMatch(/was gone when read back/);
  });

  it.each([
    ['a server error', 500, /HTTP 500 InternalError/],
    ['a forbidden create (RBAC)', 403, /forbidden \(403\): the identity lacks RBAC permission/],
    ['an invalid object', 422, /HTTP 422 Invalid/],
  ])('turns %s into a NodeClaimApiError with the status', async (_name, code, message) => {
    const { api, claims } = await start();
    api.fail({ method: 'POST', path: PATH, status: code });
    const error = await apiErrorOf(claims.create(request()));
    expect(error).toMatchObject({ operation: 'create nodeclaims.karpenter.sh', status: code });
    expect(error.message).toMatch(message);
    expect(error.message).toContain(`NodeClaim ${NAME}`);
  });

  it('a 409 that is not AlreadyExists is an error, not a reuse', async () => {
    const { api, claims } = await start();
    api.fail({ method: 'POST', path: PATH, status: 409, reason: 'Conflict' });
    expect(await apiErrorOf(claims.create(request()))).toMatchObject({ status: 409 });
    expect(api.requests.filter((r) => r.method === 'GET')).toEqual([]);
  });

  it('a cluster without Karpenter answers 404, which is an error for a create', async () => {
    const { claims } = await start([], { karpenterCrds: false });
    expect(await apiErrorOf(claims.create(request()))).toMatchObject({ status: 404, operation: 'create nodeclaims.karpenter.sh' });
  });

  it('refuses a pool without a NodeClaim template before sending anything', async () => {
    const { api, claims } = await start();
    await expect(claims.create(request({ nodePool: nodePool({ name: 'bare' }) }))).rejects.toThrow(/NodePool "bare" has no spec\.template\.spec\.nodeClassRef/);
    expect(api.requests).toEqual([]);
  });
});

describe('get', () => {
  it('reads a claim as the actuator sees it, and a missing one as undefined', async () => {
    const { claims } = await start([
      claim('general-a', {
        command: 'cmd-1',
        index: 2,
        providerID: 'aws:///us-east-1a/i-0123456789abcdef0',
        nodeName: 'ip-10-0-1-7.ec2.internal',
        conditions: [
          { type: 'Launched', status: 'True', reason: 'Launched', message: '' },
          { type: 'Registered', status: 'True' },
          { type: 'Initialized', status: 'False', reason: 'NotInitialized', message: 'startup taints remain' },
        ],
      }),
    ]);
    expect(await claims.get('general-a')).toEqual({
      name: 'general-a',
      uid: 'uid-general-a',
      nodePool: 'general',
      commandId: 'cmd-1',
      replacementIndex: 2,
      providerId: 'aws:///us-east-1a/i-0123456789abcdef0',
      instanceId: 'i-0123456789abcdef0',
      nodeName: 'ip-10-0-1-7.ec2.internal',
      launched: { status: 'True', reason: 'Launched' },
      registered: { status: 'True' },
      initialized: { status: 'False', reason: 'NotInitialized', message: 'startup taints remain' },
      deleting: false,
      createdAt: Date.parse('2026-11-21T11:00:00Z'),
    });
    expect(await claims.get('nope')).toBeUndefined();
  });

  it('a failed read is a NodeClaimApiError naming the claim', async () => {
    const { api, claims } = await start();
    api.fail({ method: 'GET', path: `${PATH}/x`, status: 503 });
    const error = await apiErrorOf(claims.get('x'));
    expect(error).toMatchObject({ operation: 'get nodeclaims.karpenter.sh', status: 503 });
    expect(error.message).toContain('NodeClaim x');
  });
});

describe('findForNode', () => {
  const objects = [
    claim('a-launched', { providerID: 'aws:///us-east-1a/i-0aaa', nodeName: 'ip-10-0-0-1.ec2.internal' }),
    claim('b-old', { providerID: 'aws:///us-east-1b/i-0bbb', nodeName: 'ip-10-0-0-2.ec2.internal', deletionTimestamp: '2026-11-21T11:30:00Z', finalizers: [KarpenterTerminationFinalizer] }),
    claim('c-new', { providerID: 'aws:///us-east-1b/i-0ccc', nodeName: 'ip-10-0-0-2.ec2.internal' }),
    claim('d-pending'),
  ];

  it.each([
    ['by instance id (providerID suffix)', { name: 'whatever', instanceId: 'i-0aaa' }, 'a-launched'],
    ['by instance id before node name', { name: 'ip-10-0-0-2.ec2.internal', instanceId: 'i-0aaa' }, 'a-launched'],
    ['by node name when the instance id is unknown', { name: 'ip-10-0-0-1.ec2.internal' }, 'a-launched'],
    ['by node name when no claim has the instance', { name: 'ip-10-0-0-1.ec2.internal', instanceId: 'i-0zzz' }, 'a-launched'],
    ['a reused node name: the claim not being deleted', { name: 'ip-10-0-0-2.ec2.internal' }, 'c-new'],
    ['an instance id that is a prefix of another is not a match', { name: 'none', instanceId: 'aaa' }, undefined],
    ['nothing', { name: 'ip-10-9-9-9.ec2.internal', instanceId: 'i-0fff' }, undefined],
  ])('%s', async (_name, node, expected) => {
    const { claims } = await start(objects, {}, 1);
    expect((await claims.findForNode(node))?.name).toBe(expected);
  });

  it('reads every page', async () => {
    const { api, claims } = await start(objects, {}, 1);
    expect((await claims.findForNode({ name: 'x', instanceId: 'i-0ccc' }))?.name).toBe('c-new');
    const lists = api.requests.filter((r) => r.method === 'GET' && r.path === PATH);
    expect(lists.map((r) => r.query['limit'])).toEqual(['1', '1', '1', '1']);
    expect(lists.slice(1).every((r) => (r.query['continue'] ?? '') !== '')).toBe(true);
  });
});

describe('delete', () => {
  it('deletes a claim; without a finalizer it is gone at once', async () => {
    const { api, claims } = await start([claim('c1')]);
    expect(await claims.delete('c1')).toBe('deleted');
    expect(api.store.get('NodeClaim', 'c1')).toBeUndefined();
  });

  it("leaves a claim with Karpenter's finalizer deleting, for its termination controller", async () => {
    const { claims } = await start([claim('c1', { finalizers: [KarpenterTerminationFinalizer] })]);
    expect(await claims.delete('c1', { uid: 'uid-c1' })).toBe('deleted');
    expect(await claims.get('c1')).toMatchObject({ deleting: true });
    // Deleting again while it terminates is still an answer, not an error.
    expect(await claims.delete('c1', { uid: 'uid-c1' })).toBe('deleted');
  });

  it('sends the uid as a precondition', async () => {
    const { api, claims } = await start([claim('c1')]);
    await claims.delete('c1', { uid: 'uid-c1' });
    expect(api.mutatingRequests().map((r) => [r.method, r.path, r.body])).toEqual([['DELETE', `${PATH}/c1`, { preconditions: { uid: 'uid-c1' } }]]);
  });

  it.each([
    ['a claim that does not exist', [], {}],
    ['a claim recreated under the name (another uid)', [claim('c1', { uid: 'uid-newer' })], { uid: 'uid-c1' }],
  ])('%s is gone', async (_name, objects, options) => {
    const { api, claims } = await start(objects);
    expect(await claims.delete('c1', options)).toBe('gone');
    if (objects.length > 0) expect(api.store.get('NodeClaim', 'c1')).toBeDefined();
  });

  it('a 409 without a uid precondition is an error', async () => {
    const { api, claims } = await start([claim('c1')]);
    api.fail({ method: 'DELETE', path: `${PATH}/c1`, status: 409 });
    expect(await apiErrorOf(claims.delete('c1'))).toMatchObject({ operation: 'delete nodeclaims.karpenter.sh', status: 409 });
  });

  it('a failed delete is a NodeClaimApiError', async () => {
    const { api, claims } = await start([claim('c1')]);
    api.fail({ method: 'DELETE', path: `${PATH}/c1`, status: 500 });
    expect(await apiErrorOf(claims.delete('c1', { uid: 'uid-c1' }))).toMatchObject({ operation: 'delete nodeclaims.karpenter.sh', status: 500 });
  });
});

describe('listOurs', () => {
  it('lists every page and keeps the claims our commands made', async () => {
    const { claims } = await start(
      [claim('a', { command: 'cmd-1' }), claim('b'), claim('c', { command: 'cmd-2', index: 1, deletionTimestamp: '2026-11-21T11:59:00Z', finalizers: [KarpenterTerminationFinalizer] }), claim('d')],
      {},
      2,
    );
    const ours = await claims.listOurs();
    expect(ours.map((c) => [c.name, c.commandId, c.replacementIndex, c.deleting])).toEqual([
      ['a', 'cmd-1', 0, false],
      ['c', 'cmd-2', 1, true],
    ]);
  });

  it('starts over when a continue token expired (410), as kubectl does', async () => {
    const { api, claims } = await start([claim('a', { command: 'cmd-1' }), claim('b', { command: 'cmd-1', index: 1 })], {}, 1);
    api.fail({ method: 'GET', path: PATH, when: (r) => (r.query['continue'] ?? '') !== '', status: 410 });
    expect((await claims.listOurs()).map((c) => c.name)).toEqual(['a', 'b']);
  });

  it('an empty cluster lists nothing', async () => {
    const { claims } = await start();
    expect(await claims.listOurs()).toEqual([]);
  });

  it.each([
    ['a server error', 500],
    ['no Karpenter in the cluster', 404],
    ['an expired token', 401],
  ])('%s is a NodeClaimApiError with the status', async (_name, code) => {
    const { api, claims } = await start();
    api.fail({ method: 'GET', path: PATH, status: code });
    expect(await apiErrorOf(claims.listOurs())).toMatchObject({ operation: 'list nodeclaims.karpenter.sh', status: code });
  });
});

describe('toNodeClaimView', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['a condition status other than True/False reads as Unknown', { status: { conditions: [{ type: 'Launched', status: 'Maybe' }] } }, { launched: { status: 'Unknown' } }],
    ['a providerID without an instance leaves instanceId out', { status: { providerID: 'aws:///us-east-1a/' } }, { providerId: 'aws:///us-east-1a/' }],
    ['a deletionTimestamp means deleting', { metadata: { name: 'x', deletionTimestamp: '2026-11-21T12:00:00Z' } }, { deleting: true }],
    ['an index that is not a number is left out', { metadata: { name: 'x', annotations: { [NODECLAIM_INDEX_ANNOTATION]: 'two' } } }, {}],
    ['a bad creationTimestamp is left out', { metadata: { name: 'x', creationTimestamp: 'yesterday' } }, {}],
  ])('%s', (_name, object, expected) => {
    const view = toNodeClaimView({ metadata: { name: 'x' }, ...object });
    expect(view).toEqual({ name: 'x', deleting: false, ...expected });
  });

  it.each([
    ['not an object', 'claim'],
    ['no name', { metadata: {} }],
  ])('refuses %s', (_name, object) => {
    expect(() => toNodeClaimView(object)).toThrow(/NodeClaim/);
  });

  it('a custom parse that throws makes the call a NodeClaimApiError', async () => {
    api = await startFakeKubeApi({ karpenterCrds: true, objects: [claim('c1')] });
    const claims = new KubeNodeClaims(kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: api.token }), {
      parse: () => {
        throw new Error('unreadable');
      },
    });
    const error = await apiErrorOf(claims.get('c1'));
    expect(error.message).toMatch(/the answer for NodeClaim c1 could not be read: unreadable/);
  });
});

describe('with a Karpenter stand-in', () => {
  it("follows a claim through Karpenter's lifecycle: created, launched, found for its node, deleted, gone", async () => {
    let now = T0;
    const { api, claims } = await start([], { now: () => now });
    const karpenter = attachKarpenter(api, { now: () => now, launchDelayMs: 30_000, registerDelayMs: 60_000, initializeDelayMs: 30_000 });
    const { claim: created } = await claims.create(request());
    expect(created.launched?.status === 'True').toBe(false);

    now += 5 * 60_000;
    const launched = await claims.get(created.name);
    expect(launched).toMatchObject({ launched: { status: 'True' }, registered: { status: 'True' }, initialized: { status: 'True' } });
    expect(launched?.instanceId).toBe(karpenter.launchedInstances[0]);

    expect((await claims.findForNode({ name: launched!.nodeName!, instanceId: launched!.instanceId! }))?.name).toBe(created.name);
    expect((await claims.listOurs()).map((c) => c.name)).toEqual([created.name]);

    expect(await claims.delete(created.name, { uid: created.uid! })).toBe('deleted');
    now += 60_000;
    expect(await claims.get(created.name)).toBeUndefined();
    expect(karpenter.terminatedInstances).toEqual(karpenter.launchedInstances);
    expect(await claims.delete(created.name, { uid: created.uid! })).toBe('gone');
  });
});
