// The Karpenter stand-in and the fake API server's Karpenter resources, driven through the real
// @kubernetes/client-node client as the product drives a cluster.
import { ApiException, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { kubeConfigFromEndpoint } from '../../src/adapters/kubernetes/kubeClient.ts';
import { attachKarpenter } from './fakeKarpenter.ts';
import type { FakeKarpenter, FakeKarpenterOptions } from './fakeKarpenter.ts';
import { kubeNode, kubePod, startFakeKubeApi } from './fakeKubeApi.ts';
import type { FakeKubeApi, FakeKubeApiOptions } from './fakeKubeApi.ts';

type Json = Record<string, unknown>;

const T0 = Date.parse('2026-11-21T12:00:00Z');
const MINUTE = 60_000;
const GROUP = { group: 'karpenter.sh', version: 'v1' } as const;
const CLAIMS = { ...GROUP, plural: 'nodeclaims' } as const;
const POOLS = { ...GROUP, plural: 'nodepools' } as const;
const FINALIZER = 'karpenter.sh/termination';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

let api: FakeKubeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

interface Cluster {
  readonly api: FakeKubeApi;
  readonly karpenter: FakeKarpenter;
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  /** Moves the test clock. */
  advance(ms: number): void;
}

async function start(karpenterOptions: Partial<FakeKarpenterOptions> = {}, apiOptions: FakeKubeApiOptions = {}): Promise<Cluster> {
  let clock = T0;
  api = await startFakeKubeApi(apiOptions);
  const karpenter = attachKarpenter(api, { now: () => clock, ...karpenterOptions });
  const kc = kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: api.token });
  return {
    api,
    karpenter,
    custom: kc.makeApiClient(CustomObjectsApi),
    core: kc.makeApiClient(CoreV1Api),
    advance: (ms) => {
      clock += ms;
    },
  };
}

function nodeClaim(name: string, o: { requirements?: Json[]; startupTaints?: Json[]; taints?: Json[]; terminationGracePeriod?: string } = {}): Json {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      labels: { 'karpenter.sh/nodepool': 'default', team: 'web' },
      annotations: { 'example.com/command': 'cmd-1' },
      ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: 'default', uid: 'uid-pool-default', blockOwnerDeletion: true }],
    },
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: o.requirements ?? [
        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.xlarge', 'm5.2xlarge'] },
        { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1b'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        { key: 'karpenter.sh/nodepool', operator: 'In', values: ['default'] },
      ],
      ...(o.taints === undefined ? {} : { taints: o.taints }),
      ...(o.startupTaints === undefined ? {} : { startupTaints: o.startupTaints }),
      ...(o.terminationGracePeriod === undefined ? {} : { terminationGracePeriod: o.terminationGracePeriod }),
    },
  };
}

function nodePool(name: string, labels: Record<string, string> = {}): Json {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, labels },
    spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } } },
  };
}

async function createClaim(c: Cluster, body: Json): Promise<Json> {
  return (await c.custom.createClusterCustomObject({ ...CLAIMS, body })) as Json;
}

async function getClaim(c: Cluster, name: string): Promise<Json | undefined> {
  try {
    return (await c.custom.getClusterCustomObject({ ...CLAIMS, name })) as Json;
  } catch (error) {
    if (error instanceof ApiException && error.code === 404) return undefined;
    throw error;
  }
}

/** The HTTP code and Status body of a call that must fail. */
async function failure(call: Promise<unknown>): Promise<{ code: number; status: Json }> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    return { code: error.code, status: JSON.parse(String(error.body)) as Json };
  }
  throw new Error('the call succeeded');
}

function conditions(claim: Json | undefined): Record<string, string> {
  const list = ((claim?.['status'] as Json | undefined)?.['conditions'] ?? []) as Json[];
  return Object.fromEntries(list.map((c) => [String(c['type']), String(c['status'])]));
}

function metadata(object: Json | undefined): Json {
  return (object?.['metadata'] ?? {}) as Json;
}

function status(object: Json | undefined): Json {
  return (object?.['status'] ?? {}) as Json;
}

/** A registered, initialized claim and its node, ready to be deleted. */
async function launchedClaim(c: Cluster, name: string, o: Parameters<typeof nodeClaim>[1] = {}): Promise<{ claim: Json; node: string; instance: string }> {
  await createClaim(c, nodeClaim(name, o));
  const claim = await getClaim(c, name);
  const node = String(status(claim)['nodeName']);
  expect(node).toMatch(/^ip-10-\d+-\d+-\d+\.ec2\.internal$/);
  return { claim: claim ?? {}, node, instance: String(status(claim)['providerID']).split('/').pop() ?? '' };
}

describe('the fake API server: Karpenter resources', () => {
  it('answers 404 for nodeclaims and nodepools until the cluster has the CRDs', async () => {
    api = await startFakeKubeApi();
    const kc = kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: api.token });
    const custom = kc.makeApiClient(CustomObjectsApi);
    expect((await failure(custom.listClusterCustomObject({ ...POOLS }))).code).toBe(404);
    api.installKarpenterCrds();
    expect(await custom.listClusterCustomObject({ ...POOLS })).toMatchObject({ kind: 'NodePoolList', apiVersion: 'karpenter.sh/v1', items: [] });
  });

  it('creates (generateName too), gets, lists with a label selector and pages, and merge- and json-patches', async () => {
    const c = await start({}, { objects: [nodePool('default', { tier: 'a' }), nodePool('batch', { tier: 'b' }), nodePool('gpu', { tier: 'a' })] });
    const list = (await c.custom.listClusterCustomObject({ ...POOLS, labelSelector: 'tier=a', limit: 1 })) as { items: Json[]; metadata: Json };
    expect(list.items.map((p) => metadata(p)['name'])).toEqual(['default']);
    const rest = (await c.custom.listClusterCustomObject({ ...POOLS, labelSelector: 'tier=a', _continue: String(list.metadata['continue']) })) as { items: Json[] };
    expect(rest.items.map((p) => metadata(p)['name'])).toEqual(['gpu']);

    const generated = nodeClaim('unused');
    generated['metadata'] = { ...metadata(generated), name: undefined, generateName: 'default-' };
    const created = await createClaim(c, generated);
    expect(metadata(created)['name']).toMatch(/^default-[0-9a-f]{5}$/);
    expect(metadata(created)['creationTimestamp']).toBe('2026-11-21T12:00:00Z');

    const name = String(metadata(created)['name']);
    await c.custom.patchClusterCustomObject({ ...CLAIMS, name, body: { metadata: { labels: { extra: 'yes' } } } }, mergePatch);
    await c.custom.patchClusterCustomObject({ ...CLAIMS, name, body: [{ op: 'add', path: '/metadata/annotations/example.com~1note', value: 'hi' }] }, jsonPatch);
    const patched = await getClaim(c, name);
    expect(metadata(patched)['labels']).toMatchObject({ extra: 'yes', team: 'web' });
    expect(metadata(patched)['annotations']).toMatchObject({ 'example.com/note': 'hi' });
    expect(c.api.mutatingRequests().map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /apis/karpenter.sh/v1/nodeclaims',
      `PATCH /apis/karpenter.sh/v1/nodeclaims/${name}`,
      `PATCH /apis/karpenter.sh/v1/nodeclaims/${name}`,
    ]);
  });

  it('answers a second create of the same name with 409 AlreadyExists', async () => {
    const c = await start();
    await createClaim(c, nodeClaim('default-abcde'));
    const { code, status: body } = await failure(createClaim(c, nodeClaim('default-abcde')));
    expect(code).toBe(409);
    expect(body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'AlreadyExists', details: { name: 'default-abcde', kind: 'nodeclaims' } });
  });

  it('keeps status to its subresource and the NodeClaim spec required and immutable', async () => {
    const c = await start({ reconcileOnRequest: false });
    const withStatus = { ...nodeClaim('x'), status: { nodeName: 'forged' } };
    expect(status(await createClaim(c, withStatus))).toEqual({});
    await c.custom.patchClusterCustomObject({ ...CLAIMS, name: 'x', body: { status: { nodeName: 'forged' } } }, mergePatch);
    expect(status(await getClaim(c, 'x'))).toEqual({});
    await c.custom.patchClusterCustomObjectStatus({ ...CLAIMS, name: 'x', body: { status: { nodeName: 'set' } } }, mergePatch);
    expect(status(await getClaim(c, 'x'))).toEqual({ nodeName: 'set' });

    const changed = await failure(c.custom.patchClusterCustomObject({ ...CLAIMS, name: 'x', body: { spec: { terminationGracePeriod: '1h' } } }, mergePatch));
    expect(changed).toMatchObject({ code: 422, status: { reason: 'Invalid', message: 'NodeClaim.karpenter.sh "x" is invalid: spec: Invalid value: "object": spec is immutable' } });
    const noRef = nodeClaim('y');
    delete (noRef['spec'] as Json)['nodeClassRef'];
    expect(await failure(createClaim(c, noRef))).toMatchObject({ code: 422, status: { details: { causes: [{ field: 'spec.nodeClassRef' }] } } });
  });

  it('deletes only the incarnation named by preconditions.uid', async () => {
    const c = await start({ reconcileOnRequest: false });
    await createClaim(c, nodeClaim('x'));
    const uid = String(metadata(await getClaim(c, 'x'))['uid']);
    const wrong = await failure(c.custom.deleteClusterCustomObject({ ...CLAIMS, name: 'x', body: { preconditions: { uid: 'someone-else' } } }));
    expect(wrong).toMatchObject({ code: 409, status: { reason: 'Conflict' } });
    expect(await getClaim(c, 'x')).toBeDefined();
    await c.custom.deleteClusterCustomObject({ ...CLAIMS, name: 'x', body: { preconditions: { uid } } });
    expect(await getClaim(c, 'x')).toBeUndefined();
  });

  it('keeps a deleted Node with a finalizer until the finalizer is removed', async () => {
    const c = await start({}, { objects: [{ ...kubeNode('n1'), metadata: { ...metadata(kubeNode('n1')), finalizers: ['example.com/hold'] } }] });
    await c.core.deleteNode({ name: 'n1' });
    const held = await c.core.readNode({ name: 'n1' });
    expect(held.metadata?.deletionTimestamp).toEqual(new Date(T0));
    c.advance(MINUTE);
    await c.core.deleteNode({ name: 'n1' });
    expect((await c.core.readNode({ name: 'n1' })).metadata?.deletionTimestamp).toEqual(new Date(T0));
    const added = await failure(c.core.patchNode({ name: 'n1', body: { metadata: { finalizers: ['example.com/hold', 'example.com/more'] } } }, mergePatch));
    expect(added).toMatchObject({ code: 422, status: { reason: 'Invalid' } });
    await c.core.patchNode({ name: 'n1', body: [{ op: 'remove', path: '/metadata/finalizers' }] }, jsonPatch);
    expect(c.api.store.get('Node', 'n1')).toBeUndefined();
  });
});

describe('the Karpenter stand-in', () => {
  it('adds its finalizer, then moves the claim through Launched, Registered and Initialized as the clock allows', async () => {
    const startup = { key: 'example.com/agent-not-ready', effect: 'NoExecute' };
    const dedicated = { key: 'dedicated', value: 'web', effect: 'NoSchedule' };
    const c = await start({ launchDelayMs: 30_000, registerDelayMs: 60_000, initializeDelayMs: 20_000 });
    await createClaim(c, nodeClaim('web-1', { startupTaints: [startup], taints: [dedicated] }));

    let claim = await getClaim(c, 'web-1');
    expect(metadata(claim)['finalizers']).toEqual([FINALIZER]);
    expect(conditions(claim)).toEqual({ Launched: 'Unknown', Registered: 'Unknown', Initialized: 'Unknown', Ready: 'Unknown' });

    c.advance(30_000);
    claim = await getClaim(c, 'web-1');
    expect(conditions(claim)).toMatchObject({ Launched: 'True', Registered: 'Unknown' });
    expect(status(claim)['providerID']).toMatch(/^aws:\/\/\/us-east-1b\/i-[0-9a-f]{17}$/);
    expect(status(claim)['allocatable']).toMatchObject({ cpu: '3920m', pods: '58' });
    expect(metadata(claim)['labels']).toMatchObject({
      'node.kubernetes.io/instance-type': 'm5.xlarge',
      'topology.kubernetes.io/zone': 'us-east-1b',
      'karpenter.sh/capacity-type': 'on-demand',
      team: 'web',
    });
    expect(c.karpenter.launchedInstances).toEqual([String(status(claim)['providerID']).split('/').pop()]);
    expect((await c.core.listNode()).items).toHaveLength(0);

    c.advance(59_000);
    expect(conditions(await getClaim(c, 'web-1'))['Registered']).toBe('Unknown');
    c.advance(1_000);
    claim = await getClaim(c, 'web-1');
    expect(conditions(claim)).toMatchObject({ Registered: 'True', Initialized: 'Unknown', Ready: 'Unknown' });
    const node = await c.core.readNode({ name: String(status(claim)['nodeName']) });
    expect(node.spec?.providerID).toBe(status(claim)['providerID']);
    expect(node.spec?.taints?.map((t) => t.key)).toEqual(['dedicated', 'example.com/agent-not-ready']);
    expect(node.metadata?.labels).toMatchObject({
      'karpenter.sh/nodepool': 'default',
      'karpenter.sh/registered': 'true',
      'kubernetes.io/hostname': node.metadata?.name,
      'kubernetes.io/arch': 'amd64',
      'node.kubernetes.io/instance-type': 'm5.xlarge',
      team: 'web',
    });
    expect(node.metadata?.annotations).toMatchObject({ 'example.com/command': 'cmd-1' });
    expect(node.metadata?.finalizers).toEqual([FINALIZER]);
    expect(node.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'NodeClaim', name: 'web-1' });
    expect(node.status?.conditions?.find((x) => x.type === 'Ready')?.status).toBe('True');

    c.advance(20_000);
    claim = await getClaim(c, 'web-1');
    expect(conditions(claim)).toEqual({ Launched: 'True', Registered: 'True', Initialized: 'True', Ready: 'True' });
    const initialized = await c.core.readNode({ name: String(status(claim)['nodeName']) });
    expect(initialized.spec?.taints?.map((t) => t.key)).toEqual(['dedicated']);
    expect(initialized.metadata?.labels?.['karpenter.sh/initialized']).toBe('true');
    expect(c.api.mutatingRequests()).toHaveLength(1);
  });

  it('deletes a claim whose launch meets insufficient capacity, with a warning event', async () => {
    const c = await start({ insufficientCapacity: (claim) => metadata(claim)['name'] === 'spot-1' });
    await createClaim(c, nodeClaim('spot-1'));
    expect(await getClaim(c, 'spot-1')).toBeUndefined();
    expect(c.karpenter.launchedInstances).toEqual([]);
    const events = (await c.core.listEventForAllNamespaces()).items;
    expect(events.map((e) => [e.reason, e.involvedObject.kind, e.involvedObject.name])).toEqual([['InsufficientCapacityError', 'NodeClaim', 'spot-1']]);
  });

  it('deletes a claim whose node never registers 15 minutes after creation, terminating its instance', async () => {
    const c = await start({ neverRegister: () => true });
    await createClaim(c, nodeClaim('lost'));
    c.advance(15 * MINUTE - 1_000);
    const claim = await getClaim(c, 'lost');
    expect(conditions(claim)).toMatchObject({ Launched: 'True', Registered: 'Unknown' });
    c.advance(1_000);
    expect(await getClaim(c, 'lost')).toBeUndefined();
    expect(c.karpenter.terminatedInstances).toEqual(c.karpenter.launchedInstances);
    expect(c.karpenter.launchedInstances).toHaveLength(1);
  });

  it('drains a deleted claim through evictions, held by a PodDisruptionBudget, then removes Node, instance and claim', async () => {
    const blocked = new Set(['guarded']);
    const c = await start({}, { evictionPolicy: ({ name }) => (blocked.has(name) ? 'blockByPdb' : 'allow') });
    const { node, instance } = await launchedClaim(c, 'old-1');
    for (const pod of [
      kubePod('default', 'web', { node }),
      kubePod('default', 'guarded', { node }),
      kubePod('default', 'done', { node, phase: 'Succeeded' }),
      kubePod('kube-system', 'aws-node-x', { node, owner: { kind: 'DaemonSet', name: 'aws-node' } }),
    ]) {
      c.api.store.put(pod);
    }
    c.advance(MINUTE);
    await c.custom.deleteClusterCustomObject({ ...CLAIMS, name: 'old-1' });

    const claim = await getClaim(c, 'old-1');
    expect(metadata(claim)['deletionTimestamp']).toBe('2026-11-21T12:01:00Z');
    const draining = await c.core.readNode({ name: node });
    expect(draining.metadata?.deletionTimestamp).toBeDefined();
    expect(draining.spec?.taints).toContainEqual({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' });
    const left = (await c.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items.map((p) => p.metadata?.name);
    expect(left.sort()).toEqual(['aws-node-x', 'done', 'guarded']);
    expect(c.karpenter.terminatedInstances).toEqual([]);

    blocked.clear();
    c.advance(10_000);
    expect(await getClaim(c, 'old-1')).toBeUndefined();
    expect(c.api.store.get('Node', node)).toBeUndefined();
    expect(c.api.store.get('Pod', 'guarded', 'default')).toBeUndefined();
    expect(c.karpenter.terminatedInstances).toEqual([instance]);
    // Karpenter's own writes are not requests of the code under test.
    expect(c.api.mutatingRequests().map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /apis/karpenter.sh/v1/nodeclaims',
      'DELETE /apis/karpenter.sh/v1/nodeclaims/old-1',
    ]);
  });

  it('deletes pods a budget holds once the claim terminationGracePeriod (less their own grace) runs out', async () => {
    const c = await start({}, { evictionPolicy: 'blockByPdb' });
    const { node } = await launchedClaim(c, 'old-1', { terminationGracePeriod: '10m' });
    c.api.store.put(kubePod('default', 'guarded', { node }));
    await c.custom.deleteClusterCustomObject({ ...CLAIMS, name: 'old-1' });
    expect(metadata(await getClaim(c, 'old-1'))['annotations']).toMatchObject({ 'karpenter.sh/nodeclaim-termination-timestamp': '2026-11-21T12:10:00Z' });
    c.advance(10 * MINUTE - 30_000);
    expect(await getClaim(c, 'old-1')).toBeDefined();
    c.advance(1_000);
    expect(await getClaim(c, 'old-1')).toBeUndefined();
    expect(c.api.store.get('Pod', 'guarded', 'default')).toBeUndefined();
  });

  it('takes the claim away with a Node deleted directly, draining it first', async () => {
    const c = await start();
    const { node, instance } = await launchedClaim(c, 'old-1');
    c.api.store.put(kubePod('default', 'web', { node }));
    await c.core.deleteNode({ name: node });
    expect(await getClaim(c, 'old-1')).toBeUndefined();
    expect(c.api.store.get('Node', node)).toBeUndefined();
    expect(c.api.store.get('Pod', 'web', 'default')).toBeUndefined();
    expect(c.karpenter.terminatedInstances).toEqual([instance]);
  });

  it('adopts a seeded claim of a running node and, once it is deleted, drains that node before it goes', async () => {
    const old = kubeNode('old-node', { labels: { 'karpenter.sh/initialized': 'true' } });
    const providerID = String((old['spec'] as Json)['providerID']);
    const seeded = { ...nodeClaim('old-1'), status: { providerID } };
    const c = await start({ reconcileOnRequest: false }, { objects: [old, seeded, kubePod('default', 'web', { node: 'old-node' })] });
    c.karpenter.reconcile();
    const claim = c.karpenter.claims()[0];
    expect(conditions(claim)).toEqual({ Launched: 'True', Registered: 'True', Initialized: 'True', Ready: 'True' });
    expect(status(claim)['nodeName']).toBe('old-node');
    expect(c.karpenter.launchedInstances).toEqual([]);

    await c.custom.deleteClusterCustomObject({ ...CLAIMS, name: 'old-1' });
    expect(c.api.store.get('Node', 'old-node')).toBeDefined();
    c.karpenter.reconcile();
    expect(c.api.store.get('Pod', 'web', 'default')).toBeUndefined();
    expect(c.api.store.get('Node', 'old-node')).toBeUndefined();
    expect(c.karpenter.claims()).toEqual([]);
    expect(c.karpenter.terminatedInstances).toEqual([providerID.split('/').pop()]);
  });

  it('reports a claim whose node vanished as leaked until a reconcile deletes it', async () => {
    const c = await start({ reconcileOnRequest: false });
    await createClaim(c, nodeClaim('old-1'));
    c.karpenter.reconcile();
    const node = String(status(c.karpenter.claims()[0])['nodeName']);
    c.api.store.delete('Node', node);
    expect(c.karpenter.leakedClaims().map((claim) => metadata(claim)['name'])).toEqual(['old-1']);
    c.karpenter.reconcile();
    expect(c.karpenter.claims()).toEqual([]);
    expect(c.karpenter.leakedClaims()).toEqual([]);
    expect(c.karpenter.terminatedInstances).toEqual(c.karpenter.launchedInstances);
  });

  it('strips the disrupted taint from nodes whose claim is not being deleted, and nothing else', async () => {
    const c = await start();
    const { node } = await launchedClaim(c, 'old-1');
    const taints = [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }, { key: 'example.com/ours', effect: 'NoSchedule' }];
    await c.core.patchNode({ name: node, body: { spec: { taints, unschedulable: true } } }, mergePatch);
    const after = await c.core.readNode({ name: node });
    expect(after.spec?.taints?.map((t) => t.key)).toEqual(['example.com/ours']);
    expect(after.spec?.unschedulable).toBe(true);
  });

  it('leaves the disrupted taint alone when told to', async () => {
    const c = await start({ stripDisruptedTaint: false });
    const { node } = await launchedClaim(c, 'old-1');
    await c.core.patchNode({ name: node, body: { spec: { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] } } }, mergePatch);
    expect((await c.core.readNode({ name: node })).spec?.taints?.map((t) => t.key)).toEqual(['karpenter.sh/disrupted']);
  });

  it('registers a node that differs from the claim when told to, and takes per-claim delays', async () => {
    const c = await start({
      nodeOverrides: () => ({ name: 'odd-node', labels: { team: null }, allocatable: { cpu: '1500m' }, taints: [{ key: 'surprise', effect: 'NoSchedule' }] }),
      launchChoice: () => ({ instanceType: 'c5.large', zone: 'us-east-1c' }),
    });
    c.karpenter.setDelays('slow', { registerDelayMs: 5 * MINUTE });
    await createClaim(c, nodeClaim('fast'));
    await createClaim(c, nodeClaim('slow'));
    const node = await c.core.readNode({ name: 'odd-node' });
    expect(node.metadata?.labels?.['team']).toBeUndefined();
    expect(node.metadata?.labels).toMatchObject({ 'node.kubernetes.io/instance-type': 'c5.large', 'topology.kubernetes.io/zone': 'us-east-1c' });
    expect(node.status?.allocatable?.['cpu']).toBe('1500m');
    expect(node.spec?.taints?.map((t) => t.key)).toEqual(['surprise']);
    expect(conditions(await getClaim(c, 'slow'))['Registered']).toBe('Unknown');
  });
});
