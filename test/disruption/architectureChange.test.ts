// A replacement of another CPU architecture (amd64 <-> arm64) is said in the decision: Karpenter may launch
// it when the NodePool does not pin kubernetes.io/arch, and it works only if the pods' images are multi-arch.
import { describe, expect, it } from 'vitest';
import { architectureChange, architectureSentence } from '../../src/core/disruption/architectureChange.ts';
import { runConsolidationPass } from '../../src/core/disruption/pass.ts';
import { goDurationOrNull } from '../../src/core/input/duration.ts';
import type { Catalog } from '../../src/core/model/types.ts';
import type { PlannedReplacement } from '../../src/core/plan.ts';
import { cluster, Gi, instanceType, Mi, node, nodePool, on, pod, T0 } from '../builders.ts';

const archOf = new Map([
  ['m5.large', 'amd64'],
  ['m6g.large', 'arm64'],
  ['c6g.large', 'arm64'],
]);
const replacement = (...instanceTypes: string[]): PlannedReplacement => ({
  instanceTypes,
  capacityType: 'on-demand',
  zones: ['us-east-1a'],
  pricePerHour: 0.08,
  worstPricePerHour: 0.08,
  nodePool: 'default',
});
const onArch = (arch: string) => node({ labels: { 'kubernetes.io/arch': arch } });

describe('architectureChange', () => {
  it.each([
    ['amd64 nodes, only Graviton types', ['amd64'], [['m6g.large', 'c6g.large']], 'pods move from amd64 to arm64 (Graviton): their images must be multi-arch'],
    ['arm64 nodes, only amd64 types', ['arm64'], [['m5.large']], 'pods move from arm64 to amd64: their images must be multi-arch'],
    ['amd64 nodes, a list of both', ['amd64'], [['m5.large', 'm6g.large']], "the replacement may be arm64 (Graviton) while the nodes are amd64: the pods' images must be multi-arch"],
    ['nodes of both into one Graviton type', ['amd64', 'arm64'], [['m6g.large']], 'pods move between amd64 and arm64 (Graviton): their images must be multi-arch'],
    ['amd64 nodes, amd64 types', ['amd64'], [['m5.large']], undefined],
    ['arm64 nodes, arm64 types', ['arm64'], [['m6g.large', 'c6g.large']], undefined],
    ['types of unknown architecture', ['amd64'], [['x9.large']], undefined],
    ['a delete', ['amd64'], [], undefined],
  ])('%s', (_name, nodeArchs, lists, expected) => {
    const change = architectureChange(
      nodeArchs.map(onArch),
      lists.map((types) => replacement(...types)),
      archOf,
    );
    expect(change === undefined ? undefined : architectureSentence(change)).toBe(expected);
  });

  it('a node without the kubernetes.io/arch label is not guessed at', () => {
    const unlabelled = node();
    delete (unlabelled.labels as Record<string, string>)['kubernetes.io/arch'];
    expect(architectureChange([unlabelled], [replacement('m6g.large')], archOf)).toBeUndefined();
  });
});

describe('the decision of a pass', () => {
  // An amd64 m5.2xlarge holding 2 cpu of pods; the pool allows every type of the catalog.
  const heavy = node({ name: 'big', instanceType: 'm5.2xlarge', allocatable: { cpu: 7910, memory: 28783 * Mi, pods: 58 } });
  const pods = on('big', pod({ requests: { cpu: 1000, memory: Gi } }), pod({ requests: { cpu: 1000, memory: Gi } }));
  const m5 = instanceType('m5.xlarge', { cpu: 3920, memory: 14162 * Mi, pods: 58 }, 0.192);
  const m6g = instanceType('m6g.xlarge', { cpu: 3920, memory: 14162 * Mi, pods: 58 }, 0.154, { labels: { 'kubernetes.io/arch': 'arm64' } });
  const big = instanceType('m5.2xlarge', { cpu: 7910, memory: 28783 * Mi, pods: 58 }, 0.384);
  const run = (types: Catalog['instanceTypes']) =>
    runConsolidationPass({
      cluster: cluster({ nodes: [heavy], pods }),
      nodePools: [nodePool()],
      catalog: { region: 'us-east-1', instanceTypes: types },
      nowMs: T0,
      gates: { spotToSpotConsolidation: false },
      parseDuration: goDurationOrNull,
    }).decisions[0];

  it.each([
    ['only Graviton is cheaper: said in the summary and the JSON', [m6g, big], 'pods move from amd64 to arm64 (Graviton): their images must be multi-arch', { from: ['amd64'], to: ['arm64'], certain: true }],
    ['both are cheaper: the replacement may be Graviton', [m5, m6g, big], 'the replacement may be arm64 (Graviton) while the nodes are amd64', { from: ['amd64'], to: ['amd64', 'arm64'], certain: false }],
    ['only amd64: nothing to say', [m5, big], undefined, undefined],
  ])('%s', (_name, types, clause, change) => {
    const decision = run(types);
    expect(decision?.action).toBe('replace');
    if (clause === undefined) expect(decision!.summary).not.toMatch(/arm64|multi-arch/);
    else expect(decision!.summary).toContain(`; ${clause}`);
    expect(decision!.architectureChange).toEqual(change);
  });
});
