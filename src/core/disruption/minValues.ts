// NodePool `minValues` (Karpenter's launch flexibility): a requirement with `minValues: N` asks that
// every launch offer instance types spanning at least N distinct values of its key (N families, say),
// so that capacity shortages in one of them do not stop the launch. Karpenter checks it when it trims
// a replacement's types by price: if the cheaper types left no longer span N values, there is no
// replacement (docs/nodepools.md, "What the fields do").
import { LabelKeys, type Requirement } from '../model/types.ts';
import type { NewNodeOption } from '../scheduling/types.ts';

/** The values of `key` an option brings: zones and capacity types from its offerings, else its label. */
function valuesOf(option: NewNodeOption, key: string): readonly string[] {
  if (key === LabelKeys.zone) return option.offerings.map((o) => o.zone);
  if (key === LabelKeys.capacityType) return option.offerings.map((o) => o.capacityType);
  if (key === LabelKeys.instanceType) return [option.instanceType.name];
  const value = option.instanceType.labels[key];
  return value === undefined ? [] : [value];
}

export interface MinValuesShortfall {
  readonly key: string;
  readonly minValues: number;
  readonly found: number;
}

/**
 * The first requirement whose `minValues` the options do not meet, or undefined when all are met.
 * Repeated keys keep the largest minValues, as Karpenter merges them.
 */
export function minValuesShortfall(requirements: readonly Requirement[], options: readonly NewNodeOption[]): MinValuesShortfall | undefined {
  const wanted = new Map<string, number>();
  for (const r of requirements) {
    if (r.minValues !== undefined) wanted.set(r.key, Math.max(wanted.get(r.key) ?? 0, r.minValues));
  }
  for (const [key, minValues] of [...wanted].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const distinct = new Set(options.flatMap((o) => valuesOf(o, key)));
    if (distinct.size < minValues) return { key, minValues, found: distinct.size };
  }
  return undefined;
}

/**
 * The fewest cheapest-first options that meet every minValues (all of them when none is set): what a
 * launch list truncated by price must keep. Undefined when even all of them fall short.
 */
export function cheapestMeetingMinValues(requirements: readonly Requirement[], ordered: readonly NewNodeOption[]): number | undefined {
  if (!requirements.some((r) => r.minValues !== undefined)) return 0;
  for (let n = 1; n <= ordered.length; n++) if (minValuesShortfall(requirements, ordered.slice(0, n)) === undefined) return n;
  return undefined;
}

export function describeShortfall(shortfall: MinValuesShortfall, what: string): string {
  return `${what} span only ${shortfall.found} distinct ${shortfall.key} value(s); the NodePool requires minValues ${shortfall.minValues}`;
}
