// Kubernetes objects -> Cluster (docs/file-formats.md, "The cluster").
import { describe, expect, it } from 'vitest';
import { parseClusterObjects } from '../../src/core/input/cluster.ts';
import { expectInputError } from './helpers.ts';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;
const T = '2026-11-20T12:00:00Z';
const T_MS = Date.parse(T);

function nodeObject(name: string, extra: { labels?: Record<string, string>; spec?: Record<string, unknown>; status?: Record<string, unknown>; metadata?: Record<string, unknown> } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, creationTimestamp: T, labels: extra.labels ?? {}, ...extra.metadata },
    spec: { providerID: `aws:///us-east-1b/i-0abc${name}`, ...extra.spec },
    status: {
      capacity: { cpu: '2', memory: '8Gi', pods: '29' },
      allocatable: { cpu: '1930m', memory: '6903Mi', pods: '29' },
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T }],
      ...extra.status,
    },
  };
}

function podObject(name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}, status: Record<string, unknown> = { phase: 'Running' }) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...metadata },
    spec: { containers: [{ name: 'main', resources: { requests: { cpu: '100m', memory: '128Mi' } } }], ...spec },
    status,
  };
}

const onePod = (...args: Parameters<typeof podObject>) => {
  const [pod] = parseClusterObjects([podObject(...args)]).pods;
  if (!pod) throw new Error('no pod');
  return pod;
};
const oneNode = (...args: Parameters<typeof nodeObject>) => {
  const [node] = parseClusterObjects([nodeObject(...args)]).nodes;
  if (!node) throw new Error('no node');
  return node;
};
const container = (requests: Record<string, string>, extra: Record<string, unknown> = {}) => ({ name: 'c', resources: { requests }, ...extra });

describe('nodes', () => {
  it('reads labels, provider id, resources and readiness', () => {
    const node = oneNode('a', {
      labels: {
        'node.kubernetes.io/instance-type': 'm5.large',
        'topology.kubernetes.io/zone': 'us-east-1a',
        'karpenter.sh/capacity-type': 'spot',
        'karpenter.sh/nodepool': 'default',
      },
      metadata: { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } },
    });
    expect(node).toEqual({
      name: 'a',
      labels: {
        'node.kubernetes.io/instance-type': 'm5.large',
        'topology.kubernetes.io/zone': 'us-east-1a',
        'karpenter.sh/capacity-type': 'spot',
        'karpenter.sh/nodepool': 'default',
      },
      annotations: { 'karpenter.sh/do-not-disrupt': 'true' },
      createdAt: T_MS,
      taints: [],
      unschedulable: false,
      providerId: 'aws:///us-east-1b/i-0abca',
      instanceId: 'i-0abca',
      zone: 'us-east-1a', // the label wins over the provider id
      instanceType: 'm5.large',
      capacityType: 'spot',
      nodePool: 'default',
      allocatable: { cpu: 1930, memory: 6903 * Mi, pods: 29 },
      capacity: { cpu: 2000, memory: 8 * Gi, pods: 29 },
      ready: true,
      readySince: T_MS,
      deleting: false,
    });
  });

  it.each([
    ['karpenter on-demand', { 'karpenter.sh/capacity-type': 'on-demand' }, 'on-demand'],
    ['karpenter spot', { 'karpenter.sh/capacity-type': 'spot' }, 'spot'],
    ['EKS ON_DEMAND', { 'eks.amazonaws.com/capacityType': 'ON_DEMAND' }, 'on-demand'],
    ['EKS SPOT', { 'eks.amazonaws.com/capacityType': 'SPOT' }, 'spot'],
    ['unknown value', { 'karpenter.sh/capacity-type': 'reserved' }, undefined],
    ['no label', {}, undefined],
  ])('capacity type: %s', (_name, labels, expected) => {
    expect(oneNode('a', { labels }).capacityType).toBe(expected);
  });

  it('takes the zone from the provider id when there is no zone label', () => {
    const node = oneNode('a');
    expect(node.zone).toBe('us-east-1b');
    expect(node.instanceId).toBe('i-0abca');
    expect(node.nodePool).toBeUndefined();
  });

  it('reads taints, cordon, deletion, and a node that is not ready', () => {
    const node = oneNode('a', {
      metadata: { deletionTimestamp: T },
      spec: { unschedulable: true, taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }, { key: 'k', value: 'v', effect: 'NoExecute' }] },
      status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: T }] },
    });
    expect(node.taints).toEqual([
      { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' },
      { key: 'k', value: 'v', effect: 'NoExecute' },
    ]);
    expect(node.unschedulable).toBe(true);
    expect(node.deleting).toBe(true);
    expect(node.ready).toBe(false);
    expect(node.readySince).toBeUndefined();
  });

  it('uses capacity for allocatable when only capacity is given, and accepts a non-AWS provider id', () => {
    const node = oneNode('a', { spec: { providerID: 'kind://docker/kind/a' }, status: { allocatable: undefined } });
    expect(node.allocatable).toEqual(node.capacity);
    expect(node.providerId).toBe('kind://docker/kind/a');
    expect(node.instanceId).toBeUndefined();
    expect(node.zone).toBeUndefined();
  });
});

describe('pod effective requests', () => {
  it.each([
    ['containers add up', { containers: [container({ cpu: '100m', memory: '1Gi' }), container({ cpu: '200m' })] }, { cpu: 300, memory: Gi }],
    [
      'a large init container dominates',
      { containers: [container({ cpu: '100m' })], initContainers: [container({ cpu: '1', memory: '64Mi' })] },
      { cpu: 1000, memory: 64 * Mi },
    ],
    [
      'a small init container does not',
      { containers: [container({ cpu: '500m' })], initContainers: [container({ cpu: '100m' })] },
      { cpu: 500 },
    ],
    [
      'sidecars add to the sum',
      { containers: [container({ cpu: '500m' })], initContainers: [container({ cpu: '100m' }, { restartPolicy: 'Always' })] },
      { cpu: 600 },
    ],
    [
      'an init container after a sidecar runs next to it',
      {
        containers: [container({ cpu: '100m' })],
        initContainers: [container({ cpu: '200m' }, { restartPolicy: 'Always' }), container({ cpu: '1' })],
      },
      { cpu: 1200 },
    ],
    [
      'an init container before a sidecar runs alone',
      {
        containers: [container({ cpu: '100m' })],
        initContainers: [container({ cpu: '1' }), container({ cpu: '200m' }, { restartPolicy: 'Always' })],
      },
      { cpu: 1000 },
    ],
    ['pod overhead is added', { containers: [container({ cpu: '100m' })], overhead: { cpu: '250m', memory: '120Mi' } }, { cpu: 350, memory: 120 * Mi }],
    [
      'limits stand in for missing requests',
      { containers: [{ name: 'c', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } } }] },
      { cpu: 500, memory: Gi },
    ],
    ['no resources at all', { containers: [{ name: 'c' }] }, {}],
    [
      'pod-level resources replace the container total',
      { containers: [container({ cpu: '100m', memory: '1Gi' })], resources: { requests: { cpu: '2' } } },
      { cpu: 2000, memory: Gi },
    ],
  ])('%s', (_name, spec, requests) => {
    expect(onePod('p', spec).requests).toEqual(requests);
  });
});

describe('pod fields', () => {
  it('reads metadata, ownership, status and scheduling constraints', () => {
    const pod = onePod(
      'web-0',
      {
        nodeName: 'a',
        priority: 1000,
        nodeSelector: { 'kubernetes.io/arch': 'amd64' },
        tolerations: [
          { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
          { operator: 'Exists' },
          { key: 'x', operator: 'Exists', effect: '' },
        ],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] },
                { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] },
              ],
            },
            preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: {} }],
          },
          podAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { labelSelector: { matchLabels: { app: 'cache' } }, topologyKey: 'kubernetes.io/hostname' },
            ],
          },
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
                namespaces: ['default', 'other'],
                namespaceSelector: {},
                topologyKey: 'topology.kubernetes.io/zone',
              },
            ],
          },
        },
        topologySpreadConstraints: [
          { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', labelSelector: { matchLabels: { app: 'web' } } },
          { maxSkew: 2, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', minDomains: 2, nodeTaintsPolicy: 'Honor', matchLabelKeys: ['pod-template-hash'] },
        ],
        containers: [
          { name: 'c', resources: { requests: { cpu: '100m' } }, ports: [{ containerPort: 8080, hostPort: 80 }, { containerPort: 9090 }, { containerPort: 53, hostPort: 53, protocol: 'UDP', hostIP: '10.0.0.1' }] },
        ],
      },
      {
        labels: { app: 'web' },
        annotations: { 'karpenter.sh/do-not-disrupt': 'true' },
        creationTimestamp: '2026-11-21T09:00:00Z',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u1', controller: true }],
      },
      { phase: 'Running', startTime: '2026-11-21T09:00:05Z' },
    );
    expect(pod).toMatchObject({
      uid: 'uid-web-0',
      namespace: 'default',
      name: 'web-0',
      labels: { app: 'web' },
      annotations: { 'karpenter.sh/do-not-disrupt': 'true' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u1', controller: true }],
      nodeName: 'a',
      phase: 'Running',
      priority: 1000,
      createdAt: Date.parse('2026-11-21T09:00:00Z'),
      startedAt: Date.parse('2026-11-21T09:00:05Z'),
      terminating: false,
      isDaemonSetPod: false,
      isMirrorPod: false,
      nodeSelector: { 'kubernetes.io/arch': 'amd64' },
    });
    expect(pod.tolerations).toEqual([
      { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' },
      { operator: 'Exists' },
      { key: 'x', operator: 'Exists' },
    ]);
    expect(pod.requiredNodeAffinity).toEqual([
      { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] },
      { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['a'] }] },
    ]);
    expect(pod.podAffinity).toEqual([{ labelSelector: { matchLabels: { app: 'cache' } }, namespaces: [], topologyKey: 'kubernetes.io/hostname' }]);
    expect(pod.podAntiAffinity).toEqual([
      {
        labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
        namespaces: ['default', 'other'],
        namespaceSelector: {},
        topologyKey: 'topology.kubernetes.io/zone',
      },
    ]);
    expect(pod.topologySpread).toEqual([
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } } },
      { maxSkew: 2, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', minDomains: 2, nodeTaintsPolicy: 'Honor', matchLabelKeys: ['pod-template-hash'] },
    ]);
    expect(pod.hostPorts).toEqual([
      { port: 80, protocol: 'TCP' },
      { port: 53, protocol: 'UDP', hostIP: '10.0.0.1' },
    ]);
    expect(pod.volumeZones).toBeUndefined();
  });

  it.each([
    ['DaemonSet controller', { ownerReferences: [{ kind: 'DaemonSet', name: 'ds', controller: true }] }, { isDaemonSetPod: true, isMirrorPod: false }],
    ['DaemonSet owner that is not the controller', { ownerReferences: [{ kind: 'DaemonSet', name: 'ds' }] }, { isDaemonSetPod: false, isMirrorPod: false }],
    ['mirror annotation', { annotations: { 'kubernetes.io/config.mirror': 'abc' } }, { isDaemonSetPod: false, isMirrorPod: true }],
    ['owned by its Node', { ownerReferences: [{ kind: 'Node', name: 'a', controller: true }] }, { isDaemonSetPod: false, isMirrorPod: true }],
    ['being deleted', { deletionTimestamp: T }, { terminating: true }],
  ])('%s', (_name, metadata, expected) => {
    expect(onePod('p', {}, metadata)).toMatchObject(expected);
  });

  it.each([
    ['given', { nodeName: 'a' }, { phase: 'Succeeded' }, 'Succeeded'],
    ['absent on a bound pod', { nodeName: 'a' }, {}, 'Running'],
    ['absent on an unbound pod', {}, {}, 'Pending'],
  ])('phase %s', (_name, spec, status, phase) => {
    expect(onePod('p', spec, {}, status).phase).toBe(phase);
  });

  it('host networking makes container ports host ports', () => {
    const pod = onePod('p', { hostNetwork: true, containers: [{ name: 'c', ports: [{ containerPort: 9100 }] }] });
    expect(pod.hostPorts).toEqual([{ port: 9100, protocol: 'TCP' }]);
  });

  it('defaults namespace to default and uid to namespace/name', () => {
    const [pod] = parseClusterObjects([{ kind: 'Pod', metadata: { name: 'x' }, spec: { containers: [] } }]).pods;
    expect(pod).toMatchObject({ namespace: 'default', uid: 'default/x', priority: 0 });
  });
});

describe('volume zones', () => {
  const zonalPv = (name: string, zones: string[]) => ({
    kind: 'PersistentVolume',
    metadata: { name },
    spec: { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.ebs.csi.aws.com/zone', operator: 'In', values: zones }] }] } } },
  });
  const labelledPv = (name: string, zone: string) => ({ kind: 'PersistentVolume', metadata: { name, labels: { 'topology.kubernetes.io/zone': zone } }, spec: {} });
  const efsPv = (name: string) => ({ kind: 'PersistentVolume', metadata: { name }, spec: { csi: { driver: 'efs.csi.aws.com' } } });
  const pvc = (name: string, volumeName?: string) => ({ kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'default' }, spec: volumeName ? { volumeName } : {} });
  const claimVolume = (name: string, claimName: string) => ({ name, persistentVolumeClaim: { claimName } });
  const podWith = (volumes: unknown[], nodeName = 'n1') => podObject('db-0', { nodeName, volumes });
  const zonesOf = (objects: unknown[]) => parseClusterObjects(objects).pods.find((p) => p.name === 'db-0')?.volumeZones;

  it.each([
    ['PV node affinity', [zonalPv('pv1', ['us-east-1c']), pvc('data', 'pv1'), podWith([claimVolume('v', 'data')])], ['us-east-1c']],
    ['PV zone label', [labelledPv('pv1', 'us-east-1a'), pvc('data', 'pv1'), podWith([claimVolume('v', 'data')])], ['us-east-1a']],
    [
      'zone expression after another expression',
      [
        { kind: 'PersistentVolume', metadata: { name: 'pv1' }, spec: { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }, { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] }] } } } },
        pvc('data', 'pv1'),
        podWith([claimVolume('v', 'data')]),
      ],
      ['us-east-1a'],
    ],
    [
      'terms are ORed: one term without a zone makes the PV reachable anywhere',
      [
        { kind: 'PersistentVolume', metadata: { name: 'pv1' }, spec: { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] }, { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] }] } } } },
        pvc('data', 'pv1'),
        podWith([claimVolume('v', 'data')]),
      ],
      undefined,
    ],
    ['a non-zonal PV (EFS) does not pin', [efsPv('pv1'), pvc('data', 'pv1'), podWith([claimVolume('v', 'data')])], undefined],
    ['PV missing: the node zone', [pvc('data', 'pv-gone'), podWith([claimVolume('v', 'data')])], ['us-east-1b']],
    ['PVC missing: the node zone', [podWith([claimVolume('v', 'data')])], ['us-east-1b']],
    ['PVC not bound: the node zone', [pvc('data'), podWith([claimVolume('v', 'data')])], ['us-east-1b']],
    ['pending pod with an unknown volume is not pinned', [podObject('db-0', { volumes: [claimVolume('v', 'data')] })], undefined],
    [
      'several volumes: intersection',
      [
        zonalPv('pv1', ['us-east-1a', 'us-east-1b']),
        zonalPv('pv2', ['us-east-1b', 'us-east-1c']),
        pvc('d1', 'pv1'),
        pvc('d2', 'pv2'),
        podWith([claimVolume('v1', 'd1'), claimVolume('v2', 'd2')]),
      ],
      ['us-east-1b'],
    ],
    [
      'generic ephemeral volume: claim <pod>-<volume>',
      [zonalPv('pv1', ['us-east-1c']), pvc('db-0-scratch', 'pv1'), podWith([{ name: 'scratch', ephemeral: { volumeClaimTemplate: {} } }])],
      ['us-east-1c'],
    ],
    ['emptyDir and configMap do not pin', [podWith([{ name: 'tmp', emptyDir: {} }, { name: 'cfg', configMap: { name: 'c' } }])], undefined],
  ])('%s', (_name, objects, zones) => {
    // Node n1 sits in us-east-1b (from its provider id).
    expect(zonesOf([nodeObject('n1'), ...objects])).toEqual(zones);
  });

  it('a claim in another namespace is not confused with ours', () => {
    const otherNamespace = { kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'other' }, spec: { volumeName: 'pv1' } };
    expect(zonesOf([nodeObject('n1'), zonalPv('pv1', ['us-east-1c']), otherNamespace, podWith([claimVolume('v', 'data')])])).toEqual(['us-east-1b']);
  });
});

describe('volume hosts', () => {
  // Karpenter drops the hostname terms of local and hostPath volumes only; any other volume pinned to a
  // host keeps its pod there ("should not ignore hostname affinity when using non-local path volumes").
  const hostTerm = (hosts: string[]) => ({ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: hosts }] });
  const pv = (source: Record<string, unknown>, terms: unknown[]) => ({ kind: 'PersistentVolume', metadata: { name: 'pv1' }, spec: { ...source, nodeAffinity: { required: { nodeSelectorTerms: terms } } } });
  const objects = (volume: unknown) => [
    nodeObject('n1'),
    volume,
    { kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'default' }, spec: { volumeName: 'pv1' } },
    podObject('db-0', { nodeName: 'n1', volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }] }),
  ];
  const hostsOf = (volume: unknown) => parseClusterObjects(objects(volume)).pods.find((p) => p.name === 'db-0')?.volumeHosts;

  it.each([
    ['a CSI volume pinned to one host', pv({ csi: { driver: 'local.csi.openebs.io' } }, [hostTerm(['n1'])]), ['n1']],
    ['terms ORed over hosts: any of them', pv({ csi: { driver: 'x' } }, [hostTerm(['n1']), hostTerm(['n2'])]), ['n1', 'n2']],
    ['one term without a host: not pinned', pv({ csi: { driver: 'x' } }, [hostTerm(['n1']), { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1b'] }] }]), undefined],
    ['a local volume: its host term is dropped', pv({ local: { path: '/mnt/ssd' } }, [hostTerm(['n1'])]), undefined],
    ['a hostPath volume: its host term is dropped', pv({ hostPath: { path: '/data' } }, [hostTerm(['n1'])]), undefined],
  ])('%s', (_name, volume, hosts) => {
    expect(hostsOf(volume)).toEqual(hosts);
  });
});

describe('PDBs, DaemonSets, workloads, namespaces', () => {
  it('reads a PDB', () => {
    const [pdb] = parseClusterObjects([
      { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web', namespace: 'shop' }, spec: { selector: { matchLabels: { app: 'web' } }, minAvailable: 2 }, status: { disruptionsAllowed: 1 } },
    ]).pdbs;
    expect(pdb).toEqual({ namespace: 'shop', name: 'web', selector: { matchLabels: { app: 'web' } }, disruptionsAllowed: 1 });
  });

  it('a PDB without status allows no disruption', () => {
    const [pdb] = parseClusterObjects([{ kind: 'PodDisruptionBudget', metadata: { name: 'web', namespace: 'shop' }, spec: {} }]).pdbs;
    expect(pdb).toEqual({ namespace: 'shop', name: 'web', selector: {}, disruptionsAllowed: 0 });
  });

  it('reads a DaemonSet template', () => {
    const [ds] = parseClusterObjects([
      {
        kind: 'DaemonSet',
        metadata: { name: 'logs', namespace: 'kube-system' },
        spec: {
          template: {
            metadata: { labels: { app: 'logs' } },
            spec: {
              containers: [container({ cpu: '50m', memory: '64Mi' })],
              tolerations: [{ operator: 'Exists' }],
              nodeSelector: { 'kubernetes.io/os': 'linux' },
            },
          },
        },
      },
    ]).daemonSets;
    expect(ds).toEqual({
      namespace: 'kube-system',
      name: 'logs',
      template: {
        labels: { app: 'logs' },
        requests: { cpu: 50, memory: 64 * Mi },
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        requiredNodeAffinity: [],
        tolerations: [{ operator: 'Exists' }],
        podAffinity: [],
        podAntiAffinity: [],
        topologySpread: [],
        hostPorts: [],
      },
    });
  });

  it('reads workloads and namespaces, and ignores unknown kinds', () => {
    const cluster = parseClusterObjects([
      { kind: 'Deployment', metadata: { name: 'web', namespace: 'shop' }, spec: { replicas: 3 }, status: { readyReplicas: 2 } },
      { kind: 'StatefulSet', metadata: { name: 'db', namespace: 'shop' }, spec: {}, status: {} },
      { kind: 'ReplicaSet', metadata: { name: 'web-abc', namespace: 'shop' }, spec: { replicas: 0 } },
      { kind: 'Namespace', metadata: { name: 'shop', labels: { team: 'a' } } },
      { kind: 'Service', metadata: { name: 'web' }, spec: { ports: 'whatever' } },
      { kind: 'ConfigMap', data: 42 },
    ]);
    expect(cluster.workloads).toEqual([
      { kind: 'Deployment', namespace: 'shop', name: 'web', desiredReplicas: 3, readyReplicas: 2 },
      { kind: 'StatefulSet', namespace: 'shop', name: 'db', desiredReplicas: 1, readyReplicas: 0 },
      { kind: 'ReplicaSet', namespace: 'shop', name: 'web-abc', desiredReplicas: 0, readyReplicas: 0 },
    ]);
    expect(cluster.namespaces).toEqual([{ name: 'shop', labels: { team: 'a' } }]);
    expect(cluster.nodes).toEqual([]);
  });

  it('flattens nested and typed Lists', () => {
    const cluster = parseClusterObjects([
      { kind: 'List', items: [nodeObject('a'), { kind: 'List', items: [nodeObject('b')] }] },
      { kind: 'PodList', items: [{ metadata: { name: 'p' }, spec: { containers: [] } }] },
      null,
    ]);
    expect(cluster.nodes.map((n) => n.name)).toEqual(['a', 'b']);
    expect(cluster.pods.map((p) => p.name)).toEqual(['p']);
  });
});

describe('validation', () => {
  const withContainers = (containers: unknown[]) => podObject('web-0', { containers });
  const P = 'Pod default/web-0';

  it.each([
    ['bad cpu request', withContainers([container({ cpu: 'abc' })]), P, 'spec.containers[0].resources.requests.cpu', '"abc" is not a Kubernetes quantity'],
    ['bad init memory limit', podObject('web-0', { initContainers: [{ name: 'i', resources: { limits: { memory: '1Gb' } } }] }), P, 'spec.initContainers[0].resources.limits.memory', 'not a Kubernetes quantity'],
    ['negative request', withContainers([container({ memory: '-1Mi' })]), P, 'spec.containers[0].resources.requests.memory', 'must not be negative'],
    ['bad overhead', podObject('web-0', { overhead: { cpu: 'x' } }), P, 'spec.overhead.cpu', 'not a Kubernetes quantity'],
    ['no spec', { kind: 'Pod', metadata: { name: 'web-0', namespace: 'default' } }, P, 'spec', 'is required'],
    ['containers not a list', podObject('web-0', { containers: { name: 'c' } }), P, 'spec.containers', 'must be a list'],
    ['containers null', podObject('web-0', { containers: null }), P, 'spec.containers', 'must be a list, got null'],
    ['no containers', { kind: 'Pod', metadata: { name: 'web-0', namespace: 'default' }, spec: { nodeName: 'a' } }, P, 'spec.containers', 'is required'],
    ['priority not an integer', podObject('web-0', { priority: 'high' }), P, 'spec.priority', 'must be an integer'],
    ['priority too large to represent', podObject('web-0', { priority: Number.POSITIVE_INFINITY }), P, 'spec.priority', 'must be an integer, got a number too large to represent'],
    ['creation on a day that does not exist', podObject('web-0', {}, { creationTimestamp: '2026-02-30T00:00:00Z' }), P, 'metadata.creationTimestamp', 'February 2026 has 28 days'],
    ['start at hour 24', podObject('web-0', {}, {}, { phase: 'Running', startTime: '2026-11-21T24:00:00Z' }), P, 'status.startTime', 'not a real time of day'],
    ['bad phase', podObject('web-0', {}, {}, { phase: 'Sleeping' }), P, 'status.phase', 'must be one of'],
    ['bad timestamp', podObject('web-0', {}, { creationTimestamp: 'yesterday' }), P, 'metadata.creationTimestamp', 'RFC 3339 time with an offset'],
    ['label not a string', podObject('web-0', {}, { labels: { tier: 1 } }), P, 'metadata.labels.tier', 'must be a string'],
    ['bad toleration operator', podObject('web-0', { tolerations: [{ key: 'a', operator: 'Maybe' }] }), P, 'spec.tolerations[0].operator', 'must be one of Exists, Equal'],
    ['bad toleration effect', podObject('web-0', { tolerations: [{ key: 'a', effect: 'Sometimes' }] }), P, 'spec.tolerations[0].effect', 'must be one of'],
    [
      'affinity In without values',
      podObject('web-0', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }] } } } }),
      P,
      'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values',
      'at least one value',
    ],
    [
      'affinity NotIn without values',
      podObject('web-0', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'NotIn' }] }] } } } }),
      P,
      'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values',
      'at least one value',
    ],
    [
      'matchFields on another field',
      podObject('web-0', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'spec.x', operator: 'In', values: ['a'] }] }] } } } }),
      P,
      'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key',
      'only metadata.name',
    ],
    [
      'pod anti-affinity without topologyKey',
      podObject('web-0', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: {} }] } } }),
      P,
      'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey',
      'is required',
    ],
    [
      'label selector with a bad operator',
      podObject('web-0', { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, topologyKey: 'k' }] } } }),
      P,
      'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].operator',
      'must be one of In, NotIn, Exists, DoesNotExist',
    ],
    ['spread without maxSkew', podObject('web-0', { topologySpreadConstraints: [{ topologyKey: 'k' }] }), P, 'spec.topologySpreadConstraints[0].maxSkew', 'is required'],
    ['spread maxSkew zero', podObject('web-0', { topologySpreadConstraints: [{ maxSkew: 0, topologyKey: 'k' }] }), P, 'spec.topologySpreadConstraints[0].maxSkew', 'at least 1'],
    ['spread bad whenUnsatisfiable', podObject('web-0', { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'k', whenUnsatisfiable: 'Ignore' }] }), P, 'spec.topologySpreadConstraints[0].whenUnsatisfiable', 'must be one of'],
    ['bad host port', withContainers([{ name: 'c', ports: [{ hostPort: 70000 }] }]), P, 'spec.containers[0].ports[0].hostPort', 'not a port number'],
    ['claim without name', podObject('web-0', { volumes: [{ name: 'v', persistentVolumeClaim: {} }] }), P, 'spec.volumes[0].persistentVolumeClaim.claimName', 'is required'],
    ['owner without kind', podObject('web-0', {}, { ownerReferences: [{ name: 'x' }] }), P, 'metadata.ownerReferences[0].kind', 'is required'],
    ['pod without name', { kind: 'Pod', metadata: {}, spec: {} }, 'Pod at document 1', 'metadata.name', 'is required'],
    ['node without name', { kind: 'Node', metadata: { creationTimestamp: T }, status: { capacity: {} } }, 'Node at document 1', 'metadata.name', 'is required'],
    ['node without creationTimestamp', { kind: 'Node', metadata: { name: 'a' }, status: { capacity: {} } }, 'Node "a"', 'metadata.creationTimestamp', 'is required'],
    ['node without resources', { kind: 'Node', metadata: { name: 'a', creationTimestamp: T }, status: {} }, 'Node "a"', 'status.allocatable', 'is required'],
    ['bad node allocatable', nodeObject('a', { status: { allocatable: { cpu: '2 cores' } } }), 'Node "a"', 'status.allocatable.cpu', 'not a Kubernetes quantity'],
    ['empty node allocatable', nodeObject('a', { status: { allocatable: {} } }), 'Node "a"', 'status.allocatable.cpu', 'is required'],
    ['node allocatable without memory', nodeObject('a', { status: { allocatable: { cpu: '2', pods: '29' } } }), 'Node "a"', 'status.allocatable.memory', 'is required'],
    [
      'node capacity without cpu, and no allocatable',
      { kind: 'Node', metadata: { name: 'a', creationTimestamp: T }, status: { capacity: { memory: '8Gi' } } },
      'Node "a"',
      'status.capacity.cpu',
      'is required',
    ],
    ['Ready status a number', nodeObject('a', { status: { conditions: [{ type: 'Ready', status: 1 }] } }), 'Node "a"', 'status.conditions[0].status', '1 must be one of True, False, Unknown'],
    ['Ready status lower case', nodeObject('a', { status: { conditions: [{ type: 'Ready', status: 'true' }] } }), 'Node "a"', 'status.conditions[0].status', 'must be one of True, False, Unknown'],
    ['Ready without status', nodeObject('a', { status: { conditions: [{ type: 'Ready' }] } }), 'Node "a"', 'status.conditions[0].status', 'is required'],
    ['bad taint effect', nodeObject('a', { spec: { taints: [{ key: 'k', effect: 'Never' }] } }), 'Node "a"', 'spec.taints[0].effect', 'must be one of'],
    ['unschedulable not a boolean', nodeObject('a', { spec: { unschedulable: 'yes' } }), 'Node "a"', 'spec.unschedulable', 'true or false'],
    ['PDB with negative disruptionsAllowed', { kind: 'PodDisruptionBudget', metadata: { name: 'p', namespace: 'ns' }, status: { disruptionsAllowed: -1 } }, 'PodDisruptionBudget ns/p', 'status.disruptionsAllowed', 'must not be negative'],
    ['PDB with a bad selector', { kind: 'PodDisruptionBudget', metadata: { name: 'p', namespace: 'ns' }, spec: { selector: { matchLabels: 'app=web' } } }, 'PodDisruptionBudget ns/p', 'spec.selector.matchLabels', 'must be an object'],
    ['DaemonSet without template', { kind: 'DaemonSet', metadata: { name: 'd', namespace: 'ns' }, spec: {} }, 'DaemonSet ns/d', 'spec.template', 'is required'],
    ['workload with text replicas', { kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' }, spec: { replicas: 'three' } }, 'Deployment ns/d', 'spec.replicas', 'must be an integer'],
    ['object without kind', { metadata: { name: 'x' } }, 'document 1', 'kind', 'is required'],
    ['item that is not an object', 'Pod', 'document 1', '', 'must be an object'],
  ])('%s', (_name, object, objectName, field, problem) => {
    expectInputError(() => parseClusterObjects([object]), objectName, field, problem);
  });

  it('locates an unnamed object inside a List', () => {
    expectInputError(() => parseClusterObjects([{ kind: 'List', items: [nodeObject('a'), { kind: 'Pod', metadata: {} }] }]), 'Pod at items[1]', 'metadata.name', 'is required');
  });

  it('locates an unnamed object in a YAML stream', () => {
    expectInputError(() => parseClusterObjects([nodeObject('a'), { kind: 'Node', metadata: {} }]), 'Node at document 2', 'metadata.name', 'is required');
  });

  it.each([
    ['nodes', [nodeObject('a'), nodeObject('a')], 'Node "a"'],
    ['pods', [podObject('p'), podObject('p')], 'Pod default/p'],
  ])('rejects duplicate %s', (_name, objects, object) => {
    expectInputError(() => parseClusterObjects(objects), object, 'metadata.name', 'more than once');
  });
});

describe('tolerations shared between pods (memory)', () => {
  const defaults = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ];
  it('pods with the same list share one parsed copy; a different list gets its own', () => {
    const { pods } = parseClusterObjects([
      podObject('a', { tolerations: defaults }),
      podObject('b', { tolerations: structuredClone(defaults) }),
      podObject('c', { tolerations: [...defaults, { key: 'gpu', operator: 'Exists' }] }),
    ]);
    const [a, b, c] = pods;
    expect(b!.tolerations).toBe(a!.tolerations);
    expect(c!.tolerations).not.toBe(a!.tolerations);
    expect(c!.tolerations).toEqual([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
      { key: 'gpu', operator: 'Exists' },
    ]);
  });
  it('a list seen before is not parsed again, but a list that differs in any field is, errors included', () => {
    const valueEmpty = [{ key: 'k', operator: 'Equal', value: '' }];
    const valueAbsent = [{ key: 'k', operator: 'Equal' }];
    const { pods } = parseClusterObjects([podObject('a', { tolerations: valueEmpty }), podObject('b', { tolerations: valueAbsent })]);
    expect(pods[0]!.tolerations).toEqual([{ key: 'k', operator: 'Equal', value: '' }]);
    expect(pods[1]!.tolerations).toEqual([{ key: 'k', operator: 'Equal' }]);
    // The first pod's list is known; the second's operator is not a string, so it is parsed and refused.
    expectInputError(
      () => parseClusterObjects([podObject('a', { tolerations: defaults }), podObject('web-0', { tolerations: [{ ...defaults[0], operator: 7 }] })]),
      'Pod default/web-0',
      'spec.tolerations[0].operator',
      'must be one of Exists, Equal',
    );
  });

  it('resource quantities seen before give the same amounts (cpu in millicores, the rest in bytes)', () => {
    const withRequests = (name: string, requests: Record<string, string>) =>
      podObject(name, { containers: [{ name: 'c', resources: { requests } }] });
    const { pods } = parseClusterObjects([
      withRequests('a', { cpu: '1', memory: '1' }),
      withRequests('b', { cpu: '1', memory: '1' }),
      withRequests('c', { cpu: '250m', memory: '1Gi', 'nvidia.com/gpu': '1' }),
    ]);
    expect(pods.map((p) => p.requests)).toEqual([
      { cpu: 1000, memory: 1 },
      { cpu: 1000, memory: 1 },
      { cpu: 250, memory: 1024 ** 3, 'nvidia.com/gpu': 1 },
    ]);
  });
});

describe('a file that is no cluster dump', () => {
  it.each([
    ['an API error saved as the dump (kind: Status)', [{ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 403, reason: 'Forbidden', message: 'nodes is forbidden' }], /Kubernetes API error \(Status 403 Forbidden: nodes is forbidden\)/],
    ['a Status inside a List', [{ kind: 'List', items: [nodeObject('a'), { kind: 'Status', code: 500, message: 'etcd timeout' }] }], /Status 500: etcd timeout/],
    ['an object of an unknown kind only', [{ kind: 'Banana', metadata: { name: 'b' } }], /holds no object this product reads \(only Banana\)/],
    ['a List of unknown kinds only', [{ kind: 'List', items: [{ kind: 'Secret', metadata: { name: 's' } }, { kind: 'ConfigMap', metadata: { name: 'c' } }] }], /only ConfigMap, Secret/],
  ])('%s is refused, never read as an empty cluster', (_name, objects, problem) => {
    expect(() => parseClusterObjects(objects)).toThrow(problem);
  });

  it.each([
    ['an empty List', [{ kind: 'List', items: [] }]],
    ['unknown kinds beside a Node', [{ kind: 'List', items: [{ kind: 'Secret', metadata: { name: 's' } }, nodeObject('a')] }]],
  ])('%s is still read', (_name, objects) => {
    expect(() => parseClusterObjects(objects)).not.toThrow();
  });
});
