// Whether a replacement changes the CPU architecture of the pods it receives. A NodePool without a
// `kubernetes.io/arch` requirement lets Karpenter launch Graviton (arm64) types for pods that ran on
// amd64, or the reverse, when they are cheaper: Karpenter allows it, and it works only when every image
// of those pods is built for both. The plan cannot see images, so it says so where a person decides.
import type { Catalog, Node } from '../model/types.ts';
import type { PlannedReplacement } from '../plan.ts';

const ARCH_LABEL = 'kubernetes.io/arch';

export interface ArchitectureChange {
  /** Architectures of the removed nodes (their kubernetes.io/arch label), sorted. */
  readonly from: readonly string[];
  /** Architectures the replacements may launch (of the types they may use), sorted. */
  readonly to: readonly string[];
  /** True when every type the replacements may use has another architecture than some removed node. */
  readonly certain: boolean;
}

/** Architecture of each instance type of the catalog, by name. */
export function architectureIndex(catalog: Catalog): ReadonlyMap<string, string> {
  const index = new Map<string, string>();
  for (const t of catalog.instanceTypes) {
    const arch = t.labels[ARCH_LABEL];
    if (arch !== undefined) index.set(t.name, arch);
  }
  return index;
}

/**
 * The change of architecture a replace makes, or undefined when there is none (a delete, nodes without
 * the label, types of unknown architecture, or the same architecture on both sides).
 */
export function architectureChange(
  removed: readonly Node[],
  replacements: readonly PlannedReplacement[],
  archOf: ReadonlyMap<string, string>,
): ArchitectureChange | undefined {
  if (replacements.length === 0) return undefined;
  const from = new Set(removed.map((n) => n.labels[ARCH_LABEL]).filter((a): a is string => a !== undefined));
  const to = new Set(replacements.flatMap((r) => r.instanceTypes.map((t) => archOf.get(t)).filter((a): a is string => a !== undefined)));
  if (from.size === 0 || to.size === 0) return undefined;
  // A launched type changes some pods' architecture when a removed node has another one.
  const changes = (t: string) => [...from].some((f) => f !== t);
  if (![...to].some(changes)) return undefined;
  return { from: [...from].sort(), to: [...to].sort(), certain: [...to].every(changes) };
}

const label = (arch: string) => (arch === 'arm64' ? 'arm64 (Graviton)' : arch);

/** The clause for the decision's summary: `pods move from amd64 to arm64 (Graviton): ...`. */
export function architectureSentence(change: ArchitectureChange): string {
  const images = 'their images must be multi-arch';
  if (change.certain && change.from.length === 1 && change.to.length === 1) return `pods move from ${change.from[0]} to ${label(change.to[0]!)}: ${images}`;
  const all = [...new Set([...change.from, ...change.to])].sort();
  if (change.certain) return `pods move between ${all.map(label).join(' and ')}: ${images}`;
  const added = change.to.filter((a) => !change.from.includes(a));
  return `the replacement may be ${added.map(label).join(' or ')} while the nodes are ${change.from.join(' and ')}: the pods' images must be multi-arch`;
}
