// A new node of a pool launched from its launch template (the ec2 actuator) carries the kubelet's
// labels, the template's and those every node of the pool has, not everything Karpenter would put on it:
// a pod is planned onto it only by labels it will really have.
import { describe, expect, it } from 'vitest';
import type { Pod, Requirement } from '../../src/core/model/types.ts';
import { withLaunchedLabels } from '../../src/core/disruption/actuatorChoice.ts';
import { carriesLabel, launchedLabels, launchTemplateLabelKeys, newNodeLabels } from '../../src/core/scheduling/launchedLabels.ts';
import { daemonSet, instanceType, Mi, node, nodePool, pod } from '../builders.ts';
import { destinations, simulateScenario, spread } from './helpers.ts';

const CAPACITY_TYPE = 'karpenter.sh/capacity-type';
const FAMILY = 'karpenter.k8s.aws/instance-family';

/** m5 types carrying Karpenter's family label, as the bundled catalog's types do. */
const familyCatalog = () => ({
  region: 'us-east-1',
  instanceTypes: [
    instanceType('m5.large', { cpu: 1930, memory: 6903 * Mi, pods: 29 }, 0.096, { labels: { [FAMILY]: 'm5' } }),
    instanceType('m5.xlarge', { cpu: 3920, memory: 14162 * Mi, pods: 58 }, 0.192, { labels: { [FAMILY]: 'm5' } }),
  ],
});

const karpenterPool = () => nodePool({ templateLabels: { team: 'a' } });
/** The same pool launched from its launch template: its nodes carry `team` and the pool label besides the kubelet's. */
const templatePool = (...keys: string[]) => nodePool({ templateLabels: { team: 'a' }, launchedLabelKeys: new Set(['team', 'karpenter.sh/nodepool', ...keys]) });

const affinity = (...matchExpressions: Requirement[]): Partial<Pod> => ({ requiredNodeAffinity: [{ matchExpressions }] });
const moving = (extra: Partial<Pod>): Pod => pod({ name: 'p', requests: { cpu: 500, memory: 512 * Mi }, ...extra });

describe('a pod on a new node of a pool launched from its launch template', () => {
  it.each([
    { name: 'selecting the capacity type: only Karpenter labels it', extra: { nodeSelector: { [CAPACITY_TYPE]: 'on-demand' } }, karpenter: 'new:0', template: '-' },
    { name: "selecting the type's family: only Karpenter labels it", extra: { nodeSelector: { [FAMILY]: 'm5' } }, karpenter: 'new:0', template: '-' },
    { name: 'selecting a template label', extra: { nodeSelector: { team: 'a' } }, karpenter: 'new:0', template: 'new:0' },
    { name: "selecting the kubelet's arch label", extra: { nodeSelector: { 'kubernetes.io/arch': 'amd64' } }, karpenter: 'new:0', template: 'new:0' },
    { name: 'capacity type NotIn spot: a missing label meets it', extra: affinity({ key: CAPACITY_TYPE, operator: 'NotIn', values: ['spot'] }), karpenter: 'new:0', template: 'new:0' },
    { name: 'capacity type DoesNotExist: Karpenter always sets it', extra: affinity({ key: CAPACITY_TYPE, operator: 'DoesNotExist', values: [] }), karpenter: '-', template: 'new:0' },
    { name: 'capacity type Exists', extra: affinity({ key: CAPACITY_TYPE, operator: 'Exists', values: [] }), karpenter: 'new:0', template: '-' },
    {
      name: 'spread over capacity types: the node has no domain',
      extra: { labels: { app: 'w' }, topologySpread: [spread({ app: 'w' }, CAPACITY_TYPE)] },
      karpenter: 'new:0',
      template: '-',
    },
  ])('$name (Karpenter: $karpenter, launch template: $template)', ({ extra, karpenter, template }) => {
    const run = (pool: ReturnType<typeof nodePool>) => destinations(simulateScenario({ moving: [moving(extra)], pools: [pool], catalog: familyCatalog(), maxNewNodes: 1 }));
    expect(run(karpenterPool())).toEqual({ p: karpenter });
    expect(run(templatePool())).toEqual({ p: template });
  });

  it('carries a label every node of the pool already has (the same user data put it there)', () => {
    const result = simulateScenario({ moving: [moving({ nodeSelector: { [FAMILY]: 'm5' } })], pools: [templatePool(FAMILY)], catalog: familyCatalog(), maxNewNodes: 1 });
    expect(destinations(result)).toEqual({ p: 'new:0' });
  });

  it('says why the pod found no new node', () => {
    const result = simulateScenario({ moving: [moving({ nodeSelector: { [CAPACITY_TYPE]: 'on-demand' } })], pools: [templatePool()], catalog: familyCatalog(), maxNewNodes: 1 });
    expect(result.unschedulable[0]?.reason).toMatch(/NodePool default cannot satisfy its node selector \/ affinity/);
  });

  it("leaves out a daemonset that selects a label the node will lack: its requests are not the node's overhead", () => {
    const heavy = daemonSet({ template: { ...daemonSet().template, requests: { cpu: 1500, memory: 64 * Mi }, nodeSelector: { [CAPACITY_TYPE]: 'on-demand' } } });
    // 1000m fits an m5.large (1930m) only without the daemonset's 1500m.
    const run = (pool: ReturnType<typeof nodePool>) =>
      simulateScenario({ moving: [pod({ name: 'p', requests: { cpu: 1000, memory: 512 * Mi } })], pools: [pool], catalog: familyCatalog(), daemonSets: [heavy], maxNewNodes: 1 }).newNodes[0]?.options.map((o) => o.instanceType.name);
    expect(run(karpenterPool())).toEqual(['m5.xlarge']);
    expect(run(templatePool())).toEqual(['m5.large', 'm5.xlarge']);
  });
});

describe('withLaunchedLabels', () => {
  it('marks only the pools the ec2 actuator acts on', () => {
    const pools = [nodePool({ name: 'ec2' }), nodePool({ name: 'karpenter' }), nodePool({ name: 'unchosen' })];
    const choices = new Map([
      ['ec2', { actuator: 'ec2' as const, why: 'KARPENTER=absent' }],
      ['karpenter', { actuator: 'karpenter' as const, why: 'KARPENTER=present' }],
    ]);
    const marked = withLaunchedLabels(pools, [], choices);
    expect(marked.map((p) => p.launchedLabelKeys === undefined)).toEqual([false, true, true]);
    expect(marked[1]).toBe(pools[1]);
  });
});

describe('launchTemplateLabelKeys', () => {
  it('is the template labels, the pool label and the keys every node of the pool has', () => {
    const pool = nodePool({ name: 'workers', templateLabels: { team: 'a' } });
    const nodes = [
      node({ name: 'w1', nodePool: 'workers', labels: { 'karpenter.sh/nodepool': 'workers', tier: 'x' } }),
      node({ name: 'w2', nodePool: 'workers', labels: { 'karpenter.sh/nodepool': 'workers', tier: 'y', only: 'w2' } }),
      node({ name: 'o1', nodePool: 'other', labels: { 'karpenter.sh/nodepool': 'other', elsewhere: 'z' } }),
    ];
    const keys = launchTemplateLabelKeys(pool, nodes);
    expect([...keys].sort()).toEqual(expect.arrayContaining(['karpenter.sh/nodepool', 'team', 'tier']));
    expect(keys.has('only')).toBe(false);
    expect(keys.has('elsewhere')).toBe(false);
  });

  it('is the template labels and the pool label when the pool has no node', () => {
    expect([...launchTemplateLabelKeys(nodePool({ templateLabels: { team: 'a' } }), [])].sort()).toEqual(['karpenter.sh/nodepool', 'team']);
  });
});

describe('the labels of a launched node', () => {
  const launched = (pool: ReturnType<typeof nodePool>) =>
    newNodeLabels({ name: 'n1', typeLabels: { [FAMILY]: 'm5', 'kubernetes.io/arch': 'amd64' }, instanceType: 'm5.large', capacityType: 'spot', zone: 'us-east-1a', pool, poolName: pool.name });

  it('from Karpenter: the type, the template, hostname, zone, instance type, capacity type and pool', () => {
    expect(launched(karpenterPool())).toEqual({
      [FAMILY]: 'm5',
      'kubernetes.io/arch': 'amd64',
      team: 'a',
      'kubernetes.io/hostname': 'n1',
      'node.kubernetes.io/instance-type': 'm5.large',
      [CAPACITY_TYPE]: 'spot',
      'topology.kubernetes.io/zone': 'us-east-1a',
      'karpenter.sh/nodepool': 'default',
    });
  });

  it("from a launch template: without Karpenter's own labels", () => {
    expect(launched(templatePool())).toEqual({
      'kubernetes.io/arch': 'amd64',
      team: 'a',
      'kubernetes.io/hostname': 'n1',
      'node.kubernetes.io/instance-type': 'm5.large',
      'topology.kubernetes.io/zone': 'us-east-1a',
      'karpenter.sh/nodepool': 'default',
    });
    expect(launchedLabels(undefined, { a: '1' })).toEqual({ a: '1' });
    // A replacement promised without a zone or pool (an unfinished command's, recorded without them).
    const bare = newNodeLabels({ name: 'n2', typeLabels: {}, instanceType: 'm5.large', capacityType: 'on-demand', zone: undefined, pool: undefined, poolName: undefined });
    expect(bare).toStrictEqual({ 'kubernetes.io/hostname': 'n2', 'node.kubernetes.io/instance-type': 'm5.large', [CAPACITY_TYPE]: 'on-demand' });
    expect(carriesLabel(templatePool(), 'failure-domain.beta.kubernetes.io/zone')).toBe(true);
  });
});
