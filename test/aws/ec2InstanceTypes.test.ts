// EC2 instance-type facts: the max-pods formula, accelerators, labels, and paging of both listings.
import {
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  EC2Client,
  type InstanceTypeInfo,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import {
  describeInstanceTypes,
  describeZoneOfferings,
  instanceTypeFacts,
  maxPodsFor,
} from '../../src/adapters/aws/ec2InstanceTypes.ts';
import { eksAllocatable, eksCapacity } from '../../src/adapters/aws/eksAllocatable.ts';
import { CatalogSourceError } from '../../src/adapters/aws/errors.ts';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;

function typeInfo(name: string, vcpu: number, memoryMiB: number, enis: number, ipv4: number, extra: Partial<InstanceTypeInfo> = {}): InstanceTypeInfo {
  return {
    InstanceType: name as InstanceTypeInfo['InstanceType'],
    VCpuInfo: { DefaultVCpus: vcpu },
    MemoryInfo: { SizeInMiB: memoryMiB },
    ProcessorInfo: { SupportedArchitectures: ['x86_64'], Manufacturer: 'Intel', SustainedClockSpeedInGhz: 3.1 },
    NetworkInfo: {
      MaximumNetworkInterfaces: enis,
      Ipv4AddressesPerInterface: ipv4,
      DefaultNetworkCardIndex: 0,
      NetworkCards: [{ NetworkCardIndex: 0, MaximumNetworkInterfaces: enis }],
      EncryptionInTransitSupported: false,
    },
    Hypervisor: 'nitro',
    ...extra,
  };
}

const m5large = typeInfo('m5.large', 2, 8192, 3, 10);

const ec2 = new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const ec2Mock = mockClient(ec2);
afterEach(() => ec2Mock.reset());

describe('max pods', () => {
  it('is ENIs * (IPv4 per ENI - 1) + 2: m5.large (3 ENIs, 10 IPv4) runs 29 pods', () => {
    expect(maxPodsFor(m5large)).toBe(29);
  });

  it('counts only the default network card (p4d.24xlarge: 4 cards of 15 ENIs -> 737, not 2942)', () => {
    const p4d = typeInfo('p4d.24xlarge', 96, 1179648, 60, 50, {});
    const network = { ...p4d.NetworkInfo };
    network.NetworkCards = [0, 1, 2, 3].map((i) => ({ NetworkCardIndex: i, MaximumNetworkInterfaces: 15 }));
    expect(maxPodsFor({ ...p4d, NetworkInfo: network })).toBe(737);
  });

  it('falls back to the type-wide ENI count when no card is described', () => {
    expect(maxPodsFor({ NetworkInfo: { MaximumNetworkInterfaces: 2, Ipv4AddressesPerInterface: 4 } })).toBe(8);
    expect(maxPodsFor({})).toBe(0);
  });
});

describe('EKS allocatable', () => {
  it('matches Karpenter for m5.large: 1930m, 6903Mi, 29 pods, 17Gi storage; capacity stays raw', () => {
    const facts = instanceTypeFacts(m5large)!;
    expect(eksAllocatable(facts)).toEqual({ cpu: 1930, memory: 6903 * Mi, pods: 29, 'ephemeral-storage': 17 * Gi });
    expect(eksCapacity(facts)).toEqual({ cpu: 2000, memory: 8192 * Mi, pods: 29, 'ephemeral-storage': 20 * Gi });
  });

  it.each([
    // name, arch, vcpu, memoryMiB, maxPods, cpu m, memory Mi (values from Karpenter's published table)
    ['c5.24xlarge', 'amd64', 96, 196608, 737, 95690, 173400],
    ['t3.nano', 'amd64', 2, 512, 4, 1930, 74],
    ['g4ad.xlarge', 'amd64', 4, 16384, 8, 3920, 14712],
    ['a1.2xlarge', 'arm64', 8, 16384, 58, 7910, 14103],
  ])('matches Karpenter for %s', (_name, arch, vcpu, memoryMiB, maxPods, cpu, memMi) => {
    const allocatable = eksAllocatable({ arch, vcpu, memoryMiB, maxPods, extendedResources: { 'amd.com/gpu': 1 } });
    expect(allocatable.cpu).toBe(cpu);
    expect(allocatable.memory).toBe(memMi * Mi);
    expect(allocatable.pods).toBe(maxPods);
    expect(allocatable['amd.com/gpu']).toBe(1);
  });

  it('sizes ephemeral storage from the root volume', () => {
    const raw = { arch: 'amd64', vcpu: 2, memoryMiB: 8192, maxPods: 29 };
    expect(eksCapacity(raw, { rootVolumeGiB: 100 })['ephemeral-storage']).toBe(100 * Gi);
    expect(eksAllocatable(raw, { rootVolumeGiB: 100 })['ephemeral-storage']).toBe(89 * Gi);
  });
});

describe('instance type facts', () => {
  it('derives arch, capacity and Karpenter labels', () => {
    const facts = instanceTypeFacts(m5large)!;
    expect(facts).toMatchObject({ name: 'm5.large', vcpu: 2, memoryMiB: 8192, maxPods: 29, arch: 'amd64', extendedResources: {} });
    expect(facts.labels).toMatchObject({
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
      'node.kubernetes.io/instance-type': 'm5.large',
      'karpenter.k8s.aws/instance-family': 'm5',
      'karpenter.k8s.aws/instance-category': 'm',
      'karpenter.k8s.aws/instance-generation': '5',
      'karpenter.k8s.aws/instance-size': 'large',
      'karpenter.k8s.aws/instance-cpu': '2',
      'karpenter.k8s.aws/instance-memory': '8192',
      'karpenter.k8s.aws/instance-cpu-manufacturer': 'intel',
      'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz': '3100',
      'karpenter.k8s.aws/instance-hypervisor': 'nitro',
      'karpenter.k8s.aws/instance-capability-flex': 'false',
    });
  });

  it('parses category and generation from unusual names', () => {
    const u = instanceTypeFacts(typeInfo('u-6tb1.metal', 448, 6291456, 15, 50, { Hypervisor: undefined }))!;
    expect(u.labels['karpenter.k8s.aws/instance-category']).toBe('u');
    expect(u.labels['karpenter.k8s.aws/instance-generation']).toBe('1');
    expect(u.labels['karpenter.k8s.aws/instance-hypervisor']).toBe('');
    const flex = instanceTypeFacts(typeInfo('c7i-flex.large', 2, 4096, 3, 10))!;
    expect(flex.labels['karpenter.k8s.aws/instance-capability-flex']).toBe('true');
    expect(flex.labels['karpenter.k8s.aws/instance-category']).toBe('c');
  });

  it('counts GPUs, Neuron devices and cores, and EFA interfaces', () => {
    const g = instanceTypeFacts(
      typeInfo('g4ad.xlarge', 4, 16384, 2, 4, {
        GpuInfo: { Gpus: [{ Name: 'Radeon Pro V520', Manufacturer: 'AMD', Count: 1, MemoryInfo: { SizeInMiB: 8192 } }] },
      }),
    )!;
    expect(g.extendedResources).toEqual({ 'amd.com/gpu': 1 });
    expect(g.labels).toMatchObject({
      'karpenter.k8s.aws/instance-gpu-name': 'radeon-pro-v520',
      'karpenter.k8s.aws/instance-gpu-manufacturer': 'amd',
      'karpenter.k8s.aws/instance-gpu-count': '1',
      'karpenter.k8s.aws/instance-gpu-memory': '8192',
    });

    const inf = instanceTypeFacts(
      typeInfo('inf1.24xlarge', 96, 196608, 11, 30, {
        NeuronInfo: { NeuronDevices: [{ Name: 'Inferentia', Count: 16, CoreInfo: { Count: 4 } }] },
        NetworkInfo: { ...m5large.NetworkInfo, MaximumNetworkInterfaces: 11, NetworkCards: [{ NetworkCardIndex: 0, MaximumNetworkInterfaces: 11 }], Ipv4AddressesPerInterface: 30, EfaSupported: true, EfaInfo: { MaximumEfaInterfaces: 1 } },
      }),
    )!;
    expect(inf.maxPods).toBe(321);
    expect(inf.extendedResources).toEqual({ 'aws.amazon.com/neuron': 16, 'aws.amazon.com/neuroncore': 64, 'vpc.amazonaws.com/efa': 1 });
    expect(inf.labels['karpenter.k8s.aws/instance-accelerator-name']).toBe('inferentia');
    expect(inf.labels['karpenter.k8s.aws/instance-accelerator-count']).toBe('16');

    const p = instanceTypeFacts(
      typeInfo('p3.16xlarge', 64, 499712, 8, 30, { GpuInfo: { Gpus: [{ Name: 'V100', Manufacturer: 'NVIDIA', Count: 8 }] } }),
    )!;
    expect(p.extendedResources['nvidia.com/gpu']).toBe(8);
  });

  it('skips types an EKS node cannot be', () => {
    expect(instanceTypeFacts({ ...m5large, ProcessorInfo: { SupportedArchitectures: ['x86_64_mac'] } })).toBeUndefined();
    expect(instanceTypeFacts({ ...m5large, InstanceType: undefined })).toBeUndefined();
    expect(instanceTypeFacts({ ...m5large, MemoryInfo: {} })).toBeUndefined();
    expect(instanceTypeFacts({ ...m5large, ProcessorInfo: { SupportedArchitectures: ['arm64'] } })?.arch).toBe('arm64');
  });
});

describe('DescribeInstanceTypes', () => {
  it('follows NextToken across pages and keeps only usable types', async () => {
    ec2Mock
      .on(DescribeInstanceTypesCommand)
      .resolvesOnce({ InstanceTypes: [m5large], NextToken: 'p2' })
      .resolvesOnce({ InstanceTypes: [typeInfo('c5.large', 2, 4096, 3, 10)], NextToken: 'p3' })
      .resolvesOnce({ InstanceTypes: [{ ...typeInfo('mac1.metal', 12, 32768, 8, 30), ProcessorInfo: { SupportedArchitectures: ['x86_64_mac'] } }] });

    const facts = await describeInstanceTypes(ec2);

    expect(facts.map((f) => f.name)).toEqual(['m5.large', 'c5.large']);
    const calls = ec2Mock.commandCalls(DescribeInstanceTypesCommand);
    expect(calls.map((c) => c.args[0].input.NextToken)).toEqual([undefined, 'p2', 'p3']);
    expect(calls[0]!.args[0].input).toMatchObject({
      MaxResults: 100,
      Filters: [
        { Name: 'supported-virtualization-type', Values: ['hvm'] },
        { Name: 'processor-info.supported-architecture', Values: ['x86_64', 'arm64'] },
      ],
    });
  });

  it('names the API call when it fails', async () => {
    ec2Mock
      .on(DescribeInstanceTypesCommand)
      .resolvesOnce({ InstanceTypes: [m5large], NextToken: 'p2' })
      .rejectsOnce(Object.assign(new Error('You are not authorized'), { name: 'UnauthorizedOperation' }));

    const failure = describeInstanceTypes(ec2);

    await expect(failure).rejects.toBeInstanceOf(CatalogSourceError);
    await expect(failure).rejects.toMatchObject({
      operation: 'ec2:DescribeInstanceTypes',
      message: 'ec2:DescribeInstanceTypes failed: UnauthorizedOperation: You are not authorized',
    });
  });

  it('stops on a repeated NextToken instead of looping', async () => {
    ec2Mock.on(DescribeInstanceTypesCommand).resolves({ InstanceTypes: [m5large], NextToken: 'same' });
    await expect(describeInstanceTypes(ec2)).rejects.toThrow(/NextToken same repeated/);
  });
});

describe('DescribeInstanceTypeOfferings', () => {
  it('pages through zone offerings and groups zones per type', async () => {
    ec2Mock
      .on(DescribeInstanceTypeOfferingsCommand)
      .resolvesOnce({
        InstanceTypeOfferings: [
          { InstanceType: 'm5.large', LocationType: 'availability-zone', Location: 'us-east-1b' },
          { InstanceType: 'm5.large', LocationType: 'availability-zone', Location: 'us-east-1a' },
        ],
        NextToken: 'next',
      })
      .resolvesOnce({
        InstanceTypeOfferings: [
          { InstanceType: 'c5.large', LocationType: 'availability-zone', Location: 'us-east-1c' },
          { InstanceType: 'm5.large', LocationType: 'availability-zone', Location: 'us-east-1c' },
        ],
      });

    const zones = await describeZoneOfferings(ec2);

    expect(Object.fromEntries(zones)).toEqual({
      'm5.large': ['us-east-1a', 'us-east-1b', 'us-east-1c'],
      'c5.large': ['us-east-1c'],
    });
    const calls = ec2Mock.commandCalls(DescribeInstanceTypeOfferingsCommand);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.args[0].input).toMatchObject({ LocationType: 'availability-zone' });
    expect(calls[1]!.args[0].input.NextToken).toBe('next');
  });

  it('names the API call when it fails', async () => {
    ec2Mock.on(DescribeInstanceTypeOfferingsCommand).rejects(new Error('throttled'));
    await expect(describeZoneOfferings(ec2)).rejects.toMatchObject({ operation: 'ec2:DescribeInstanceTypeOfferings' });
  });
});
