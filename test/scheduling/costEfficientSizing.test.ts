// New nodes sized for cost (costEfficientTypes.ts): the first pod decides which types a new node may
// become, only those cheapest per unit of what the moved pods ask, and each keeps room for the largest
// moved pod.
import { describe, expect, it } from 'vitest';
import { launchPricePerHour } from '../../src/core/disruption/prices.ts';
import { costEfficientOptions, pricePerUnit, type DemandMix } from '../../src/core/scheduling/costEfficientTypes.ts';
import type { NodeOption } from '../../src/core/scheduling/newNode.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import type { Catalog } from '../../src/core/model/types.ts';
import { cluster, Gi, instanceType, nodePool, offering, pod } from '../builders.ts';

const sizing = { pricePerHour: launchPricePerHour, tolerance: 0.15 };
const option = (roomCpu: number, roomMemoryGi: number, pricePerHour: number): NodeOption =>
  ({ poolType: { roomCpu, roomMemory: roomMemoryGi * Gi }, offerings: [offering({ pricePerHour })] }) as unknown as NodeOption;
const mix = (cpuMillis: number, memoryGi: number, largestCpuMillis = 0, largestMemoryGi = 0): DemandMix => ({
  cpuMillis,
  memoryBytes: memoryGi * Gi,
  largestCpuMillis,
  largestMemoryBytes: largestMemoryGi * Gi,
});

describe('price per unit of what the pods ask', () => {
  it.each([
    // [name, option, mix, expected $ per whole mix]
    ['cpu is the scarcer: 2 cores of 10 asked, $0.10 -> $0.50 per mix', option(2000, 16, 0.1), mix(10_000, 20), 0.5],
    ['memory is the scarcer: 4 GiB of 40 asked, $0.10 -> $1.00 per mix', option(8000, 4, 0.1), mix(10_000, 40), 1],
    ['the reserve for the largest pod is not room: 2,000m less 1,000m kept free', option(2000, 16, 0.1), mix(10_000, 20, 1000, 1), 1],
    ['a reserve as large as the node leaves no room at all', option(2000, 16, 0.1), mix(10_000, 20, 2000, 1), Number.POSITIVE_INFINITY],
    ['pods asking no memory weigh cpu only', option(2000, 1, 0.1), mix(10_000, 0), 0.5],
  ] as const)('%s', (_name, o, m, expected) => {
    const perUnit = pricePerUnit(o, m, sizing);
    if (Number.isFinite(expected)) expect(perUnit).toBeCloseTo(expected, 9);
    else expect(perUnit).toBe(expected);
  });

  it('keeps the types within the tolerance of the cheapest, in their order', () => {
    const cheap = option(2000, 8, 0.05); // $0.25 per 10 cores
    const close = option(4000, 16, 0.11); // $0.275: 10% dearer, kept
    const dear = option(16000, 64, 0.8); // $0.50: dropped
    expect(costEfficientOptions([dear, close, cheap], mix(10_000, 10), sizing)).toEqual([close, cheap]);
  });

  it('keeps every option when none leaves room beyond the reserve (the pod still fits alone)', () => {
    const options = [option(1000, 4, 0.05), option(1500, 4, 0.06)];
    expect(costEfficientOptions(options, mix(3000, 4, 2000, 1), sizing)).toEqual(options);
  });
});

describe('a simulation with cost-sized new nodes', () => {
  // `small` costs $0.025 per core, `large` $0.05: Karpenter's packer fills one `large`.
  const catalog: Catalog = {
    region: 'us-east-1',
    instanceTypes: [instanceType('small', { cpu: 2000, memory: 8 * Gi, pods: 29 }, 0.05), instanceType('large', { cpu: 16000, memory: 64 * Gi, pods: 110 }, 0.8)],
  };
  const pods = Array.from({ length: 6 }, (_, i) => pod({ name: `p${i}`, requests: { cpu: 500, memory: Gi } }));
  const simulator = createSimulator({ cluster: cluster({ nodes: [], pods: [] }), nodePools: [nodePool()], catalog });

  it('without sizing: one new node that any type holding all six may be', () => {
    const result = simulator.simulate({ excludedNodes: new Set(), pods, maxNewNodes: 10 });
    expect(result.newNodes).toHaveLength(1);
    expect(result.newNodes[0]!.options.map((o) => o.instanceType.name)).toEqual(['large']);
  });

  it('with sizing: small nodes only, each keeping 500m free for the largest pod (3 pods of 4 would fit)', () => {
    const result = simulator.simulate({ excludedNodes: new Set(), pods, maxNewNodes: 10, costEfficientNewNodes: sizing });
    expect(result.allScheduled).toBe(true);
    expect(result.newNodes.map((n) => n.pods.length)).toEqual([3, 3]);
    for (const n of result.newNodes) expect(n.options.map((o) => o.instanceType.name)).toEqual(['small']);
  });

  it('with sizing and too few new nodes allowed, the pods that do not fit are reported', () => {
    const result = simulator.simulate({ excludedNodes: new Set(), pods, maxNewNodes: 1, costEfficientNewNodes: sizing });
    expect(result.allScheduled).toBe(false);
    expect(result.unschedulable).toHaveLength(3);
    expect(result.unschedulable[0]!.reason).toMatch(/at most 1/);
  });
});
