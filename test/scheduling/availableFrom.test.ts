// A node that joins part-way through a least-allocated placement (a replacement that is Ready only when
// its own command drains): pods before its position cannot use it, pods from it on can.
import { describe, expect, it } from 'vitest';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import { cluster, Gi, m5Catalog, node, nodePool, pod } from '../builders.ts';

describe('least-allocated placement with nodes that join part-way', () => {
  const old = node({ name: 'old', allocatable: { cpu: 1930, memory: 7 * Gi, pods: 29 } });
  const fresh = node({ name: 'fresh', allocatable: { cpu: 3920, memory: 14 * Gi, pods: 58 } });
  const simulator = createSimulator({ cluster: cluster({ nodes: [old, fresh], pods: [] }), nodePools: [nodePool()], catalog: m5Catalog() });
  const pods = [pod({ name: 'first', requests: { cpu: 1000, memory: Gi } }), pod({ name: 'second', requests: { cpu: 1000, memory: Gi } }), pod({ name: 'third', requests: { cpu: 1000, memory: Gi } })];
  const place = (availableFrom?: Map<string, number>) =>
    simulator.simulate({ excludedNodes: new Set(), pods, maxNewNodes: 0, placement: 'least-allocated', podOrder: 'as-given', ...(availableFrom ? { availableFrom } : {}) });

  it.each([
    ['there from the start: the emptier new node takes the first pods', undefined, ['first->fresh', 'second->fresh', 'third->old']],
    ['joins at the second pod: the first goes to the old node', new Map([['fresh', 1]]), ['first->old', 'second->fresh', 'third->fresh']],
    ['joins after the last pod: the third finds no room', new Map([['fresh', 3]]), ['first->old']],
  ] as const)('%s', (_name, availableFrom, expected) => {
    const result = place(availableFrom);
    expect(result.placements.map((p) => `${p.pod.name}->${p.nodeName}`)).toEqual(expected);
    expect(result.allScheduled).toBe(expected.length === 3);
  });

  it.each([
    ['the node with room is not Ready yet', new Map([['fresh', 3]]), /node fresh has room for it but is not Ready yet when it is bound/],
    // Every node there, none with room: the sentence of the closest miss, not "no node can receive pods".
    ['every node is Ready but full', undefined, /no node has room for 3000m cpu/],
  ] as const)('a pod that finds no node is explained by the placement that refused it: %s', (_name, availableFrom, reason) => {
    const big = [pod({ name: 'a', requests: { cpu: 1500, memory: Gi } }), pod({ name: 'b', requests: { cpu: 3000, memory: Gi } })];
    const result = simulator.simulate({ excludedNodes: new Set(), pods: big, maxNewNodes: 0, placement: 'least-allocated', podOrder: 'as-given', ...(availableFrom ? { availableFrom } : {}) });
    expect(result.unschedulable.map((u) => u.reason)).toEqual([expect.stringMatching(reason)]);
  });
});
