// EC2 reports raw sizes; the catalog needs capacity as the kubelet reports it and allocatable after
// EKS overheads. The overhead formulas live in the core (src/core/input/overhead.ts, shared with
// catalog files); this module only turns EC2's numbers into model units and adds what EC2 cannot
// know: the root volume, which comes from the launch template (Karpenter's AL2023 default: 20 GiB).
import type { Resources } from '../../core/model/types.ts';
import { deriveAllocatable } from '../../core/input/overhead.ts';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

export interface EksOverheadOptions {
  /** Root volume size, the node's ephemeral-storage capacity. Default 20 GiB. */
  readonly rootVolumeGiB?: number;
}

export interface RawCapacity {
  readonly vcpu: number;
  readonly memoryMiB: number;
  readonly maxPods: number;
  /** `kubernetes.io/arch`: arm64 kernels hold back contiguous memory, so allocatable differs. */
  readonly arch: string;
  /** GPUs, Neuron devices, EFA interfaces: the same in capacity and allocatable. */
  readonly extendedResources?: Readonly<Record<string, number>>;
}

/** Capacity in model units (millicores, bytes, counts). Memory is EC2's figure, untouched. */
export function eksCapacity(raw: RawCapacity, options: EksOverheadOptions = {}): Resources {
  return {
    cpu: raw.vcpu * 1000,
    memory: raw.memoryMiB * MiB,
    pods: raw.maxPods,
    'ephemeral-storage': (options.rootVolumeGiB ?? 20) * GiB,
    ...raw.extendedResources,
  };
}

/** Allocatable after EKS overheads. m5.large: 1930m cpu, 6903Mi memory, 29 pods, 17Gi storage. */
export function eksAllocatable(raw: RawCapacity, options: EksOverheadOptions = {}): Resources {
  return deriveAllocatable(eksCapacity(raw, options), raw.arch);
}
