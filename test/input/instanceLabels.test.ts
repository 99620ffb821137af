// Well-known labels derived from an instance type's name and capacity.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { architectureOf, deriveInstanceLabels, parseInstanceTypeName } from '../../src/core/input/instanceLabels.ts';

const Mi = 1024 ** 2;
const DATA = join(import.meta.dirname, '../../data/aws-instance-types-us-east-1.json');

describe('parseInstanceTypeName', () => {
  it.each([
    ['m5.large', { family: 'm5', size: 'large', category: 'm', generation: '5', attributes: '' }],
    ['c7gn.16xlarge', { family: 'c7gn', size: '16xlarge', category: 'c', generation: '7', attributes: 'gn' }],
    ['m7i-flex.xlarge', { family: 'm7i-flex', size: 'xlarge', category: 'm', generation: '7', attributes: 'i-flex' }],
    ['u-6tb1.metal', { family: 'u-6tb1', size: 'metal', category: 'u', generation: '1', attributes: '' }],
    ['trn1n.32xlarge', { family: 'trn1n', size: '32xlarge', category: 'trn', generation: '1', attributes: 'n' }],
    ['p6-b200.48xlarge', { family: 'p6-b200', size: '48xlarge', category: 'p', generation: '6', attributes: '-b200' }],
    ['custom.small', { family: 'custom', size: 'small' }],
  ])('%s', (name, parts) => {
    expect(parseInstanceTypeName(name)).toEqual(parts);
  });

  it.each(['nodot', '.large', 'm5.'])('%j is not <family>.<size>', (name) => {
    expect(parseInstanceTypeName(name)).toBeUndefined();
  });
});

describe('architectureOf', () => {
  it.each([
    ['a1.large', 'arm64'],
    ['m6g.large', 'arm64'],
    ['c6gd.xlarge', 'arm64'],
    ['c7gn.large', 'arm64'],
    ['r8g.large', 'arm64'],
    ['im4gn.large', 'arm64'],
    ['is4gen.large', 'arm64'],
    ['x2gd.large', 'arm64'],
    ['g5g.xlarge', 'arm64'],
    ['hpc7g.4xlarge', 'arm64'],
    ['m5.large', 'amd64'],
    ['g4dn.xlarge', 'amd64'],
    ['g6e.xlarge', 'amd64'],
    ['gr6.4xlarge', 'amd64'],
    ['c6in.large', 'amd64'],
    ['d3en.xlarge', 'amd64'],
  ])('%s is %s', (name, arch) => {
    expect(architectureOf(parseInstanceTypeName(name)!)).toBe(arch);
  });
});

describe('deriveInstanceLabels', () => {
  it('m5.large', () => {
    expect(deriveInstanceLabels('m5.large', { cpu: 2000, memory: 8192 * Mi })).toEqual({
      'node.kubernetes.io/instance-type': 'm5.large',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'karpenter.k8s.aws/instance-family': 'm5',
      'karpenter.k8s.aws/instance-category': 'm',
      'karpenter.k8s.aws/instance-generation': '5',
      'karpenter.k8s.aws/instance-size': 'large',
      'karpenter.k8s.aws/instance-cpu': '2',
      'karpenter.k8s.aws/instance-memory': '8192',
    });
  });

  it('a name it cannot split still gets type, os and arch', () => {
    expect(deriveInstanceLabels('weird', { cpu: 1000, memory: 1024 * Mi })).toEqual({
      'node.kubernetes.io/instance-type': 'weird',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'karpenter.k8s.aws/instance-cpu': '1',
      'karpenter.k8s.aws/instance-memory': '1024',
    });
  });
});

describe('agrees with Karpenter labels for every instance type in the source data', () => {
  const types: { name: string; vcpu: number; memoryMiB: number; labels: Record<string, string> }[] = JSON.parse(readFileSync(DATA, 'utf8')).instanceTypes;

  it(`all ${types.length} types`, () => {
    const mismatches: string[] = [];
    for (const t of types) {
      const derived = deriveInstanceLabels(t.name, { cpu: t.vcpu * 1000, memory: t.memoryMiB * Mi });
      for (const [key, value] of Object.entries(derived)) {
        if (key === 'node.kubernetes.io/instance-type') continue; // not in the data's label list
        if (t.labels[key] !== value) mismatches.push(`${t.name} ${key}: ${value} != ${t.labels[key]}`);
      }
    }
    expect(types.length).toBeGreaterThan(1000);
    expect(mismatches).toEqual([]);
  });
});
