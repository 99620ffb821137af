// Dresses the generator's compact objects the way `kubectl get -o json` prints real ones: the fields the
// planner never reads (managedFields, env, probes, volume mounts, the service-account token volume,
// container statuses, a node's images and nodeInfo) are what make a real dump large, about 4 KB per pod
// once printed with kubectl's 4-space indentation. The fields the planner does read are left as the
// compact object has them, so both shapes plan the same.
//
// Deterministic: every varying string (resource versions, container ids, pod IPs) comes from a counter
// or from the seed, never from the clock or Math.random.
import { mulberry32 } from '../src/core/random.ts';

type Obj = Record<string, unknown>;

// Trimmed to the top level: real entries list every field set, which makes pods larger still.
const FIELDS_V1_POD_SPEC: Obj = { 'f:metadata': { 'f:labels': {} }, 'f:spec': { 'f:containers': {} } };

const NODE_IMAGES = [
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni:v1.19.2-eksbuild.1', 43_512_188],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni-init:v1.19.2-eksbuild.1', 62_115_672],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy:v1.31.3-minimal-eksbuild.2', 34_102_660],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/pause:3.10', 311_286],
  ['public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.4', 128_341_920],
  ['bench/plain:1', 52_110_334],
  ['bench/spread:1', 48_771_002],
  ['bench/anti:1', 61_004_116],
] as const;

export class KubectlShape {
  private readonly rand: () => number;
  private resourceVersion = 1_000_000;
  private ipCounter = 0;

  constructor(seed: number) {
    this.rand = mulberry32(seed ^ 0x5bd1e995);
  }

  private hex(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += '0123456789abcdef'[Math.floor(this.rand() * 16)];
    return s;
  }

  private nextVersion(): string {
    this.resourceVersion += 1 + Math.floor(this.rand() * 40);
    return String(this.resourceVersion);
  }

  pod(compact: Obj, nodeIp: string): Obj {
    const meta = compact['metadata'] as Obj;
    const spec = compact['spec'] as Obj;
    const status = compact['status'] as Obj;
    const created = meta['creationTimestamp'] as string;
    const started = status['startTime'] as string;
    const name = meta['name'] as string;
    const owner = (meta['ownerReferences'] as Obj[])[0]!;
    const podIp = `10.${100 + (this.ipCounter >> 16)}.${(this.ipCounter >> 8) & 255}.${this.ipCounter++ & 255}`;
    const tokenVolume = `kube-api-access-${this.hex(5)}`;
    const containers = (spec['containers'] as Obj[]).map((c) => {
      const requests = (c['resources'] as Obj)['requests'] as Obj;
      return {
        env: [
          { name: 'LOG_LEVEL', value: 'info' },
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        ],
        image: c['image'],
        imagePullPolicy: 'IfNotPresent',
        livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10 },
        name: c['name'],
        ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
        resources: { limits: { memory: requests['memory'] }, requests },
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        volumeMounts: [
          { mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', name: tokenVolume, readOnly: true },
        ],
      };
    });
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        annotations: { 'prometheus.io/scrape': 'true' },
        creationTimestamp: created,
        generateName: `${owner['name'] as string}-`,
        labels: meta['labels'],
        managedFields: [
          { apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: FIELDS_V1_POD_SPEC, manager: 'kube-controller-manager', operation: 'Update', time: created },
        ],
        name,
        namespace: meta['namespace'],
        ownerReferences: (meta['ownerReferences'] as Obj[]).map((o) => ({ ...o, blockOwnerDeletion: true })),
        resourceVersion: this.nextVersion(),
        uid: meta['uid'],
      },
      spec: {
        ...spec,
        containers,
        dnsPolicy: 'ClusterFirst',
        enableServiceLinks: true,
        restartPolicy: 'Always',
        schedulerName: 'default-scheduler',
        serviceAccount: 'default',
        serviceAccountName: 'default',
        terminationGracePeriodSeconds: 30,
        volumes: [
          {
            name: tokenVolume,
            projected: {
              defaultMode: 420,
              sources: [
                { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              ],
            },
          },
        ],
      },
      status: {
        conditions: [
          { lastTransitionTime: started, status: 'True', type: 'Ready' },
          { lastTransitionTime: created, status: 'True', type: 'PodScheduled' },
        ],
        containerStatuses: containers.map((c) => ({
          containerID: `containerd://${this.hex(64)}`,
          image: `docker.io/${c.image as string}`,
          imageID: `docker.io/${c.image as string}@sha256:${this.hex(64)}`,
          name: c.name,
          ready: true,
          restartCount: 0,
          started: true,
          state: { running: { startedAt: started } },
        })),
        hostIP: nodeIp,
        phase: status['phase'],
        podIP: podIp,
        qosClass: status['qosClass'],
        startTime: started,
      },
    };
  }

  node(compact: Obj, nodeIp: string): Obj {
    const meta = compact['metadata'] as Obj;
    const labels = meta['labels'] as Record<string, string>;
    const status = compact['status'] as Obj;
    const created = meta['creationTimestamp'] as string;
    const ready = ((status['conditions'] as Obj[])[0]!)['lastTransitionTime'] as string;
    const condition = (type: string, reason: string, message: string, value: string): Obj => ({
      lastHeartbeatTime: ready,
      lastTransitionTime: created,
      message,
      reason,
      status: value,
      type,
    });
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        annotations: {
          'alpha.kubernetes.io/provided-node-ip': nodeIp,
          'karpenter.k8s.aws/ec2nodeclass-hash': '4429766185223346380',
          'karpenter.k8s.aws/ec2nodeclass-hash-version': 'v4',
          'karpenter.sh/nodepool-hash': '12393960163388511505',
          'karpenter.sh/nodepool-hash-version': 'v3',
          'node.alpha.kubernetes.io/ttl': '0',
          'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        },
        creationTimestamp: created,
        labels: {
          ...labels,
          'beta.kubernetes.io/arch': 'amd64',
          'beta.kubernetes.io/instance-type': labels['node.kubernetes.io/instance-type']!,
          'beta.kubernetes.io/os': 'linux',
          'failure-domain.beta.kubernetes.io/region': 'us-east-1',
          'failure-domain.beta.kubernetes.io/zone': labels['topology.kubernetes.io/zone']!,
          'k8s.io/cloud-provider-aws': '8c1b5a6e0a0d4b8f9d2c3e4f5a6b7c8d',
          'karpenter.k8s.aws/instance-category': labels['karpenter.k8s.aws/instance-family']!.slice(0, 1),
          'karpenter.k8s.aws/instance-generation': labels['karpenter.k8s.aws/instance-family']!.replace(/\D/g, ''),
          'karpenter.k8s.aws/instance-hypervisor': 'nitro',
          'karpenter.sh/initialized': 'true',
          'karpenter.sh/registered': 'true',
          'topology.k8s.aws/zone-id': `use1-az${1 + 'abc'.indexOf(labels['topology.kubernetes.io/zone']!.slice(-1))}`,
        },
        managedFields: [
          { apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:alpha.kubernetes.io/provided-node-ip': {} }, 'f:labels': { '.': {}, 'f:beta.kubernetes.io/arch': {}, 'f:beta.kubernetes.io/os': {}, 'f:kubernetes.io/arch': {}, 'f:kubernetes.io/hostname': {}, 'f:kubernetes.io/os': {} } } }, manager: 'kubelet', operation: 'Update', time: created },
          { apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:karpenter.sh/initialized': {}, 'f:karpenter.sh/registered': {} } } }, manager: 'karpenter', operation: 'Update', time: ready },
          { apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:allocatable': { 'f:cpu': {}, 'f:ephemeral-storage': {}, 'f:memory': {} }, 'f:conditions': {}, 'f:images': {}, 'f:nodeInfo': {} } }, manager: 'kubelet', operation: 'Update', subresource: 'status', time: ready },
        ],
        name: meta['name'],
        resourceVersion: this.nextVersion(),
        uid: `${this.hex(8)}-${this.hex(4)}-4${this.hex(3)}-8${this.hex(3)}-${this.hex(12)}`,
      },
      spec: compact['spec'],
      status: {
        addresses: [
          { address: nodeIp, type: 'InternalIP' },
          { address: meta['name'], type: 'InternalDNS' },
          { address: meta['name'], type: 'Hostname' },
        ],
        allocatable: { ...(status['allocatable'] as Obj), 'ephemeral-storage': '95491281146', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0' },
        capacity: { ...(status['capacity'] as Obj), 'ephemeral-storage': '104845292Ki', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0' },
        conditions: [
          condition('MemoryPressure', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available', 'False'),
          condition('DiskPressure', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure', 'False'),
          condition('PIDPressure', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available', 'False'),
          { ...condition('Ready', 'KubeletReady', 'kubelet is posting ready status', 'True'), lastTransitionTime: ready },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        images: NODE_IMAGES.map(([name, sizeBytes]) => ({ names: [`${name.split(':')[0]}@sha256:${this.hex(64)}`, name], sizeBytes })),
        nodeInfo: {
          architecture: 'amd64',
          bootID: `${this.hex(8)}-${this.hex(4)}-${this.hex(4)}-${this.hex(4)}-${this.hex(12)}`,
          containerRuntimeVersion: 'containerd://1.7.25',
          kernelVersion: '6.1.128-136.201.amzn2023.x86_64',
          kubeProxyVersion: 'v1.31.4-eks-aeac579',
          kubeletVersion: 'v1.31.4-eks-aeac579',
          machineID: this.hex(32),
          operatingSystem: 'linux',
          osImage: 'Amazon Linux 2023.6.20250203',
          systemUUID: `ec2${this.hex(5)}-${this.hex(4)}-${this.hex(4)}-${this.hex(4)}-${this.hex(12)}`,
        },
      },
    };
  }
}
