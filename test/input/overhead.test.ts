// EKS overheads: allocatable derived from capacity. Checked against m5.large by hand and against every
// instance type in the Karpenter-generated data set (data/, the bundled catalog's source).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  deriveAllocatable,
  kubeReservedCpuMillis,
  kubeReservedMemoryBytes,
  vmMemoryOverheadBytes,
} from '../../src/core/input/overhead.ts';
import { parseResources } from '../../src/core/quantity.ts';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;
const DATA = join(import.meta.dirname, '../../data/aws-instance-types-us-east-1.json');

describe('overhead formulas', () => {
  it.each([
    ['half a core: 6%', 500, 30],
    ['one core: 6% of it', 1000, 60],
    ['two cores: 60 + 10', 2000, 70],
    ['four cores: 60 + 10 + 5 + 5', 4000, 80],
    ['96 cores: 80 + 0.25% of 92 cores', 96_000, 310],
    ['a band share rounds up', 1001, 61],
  ])('kube-reserved cpu, %s', (_name, cpuMillis, reserved) => {
    expect(kubeReservedCpuMillis(cpuMillis)).toBe(reserved);
  });

  it('kube-reserved memory is 11 MiB per pod plus 255 MiB', () => {
    expect(kubeReservedMemoryBytes(29)).toBe(574 * Mi);
    expect(kubeReservedMemoryBytes(110)).toBe(1465 * Mi);
  });

  it('VM overhead is 7.5% rounded up to a whole MiB', () => {
    expect(vmMemoryOverheadBytes(8 * Gi)).toBe(615 * Mi); // 614.4 MiB
    expect(vmMemoryOverheadBytes(16 * Gi)).toBe(1229 * Mi); // 1228.8 MiB
  });
});

describe('deriveAllocatable', () => {
  it('m5.large: 29 pods, 1930m cpu, 6903Mi memory', () => {
    expect(deriveAllocatable({ cpu: 2000, memory: 8 * Gi, pods: 29 })).toEqual({ cpu: 1930, memory: 6903 * Mi, pods: 29 });
  });

  it('arm64 loses a further 64 MiB to the kernel CMA reservation before the VM overhead', () => {
    // m6g.large: 8 GiB -> (8192 - 64) = 8128, minus ceil(609.6) = 7518, minus 574 + 100 = 6844 MiB
    expect(deriveAllocatable({ cpu: 2000, memory: 8 * Gi, pods: 29 }, 'arm64')['memory']).toBe(6844 * Mi);
  });

  it('ephemeral storage loses 1 GiB kube-reserved and the 10% eviction threshold', () => {
    expect(deriveAllocatable({ cpu: 2000, memory: 8 * Gi, pods: 29, 'ephemeral-storage': 20 * Gi })['ephemeral-storage']).toBe(17 * Gi);
  });

  it('uses 110 pods (kubelet default) when capacity has no pod count', () => {
    expect(deriveAllocatable({ cpu: 4000, memory: 16 * Gi })).toEqual({
      cpu: 3920,
      memory: (16384 - 1229 - 1465 - 100) * Mi,
      pods: 110,
    });
  });

  it('passes other resources through and never goes negative', () => {
    expect(deriveAllocatable({ cpu: 10, memory: 128 * Mi, pods: 4, 'nvidia.com/gpu': 1 })).toEqual({
      cpu: 9,
      memory: 0,
      pods: 4,
      'nvidia.com/gpu': 1,
    });
  });
});

describe('agrees with Karpenter on every instance type in the source data', () => {
  interface DataType {
    name: string;
    vcpu: number;
    memoryMiB: number;
    arch: string;
    allocatable: Record<string, string>;
  }
  const types: DataType[] = JSON.parse(readFileSync(DATA, 'utf8')).instanceTypes;

  it(`all ${types.length} types: cpu, memory, pods and ephemeral storage (20 GiB root volume)`, () => {
    const mismatches: string[] = [];
    for (const t of types) {
      const want = parseResources(t.allocatable, 'allocatable');
      const got = deriveAllocatable(
        { cpu: t.vcpu * 1000, memory: t.memoryMiB * Mi, pods: want['pods'] ?? 0, 'ephemeral-storage': 20 * Gi },
        t.arch,
      );
      for (const key of ['cpu', 'memory', 'pods', 'ephemeral-storage']) {
        if (got[key] !== want[key]) mismatches.push(`${t.name} ${key}: ${got[key]} != ${want[key]}`);
      }
    }
    expect(types.length).toBeGreaterThan(1000);
    expect(mismatches).toEqual([]);
  });
});
