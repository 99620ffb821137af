// Resource arithmetic on `Resources` records (cpu in millicores, memory in bytes, counts otherwise).
// A request of zero or less never constrains anything; a resource a node does not list has 0 free.
import type { Resources } from '../model/types.ts';

export const CPU = 'cpu';
export const MEMORY = 'memory';
export const PODS = 'pods';

const Ki = 1024;
const Mi = Ki * 1024;
const Gi = Mi * 1024;

export function addResources(a: Resources, b: Resources): Record<string, number> {
  const sum: Record<string, number> = { ...a };
  for (const [key, value] of Object.entries(b)) sum[key] = (sum[key] ?? 0) + value;
  return sum;
}

export function subtractResources(a: Resources, b: Resources): Record<string, number> {
  const difference: Record<string, number> = { ...a };
  for (const [key, value] of Object.entries(b)) difference[key] = (difference[key] ?? 0) - value;
  return difference;
}

/** True when every positive request is covered by `free`. */
export function fitsWithin(requests: Resources, free: Resources): boolean {
  for (const [key, value] of Object.entries(requests)) {
    if (value > 0 && (free[key] ?? 0) < value) return false;
  }
  return true;
}

/** Per-resource maximum over several resource records (used to reserve pool limits conservatively). */
export function maxResources(list: readonly Resources[]): Record<string, number> {
  const max: Record<string, number> = {};
  for (const resources of list) {
    for (const [key, value] of Object.entries(resources)) max[key] = Math.max(max[key] ?? 0, value);
  }
  return max;
}

/** Resources counted in bytes (memory, storage, hugepages of every page size): printed as Ki/Mi/Gi. */
export const isByteResource = (key: string): boolean => key === MEMORY || key === 'ephemeral-storage' || key.startsWith('hugepages-');

/** One quantity in the units a person expects: `2000m cpu`, `4Gi memory`, `100Mi hugepages-2Mi`, `1 nvidia.com/gpu`. */
export function formatQuantity(key: string, value: number): string {
  if (key === CPU) return `${Math.round(value)}m cpu`;
  if (isByteResource(key)) {
    const text =
      value % Gi === 0 ? `${value / Gi}Gi` : value % Mi === 0 ? `${value / Mi}Mi` : value % Ki === 0 ? `${value / Ki}Ki` : `${value}`;
    return `${text} ${key}`;
  }
  return `${value} ${key}`;
}

/** `2000m cpu / 4Gi memory`: the positive requests, cpu and memory first. */
export function formatRequests(requests: Resources): string {
  const keys = Object.keys(requests)
    .filter((key) => key !== PODS && (requests[key] ?? 0) > 0)
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  if (keys.length === 0) return 'a pod slot';
  return keys.map((key) => formatQuantity(key, requests[key] ?? 0)).join(' / ');
}

const rank = (key: string): number => (key === CPU ? 0 : key === MEMORY ? 1 : 2);
