import { afterEach, describe, expect, it } from 'vitest';
import { KubernetesApiError, kubeConfigFromEndpoint } from '../../src/adapters/kubernetes/kubeClient.ts';
import { KubeWriter } from '../../src/adapters/kubernetes/kubeWriter.ts';
import { DisruptedTaint, DisruptingTaint, InterruptedTaint } from '../../src/core/model/types.ts';
import { kubeNode, kubePod, startFakeKubeApi } from '../support/fakeKubeApi.ts';
import type { FakeKubeApi, FakeKubeApiOptions } from '../support/fakeKubeApi.ts';

const N1 = 'ip-10-0-1-7.ec2.internal';
const N2 = 'ip-10-0-2-8.ec2.internal';
const T0 = Date.parse('2026-11-21T12:00:00Z');

let api: FakeKubeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(options: Partial<FakeKubeApiOptions> = {}) {
  api = await startFakeKubeApi({
    objects: [
      kubeNode(N1, { taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule', timeAdded: '2026-11-21T09:30:00Z' }] }),
      kubeNode(N2, { ready: false }),
      kubePod('default', 'web-1', { node: N1 }),
      kubePod('default', 'web-2', { node: N1 }),
      kubePod('kube-system', 'aws-node-a', { node: N1, owner: { kind: 'DaemonSet', name: 'aws-node' } }),
      kubePod('default', 'other', { node: N2 }),
    ],
    ...options,
  });
  const writer = new KubeWriter(kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: api.token }), {
    now: () => T0,
    instance: 'test-run',
  });
  return { api, writer };
}

function nodeSpec(api: FakeKubeApi, name: string): { taints?: Record<string, unknown>[]; unschedulable?: boolean } {
  return (api.store.get('Node', name)?.['spec'] ?? {}) as { taints?: Record<string, unknown>[]; unschedulable?: boolean };
}

describe('KubeWriter.taintAndCordon', () => {
  it('adds the taint next to existing ones, cordons, and guards the patch with a test op', async () => {
    const { api, writer } = await start();
    expect(await writer.taintAndCordon(N1, DisruptedTaint)).toBe('tainted');
    expect(nodeSpec(api, N1)).toMatchObject({
      unschedulable: true,
      taints: [
        { key: 'dedicated', value: 'web', effect: 'NoSchedule', timeAdded: '2026-11-21T09:30:00Z' },
        { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' },
      ],
    });
    const patches = api.mutatingRequests();
    expect(patches).toHaveLength(1);
    expect(patches[0]).toMatchObject({ method: 'PATCH', path: `/api/v1/nodes/${N1}`, contentType: 'application/json-patch+json' });
    expect((patches[0]?.body as { op: string; path: string }[])[0]).toMatchObject({ op: 'test', path: '/metadata/resourceVersion' });
  });

  it('is idempotent: an already tainted and cordoned node gets no write', async () => {
    const { api, writer } = await start();
    await writer.taintAndCordon(N1, DisruptedTaint);
    expect(await writer.taintAndCordon(N1, DisruptedTaint)).toBe('alreadyTainted');
    expect(api.mutatingRequests()).toHaveLength(1);
    expect(nodeSpec(api, N1).taints?.filter((t) => t['key'] === DisruptedTaint.key)).toHaveLength(1);
  });

  it('only cordons when the taint is already there', async () => {
    const { api, writer } = await start();
    api.store.put({ ...kubeNode(N2), spec: { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] } });
    expect(await writer.taintAndCordon(N2, DisruptedTaint)).toBe('tainted');
    const ops = api.mutatingRequests()[0]?.body as { op: string; path: string }[];
    expect(ops.map((o) => o.path)).toEqual(['/metadata/resourceVersion', '/spec/unschedulable']);
    expect(nodeSpec(api, N2)).toEqual({ taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }], unschedulable: true });
  });

  it('re-reads and retries when another writer changed the node in between', async () => {
    const { api, writer } = await start();
    let raced = false;
    api.fail({
      method: 'PATCH',
      path: `/api/v1/nodes/${N1}`,
      when: () => {
        if (raced) return false;
        raced = true;
        // Someone else adds a taint between our read and our patch.
        const node = api.store.get('Node', N1)!;
        const spec = node['spec'] as { taints: unknown[] };
        spec.taints.push({ key: 'other', effect: 'NoExecute' });
        api.store.put(node);
        return false; // let the patch through: its test op must now fail on the new resourceVersion
      },
      status: 500,
    });
    expect(await writer.taintAndCordon(N1, DisruptedTaint)).toBe('tainted');
    const statuses = api.requests.filter((r) => r.method === 'PATCH').map((r) => r.status);
    expect(statuses).toEqual([422, 200]);
    expect(nodeSpec(api, N1).taints?.map((t) => t['key'])).toEqual(['dedicated', 'other', 'karpenter.sh/disrupted']);
  });

  it('gives up with a KubernetesApiError after losing the race five times', async () => {
    const { api, writer } = await start();
    api.fail({
      method: 'PATCH',
      path: `/api/v1/nodes/${N1}`,
      status: 422,
      message: 'the server rejected our request: testing value /metadata/resourceVersion failed: test failed',
      times: Infinity,
    });
    const error = await writer.taintAndCordon(N1, DisruptedTaint).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubernetesApiError);
    expect((error as Error).message).toMatch(/taint and cordon Node ip-10-0-1-7\.ec2\.internal failed: the node kept changing under us \(5 attempts/);
    expect(api.requests.filter((r) => r.method === 'PATCH')).toHaveLength(5);
  });

  it('does not retry a patch the server finds invalid', async () => {
    const { api, writer } = await start();
    api.fail({ method: 'PATCH', status: 422, message: 'spec.taints[1].effect: Unsupported value: "Sometimes"', times: Infinity });
    await expect(writer.taintAndCordon(N1, DisruptedTaint)).rejects.toThrow(/HTTP 422 Invalid: spec\.taints\[1\]\.effect/);
    expect(api.requests.filter((r) => r.method === 'PATCH')).toHaveLength(1);
  });

  it('says gone for a node that does not exist', async () => {
    const { api, writer } = await start();
    expect(await writer.taintAndCordon('nope', DisruptedTaint)).toBe('gone');
    expect(api.mutatingRequests()).toEqual([]);
  });
});

describe('KubeWriter.untaintAndUncordon', () => {
  it('removes the taint and the cordon, keeping other taints', async () => {
    const { api, writer } = await start();
    await writer.taintAndCordon(N1, DisruptedTaint);
    expect(await writer.untaintAndUncordon(N1, DisruptedTaint.key)).toBe('untainted');
    const spec = nodeSpec(api, N1);
    expect(spec.taints).toEqual([{ key: 'dedicated', value: 'web', effect: 'NoSchedule', timeAdded: '2026-11-21T09:30:00Z' }]);
    expect(spec.unschedulable).toBeUndefined();
    expect(await writer.untaintAndUncordon(N1, DisruptedTaint.key)).toBe('alreadyClean');
    expect(api.mutatingRequests()).toHaveLength(2);
  });

  it('removes the taint list when it becomes empty, and can leave the cordon', async () => {
    const { api, writer } = await start();
    await writer.taintAndCordon(N2, DisruptedTaint);
    expect(await writer.untaintAndUncordon(N2, DisruptedTaint.key, { uncordon: false })).toBe('untainted');
    expect(nodeSpec(api, N2).taints).toBeUndefined();
    expect(nodeSpec(api, N2).unschedulable).toBe(true);
    expect(await writer.untaintAndUncordon('nope', DisruptedTaint.key)).toBe('gone');
  });

  it('leaves a node whose instance has an interruption notice cordoned, whoever gives it back', async () => {
    const { api, writer } = await start();
    await writer.taintAndCordon(N2, InterruptedTaint);
    await writer.taintAndCordon(N2, DisruptingTaint);
    expect(await writer.untaintAndUncordon(N2, DisruptingTaint.key)).toBe('untainted');
    expect(nodeSpec(api, N2).taints).toEqual([expect.objectContaining({ key: InterruptedTaint.key })]);
    expect(nodeSpec(api, N2).unschedulable).toBe(true);
  });
});

describe('KubeWriter.evictPod', () => {
  it('evicts through the Eviction API', async () => {
    const { api, writer } = await start();
    expect(await writer.evictPod('default', 'web-1')).toBe('evicted');
    expect(api.store.get('Pod', 'web-1', 'default')).toBeUndefined();
    const [request] = api.mutatingRequests();
    expect(request).toMatchObject({
      method: 'POST',
      path: '/api/v1/namespaces/default/pods/web-1/eviction',
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-1', namespace: 'default' } },
    });
  });

  it('answers blockedByPdb on 429 and leaves the pod in place', async () => {
    const { api, writer } = await start({ evictionPolicy: 'blockByPdb' });
    expect(await writer.evictPod('default', 'web-1')).toBe('blockedByPdb');
    expect(api.store.get('Pod', 'web-1', 'default')).toBeDefined();
    expect(api.requests.at(-1)?.status).toBe(429);
  });

  it('answers gone on 404, and on a uid precondition that no longer matches', async () => {
    const { api, writer } = await start();
    expect(await writer.evictPod('default', 'missing')).toBe('gone');
    api.setEvictionPolicy('notFound');
    expect(await writer.evictPod('default', 'web-1')).toBe('gone');
    api.setEvictionPolicy('allow');
    expect(await writer.evictPod('default', 'web-2', { podUid: 'uid-of-an-older-web-2' })).toBe('gone');
    expect(api.store.get('Pod', 'web-2', 'default')).toBeDefined();
    expect(await writer.evictPod('default', 'web-2', { podUid: 'uid-pod-default-web-2', gracePeriodSeconds: 30 })).toBe('evicted');
    expect(api.requests.at(-1)?.body).toMatchObject({
      deleteOptions: { gracePeriodSeconds: 30, preconditions: { uid: 'uid-pod-default-web-2' } },
    });
  });

  it('decides per pod with a policy function', async () => {
    const { writer } = await start({ evictionPolicy: ({ name }) => (name === 'web-1' ? 'blockByPdb' : 'allow') });
    expect(await writer.evictPod('default', 'web-1')).toBe('blockedByPdb');
    expect(await writer.evictPod('default', 'web-2')).toBe('evicted');
  });

  it('turns any other answer into a KubernetesApiError naming the pod', async () => {
    const { api, writer } = await start();
    api.fail({ path: /\/eviction$/, status: 500, message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.' });
    const error = await writer.evictPod('default', 'web-1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubernetesApiError);
    expect((error as Error).message).toMatch(/evict Pod default\/web-1 failed: HTTP 500 InternalError: This pod has more than one/);
  });
});

describe('KubeWriter.deleteNode / getNode / listPodsOnNode', () => {
  it('deletes a node, and treats a node already gone as success', async () => {
    const { api, writer } = await start();
    expect(await writer.deleteNode(N1)).toBe('deleted');
    expect(api.store.get('Node', N1)).toBeUndefined();
    expect(await writer.deleteNode(N1)).toBe('gone');
  });

  it('reports existence and readiness with the model node', async () => {
    const { writer } = await start();
    const n1 = await writer.getNode(N1);
    expect(n1).toMatchObject({ exists: true, ready: true, node: { name: N1, nodePool: 'default', unschedulable: false } });
    expect(await writer.getNode(N2)).toMatchObject({ exists: true, ready: false });
    expect(await writer.getNode('nope')).toEqual({ exists: false });
  });

  it('lists the pods bound to a node with a field selector, across pages', async () => {
    const { api, writer } = await start();
    const small = new KubeWriter(kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: api.token }), { pageSize: 2 });
    const pods = await small.listPodsOnNode(N1);
    expect(pods.map((p) => `${p.namespace}/${p.name}`).sort()).toEqual(['default/web-1', 'default/web-2', 'kube-system/aws-node-a']);
    expect(pods.find((p) => p.name === 'aws-node-a')?.isDaemonSetPod).toBe(true);
    const calls = api.requests.filter((r) => r.path === '/api/v1/pods');
    expect(calls.every((r) => r.query['fieldSelector'] === `spec.nodeName=${N1}`)).toBe(true);
    expect(calls).toHaveLength(2);
    expect(await writer.listPodsOnNode('nope')).toEqual([]);
  });
});

describe('KubeWriter.createEvent', () => {
  it('records a node event the way kubectl describe node finds it', async () => {
    const { api, writer } = await start();
    const name = await writer.createEvent({
      nodeName: N1,
      reason: 'DisruptionBlocked',
      message: 'pod default/db-0 has karpenter.sh/do-not-disrupt',
      type: 'Warning',
    });
    expect(name.startsWith(`${N1}.`)).toBe(true);
    const event = api.store.get('Event', name, 'default');
    expect(event).toMatchObject({
      kind: 'Event',
      involvedObject: { kind: 'Node', name: N1, uid: N1, apiVersion: 'v1' },
      reason: 'DisruptionBlocked',
      message: 'pod default/db-0 has karpenter.sh/do-not-disrupt',
      type: 'Warning',
      source: { component: 'eks-consolidator' },
      reportingComponent: 'eks-consolidator',
      reportingInstance: 'test-run',
      count: 1,
    });
    expect(Date.parse(String(event?.['firstTimestamp']))).toBe(T0);
    const second = await writer.createEvent({ nodeName: N1, reason: 'Unconsolidatable', message: 'x'.repeat(5000), type: 'Normal', nodeUid: 'real-uid' });
    expect(second).not.toBe(name);
    const stored = api.store.get('Event', second, 'default');
    expect(String(stored?.['message'])).toHaveLength(1024);
    expect(stored?.['involvedObject']).toMatchObject({ uid: 'real-uid' });
    expect(api.mutatingRequests().map((r) => r.path)).toEqual(['/api/v1/namespaces/default/events', '/api/v1/namespaces/default/events']);
  });
});
