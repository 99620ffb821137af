// Constraints checked against existing nodes: each case moves one pod off the excluded node `old`
// and says where it must land ('-' = nowhere).
import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/core/model/types.ts';
import { daemonSetPod, Gi, Mi, node, on, pod } from '../builders.ts';
import { destinationOf, reasons, simulateScenario, type Scenario } from './helpers.ts';

interface Case {
  readonly name: string;
  readonly scenario: Scenario;
  readonly expected: string;
  readonly reason?: RegExp;
}

function run(c: Case): void {
  const result = simulateScenario(c.scenario);
  expect(destinationOf(result)).toBe(c.expected);
  expect(result.allScheduled).toBe(c.expected !== '-');
  if (c.reason) expect(reasons(result)[0]).toMatch(c.reason);
}

const small = (allocatable: Node['allocatable'], extra: Partial<Node> = {}): Node => node({ name: 'target', allocatable, ...extra });
const movingPod = (extra: Partial<Pod> = {}): Pod => pod({ name: 'mover', requests: { cpu: 200, memory: 256 * Mi }, ...extra });

describe('pod requests and node capacity', () => {
  it.each<Case>([
    {
      name: 'allows a pod that fits the free cpu and memory',
      scenario: { nodes: [small({ cpu: 1000, memory: Gi, pods: 10 })], moving: [movingPod()] },
      expected: 'target',
    },
    {
      name: 'forbids a pod needing more cpu than is free',
      scenario: {
        nodes: [small({ cpu: 1000, memory: Gi, pods: 10 })],
        pods: on('target', pod({ requests: { cpu: 900, memory: 0 } })),
        moving: [movingPod()],
      },
      expected: '-',
      reason: /^no node has room for 200m cpu \/ 256Mi memory$/,
    },
    {
      name: 'forbids a pod needing more memory than is free',
      scenario: { nodes: [small({ cpu: 4000, memory: 200 * Mi, pods: 10 })], moving: [movingPod()] },
      expected: '-',
    },
    {
      name: 'counts daemonset pods as used capacity (forbids)',
      scenario: {
        nodes: [small({ cpu: 1000, memory: Gi, pods: 10 })],
        pods: [...on('target', pod({ requests: { cpu: 700, memory: 0 } })), daemonSetPod('target', { requests: { cpu: 150, memory: 0 } })],
        moving: [movingPod()],
      },
      expected: '-',
    },
    {
      name: 'ignores finished pods when counting used capacity (allows)',
      scenario: {
        nodes: [small({ cpu: 1000, memory: Gi, pods: 10 })],
        pods: on('target', pod({ phase: 'Succeeded', requests: { cpu: 900, memory: 0 } })),
        moving: [movingPod()],
      },
      expected: 'target',
    },
    {
      name: 'forbids a node whose pod slots are all used (max pods)',
      scenario: {
        nodes: [small({ cpu: 4000, memory: 4 * Gi, pods: 2 })],
        pods: on('target', pod({ requests: {} }), pod({ requests: {} })),
        moving: [movingPod()],
      },
      expected: '-',
    },
    {
      name: 'allows a node with one pod slot left',
      scenario: {
        nodes: [small({ cpu: 4000, memory: 4 * Gi, pods: 3 })],
        pods: on('target', pod({ requests: {} }), pod({ requests: {} })),
        moving: [movingPod()],
      },
      expected: 'target',
    },
    {
      name: 'forbids an extended resource the node does not have',
      scenario: { nodes: [small({ cpu: 4000, memory: 4 * Gi, pods: 10 })], moving: [movingPod({ requests: { cpu: 100, 'nvidia.com/gpu': 1 } })] },
      expected: '-',
      reason: /1 nvidia\.com\/gpu/,
    },
    {
      name: 'allows an extended resource the node has free',
      scenario: {
        nodes: [small({ cpu: 4000, memory: 4 * Gi, pods: 10, 'nvidia.com/gpu': 1 })],
        moving: [movingPod({ requests: { cpu: 100, 'nvidia.com/gpu': 1 } })],
      },
      expected: 'target',
    },
  ])('$name', run);

  it('picks the best fit: the feasible node with the least cpu left, ties by name', () => {
    const nodes = [
      node({ name: 'roomy', allocatable: { cpu: 4000, memory: 8 * Gi, pods: 29 } }),
      node({ name: 'tight-b', allocatable: { cpu: 1000, memory: 8 * Gi, pods: 29 } }),
      node({ name: 'tight-a', allocatable: { cpu: 1000, memory: 8 * Gi, pods: 29 } }),
      node({ name: 'too-small', allocatable: { cpu: 100, memory: 8 * Gi, pods: 29 } }),
    ];
    expect(destinationOf(simulateScenario({ nodes, moving: [movingPod()] }))).toBe('tight-a');
  });

  it('counts pods placed earlier in the same simulation', () => {
    const result = simulateScenario({
      nodes: [small({ cpu: 1000, memory: 4 * Gi, pods: 10 })],
      moving: [pod({ name: 'a', requests: { cpu: 600 } }), pod({ name: 'b', requests: { cpu: 600 } })],
    });
    expect(result.placements.map((p) => p.pod.name)).toHaveLength(1);
    expect(result.unschedulable).toHaveLength(1);
  });
});

describe('which existing nodes may receive pods', () => {
  const fits = { cpu: 1000, memory: Gi, pods: 10 };
  it.each<Case>([
    { name: 'a ready, schedulable managed node receives', scenario: { nodes: [small(fits)], moving: [movingPod()] }, expected: 'target' },
    {
      name: 'an unmanaged node (no NodePool) receives',
      scenario: { nodes: [small(fits, { nodePool: undefined })], moving: [movingPod()] },
      expected: 'target',
    },
    { name: 'a node that is not Ready does not', scenario: { nodes: [small(fits, { ready: false })], moving: [movingPod()] }, expected: '-' },
    {
      name: 'a cordoned node does not',
      scenario: { nodes: [small(fits, { unschedulable: true })], moving: [movingPod()] },
      expected: '-',
      reason: /no existing node can receive pods/,
    },
    { name: 'a deleting node does not', scenario: { nodes: [small(fits, { deleting: true })], moving: [movingPod()] }, expected: '-' },
    {
      name: 'a node tainted karpenter.sh/disrupted does not (even when tolerated)',
      scenario: {
        nodes: [small(fits, { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] })],
        moving: [movingPod({ tolerations: [{ operator: 'Exists' }] })],
      },
      expected: '-',
    },
  ])('$name', run);

  it('an excluded node does not', () => {
    const result = simulateScenario({ nodes: [], moving: [movingPod()] });
    expect(destinationOf(result)).toBe('-');
    expect(reasons(result)[0]).toBe('no existing node can receive pods');
  });
});

describe('taints and tolerations', () => {
  const tainted = (effect: 'NoSchedule' | 'NoExecute' | 'PreferNoSchedule'): Node[] => [
    small({ cpu: 1000, memory: Gi, pods: 10 }, { taints: [{ key: 'dedicated', value: 'gpu', effect }] }),
  ];
  it.each<Case>([
    { name: 'NoSchedule without toleration forbids', scenario: { nodes: tainted('NoSchedule'), moving: [movingPod()] }, expected: '-', reason: /dedicated=gpu:NoSchedule/ },
    { name: 'NoExecute without toleration forbids', scenario: { nodes: tainted('NoExecute'), moving: [movingPod()] }, expected: '-' },
    { name: 'PreferNoSchedule never blocks', scenario: { nodes: tainted('PreferNoSchedule'), moving: [movingPod()] }, expected: 'target' },
    {
      name: 'Equal toleration with the value allows',
      scenario: { nodes: tainted('NoSchedule'), moving: [movingPod({ tolerations: [{ key: 'dedicated', value: 'gpu' }] })] },
      expected: 'target',
    },
    {
      name: 'Equal toleration with another value forbids',
      scenario: { nodes: tainted('NoSchedule'), moving: [movingPod({ tolerations: [{ key: 'dedicated', value: 'cpu' }] })] },
      expected: '-',
    },
    {
      name: 'Exists toleration on the key allows',
      scenario: { nodes: tainted('NoExecute'), moving: [movingPod({ tolerations: [{ key: 'dedicated', operator: 'Exists' }] })] },
      expected: 'target',
    },
    {
      name: 'toleration for another effect forbids',
      scenario: {
        nodes: tainted('NoSchedule'),
        moving: [movingPod({ tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }] })],
      },
      expected: '-',
    },
  ])('$name', run);
});

describe('nodeSelector and required node affinity on existing nodes', () => {
  const nodes = [small({ cpu: 1000, memory: Gi, pods: 10 }, { labels: { team: 'a', tier: 'web' } })];
  it.each<Case>([
    { name: 'matching nodeSelector allows', scenario: { nodes, moving: [movingPod({ nodeSelector: { team: 'a' } })] }, expected: 'target' },
    {
      name: 'mismatching nodeSelector forbids',
      scenario: { nodes, moving: [movingPod({ nodeSelector: { team: 'b' } })] },
      expected: '-',
      reason: /node selector \/ affinity/,
    },
    {
      name: 'terms are ORed: the second term matching allows',
      scenario: {
        nodes,
        moving: [
          movingPod({
            requiredNodeAffinity: [
              { matchExpressions: [{ key: 'team', operator: 'In', values: ['b'] }] },
              { matchExpressions: [{ key: 'team', operator: 'In', values: ['a'] }] },
            ],
          }),
        ],
      },
      expected: 'target',
    },
    {
      name: 'expressions are ANDed: one failing forbids',
      scenario: {
        nodes,
        moving: [
          movingPod({
            requiredNodeAffinity: [
              {
                matchExpressions: [
                  { key: 'team', operator: 'In', values: ['a'] },
                  { key: 'tier', operator: 'NotIn', values: ['web'] },
                ],
              },
            ],
          }),
        ],
      },
      expected: '-',
    },
    {
      name: 'DoesNotExist on a missing label allows',
      scenario: { nodes, moving: [movingPod({ requiredNodeAffinity: [{ matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist', values: [] }] }] })] },
      expected: 'target',
    },
    {
      name: 'Exists on a missing label forbids',
      scenario: { nodes, moving: [movingPod({ requiredNodeAffinity: [{ matchExpressions: [{ key: 'gpu', operator: 'Exists', values: [] }] }] })] },
      expected: '-',
    },
  ])('$name', run);
});

describe('host ports', () => {
  const nodes = [small({ cpu: 1000, memory: Gi, pods: 10 })];
  const holder = (hostIP?: string, protocol = 'TCP'): Pod[] =>
    on('target', pod({ name: 'holder', hostPorts: [{ port: 8080, protocol, ...(hostIP !== undefined ? { hostIP } : {}) }] }));
  it.each<Case>([
    { name: 'the same port and protocol on all addresses forbids', scenario: { nodes, pods: holder(), moving: [movingPod({ hostPorts: [{ port: 8080, protocol: 'TCP' }] })] }, expected: '-', reason: /host port 8080\/TCP/ },
    { name: 'another port allows', scenario: { nodes, pods: holder(), moving: [movingPod({ hostPorts: [{ port: 9090, protocol: 'TCP' }] })] }, expected: 'target' },
    { name: 'another protocol allows', scenario: { nodes, pods: holder(), moving: [movingPod({ hostPorts: [{ port: 8080, protocol: 'UDP' }] })] }, expected: 'target' },
    {
      name: 'distinct host IPs allow',
      scenario: { nodes, pods: holder('10.0.0.1'), moving: [movingPod({ hostPorts: [{ port: 8080, protocol: 'TCP', hostIP: '10.0.0.2' }] })] },
      expected: 'target',
    },
    {
      name: '0.0.0.0 overlaps a specific host IP (forbids)',
      scenario: { nodes, pods: holder('10.0.0.1'), moving: [movingPod({ hostPorts: [{ port: 8080, protocol: 'TCP', hostIP: '0.0.0.0' }] })] },
      expected: '-',
    },
  ])('$name', run);

  it('two moving pods with the same host port cannot share a node', () => {
    const ports = [{ port: 8080, protocol: 'TCP' }];
    const result = simulateScenario({ nodes, moving: [pod({ name: 'a', hostPorts: ports }), pod({ name: 'b', hostPorts: ports })] });
    expect(result.placements).toHaveLength(1);
    expect(result.unschedulable).toHaveLength(1);
  });
});

describe('bound persistent volume zones', () => {
  const nodes = [small({ cpu: 1000, memory: Gi, pods: 10 }, { zone: 'us-east-1a' })];
  it.each<Case>([
    { name: 'a volume in the node zone allows', scenario: { nodes, moving: [movingPod({ volumeZones: ['us-east-1a'] })] }, expected: 'target' },
    {
      name: 'a volume in another zone forbids',
      scenario: { nodes, moving: [movingPod({ volumeZones: ['us-east-1b'] })] },
      expected: '-',
      reason: /volume zone\(s\) us-east-1b/,
    },
  ])('$name', run);
});
