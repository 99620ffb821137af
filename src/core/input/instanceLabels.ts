// Well-known labels a node of an EC2 instance type carries, derived from the type's name and capacity
// when the catalog does not list them (docs/file-formats.md, "The catalog"). NodePool requirements are
// written against these (`karpenter.k8s.aws/instance-category In [c, m, r]`, `kubernetes.io/arch In
// [arm64]`), so a catalog without labels must still answer them the way Karpenter would.
//
// Name anatomy, e.g. `c7gn.16xlarge`: family `c7gn` (before the dot), size `16xlarge` (after it),
// category `c` (the leading letters), generation `7` (the digits after them; `u-6tb1` style names put
// a `-<N>tb` memory tag between category and generation), attributes `gn` (the rest of the family).
import type { Labels, Resources } from '../model/types.ts';
import { LabelKeys } from '../model/types.ts';

export const InstanceLabelKeys = {
  family: 'karpenter.k8s.aws/instance-family',
  category: 'karpenter.k8s.aws/instance-category',
  generation: 'karpenter.k8s.aws/instance-generation',
  size: 'karpenter.k8s.aws/instance-size',
  cpu: 'karpenter.k8s.aws/instance-cpu',
  memoryMiB: 'karpenter.k8s.aws/instance-memory',
} as const;

export interface InstanceTypeName {
  readonly family: string;
  readonly size: string;
  readonly category?: string;
  readonly generation?: string;
  /** Letters after the generation (`g`, `gd`, `i-flex`, `-b200`), empty when none. */
  readonly attributes?: string;
}

// category, optional `-<N>tb` high-memory tag, generation, attributes.
const FAMILY = /^([a-z]+)(-\d+tb)?(\d+)(.*)$/;

/** Splits `m5.large` into its parts; undefined for a name that is not `<family>.<size>`. */
export function parseInstanceTypeName(name: string): InstanceTypeName | undefined {
  const dot = name.indexOf('.');
  if (dot <= 0 || dot === name.length - 1) return undefined;
  const family = name.slice(0, dot);
  const size = name.slice(dot + 1);
  const match = FAMILY.exec(family);
  if (!match) return { family, size };
  return { family, size, category: match[1], generation: match[3], attributes: match[4] ?? '' };
}

/**
 * amd64 unless the family is a Graviton one. AWS marks Graviton families with a `g` right after the
 * generation (m6g, c6gd, c7gn, r8gb, im4gn, is4gen, x2gd, g5g), plus the first-generation `a1`. The
 * GPU category `g` (g4dn, g5, g6e) is a prefix, not an attribute, so it does not count.
 */
export function architectureOf(name: InstanceTypeName): 'amd64' | 'arm64' {
  if (name.family === 'a1') return 'arm64';
  return name.attributes?.startsWith('g') ? 'arm64' : 'amd64';
}

/** Integer text when whole, else a plain decimal (labels are strings). */
function numberLabel(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 1000) / 1000);
}

/**
 * The labels derived from the name and capacity (cpu in millicores, memory in bytes). Explicit
 * catalog labels are applied on top by the caller, so they always win.
 */
export function deriveInstanceLabels(instanceType: string, capacity: Resources): Record<string, string> {
  const labels: Record<string, string> = {
    [LabelKeys.instanceType]: instanceType,
    [LabelKeys.os]: 'linux',
  };
  const name = parseInstanceTypeName(instanceType);
  labels[LabelKeys.arch] = name ? architectureOf(name) : 'amd64';
  if (name) {
    labels[InstanceLabelKeys.family] = name.family;
    labels[InstanceLabelKeys.size] = name.size;
    if (name.category !== undefined) labels[InstanceLabelKeys.category] = name.category;
    if (name.generation !== undefined) labels[InstanceLabelKeys.generation] = name.generation;
  }
  const cpuMillis = capacity['cpu'];
  if (cpuMillis !== undefined) labels[InstanceLabelKeys.cpu] = numberLabel(cpuMillis / 1000);
  const memoryBytes = capacity['memory'];
  if (memoryBytes !== undefined) labels[InstanceLabelKeys.memoryMiB] = String(Math.floor(memoryBytes / (1024 * 1024)));
  return labels;
}

/** Derived labels overlaid with the catalog's own. */
export function instanceLabels(instanceType: string, capacity: Resources, explicit: Labels): Labels {
  // The same keys, order and values as `{ ...derived, ...explicit }` (the derived object is our own),
  // at a fraction of the cost: this runs for every type of the bundled catalog on each start.
  return Object.assign(deriveInstanceLabels(instanceType, capacity), explicit);
}
