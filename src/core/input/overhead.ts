// What an EKS node keeps for itself: allocatable derived from an instance type's capacity when the
// catalog does not list it (docs/file-formats.md, "The catalog"). These are the defaults Karpenter's
// AWS provider (aws/karpenter-provider-aws) applies on EKS, so a replacement simulated here has the
// room a node Karpenter would launch has:
//
//   memory  = capacity - CMA - VM overhead - kube-reserved - eviction threshold
//     CMA             = 64 MiB on arm64 only (the Graviton kernel sets it aside for contiguous
//                       allocations; Karpenter subtracts it before the VM overhead)
//     VM overhead     = ceil(7.5% of what is left, in whole MiB)  (the hypervisor and firmware take it;
//                       EC2 advertises it, the kernel never sees it)
//     kube-reserved   = (11 * maxPods + 255) MiB
//     eviction        = 100 MiB (kubelet's memory.available hard threshold)
//   cpu     = capacity - kube-reserved cpu, where kube-reserved is 6% of the first core, 1% of the
//             second, 0.5% of the third and fourth and 0.25% of every further core, each band's share
//             rounded up to a whole millicore
//   ephemeral-storage = capacity - 1 GiB kube-reserved - ceil(10% of capacity) (nodefs eviction)
//   pods    = capacity pods (the max-pods the catalog lists; 110, kubelet's default, when absent)
//   anything else (GPUs, pod ENIs) = capacity
//
// system-reserved is zero: Karpenter reserves nothing there unless the EC2NodeClass asks for it, and
// the catalog has no place to ask.
//
// m5.large (2 vCPU, 8 GiB, 29 pods): cpu 2000 - 60 - 10 = 1930m; memory 8192 - ceil(614.4) = 7577 MiB,
// minus 574 kube-reserved and 100 eviction = 6903 MiB. Both match Karpenter's published numbers, as
// does every one of the 1,345 types in data/aws-instance-types-us-east-1.json (test/input/overhead.test.ts checks them all).
import type { Resources } from '../model/types.ts';

export const MiB = 1024 ** 2;
export const GiB = 1024 ** 3;

/** Fraction of memory EC2 advertises but the guest cannot use (Karpenter's VM_MEMORY_OVERHEAD_PERCENT). */
export const VM_MEMORY_OVERHEAD_FRACTION = 0.075;
/** Contiguous-memory (CMA) reservation of arm64 kernels. */
export const ARM64_CMA_RESERVED_BYTES = 64 * MiB;
export const EVICTION_THRESHOLD_MEMORY_BYTES = 100 * MiB;
export const KUBE_RESERVED_EPHEMERAL_STORAGE_BYTES = 1 * GiB;
/** kubelet's default max-pods, used only when capacity gives no pod count. */
export const DEFAULT_MAX_PODS = 110;

/** Memory the VM loses to virtualisation: 7.5% of capacity, rounded up to a whole MiB. */
export function vmMemoryOverheadBytes(memoryBytes: number): number {
  // ceil(bytes * 0.075 / MiB) done in integers (0.075 = 3/40) so 8 GiB gives exactly 615 MiB.
  return Math.ceil((memoryBytes * 3) / (40 * MiB)) * MiB;
}

/** kube-reserved memory: 11 MiB per pod the node may run plus 255 MiB. */
export function kubeReservedMemoryBytes(maxPods: number): number {
  return (11 * maxPods + 255) * MiB;
}

/** Reserved share of each cpu band, in hundredths of a percent (integers keep the rounding exact). */
const CPU_BANDS: readonly { readonly fromMillis: number; readonly toMillis: number; readonly basisPoints: number }[] = [
  { fromMillis: 0, toMillis: 1000, basisPoints: 600 }, // 6% of the first core
  { fromMillis: 1000, toMillis: 2000, basisPoints: 100 }, // 1% of the second
  { fromMillis: 2000, toMillis: 4000, basisPoints: 50 }, // 0.5% of the third and fourth
  { fromMillis: 4000, toMillis: Number.POSITIVE_INFINITY, basisPoints: 25 }, // 0.25% of the rest
];

/** kube-reserved cpu in millicores for a node of `cpuMillis` capacity (banded, see the file comment). */
export function kubeReservedCpuMillis(cpuMillis: number): number {
  let reserved = 0;
  for (const band of CPU_BANDS) {
    if (cpuMillis <= band.fromMillis) break;
    const inBand = Math.min(cpuMillis, band.toMillis) - band.fromMillis;
    reserved += Math.ceil((inBand * band.basisPoints) / 10_000);
  }
  return reserved;
}

/** Ephemeral storage lost to kube-reserved (1 GiB) and the 10% nodefs eviction threshold. */
export function ephemeralStorageOverheadBytes(storageBytes: number): number {
  return KUBE_RESERVED_EPHEMERAL_STORAGE_BYTES + Math.ceil(storageBytes / 10);
}

/**
 * Allocatable for a node of this capacity (cpu millicores, memory and storage bytes), with the overheads
 * above. `arch` is the node's `kubernetes.io/arch`. Never below zero.
 */
export function deriveAllocatable(capacity: Resources, arch: string = 'amd64'): Resources {
  const out: Record<string, number> = { ...capacity };
  const maxPods = capacity['pods'] ?? DEFAULT_MAX_PODS;
  out['pods'] = maxPods;
  const cpu = capacity['cpu'];
  if (cpu !== undefined) out['cpu'] = Math.max(0, cpu - kubeReservedCpuMillis(cpu));
  const memory = capacity['memory'];
  if (memory !== undefined) {
    const kernelVisible = memory - (arch === 'arm64' ? ARM64_CMA_RESERVED_BYTES : 0);
    out['memory'] = Math.max(
      0,
      kernelVisible - vmMemoryOverheadBytes(kernelVisible) - kubeReservedMemoryBytes(maxPods) - EVICTION_THRESHOLD_MEMORY_BYTES,
    );
  }
  const storage = capacity['ephemeral-storage'];
  if (storage !== undefined) out['ephemeral-storage'] = Math.max(0, storage - ephemeralStorageOverheadBytes(storage));
  return out;
}
