// The size bound (docs/differences-from-karpenter.md, "It adds"): a move never creates a node that later
// passes cannot improve. A replacement may be at most `scale` times the largest node the move removes
// (cpu and memory), and optionally hold at most `maxPods` pods; a merge whose pods need more is cut by
// the methods' searches into smaller moves. Without the bound, an open budget lets the first pass merge
// hundreds of nodes into one giant that no single move can ever split again (a giant's pods fit on no
// cheaper single node).
//
// The bound never forbids what Karpenter's own consolidation is known for: a merge that changes the
// nodes' shape. The classic case (kubernetes-sigs/karpenter#3305) is eight small compute nodes
// whose memory-heavy pods belong on one memory-optimised node: as much cpu as two of them, but four
// times the largest one's memory, as much as the eight have together; it costs far less and holds the
// pods. So a type also passes when it is within `scale` times the largest removed node in one of cpu and
// memory, and in the other no larger than the removed nodes' capacity summed. A type beyond the scale in
// both stays out, even within the sum: merging 90 nodes into one of the largest types costs less than
// the 90, but far more than packing their pods onto nodes of the best price per cpu, and no later move
// splits it (bench:quality, 100 nodes at a 100% budget: 1.93x the LP bound instead of 1.52x).
import { InputError } from '../errors.ts';
import type { InstanceType, Offering } from '../model/types.ts';
import type { Candidate } from './candidates.ts';

export interface ReplacementBound {
  /** A replacement's cpu and memory are at most this multiple of the largest removed node's. */
  readonly scale: number;
  /** A replacement's pod slots are at most this many (no limit when absent). */
  readonly maxPods?: number;
}

export const DEFAULT_REPLACEMENT_BOUND: ReplacementBound = { scale: 2 };

const ALLOCATABLE_SLACK = 1.05;

export type TypeFilter = (type: InstanceType, offerings: readonly Offering[]) => boolean;

/** The most cpu and memory a replacement's allocatable may have by the scale rule alone. */
function scaledLargest(candidates: readonly Candidate[], bound: ReplacementBound): { cpu: number; memory: number } {
  let largestCpu = 0;
  let largestMemory = 0;
  for (const c of candidates) {
    largestCpu = Math.max(largestCpu, c.node.allocatable['cpu'] ?? 0);
    largestMemory = Math.max(largestMemory, c.node.allocatable['memory'] ?? 0);
  }
  // Allocatable grows a little faster than size (reserved cpu and memory are mostly fixed per node), so
  // a type of exactly twice the size has slightly more than twice the allocatable: allow for it.
  return { cpu: bound.scale * largestCpu * ALLOCATABLE_SLACK, memory: bound.scale * largestMemory * ALLOCATABLE_SLACK };
}

/** The removed nodes' capacity summed: a replacement no larger than this merges, it does not grow. */
function summedCapacity(candidates: readonly Candidate[]): { cpu: number; memory: number } {
  let cpu = 0;
  let memory = 0;
  for (const c of candidates) {
    cpu += c.node.capacity['cpu'] ?? c.node.allocatable['cpu'] ?? 0;
    memory += c.node.capacity['memory'] ?? c.node.allocatable['memory'] ?? 0;
  }
  return { cpu, memory };
}

/**
 * The most cpu and memory a replacement of these candidates may offer, either way the bound allows it
 * (a generous figure: the room bound's upper estimate, roomBound.ts).
 */
export function maxReplacementAllocatable(candidates: readonly Candidate[], bound: ReplacementBound): { cpu: number; memory: number } {
  const scaled = scaledLargest(candidates, bound);
  const summed = summedCapacity(candidates);
  return { cpu: Math.max(scaled.cpu, summed.cpu), memory: Math.max(scaled.memory, summed.memory) };
}

/** The types a replacement of these candidates may be; undefined when nothing is bounded. */
export function boundedTypes(candidates: readonly Candidate[], bound: ReplacementBound | null): TypeFilter | undefined {
  if (bound === null || (!Number.isFinite(bound.scale) && bound.maxPods === undefined)) return undefined;
  const scaled = scaledLargest(candidates, bound);
  const summed = summedCapacity(candidates);
  return (type) => {
    if (bound.maxPods !== undefined && (type.allocatable['pods'] ?? 0) > bound.maxPods) return false;
    const cpu = type.allocatable['cpu'] ?? 0;
    const memory = type.allocatable['memory'] ?? 0;
    const cpuScaled = cpu <= scaled.cpu;
    const memoryScaled = memory <= scaled.memory;
    if (cpuScaled && memoryScaled) return true;
    // A change of shape: within the scale in one dimension, and in the other no larger than the removed
    // nodes together. A type beyond the scale in both is a giant, whatever the sum allows.
    if (!cpuScaled && !memoryScaled) return false;
    return (type.capacity['cpu'] ?? cpu) <= Math.max(summed.cpu, scaled.cpu) && (type.capacity['memory'] ?? memory) <= Math.max(summed.memory, scaled.memory);
  };
}

/** Both filters must pass; either may be absent. */
export function bothFilters(a: TypeFilter | undefined, b: TypeFilter | undefined): TypeFilter | undefined {
  if (!a) return b;
  if (!b) return a;
  return (type, offerings) => a(type, offerings) && b(type, offerings);
}

export function describeBound(bound: ReplacementBound): string {
  return `at most ${bound.scale}x the largest node it removes, or no larger than the nodes it removes together${bound.maxPods !== undefined ? ` and at most ${bound.maxPods} pods` : ''}`;
}

/**
 * `REPLACEMENT_BOUND` (CLI and Lambda): `off`, a scale (`2`), optionally with a pod cap (`2,maxPods=110`).
 * Unset or empty: the default. `source` names the variable in errors.
 */
export function parseReplacementBound(text: string | undefined, source = 'REPLACEMENT_BOUND'): ReplacementBound | null {
  if (text === undefined || text.trim() === '') return DEFAULT_REPLACEMENT_BOUND;
  if (text.trim().toLowerCase() === 'off') return null;
  const [scaleText, ...rest] = text.split(',').map((p) => p.trim());
  const scale = Number(scaleText);
  if (!Number.isFinite(scale) || scale < 1) throw new InputError('', source, `"${scaleText}" is not a scale of at least 1 (e.g. 2), nor "off"`);
  let maxPods: number | undefined;
  for (const part of rest) {
    const match = /^maxPods=(\d+)$/.exec(part);
    if (!match || Number(match[1]) < 1) throw new InputError('', source, `"${part}" is not maxPods=N (N >= 1)`);
    maxPods = Number(match[1]);
  }
  return maxPods === undefined ? { scale } : { scale, maxPods };
}
