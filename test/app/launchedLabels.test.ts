// A pass plans a pod onto a replacement only by labels the replacement will carry: a pool acted on
// through its launch template (the ec2 actuator) gives its new nodes the kubelet's labels, its template
// labels and those every node of the pool has, not Karpenter's capacity-type or instance labels.
import { describe, expect, it } from 'vitest';
import { runPass } from '../../src/app/runPass.ts';
import type { ActuatorSetting } from '../../src/core/disruption/actuatorChoice.ts';
import type { Node } from '../../src/core/model/types.ts';
import type { Plan } from '../../src/core/plan.ts';
import { cluster, Gi, m5Catalog, Mi, minutes, node, nodePool, on, pod, T0 } from '../builders.ts';

const CAPACITY_TYPE = 'karpenter.sh/capacity-type';

const without = (n: Node, key: string): Node => ({ ...n, labels: Object.fromEntries(Object.entries(n.labels).filter(([k]) => k !== key)) });

// `big` (an m5.2xlarge) holds one small pod that selects on-demand capacity; `small`, full, carries no
// capacity-type label (its user data does not set one), so the pool's launch template does not either;
// its pod may not be disrupted.
const world = () =>
  cluster({
    nodes: [
      node({ name: 'big', instanceType: 'm5.2xlarge', allocatable: { cpu: 7910, memory: 28783 * Mi, pods: 58 }, capacity: { cpu: 8000, memory: 32 * Gi, pods: 58 } }),
      without(node({ name: 'small' }), CAPACITY_TYPE),
    ],
    pods: [
      ...on('big', pod({ name: 'od', requests: { cpu: 500, memory: 512 * Mi }, nodeSelector: { [CAPACITY_TYPE]: 'on-demand' } })),
      ...on('small', pod({ name: 'full', requests: { cpu: 1800, memory: 512 * Mi }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })),
    ],
  });

async function plan(actuator: ActuatorSetting): Promise<Plan> {
  const result = await runPass(
    { readCluster: async () => world(), loadCatalog: async () => ({ catalog: m5Catalog(), warnings: [] }), loadNodePools: async () => [nodePool()] },
    { nowMs: T0, gates: { spotToSpotConsolidation: false }, dryRun: true, persistState: false, scope: 'all', owner: 'test', leaseTtlMs: minutes(5), actuator },
  );
  return result.plan;
}

describe('replacements labelled as they will be launched', () => {
  it('through Karpenter: the pod that selects on-demand capacity goes onto a cheaper replacement, which Karpenter labels so', async () => {
    const p = await plan('karpenter');
    expect(p.decisions.map((d) => `${d.action} ${d.nodes.join(',')} -> ${d.replacements.map((r) => r.instanceTypes[0]).join(',')}`)).toEqual(['replace big -> m5.large']);
  });

  it('from a launch template that sets no capacity-type label: no replacement, and the node says why', async () => {
    const p = await plan('ec2');
    expect(p.decisions).toEqual([]);
    const reasons = (p.nodes.find((n) => n.name === 'big')?.reasons ?? []).join(' | ');
    expect(reasons).toMatch(/default\/od/);
    expect(reasons).toMatch(/cannot satisfy its node selector \/ affinity/);
  });

  it('by default (no sign of Karpenter, so the ec2 actuator): as from a launch template', async () => {
    expect((await plan('auto')).decisions).toEqual([]);
  });
});
