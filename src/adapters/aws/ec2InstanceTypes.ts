// EC2's description of instance types (sizes, network limits, accelerators) and of which zones offer
// them. Turns the SDK shapes into plain facts the catalog assembler can use without the SDK.
import {
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  type EC2Client,
  type InstanceTypeInfo,
} from '@aws-sdk/client-ec2';
import { deriveInstanceLabels } from '../../core/input/instanceLabels.ts';
import { callAws, CatalogSourceError } from './errors.ts';

const MiB = 1024 ** 2;

/** A cap on pages per listing: a real region needs about 10; more means a token loop, not data. */
export const MAX_PAGES = 1000;

export type NodeArch = 'amd64' | 'arm64';

export interface InstanceTypeFacts {
  readonly name: string;
  readonly vcpu: number;
  readonly memoryMiB: number;
  /** VPC CNI limit: ENIs on the default network card * (IPv4 per ENI - 1) + 2. */
  readonly maxPods: number;
  readonly arch: NodeArch;
  /** Device-plugin resources: `nvidia.com/gpu`, `amd.com/gpu`, `aws.amazon.com/neuron`, EFA, ... */
  readonly extendedResources: Readonly<Record<string, number>>;
  /** Well-known labels known from the API answer (Karpenter's `karpenter.k8s.aws/*` names). */
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * Pods a node can run with the VPC CNI: every ENI but one address per ENI (its primary), plus 2 for
 * host-network pods. Only the default network card's ENIs count: the CNI does not use the others,
 * which is why p4d.24xlarge (4 cards of 15 ENIs) gets 737 pods, not 2,942.
 */
export function maxPodsFor(info: InstanceTypeInfo): number {
  const network = info.NetworkInfo;
  const defaultCard = network?.NetworkCards?.find(
    (card) => (card.NetworkCardIndex ?? 0) === (network.DefaultNetworkCardIndex ?? 0),
  );
  const enis = defaultCard?.MaximumNetworkInterfaces ?? network?.MaximumNetworkInterfaces ?? 0;
  const ipv4PerEni = network?.Ipv4AddressesPerInterface ?? 0;
  if (enis <= 0 || ipv4PerEni <= 0) return 0;
  return enis * (ipv4PerEni - 1) + 2;
}

function archOf(info: InstanceTypeInfo): NodeArch | undefined {
  const supported = info.ProcessorInfo?.SupportedArchitectures ?? [];
  // Mac (x86_64_mac, arm64_mac) and i386-only types cannot join an EKS cluster.
  if (supported.includes('arm64')) return 'arm64';
  if (supported.includes('x86_64')) return 'amd64';
  return undefined;
}

/** Karpenter's label spelling for device names: lower case, dashes for spaces ("Radeon Pro V520"). */
const labelValue = (text: string): string => text.trim().toLowerCase().replace(/\s+/g, '-');

interface Accelerators {
  readonly resources: Record<string, number>;
  readonly labels: Record<string, string>;
}

const GPU_RESOURCE_BY_MANUFACTURER: Readonly<Record<string, string>> = {
  nvidia: 'nvidia.com/gpu',
  amd: 'amd.com/gpu',
  habana: 'habana.ai/gaudi',
};

function accelerators(info: InstanceTypeInfo): Accelerators {
  const resources: Record<string, number> = {};
  const labels: Record<string, string> = {};

  const gpus = info.GpuInfo?.Gpus ?? [];
  for (const gpu of gpus) {
    const resource = GPU_RESOURCE_BY_MANUFACTURER[labelValue(gpu.Manufacturer ?? '')];
    if (resource !== undefined) resources[resource] = (resources[resource] ?? 0) + (gpu.Count ?? 0);
  }
  // Labels describe "the" GPU; a type mixing GPU models has no single answer, so none (as Karpenter).
  const [gpu] = gpus;
  if (gpus.length === 1 && gpu !== undefined) {
    labels['karpenter.k8s.aws/instance-gpu-name'] = labelValue(gpu.Name ?? '');
    labels['karpenter.k8s.aws/instance-gpu-manufacturer'] = labelValue(gpu.Manufacturer ?? '');
    labels['karpenter.k8s.aws/instance-gpu-count'] = String(gpu.Count ?? 0);
    labels['karpenter.k8s.aws/instance-gpu-memory'] = String(gpu.MemoryInfo?.SizeInMiB ?? 0);
  }

  const neuronDevices = info.NeuronInfo?.NeuronDevices ?? [];
  let neurons = 0;
  let neuronCores = 0;
  for (const device of neuronDevices) {
    neurons += device.Count ?? 0;
    neuronCores += (device.Count ?? 0) * (device.CoreInfo?.Count ?? 0);
  }
  // Older answers describe Inferentia 1 only under InferenceAcceleratorInfo.
  const legacy = (info.InferenceAcceleratorInfo?.Accelerators ?? []).filter(
    (a) => labelValue(a.Manufacturer ?? '') === 'aws',
  );
  if (neuronDevices.length === 0) for (const a of legacy) neurons += a.Count ?? 0;
  if (neurons > 0) resources['aws.amazon.com/neuron'] = neurons;
  if (neuronCores > 0) resources['aws.amazon.com/neuroncore'] = neuronCores;
  const [device] = neuronDevices.length > 0 ? neuronDevices : legacy;
  if (device !== undefined && (neuronDevices.length === 1 || (neuronDevices.length === 0 && legacy.length === 1))) {
    labels['karpenter.k8s.aws/instance-accelerator-name'] = labelValue(device.Name ?? '');
    labels['karpenter.k8s.aws/instance-accelerator-manufacturer'] = 'aws';
    labels['karpenter.k8s.aws/instance-accelerator-count'] = String(device.Count ?? 0);
  }

  const efa = info.NetworkInfo?.EfaSupported ? (info.NetworkInfo.EfaInfo?.MaximumEfaInterfaces ?? 0) : 0;
  if (efa > 0) resources['vpc.amazonaws.com/efa'] = efa;
  return { resources, labels };
}

/** The facts of one type, or undefined for types an EKS node cannot be (Mac, i386, no size). */
export function instanceTypeFacts(info: InstanceTypeInfo): InstanceTypeFacts | undefined {
  const name = info.InstanceType;
  const arch = archOf(info);
  const vcpu = info.VCpuInfo?.DefaultVCpus ?? 0;
  const memoryMiB = info.MemoryInfo?.SizeInMiB ?? 0;
  const maxPods = maxPodsFor(info);
  if (name === undefined || arch === undefined || vcpu <= 0 || memoryMiB <= 0 || maxPods <= 0) return undefined;

  const { resources, labels: acceleratorLabels } = accelerators(info);
  // Name-derived labels (family, category, generation, size, cpu, memory) as catalog files get them;
  // what the API says (arch above all: names only guess Graviton) is laid over them.
  const labels: Record<string, string> = {
    ...deriveInstanceLabels(name, { cpu: vcpu * 1000, memory: memoryMiB * MiB }),
    'kubernetes.io/arch': arch,
    'karpenter.k8s.aws/instance-capability-flex': String(name.split('.')[0]?.includes('-flex') ?? false),
    // Bare metal has no hypervisor; Karpenter labels it with the empty string.
    'karpenter.k8s.aws/instance-hypervisor': info.Hypervisor ?? '',
    'karpenter.k8s.aws/instance-encryption-in-transit-supported': String(
      info.NetworkInfo?.EncryptionInTransitSupported ?? false,
    ),
    ...acceleratorLabels,
  };
  const cpuMaker = info.ProcessorInfo?.Manufacturer;
  if (cpuMaker) labels['karpenter.k8s.aws/instance-cpu-manufacturer'] = labelValue(cpuMaker);
  const clockGhz = info.ProcessorInfo?.SustainedClockSpeedInGhz;
  if (clockGhz) labels['karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz'] = String(Math.round(clockGhz * 1000));
  const ebsMbps = info.EbsInfo?.EbsOptimizedInfo?.MaximumBandwidthInMbps;
  if (ebsMbps) labels['karpenter.k8s.aws/instance-ebs-bandwidth'] = String(ebsMbps);
  const storage = info.InstanceStorageInfo;
  if (storage?.TotalSizeInGB && storage.NvmeSupport !== 'unsupported') {
    labels['karpenter.k8s.aws/instance-local-nvme'] = String(storage.TotalSizeInGB);
  }

  return { name, vcpu, memoryMiB, maxPods, arch, extendedResources: resources, labels };
}

/** Follows NextToken until it runs out. Stops on a repeated token rather than looping forever. */
export async function collectPages<Page>(
  operation: string,
  fetchPage: (nextToken: string | undefined) => Promise<Page>,
  tokenOf: (page: Page) => string | undefined,
): Promise<Page[]> {
  const pages: Page[] = [];
  const seen = new Set<string>();
  let token: string | undefined;
  do {
    if (pages.length >= MAX_PAGES) throw new CatalogSourceError(operation, `more than ${MAX_PAGES} pages`);
    const page = await callAws(operation, () => fetchPage(token));
    pages.push(page);
    token = tokenOf(page) || undefined;
    if (token !== undefined) {
      if (seen.has(token)) throw new CatalogSourceError(operation, `NextToken ${token} repeated`);
      seen.add(token);
    }
  } while (token !== undefined);
  return pages;
}

/** Every instance type of the region an EKS node can be (HVM, x86_64 or arm64). */
export async function describeInstanceTypes(ec2: EC2Client): Promise<InstanceTypeFacts[]> {
  const pages = await collectPages(
    'ec2:DescribeInstanceTypes',
    (NextToken) =>
      ec2.send(
        new DescribeInstanceTypesCommand({
          Filters: [
            { Name: 'supported-virtualization-type', Values: ['hvm'] },
            { Name: 'processor-info.supported-architecture', Values: ['x86_64', 'arm64'] },
          ],
          MaxResults: 100,
          NextToken,
        }),
      ),
    (page) => page.NextToken,
  );
  const facts: InstanceTypeFacts[] = [];
  for (const info of pages.flatMap((page) => page.InstanceTypes ?? [])) {
    const fact = instanceTypeFacts(info);
    if (fact !== undefined) facts.push(fact);
  }
  return facts;
}

/** Instance type -> the availability zones (names) that offer it, sorted. */
export async function describeZoneOfferings(ec2: EC2Client): Promise<Map<string, string[]>> {
  const pages = await collectPages(
    'ec2:DescribeInstanceTypeOfferings',
    (NextToken) =>
      ec2.send(
        new DescribeInstanceTypeOfferingsCommand({ LocationType: 'availability-zone', MaxResults: 1000, NextToken }),
      ),
    (page) => page.NextToken,
  );
  const zones = new Map<string, Set<string>>();
  for (const offering of pages.flatMap((page) => page.InstanceTypeOfferings ?? [])) {
    if (!offering.InstanceType || !offering.Location) continue;
    const set = zones.get(offering.InstanceType) ?? new Set<string>();
    set.add(offering.Location);
    zones.set(offering.InstanceType, set);
  }
  return new Map([...zones].map(([type, set]) => [type, [...set].sort()]));
}
