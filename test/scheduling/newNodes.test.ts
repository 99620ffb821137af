// New nodes: which NodePool and instance types can take the pods that existing nodes cannot.
import { describe, expect, it } from 'vitest';
import type { Catalog, Node, NodePool, Pod } from '../../src/core/model/types.ts';
import type { NewNodePlan, SimulationResult } from '../../src/core/scheduling/types.ts';
import { daemonSet, Gi, instanceType, Mi, node, nodePool, offering, on, pod } from '../builders.ts';
import { destinations, HOSTNAME, labelled, reasons, simulateScenario, spread, term, ZONE, type Scenario } from './helpers.ts';

const optionNames = (plan: NewNodePlan | undefined): string[] => (plan?.options ?? []).map((o) => o.instanceType.name);
const requirement = (plan: NewNodePlan | undefined, key: string) => plan?.requirements.find((r) => r.key === key);
const cpuPod = (name: string, cpu: number, extra: Partial<Pod> = {}): Pod => pod({ name, requests: { cpu, memory: 512 * Mi }, ...extra });

/** Instance types carrying the AWS cpu label, plus one with a GPU label. */
function labelledCatalog(): Catalog {
  const cpuLabel = (n: number) => ({ 'karpenter.k8s.aws/instance-cpu': String(n), 'karpenter.k8s.aws/instance-family': 'c6' });
  return {
    region: 'us-east-1',
    instanceTypes: [
      instanceType('c6.large', { cpu: 1930, memory: 3 * Gi, pods: 29 }, 0.085, { labels: cpuLabel(2) }),
      instanceType('c6.xlarge', { cpu: 3920, memory: 6 * Gi, pods: 58 }, 0.17, { labels: cpuLabel(4) }),
      instanceType('c6.2xlarge', { cpu: 7910, memory: 13 * Gi, pods: 58 }, 0.34, { labels: cpuLabel(8) }),
      instanceType('g5.xlarge', { cpu: 3920, memory: 14 * Gi, pods: 58 }, 1.0, {
        labels: { 'karpenter.k8s.aws/instance-cpu': '4', 'karpenter.k8s.aws/instance-gpu-count': '1', 'karpenter.k8s.aws/instance-family': 'g5' },
      }),
    ],
  };
}

function plan(result: SimulationResult, index = 0): NewNodePlan | undefined {
  return result.newNodes[index];
}

describe('maxNewNodes', () => {
  it.each([
    { name: '0: a pod that fits no existing node stays unscheduled', maxNewNodes: 0, expected: '-' },
    { name: '1: the same pod gets a new node', maxNewNodes: 1, expected: 'new:0' },
  ])('$name', ({ maxNewNodes, expected }) => {
    const result = simulateScenario({ moving: [cpuPod('p', 1000)], maxNewNodes });
    expect(destinations(result)).toEqual({ p: expected });
    expect(result.newNodes).toHaveLength(maxNewNodes);
  });

  it('never opens more than maxNewNodes', () => {
    const anti = { podAntiAffinity: [term({ app: 'r' }, HOSTNAME)] };
    const replicas = ['r1', 'r2', 'r3'].map((name) => labelled(name, { app: 'r' }, anti));
    const one = simulateScenario({ moving: replicas, maxNewNodes: 1 });
    expect(one.newNodes).toHaveLength(1);
    expect(one.unschedulable).toHaveLength(2);
    expect(reasons(one)[0]).toMatch(/anti-affinity of pod default\/r1 rules out new node 0/);
    expect(reasons(one)[0]).toMatch(/no further new node may be planned \(at most 1\)/);
    const three = simulateScenario({ moving: replicas, maxNewNodes: 3 });
    expect(three.allScheduled).toBe(true);
    expect(three.newNodes).toHaveLength(3);
  });
});

describe('new-node options', () => {
  it('keeps every instance type that can hold the pods, cheapest first, with on-demand offerings cheapest first', () => {
    const result = simulateScenario({ moving: [cpuPod('p', 100)], maxNewNodes: 1 });
    const node0 = plan(result)!;
    expect(node0.nodePool).toBe('default');
    expect(optionNames(node0)).toEqual(['m5.large', 'm5.xlarge', 'm5.2xlarge', 'm5.4xlarge']);
    expect(node0.options[0]!.cheapestPricePerHour).toBe(0.096);
    expect(node0.options[0]!.offerings.map((o) => `${o.zone}/${o.capacityType}`)).toEqual([
      'us-east-1a/on-demand',
      'us-east-1b/on-demand',
      'us-east-1c/on-demand',
    ]);
    expect(requirement(node0, 'karpenter.sh/capacity-type')).toEqual({ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] });
  });

  it('narrows the options as pods join the node', () => {
    const one = simulateScenario({ moving: [cpuPod('a', 1500)], maxNewNodes: 1 });
    expect(optionNames(plan(one))).toEqual(['m5.large', 'm5.xlarge', 'm5.2xlarge', 'm5.4xlarge']);
    const two = simulateScenario({ moving: [cpuPod('a', 1500), cpuPod('b', 1500)], maxNewNodes: 1 });
    expect(destinations(two)).toEqual({ a: 'new:0', b: 'new:0' });
    expect(optionNames(plan(two))).toEqual(['m5.xlarge', 'm5.2xlarge', 'm5.4xlarge']);
  });

  it('narrows zones to a pod node affinity and to bound volume zones', () => {
    const result = simulateScenario({
      moving: [
        cpuPod('a', 500, { requiredNodeAffinity: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: ['us-east-1a', 'us-east-1b'] }] }] }),
        cpuPod('b', 400, { volumeZones: ['us-east-1b'] }),
      ],
      maxNewNodes: 1,
    });
    expect(destinations(result)).toEqual({ a: 'new:0', b: 'new:0' });
    expect(requirement(plan(result), ZONE)?.values).toEqual(['us-east-1b']);
    expect(plan(result)!.options.every((o) => o.offerings.every((x) => x.zone === 'us-east-1b'))).toBe(true);
  });

  it('a pod whose volume zone the node can no longer reach opens no second node past the limit', () => {
    const result = simulateScenario({ moving: [cpuPod('a', 500, { volumeZones: ['us-east-1a'] }), cpuPod('b', 400, { volumeZones: ['us-east-1c'] })], maxNewNodes: 1 });
    expect(destinations(result)).toEqual({ a: 'new:0', b: '-' });
  });

  it('tries the affinity terms in order on a new node (ORed)', () => {
    const result = simulateScenario({
      moving: [
        cpuPod('p', 500, {
          requiredNodeAffinity: [
            { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] },
            { matchExpressions: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.xlarge'] }] },
          ],
        }),
      ],
      maxNewNodes: 1,
    });
    expect(optionNames(plan(result))).toEqual(['m5.xlarge']);
  });

  it('leaves out offerings that are not available, and types without any', () => {
    const catalog: Catalog = {
      region: 'us-east-1',
      instanceTypes: [
        { ...instanceType('gone.large', { cpu: 1930, memory: 7 * Gi, pods: 29 }, 0.01), offerings: [offering({ pricePerHour: 0.01, available: false })] },
        {
          ...instanceType('m5.large', { cpu: 1930, memory: 7 * Gi, pods: 29 }, 0.096),
          offerings: [offering({ zone: 'us-east-1a', available: false }), offering({ zone: 'us-east-1c' })],
        },
      ],
    };
    const node0 = plan(simulateScenario({ moving: [cpuPod('p', 100)], maxNewNodes: 1, catalog }))!;
    expect(optionNames(node0)).toEqual(['m5.large']);
    expect(node0.options[0]!.offerings.map((o) => o.zone)).toEqual(['us-east-1c']);
  });
});

describe('NodePool requirements, labels and taints on new nodes', () => {
  interface Case {
    readonly name: string;
    readonly pool: Partial<NodePool>;
    readonly pod?: Partial<Pod>;
    readonly catalog?: Catalog;
    /** Instance types offered, or '-' when no new node can be opened. */
    readonly expected: readonly string[] | '-';
    readonly reason?: RegExp;
  }
  const withCapacityType = (requirements: NodePool['requirements']): NodePool['requirements'] => [
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    ...requirements,
  ];
  it.each<Case>([
    {
      name: 'instance-type In restricts the types',
      pool: { requirements: withCapacityType([{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.2xlarge', 'm5.4xlarge'] }]) },
      expected: ['m5.2xlarge', 'm5.4xlarge'],
    },
    {
      name: 'instance-type NotIn removes types',
      pool: { requirements: withCapacityType([{ key: 'node.kubernetes.io/instance-type', operator: 'NotIn', values: ['m5.large', 'm5.4xlarge'] }]) },
      expected: ['m5.xlarge', 'm5.2xlarge'],
    },
    {
      name: 'instance-family In (derived from the name) allows the family',
      pool: { requirements: withCapacityType([{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5'] }]) },
      expected: ['m5.large', 'm5.xlarge', 'm5.2xlarge', 'm5.4xlarge'],
    },
    {
      name: 'instance-family In another family forbids every type',
      pool: { requirements: withCapacityType([{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c5'] }]) },
      expected: '-',
    },
    {
      name: 'arch arm64 forbids the amd64 types',
      pool: { requirements: withCapacityType([{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }]) },
      expected: '-',
    },
    {
      name: 'Gt on instance-cpu keeps the larger types',
      pool: { requirements: withCapacityType([{ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gt', values: ['2'] }]) },
      catalog: labelledCatalog(),
      expected: ['c6.xlarge', 'c6.2xlarge', 'g5.xlarge'],
    },
    {
      name: 'Lt on instance-cpu keeps the smaller types',
      pool: { requirements: withCapacityType([{ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lt', values: ['8'] }]) },
      catalog: labelledCatalog(),
      expected: ['c6.large', 'c6.xlarge', 'g5.xlarge'],
    },
    {
      name: 'DoesNotExist on the GPU label drops the GPU type',
      pool: { requirements: withCapacityType([{ key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist', values: [] }]) },
      catalog: labelledCatalog(),
      expected: ['c6.large', 'c6.xlarge', 'c6.2xlarge'],
    },
    {
      name: 'a pod asking for the GPU label with Exists gets only the GPU type',
      pool: {},
      pod: { requiredNodeAffinity: [{ matchExpressions: [{ key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'Exists', values: [] }] }] },
      catalog: labelledCatalog(),
      expected: ['g5.xlarge'],
    },
    {
      name: 'a pod with Gt on instance-cpu narrows the options',
      pool: {},
      pod: { requiredNodeAffinity: [{ matchExpressions: [{ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gt', values: ['4'] }] }] },
      catalog: labelledCatalog(),
      expected: ['c6.2xlarge'],
    },
    {
      name: 'a template label satisfies the pod nodeSelector',
      pool: { templateLabels: { team: 'a' } },
      pod: { nodeSelector: { team: 'a' } },
      expected: ['m5.large', 'm5.xlarge', 'm5.2xlarge', 'm5.4xlarge'],
    },
    {
      name: 'a label no pool sets forbids a new node',
      pool: {},
      pod: { nodeSelector: { team: 'a' } },
      expected: '-',
      reason: /node selector \/ affinity/,
    },
    {
      name: 'a template taint the pod does not tolerate forbids',
      pool: { templateTaints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }] },
      expected: '-',
      reason: /no NodePool can launch a node it tolerates/,
    },
    {
      name: 'a tolerated template taint allows',
      pool: { templateTaints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }] },
      pod: { tolerations: [{ key: 'dedicated', operator: 'Exists' }] },
      expected: ['m5.large', 'm5.xlarge', 'm5.2xlarge', 'm5.4xlarge'],
    },
    {
      name: 'a PreferNoSchedule template taint never blocks',
      pool: { templateTaints: [{ key: 'dedicated', value: 'batch', effect: 'PreferNoSchedule' }] },
      expected: ['m5.large', 'm5.xlarge', 'm5.2xlarge', 'm5.4xlarge'],
    },
    {
      name: 'a zone requirement keeps only that zone',
      pool: { requirements: withCapacityType([{ key: ZONE, operator: 'In', values: ['us-east-1c'] }]) },
      pod: { volumeZones: ['us-east-1c'] },
      expected: ['m5.large', 'm5.xlarge', 'm5.2xlarge', 'm5.4xlarge'],
    },
    {
      name: 'a zone requirement the pod volume is not in forbids',
      pool: { requirements: withCapacityType([{ key: ZONE, operator: 'In', values: ['us-east-1c'] }]) },
      pod: { volumeZones: ['us-east-1a'] },
      expected: '-',
      reason: /volume zone/,
    },
  ])('$name', (c) => {
    const result = simulateScenario({
      moving: [cpuPod('p', 500, c.pod ?? {})],
      pools: [nodePool(c.pool)],
      maxNewNodes: 1,
      ...(c.catalog ? { catalog: c.catalog } : {}),
    });
    if (c.expected === '-') {
      expect(result.newNodes).toEqual([]);
      expect(result.allScheduled).toBe(false);
      if (c.reason) expect(reasons(result)[0]).toMatch(c.reason);
    } else {
      expect(optionNames(plan(result))).toEqual(c.expected);
    }
  });

  it('a spot pool offers spot capacity (cheapest first)', () => {
    const pool = nodePool({ requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }] });
    const node0 = plan(simulateScenario({ moving: [cpuPod('p', 100)], pools: [pool], maxNewNodes: 1 }))!;
    expect(node0.options[0]!.offerings.every((o) => o.capacityType === 'spot')).toBe(true);
    expect(node0.options[0]!.cheapestPricePerHour).toBe(0.035);
  });

  it('a pool without a capacity-type requirement launches on-demand only', () => {
    const pool = nodePool({ requirements: [] });
    const node0 = plan(simulateScenario({ moving: [cpuPod('p', 100)], pools: [pool], maxNewNodes: 1 }))!;
    expect(node0.options.flatMap((o) => o.offerings).every((o) => o.capacityType === 'on-demand')).toBe(true);
  });
});

describe('NodePool order', () => {
  const only = (name: string, weight: number, type: string, extra: Partial<NodePool> = {}): NodePool =>
    nodePool({
      name,
      weight,
      requirements: [
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [type] },
      ],
      ...extra,
    });
  it.each([
    { name: 'the heavier pool wins even when pricier', pools: [only('cheap', 0, 'm5.large'), only('heavy', 10, 'm5.4xlarge')], expected: 'heavy' },
    { name: 'equal weights: by name', pools: [only('b-pool', 5, 'm5.large'), only('a-pool', 5, 'm5.xlarge')], expected: 'a-pool' },
    {
      name: 'a pool the pod cannot use is skipped',
      pools: [only('tainted', 10, 'm5.large', { templateTaints: [{ key: 'x', effect: 'NoSchedule' }] }), only('plain', 0, 'm5.xlarge')],
      expected: 'plain',
    },
  ])('$name', ({ pools, expected }) => {
    const result = simulateScenario({ moving: [cpuPod('p', 500)], pools, maxNewNodes: 1 });
    expect(plan(result)?.nodePool).toBe(expected);
  });

  it('newNodePools restricts the pools a new node may come from', () => {
    const pools = [only('first', 10, 'm5.large'), only('second', 0, 'm5.xlarge')];
    const result = simulateScenario({ moving: [cpuPod('p', 500)], pools, maxNewNodes: 1, newNodePools: ['second'] });
    expect(plan(result)?.nodePool).toBe('second');
    const none = simulateScenario({ moving: [cpuPod('p', 500)], pools, maxNewNodes: 1, newNodePools: [] });
    expect(reasons(none)[0]).toMatch(/no NodePool may launch new nodes/);
  });
});

describe('daemonset overhead on new nodes', () => {
  const heavyDaemon = (extra: Parameters<typeof daemonSet>[0] = {}) =>
    daemonSet({ name: 'agent', ...extra, template: { ...daemonSet().template, requests: { cpu: 500, memory: 256 * Mi }, ...(extra.template ?? {}) } });
  it.each([
    { name: 'no daemonset: the smallest type fits a 1500m pod', daemonSets: [], expected: 'm5.large' },
    { name: 'a daemonset that runs everywhere rules the smallest type out', daemonSets: [heavyDaemon()], expected: 'm5.xlarge' },
    {
      name: 'a daemonset whose nodeSelector the node will not match adds nothing',
      daemonSets: [heavyDaemon({ template: { ...heavyDaemon().template, nodeSelector: { 'kubernetes.io/arch': 'arm64' } } })],
      expected: 'm5.large',
    },
    {
      name: 'a daemonset that does not tolerate the pool taint adds nothing',
      daemonSets: [heavyDaemon({ template: { ...heavyDaemon().template, tolerations: [] } })],
      pool: nodePool({ templateTaints: [{ key: 'dedicated', effect: 'NoSchedule' }] }),
      expected: 'm5.large',
    },
    {
      name: 'a daemonset that tolerates the pool taint adds its requests',
      daemonSets: [heavyDaemon({ template: { ...heavyDaemon().template, tolerations: [{ key: 'dedicated', operator: 'Exists' }] } })],
      pool: nodePool({ templateTaints: [{ key: 'dedicated', effect: 'NoSchedule' }] }),
      expected: 'm5.xlarge',
    },
  ])('$name', ({ daemonSets, pool, expected }) => {
    const tolerations = [{ key: 'dedicated', operator: 'Exists' as const }];
    const result = simulateScenario({ moving: [cpuPod('p', 1500, { tolerations })], daemonSets, maxNewNodes: 1, ...(pool ? { pools: [pool] } : {}) });
    expect(optionNames(plan(result))[0]).toBe(expected);
  });

  it('a daemonset takes a pod slot on the new node', () => {
    const catalog: Catalog = { region: 'us-east-1', instanceTypes: [instanceType('tiny.large', { cpu: 4000, memory: 8 * Gi, pods: 2 }, 0.05)] };
    const result = simulateScenario({ moving: [cpuPod('a', 100), cpuPod('b', 100)], daemonSets: [daemonSet()], catalog, maxNewNodes: 1 });
    expect(destinations(result)).toEqual({ a: 'new:0', b: '-' });
  });

  it('a daemonset host port is taken on the new node', () => {
    const ds = daemonSet({ template: { ...daemonSet().template, hostPorts: [{ port: 9100, protocol: 'TCP' }] } });
    const result = simulateScenario({ moving: [cpuPod('a', 100, { hostPorts: [{ port: 9100, protocol: 'TCP' }] })], daemonSets: [ds], maxNewNodes: 1 });
    expect(result.allScheduled).toBe(false);
    expect(reasons(result)[0]).toMatch(/host port 9100\/TCP/);
  });
});

describe('NodePool limits', () => {
  const fullPoolNode = (capacityCpu: number): Node =>
    node({ name: 'member', allocatable: { cpu: 0, memory: 0, pods: 0 }, capacity: { cpu: capacityCpu, memory: 8 * Gi, pods: 29 } });
  it.each<{ name: string; limits: Record<string, number>; nodes: Node[]; cpu: number; expected: readonly string[] | '-' }>([
    { name: 'no limits: every type', limits: {}, nodes: [], cpu: 1000, expected: ['m5.large', 'm5.xlarge', 'm5.2xlarge', 'm5.4xlarge'] },
    { name: 'cpu limit keeps the types within it', limits: { cpu: 8000 }, nodes: [], cpu: 1000, expected: ['m5.large', 'm5.xlarge', 'm5.2xlarge'] },
    { name: 'existing pool nodes use up the limit', limits: { cpu: 8000 }, nodes: [fullPoolNode(4000)], cpu: 1000, expected: ['m5.large', 'm5.xlarge'] },
    { name: 'a type the pod needs would exceed the limit (forbids)', limits: { cpu: 8000 }, nodes: [fullPoolNode(6000)], cpu: 3000, expected: '-' },
    { name: 'memory limits count too', limits: { memory: 16 * Gi }, nodes: [fullPoolNode(0)], cpu: 1000, expected: ['m5.large'] },
  ])('$name', ({ limits, nodes, cpu, expected }) => {
    const result = simulateScenario({ nodes, moving: [cpuPod('p', cpu)], pools: [nodePool({ limits })], maxNewNodes: 1 });
    if (expected === '-') {
      expect(result.newNodes).toEqual([]);
      expect(reasons(result)[0]).toMatch(/NodePool default would exceed its limits/);
    } else {
      expect(optionNames(plan(result))).toEqual(expected);
    }
  });

  it('the excluded node no longer counts toward the limit', () => {
    // `old` (capacity 2000m) is excluded: 4000m limit leaves room for m5.xlarge (3920m).
    const result = simulateScenario({ moving: [cpuPod('p', 3000)], pools: [nodePool({ limits: { cpu: 4000 } })], maxNewNodes: 1 });
    expect(optionNames(plan(result))).toEqual(['m5.xlarge']);
  });

  it('a planned new node reserves its largest option against the limit', () => {
    const anti = { podAntiAffinity: [term({ app: 'r' }, HOSTNAME)] };
    const replicas = ['r1', 'r2'].map((name) => labelled(name, { app: 'r' }, { ...anti, requests: { cpu: 1500, memory: Gi } }));
    const result = simulateScenario({ moving: replicas, pools: [nodePool({ limits: { cpu: 5000 } })], maxNewNodes: 2 });
    expect(optionNames(plan(result))).toEqual(['m5.large', 'm5.xlarge']);
    expect(result.newNodes).toHaveLength(1);
    expect(reasons(result)[0]).toMatch(/would exceed its limits/);
  });
});

describe('topology on new nodes', () => {
  const fullNode = (name: string, zone: string): Node => node({ name, zone, allocatable: { cpu: 0, memory: 0, pods: 110 } });
  const scenario = (moving: Pod, pods: Pod[]): Scenario => ({
    nodes: [fullNode('a1', 'us-east-1a'), fullNode('b1', 'us-east-1b')],
    pods,
    moving: [moving],
    maxNewNodes: 1,
  });
  it.each([
    {
      name: 'zone spread picks the empty zone',
      scenario: scenario(labelled('web', { app: 'web' }, { topologySpread: [spread({ app: 'web' }, ZONE)] }), [
        ...on('a1', labelled('w1', { app: 'web' })),
        ...on('b1', labelled('w2', { app: 'web' })),
      ]),
      zones: ['us-east-1c'],
    },
    {
      name: 'zone anti-affinity keeps the new node out of the zone of a matching pod',
      scenario: scenario(labelled('web', { app: 'web' }, { podAntiAffinity: [term({ app: 'web' }, ZONE)] }), on('a1', labelled('w1', { app: 'web' }))),
      zones: ['us-east-1b', 'us-east-1c'],
    },
    {
      name: 'symmetric anti-affinity of an existing pod keeps the new node out of its zone',
      scenario: scenario(labelled('web', { app: 'web' }), on('b1', labelled('db', { app: 'db' }, { podAntiAffinity: [term({ app: 'web' }, ZONE)] }))),
      zones: ['us-east-1a', 'us-east-1c'],
    },
    {
      name: 'zone affinity puts the new node in the zone of a matching pod',
      scenario: scenario(labelled('web', { app: 'web' }, { podAffinity: [term({ app: 'cache' }, ZONE)] }), on('b1', labelled('c1', { app: 'cache' }))),
      zones: ['us-east-1b'],
    },
  ])('$name', ({ scenario: s, zones }) => {
    const result = simulateScenario(s);
    expect(result.allScheduled).toBe(true);
    expect(requirement(plan(result), ZONE)?.values).toEqual(zones);
  });

  it('hostname affinity to a pod on an existing node cannot be met by a new node', () => {
    const result = simulateScenario(scenario(labelled('web', { app: 'web' }, { podAffinity: [term({ app: 'cache' }, HOSTNAME)] }), on('b1', labelled('c1', { app: 'cache' }))));
    expect(result.allScheduled).toBe(false);
  });

  it('zone spread with every zone ahead forbids when maxSkew would be exceeded', () => {
    const pool = nodePool({
      requirements: [
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        { key: ZONE, operator: 'In', values: ['us-east-1a'] },
      ],
    });
    const result = simulateScenario({
      ...scenario(labelled('web', { app: 'web' }, { topologySpread: [spread({ app: 'web' }, ZONE)] }), on('a1', labelled('w1', { app: 'web' }))),
      pools: [pool],
    });
    expect(result.allScheduled).toBe(false);
    expect(reasons(result)[0]).toMatch(/topology spread/);
  });

  it('self-affine replicas share the new node they open', () => {
    const replicas = ['s1', 's2'].map((name) => labelled(name, { app: 's' }, { podAffinity: [term({ app: 's' }, ZONE)] }));
    const result = simulateScenario({ moving: replicas, maxNewNodes: 1 });
    expect(destinations(result)).toEqual({ s1: 'new:0', s2: 'new:0' });
  });
});
