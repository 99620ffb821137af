import { afterEach, describe, expect, it } from 'vitest';
import { kubeConfigFromEndpoint, KubernetesApiError } from '../../src/adapters/kubernetes/kubeClient.ts';
import { LISTED_RESOURCES, LiveClusterSource } from '../../src/adapters/kubernetes/liveClusterSource.ts';
import { InputError } from '../../src/core/errors.ts';
import type { Cluster } from '../../src/core/model/types.ts';
import { parseClusterObjects } from '../../src/core/input/cluster.ts';
import {
  kubeDaemonSet,
  kubeNamespace,
  kubeNode,
  kubePdb,
  kubePod,
  kubeVolume,
  kubeWorkload,
  startFakeKubeApi,
} from '../support/fakeKubeApi.ts';
import type { FakeKubeApi } from '../support/fakeKubeApi.ts';

/** A small but complete cluster: every kind the model reads, 7 pods across namespaces. */
function clusterObjects(): Record<string, unknown>[] {
  const [pv, pvc] = kubeVolume('data', 'db-data', 'pvc-123', 'us-east-1b');
  return [
    kubeNode('ip-10-0-1-7.ec2.internal'),
    kubeNode('ip-10-0-2-8.ec2.internal', { zone: 'us-east-1b', capacityType: 'spot', instanceType: 'm5.xlarge' }),
    kubeNode('ip-10-0-3-9.ec2.internal', {
      pool: null,
      taints: [{ key: 'dedicated', value: 'system', effect: 'NoSchedule', timeAdded: '2026-11-21T09:30:00Z' }],
    }),
    kubePod('default', 'web-1', { node: 'ip-10-0-1-7.ec2.internal', labels: { app: 'web' } }),
    kubePod('default', 'web-2', { node: 'ip-10-0-2-8.ec2.internal', labels: { app: 'web' }, cpu: '250m' }),
    kubePod('default', 'pending-1', {}),
    kubePod('data', 'db-0', {
      node: 'ip-10-0-2-8.ec2.internal',
      owner: { kind: 'StatefulSet', name: 'db' },
      claim: 'db-data',
      annotations: { 'karpenter.sh/do-not-disrupt': 'true' },
      priority: 1000,
    }),
    kubePod('kube-system', 'aws-node-abcde', { node: 'ip-10-0-1-7.ec2.internal', owner: { kind: 'DaemonSet', name: 'aws-node' } }),
    kubePod('kube-system', 'aws-node-fghij', { node: 'ip-10-0-2-8.ec2.internal', owner: { kind: 'DaemonSet', name: 'aws-node' } }),
    kubePod('batch', 'job-1', { node: 'ip-10-0-1-7.ec2.internal', owner: null, phase: 'Succeeded' }),
    kubePdb('default', 'web', { app: 'web' }, 1),
    kubeDaemonSet('kube-system', 'aws-node'),
    kubeWorkload('Deployment', 'default', 'web', 2, 2),
    kubeWorkload('ReplicaSet', 'default', 'web-5d8f', 2, 1),
    kubeWorkload('StatefulSet', 'data', 'db', 1, 0),
    kubeNamespace('default'),
    kubeNamespace('data', { team: 'storage' }),
    kubeNamespace('kube-system'),
    kubeNamespace('batch'),
    pv,
    pvc,
  ];
}

/** The same cluster whatever order the objects came in (the API lists by namespace/name). */
function sorted(cluster: Cluster): Cluster {
  const by = <T>(key: (x: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  const nsName = (x: { namespace: string; name: string }) => `${x.namespace}/${x.name}`;
  return {
    nodes: [...cluster.nodes].sort(by((n) => n.name)),
    pods: [...cluster.pods].sort(by(nsName)),
    pdbs: [...cluster.pdbs].sort(by(nsName)),
    daemonSets: [...cluster.daemonSets].sort(by(nsName)),
    workloads: [...cluster.workloads].sort(by((w) => `${w.kind}/${nsName(w)}`)),
    namespaces: [...cluster.namespaces].sort(by((n) => n.name)),
  };
}

let api: FakeKubeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function start(objects = clusterObjects()) {
  api = await startFakeKubeApi({ objects });
  const kc = kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: api.token });
  return { api, kc };
}

describe('LiveClusterSource', () => {
  it('pages through every collection and yields the Cluster that parsing the same objects gives', async () => {
    const objects = clusterObjects();
    const { api, kc } = await start(objects);
    const cluster = await new LiveClusterSource(kc, { pageSize: 2 }).read();

    expect(sorted(cluster)).toEqual(sorted(parseClusterObjects(objects)));
    expect(cluster.pods).toHaveLength(7);
    expect(cluster.nodes).toHaveLength(3);
    expect(cluster.pdbs).toEqual([{ namespace: 'default', name: 'web', selector: { matchLabels: { app: 'web' } }, disruptionsAllowed: 1 }]);
    expect(cluster.pods.find((p) => p.name === 'db-0')?.volumeZones).toEqual(['us-east-1b']);

    // 7 pods at 2 per page: 4 pod list calls chained by continue tokens.
    const podCalls = api.requests.filter((r) => r.path === '/api/v1/pods');
    expect(podCalls.map((r) => r.query['limit'])).toEqual(['2', '2', '2', '2']);
    expect(podCalls[0]?.query['continue']).toBeUndefined();
    expect(podCalls.slice(1).every((r) => typeof r.query['continue'] === 'string')).toBe(true);
    // Every collection listed, nothing written.
    for (const path of [
      '/api/v1/nodes',
      '/api/v1/namespaces',
      '/api/v1/persistentvolumes',
      '/api/v1/persistentvolumeclaims',
      '/apis/policy/v1/poddisruptionbudgets',
      '/apis/apps/v1/daemonsets',
      '/apis/apps/v1/deployments',
      '/apis/apps/v1/statefulsets',
      '/apis/apps/v1/replicasets',
    ]) {
      expect(api.requests.some((r) => r.path === path), path).toBe(true);
    }
    expect(LISTED_RESOURCES).toHaveLength(10);
    expect(api.mutatingRequests()).toEqual([]);
    // Parsed page by page, collection by collection, in the order the objects are listed.
    expect(cluster).toEqual(parseClusterObjects(await new LiveClusterSource(kc, { pageSize: 2 }).readObjects()));
  });

  it('returns plain kubectl-shaped objects with kind and apiVersion set', async () => {
    const { kc } = await start();
    const objects = await new LiveClusterSource(kc, { pageSize: 3 }).readObjects();
    const kinds = objects.map((o) => `${String(o['apiVersion'])} ${String(o['kind'])}`);
    expect(new Set(kinds)).toEqual(
      new Set([
        'v1 Node',
        'v1 Pod',
        'policy/v1 PodDisruptionBudget',
        'apps/v1 DaemonSet',
        'apps/v1 Deployment',
        'apps/v1 StatefulSet',
        'apps/v1 ReplicaSet',
        'v1 Namespace',
        'v1 PersistentVolume',
        'v1 PersistentVolumeClaim',
      ]),
    );
    const node = objects.find((o) => o['kind'] === 'Node') as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
    // JSON field names and string times, no client-side camelCase or Date objects.
    expect(typeof node.metadata['creationTimestamp']).toBe('string');
    expect(Date.parse(node.metadata['creationTimestamp'] as string)).toBe(Date.parse('2026-11-21T09:00:00Z'));
    expect(node.spec['providerID']).toMatch(/^aws:\/\/\/us-east-1a\/i-/);
    expect(JSON.stringify(objects)).not.toContain('"_continue"');
  });

  it('keeps only what the planner reads of each page, and the same Cluster comes out', async () => {
    const objects = clusterObjects().map((o) =>
      o['kind'] === 'Pod' || o['kind'] === 'Node'
        ? { ...o, metadata: { ...(o['metadata'] as object), managedFields: [{ manager: 'kubelet', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': {} } }] } }
        : o,
    );
    const { kc } = await start(objects);
    const source = new LiveClusterSource(kc, { pageSize: 2 });
    const full = await source.readObjects();
    const projected = await source.readObjects({ projected: true });
    expect(JSON.stringify(full)).toContain('managedFields');
    expect(JSON.stringify(projected)).not.toContain('managedFields');
    expect(sorted(await source.read())).toEqual(sorted(parseClusterObjects(full)));
  });

  it('reads an empty cluster', async () => {
    const { kc } = await start([]);
    const cluster = await new LiveClusterSource(kc).read();
    expect(cluster).toEqual({ nodes: [], pods: [], pdbs: [], daemonSets: [], workloads: [], namespaces: [] });
  });

  it('names the resource when a list fails', async () => {
    const { api, kc } = await start();
    api.fail({ path: '/apis/policy/v1/poddisruptionbudgets', status: 403, message: 'poddisruptionbudgets.policy is forbidden: User "arn:aws:sts::1:assumed-role/x" cannot list resource' });
    const error = await new LiveClusterSource(kc).read().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubernetesApiError);
    expect(error).toMatchObject({ operation: 'list', resource: 'poddisruptionbudgets', statusCode: 403, reason: 'Forbidden' });
    expect((error as Error).message).toMatch(/list poddisruptionbudgets failed: forbidden \(403\).*cannot list resource/);
  });

  it('starts a listing over when its continue token has expired (410)', async () => {
    const { api, kc } = await start();
    api.fail({ path: '/api/v1/pods', when: (r) => r.query['continue'] !== undefined, status: 410, reason: 'Expired', message: 'The provided continue parameter is too old' });
    const source = new LiveClusterSource(kc, { pageSize: 3 });
    const cluster = await source.read();
    expect(cluster.pods).toHaveLength(7);
    const podCalls = api.requests.filter((r) => r.path === '/api/v1/pods').map((r) => r.status);
    expect(podCalls).toEqual([200, 410, 200, 200, 200]);
    // Pages are parsed as they arrive: the abandoned listing's first page left nothing behind.
    expect(cluster).toEqual(parseClusterObjects(await source.readObjects()));
  });

  it('attributes an object the model cannot read to the Kubernetes API', async () => {
    const bad = kubePod('default', 'broken', { node: 'ip-10-0-1-7.ec2.internal' });
    (bad['spec'] as { priority?: unknown }).priority = 1.5;
    const { kc } = await start([kubeNode('ip-10-0-1-7.ec2.internal'), bad]);
    const error = await new LiveClusterSource(kc).read().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).file).toBe('Kubernetes API');
    expect((error as Error).message).toMatch(/^Kubernetes API: Pod default\/broken: spec\.priority/);
  });
});
