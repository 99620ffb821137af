// Issue 11 item 2: a move never creates a node that later passes cannot improve. A replacement may be
// at most `scale` times the largest node the move removes (cpu and memory), and optionally hold at most
// `maxPods` pods; a merge whose pods need more is cut by the methods' searches into smaller moves. Without
// the bound, an open budget lets the first pass merge hundreds of nodes into one giant that no single
// move can ever split again (a giant's pods fit on no cheaper single node).
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

/** The most cpu and memory a replacement of these candidates may have (Infinity when unbounded). */
export function maxReplacementAllocatable(candidates: readonly Candidate[], bound: ReplacementBound): { cpu: number; memory: number } {
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

/** The types a replacement of these candidates may be; undefined when nothing is bounded. */
export function boundedTypes(candidates: readonly Candidate[], bound: ReplacementBound | null): TypeFilter | undefined {
  if (bound === null || (!Number.isFinite(bound.scale) && bound.maxPods === undefined)) return undefined;
  const { cpu: maxCpu, memory: maxMemory } = maxReplacementAllocatable(candidates, bound);
  return (type) =>
    (type.allocatable['cpu'] ?? 0) <= maxCpu &&
    (type.allocatable['memory'] ?? 0) <= maxMemory &&
    (bound.maxPods === undefined || (type.allocatable['pods'] ?? 0) <= bound.maxPods);
}

/** Both filters must pass; either may be absent. */
export function bothFilters(a: TypeFilter | undefined, b: TypeFilter | undefined): TypeFilter | undefined {
  if (!a) return b;
  if (!b) return a;
  return (type, offerings) => a(type, offerings) && b(type, offerings);
}

export function describeBound(bound: ReplacementBound): string {
  return `at most ${bound.scale}x the largest node it removes${bound.maxPods !== undefined ? ` and at most ${bound.maxPods} pods` : ''}`;
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
