// Sizing a new node for cost rather than for room. Karpenter's packer lets a new node keep every type
// its pool allows and take pods while any of them has room, so a move of many nodes ends on one node of
// the largest type, and the launch then picks the cheapest type that holds it all. Per unit of cpu and
// memory, the largest types are rarely the cheapest (small burstable and Graviton types often cost half
// as much per vCPU), so a cluster consolidated that way stays well above a repack onto the cheapest
// types. With this sizing the first pod decides which types the node may become: only those whose price
// per unit of what the moved pods ask, in the proportion they ask it, is close to the cheapest. Each such
// node also keeps room for the largest moved pod: kube-scheduler's default scoring spreads pods over the
// least allocated nodes, so small nodes packed full would leave a large pod with nowhere to go.
import type { Pod } from '../model/types.ts';
import type { NodeOption } from './newNode.ts';
import type { NewNodeEfficiency } from './types.ts';

/** What the pods of one simulation ask in all (the proportion a type's room is weighed in), and the most one of them asks. */
export interface DemandMix {
  readonly cpuMillis: number;
  readonly memoryBytes: number;
  readonly largestCpuMillis: number;
  readonly largestMemoryBytes: number;
}

/** What the pods of a simulation ask in all (the proportion cost-efficient sizing weighs types in). */
export function demandMix(pods: readonly Pod[]): DemandMix {
  let cpuMillis = 0;
  let memoryBytes = 0;
  let largestCpuMillis = 0;
  let largestMemoryBytes = 0;
  for (const pod of pods) {
    const cpu = pod.requests['cpu'] ?? 0;
    const memory = pod.requests['memory'] ?? 0;
    cpuMillis += cpu;
    memoryBytes += memory;
    largestCpuMillis = Math.max(largestCpuMillis, cpu);
    largestMemoryBytes = Math.max(largestMemoryBytes, memory);
  }
  return { cpuMillis, memoryBytes, largestCpuMillis, largestMemoryBytes };
}

/**
 * Price per unit of the mix: what a node of this option costs for each whole "mix" it can hold (the
 * scarcer of its cpu and memory room decides), counting only the room left once the reserve for the
 * largest pod is kept free. Infinite when that leaves no room for one of them.
 */
export function pricePerUnit(option: NodeOption, mix: DemandMix, efficiency: NewNodeEfficiency): number {
  const roomCpu = option.poolType.roomCpu - mix.largestCpuMillis;
  const roomMemory = option.poolType.roomMemory - mix.largestMemoryBytes;
  const shares: number[] = [];
  if (mix.cpuMillis > 0) shares.push(roomCpu / mix.cpuMillis);
  if (mix.memoryBytes > 0) shares.push(roomMemory / mix.memoryBytes);
  const share = shares.length === 0 ? 1 : Math.min(...shares);
  if (share <= 0) return Number.POSITIVE_INFINITY;
  return efficiency.pricePerHour(option.offerings) / share;
}

/** The options within the tolerance of the cheapest per unit (all of them when none has a price). */
export function costEfficientOptions(options: readonly NodeOption[], mix: DemandMix, efficiency: NewNodeEfficiency): NodeOption[] {
  if (options.length === 0) return [];
  const priced = options.map((option) => ({ option, perUnit: pricePerUnit(option, mix, efficiency) }));
  const best = Math.min(...priced.map((p) => p.perUnit));
  if (!Number.isFinite(best)) return [...options];
  const ceiling = best * (1 + efficiency.tolerance) + 1e-12;
  return priced.filter((p) => p.perUnit <= ceiling).map((p) => p.option);
}
