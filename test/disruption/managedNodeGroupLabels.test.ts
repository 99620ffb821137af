// A node's labels are what kube-scheduler matches a pod's node selector against, and only the nodes
// Karpenter made carry `karpenter.sh/capacity-type`: a pod that selects it stays Pending on an on-demand
// EKS managed node group node (whose capacity type this product still knows, from
// `eks.amazonaws.com/capacityType`), so no plan may count on that node's room for it.
import { describe, expect, it } from 'vitest';
import { goDurationOrNull } from '../../src/core/input/duration.ts';
import { runConsolidationPass } from '../../src/core/disruption/pass.ts';
import type { Node } from '../../src/core/model/types.ts';
import { cluster, Gi, m5Catalog, node, nodePool, on, pod, T0 } from '../builders.ts';

/** An on-demand managed node group node with room to spare: no Karpenter label, in no NodePool. */
function managedNodeGroupNode(name: string): Node {
  const base = node({ name, instanceType: 'm5.xlarge', nodePool: undefined, allocatable: { cpu: 3920, memory: 14 * Gi, pods: 58 } });
  const labels = Object.fromEntries(Object.entries(base.labels).filter(([key]) => !key.startsWith('karpenter.sh/')));
  return { ...base, labels: { ...labels, 'eks.amazonaws.com/capacityType': 'ON_DEMAND', 'eks.amazonaws.com/nodegroup': 'system' } };
}

describe('the room of a managed node group node', () => {
  it.each<{ name: string; nodeSelector: Record<string, string>; deleted: boolean }>([
    { name: 'a pod selecting karpenter.sh/capacity-type cannot go there: nothing is planned', nodeSelector: { 'karpenter.sh/capacity-type': 'on-demand' }, deleted: false },
    { name: 'a pod selecting eks.amazonaws.com/capacityType goes there: k is deleted', nodeSelector: { 'eks.amazonaws.com/capacityType': 'ON_DEMAND' }, deleted: true },
    { name: 'a pod selecting nothing goes there: k is deleted', nodeSelector: {}, deleted: true },
  ])('$name', ({ nodeSelector, deleted }) => {
    // k, the cheapest type there is, holds one pod; the managed node group node has room for it.
    const k = node({ name: 'k' });
    const c = cluster({ nodes: [k, managedNodeGroupNode('mng')], pods: on('k', pod({ name: 'web', nodeSelector, requests: { cpu: 500, memory: Gi } })) });
    const out = runConsolidationPass({ cluster: c, nodePools: [nodePool()], catalog: m5Catalog(), nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: goDurationOrNull });
    if (!deleted) {
      expect(out.decisions).toEqual([]);
      expect((out.notes.get('k') ?? []).join(' | ')).toMatch(/pod default\/web: no node with room matches its node selector/);
      return;
    }
    expect(out.decisions.map((d) => [d.action, d.nodes, d.replacements.length])).toEqual([['delete', ['k'], 0]]);
    expect(Object.values(out.decisions[0]!.podDestinations ?? {})).toEqual(['mng']);
  });
});
