// The fake control plane (fakeScheduler.ts): kube-scheduler's filters and LeastAllocated scoring, the
// workload controllers recreating evicted pods, PodDisruptionBudgets enforced by the Eviction API, and
// graceful pod termination in the fake API server, driven through the real client as the product drives
// a cluster.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { kubeConfigFromEndpoint } from '../../src/adapters/kubernetes/kubeClient.ts';
import { attachControlPlane, ORDINAL, placeFor, quantity, rankNodes } from './fakeScheduler.ts';
import { kubeNode, startFakeKubeApi, type FakeKubeApi } from './fakeKubeApi.ts';

type Json = Record<string, unknown>;

const T0 = Date.parse('2026-11-21T12:00:00Z');
let api: FakeKubeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

function pod(name: string, o: { cpu?: string; memory?: string; node?: string; nodeSelector?: Record<string, string>; affinity?: Json[]; tolerations?: Json[]; owner?: { kind: string; name: string }; ordinal?: number; labels?: Record<string, string> } = {}): Json {
  return {
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      labels: o.labels ?? { app: o.owner?.name ?? name },
      ...(o.ordinal === undefined ? {} : { annotations: { [ORDINAL]: String(o.ordinal) } }),
      ...(o.owner === undefined ? {} : { ownerReferences: [{ apiVersion: 'apps/v1', kind: o.owner.kind, name: o.owner.name, uid: `uid-${o.owner.name}`, controller: true }] }),
    },
    spec: {
      ...(o.node === undefined ? {} : { nodeName: o.node }),
      containers: [{ name: 'main', resources: { requests: { cpu: o.cpu ?? '100m', memory: o.memory ?? '128Mi' } } }],
      ...(o.nodeSelector === undefined ? {} : { nodeSelector: o.nodeSelector }),
      ...(o.tolerations === undefined ? {} : { tolerations: o.tolerations }),
      ...(o.affinity === undefined ? {} : { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: o.affinity }] } } } }),
    },
    status: o.node === undefined ? { phase: 'Pending' } : { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

function workload(kind: 'ReplicaSet' | 'StatefulSet', name: string, replicas: number): Json {
  return {
    kind,
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', resources: { requests: { cpu: '100m', memory: '128Mi' } } }] } },
    },
  };
}

function cordon(on: FakeKubeApi, name: string): void {
  const node = on.store.get('Node', name)!;
  on.store.put({ ...node, spec: { ...(node['spec'] as Json), unschedulable: true } });
}

const big = (name: string, o: Parameters<typeof kubeNode>[1] = {}) => kubeNode(name, { cpu: '4', memory: '16Gi', ...o });

describe('the scheduler', () => {
  it('reads quantities', () => {
    expect(quantity('100m')).toBeCloseTo(0.1);
    expect(quantity('128Mi')).toBe(128 * 1024 ** 2);
    expect(quantity('8042984Ki')).toBe(8042984 * 1024);
    expect(quantity('2')).toBe(2);
    expect(quantity('1.5G')).toBe(1.5e9);
  });

  it('prefers the least allocated node, in whole points; a tie goes either way as the pod draws', () => {
    const nodes = [big('b'), big('a'), big('c')];
    const bound = [pod('x', { node: 'a', cpu: '1', memory: '1Gi' })];
    const ranked = rankNodes(pod('p'), nodes, bound);
    expect(ranked.map((r) => r.node).slice(0, 2).sort()).toEqual(['b', 'c']);
    expect(ranked[2]).toMatchObject({ node: 'a' });
    expect(ranked[0]!.score).toBe(ranked[1]!.score);
    // 10m less used on b is a quarter of a point: the same whole points as a, so no preference.
    const nearly = [pod('y', { node: 'a', cpu: '1', memory: '1Gi' }), pod('z', { node: 'b', cpu: '990m', memory: '1Gi' })];
    const winners = new Set(Array.from({ length: 20 }, (_, k) => placeFor(pod(`p${k}`), [big('a'), big('b')], nearly)));
    expect(winners).toEqual(new Set(['a', 'b']));
  });

  it('filters: Ready, cordon, taints, nodeSelector, required affinity, resources and pod count', () => {
    const p = pod('p', { cpu: '1', memory: '1Gi' });
    expect(placeFor(p, [big('n', { ready: false })], [])).toBeUndefined();
    expect(placeFor(p, [big('n', { unschedulable: true })], [])).toBeUndefined();
    expect(placeFor(pod('t', { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists' }] }), [big('n', { unschedulable: true })], [])).toBe('n');
    expect(placeFor(p, [big('n', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] })], [])).toBeUndefined();
    expect(placeFor(p, [big('n', { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] })], [])).toBe('n');
    expect(placeFor(pod('t', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }] }), [big('n', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] })], [])).toBe('n');
    expect(placeFor(pod('s', { nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1b' } }), [big('a'), big('b', { zone: 'us-east-1b' })], [])).toBe('b');
    const zoneIn = [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1b'] }];
    expect(placeFor(pod('i', { affinity: zoneIn }), [big('a'), big('b', { zone: 'us-east-1b' })], [])).toBe('b');
    expect(placeFor(pod('n', { affinity: [{ key: 'topology.kubernetes.io/zone', operator: 'NotIn', values: ['us-east-1a'] }] }), [big('a'), big('b', { zone: 'us-east-1b' })], [])).toBe('b');
    expect(placeFor(pod('e', { affinity: [{ key: 'gpu', operator: 'Exists' }] }), [big('a'), big('b', { labels: { gpu: 'yes' } })], [])).toBe('b');
    expect(placeFor(pod('d', { affinity: [{ key: 'gpu', operator: 'DoesNotExist' }] }), [big('a', { labels: { gpu: 'yes' } }), big('b')], [])).toBe('b');
    // Resources: what other pods requested (terminating ones too) is taken.
    expect(placeFor(pod('r', { cpu: '3' }), [big('a')], [pod('x', { node: 'a', cpu: '1500m' })])).toBeUndefined();
    expect(placeFor(pod('m', { memory: '15Gi' }), [big('a')], [pod('x', { node: 'a', memory: '2Gi' })])).toBeUndefined();
    expect(placeFor(pod('c'), [big('a', { pods: '1' })], [pod('x', { node: 'a' })])).toBeUndefined();
  });
});

describe('the control plane', () => {
  it('recreates evicted ReplicaSet pods under new names and places them; a bare pod is not recreated; StatefulSet pods keep their name once the old one is gone', async () => {
    let clock = T0;
    api = await startFakeKubeApi({
      now: () => clock,
      objects: [
        big('a'),
        big('b'),
        workload('ReplicaSet', 'web', 1),
        workload('StatefulSet', 'db', 1),
        pod('web-1', { node: 'a', owner: { kind: 'ReplicaSet', name: 'web' }, ordinal: 0 }),
        pod('db-0', { node: 'a', owner: { kind: 'StatefulSet', name: 'db' }, ordinal: 0 }),
        pod('bare', { node: 'a' }),
      ],
    });
    api.setPodTermination((p) => (String((p['metadata'] as Json)['name']).startsWith('db') ? 60_000 : 0));
    const plane = attachControlPlane(api, { now: () => clock });
    const core = kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: api.token }).makeApiClient(CoreV1Api);
    cordon(api, 'a');
    for (const name of ['web-1', 'db-0', 'bare']) {
      await core.createNamespacedPodEviction({ namespace: 'default', name, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' } } });
    }
    plane.tick();
    const pods = () => api!.store.list('Pod').map((p) => `${String((p['metadata'] as Json)['name'])}@${String((p['spec'] as Json)['nodeName'] ?? '-')}${(p['metadata'] as Json)['deletionTimestamp'] ? ' (terminating)' : ''}`);
    expect(pods()).toEqual(['db-0@a (terminating)', 'web-r0001@b']);
    clock += 61_000;
    plane.tick();
    expect(pods()).toEqual(['db-0@b', 'web-r0001@b']);
    expect(plane.recreated).toEqual(['default/web-r0001', 'default/db-0']);
  });

  it('keeps a pod Pending when it fits nowhere', async () => {
    api = await startFakeKubeApi({ objects: [kubeNode('small', { cpu: '1', memory: '1Gi' }), pod('huge', { cpu: '2' })] });
    const plane = attachControlPlane(api, { now: () => T0 });
    plane.tick();
    expect(plane.pending()).toEqual(['default/huge']);
    const status = api.store.get('Pod', 'huge', 'default')!['status'] as { conditions: Json[] };
    expect(status.conditions).toContainEqual(expect.objectContaining({ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }));
  });

  it('answers 429 when a PodDisruptionBudget allows no disruption, from the live pods', async () => {
    const clock = T0;
    api = await startFakeKubeApi({
      now: () => clock,
      objects: [
        big('a'),
        workload('ReplicaSet', 'web', 2),
        pod('web-1', { node: 'a', owner: { kind: 'ReplicaSet', name: 'web' }, ordinal: 0 }),
        pod('web-2', { node: 'a', owner: { kind: 'ReplicaSet', name: 'web' }, ordinal: 1 }),
        { kind: 'PodDisruptionBudget', metadata: { name: 'web', namespace: 'default' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } } },
      ],
    });
    // Node a cordoned, no other node: the replacement of an evicted pod stays Pending.
    cordon(api, 'a');
    const plane = attachControlPlane(api, { now: () => clock });
    plane.tick();
    expect((api.store.get('PodDisruptionBudget', 'web', 'default')!['status'] as Json)['disruptionsAllowed']).toBe(1);
    expect(api.evictPod('default', 'web-1')).toBe('evicted');
    // One unavailable now (its replacement is Pending): the budget is spent.
    expect(api.evictPod('default', 'web-2')).toBe('blockedByPdb');
    plane.tick();
    expect((api.store.get('PodDisruptionBudget', 'web', 'default')!['status'] as Json)['disruptionsAllowed']).toBe(0);
    expect(plane.refusedEvictions).toBe(1);
  });
});
