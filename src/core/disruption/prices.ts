// Prices of what exists and what could be launched (docs/file-formats.md, "The catalog").
import { LabelKeys, type Catalog, type InstanceType, type Node, type Offering } from '../model/types.ts';
import type { NewNodeOption } from '../scheduling/types.ts';

export type PriceIndex = ReadonlyMap<string, InstanceType>;

export function indexCatalog(catalog: Catalog): PriceIndex {
  return new Map(catalog.instanceTypes.map((type) => [type.name, type]));
}

/**
 * An existing node's price is the price of its exact offering: instance type, zone and capacity type.
 * Unknown (undefined) when any of the three is missing or the catalog has no such offering; such a
 * node may still be deleted but is never replaced.
 */
export function nodePricePerHour(node: Node, index: PriceIndex): number | undefined {
  if (!node.instanceType || !node.zone || !node.capacityType) return undefined;
  const type = index.get(node.instanceType);
  if (type === undefined || osOfNode(node) !== osOfType(type)) return undefined;
  return type.offerings.find((o) => o.zone === node.zone && o.capacityType === node.capacityType)?.pricePerHour;
}

/**
 * The operating system a price is for. EC2 prices an instance per OS (a Windows instance includes its
 * licence and costs well above the Linux one), and the bundled catalog holds Linux prices only, its types
 * labelled kubernetes.io/os=linux; a node labelled for another OS has no price there rather than a
 * Linux one. Without the label, Linux, as Karpenter assumes for an instance type.
 */
export const osOfNode = (node: Node): string => node.labels[LabelKeys.os] ?? 'linux';
export const osOfType = (type: InstanceType): string => type.labels[LabelKeys.os] ?? 'linux';

/** The dearest of these offerings, whatever their capacity type. */
export function worstPricePerHour(offerings: readonly Offering[]): number {
  return offerings.reduce((max, o) => Math.max(max, o.pricePerHour), 0);
}

/** The capacity type a launch over these offerings would use: spot whenever spot is allowed. */
export function launchCapacityType(offerings: readonly Offering[]): 'spot' | 'on-demand' {
  return offerings.some((o) => o.capacityType === 'spot') ? 'spot' : 'on-demand';
}

/**
 * The most a launch of this option could cost, as Karpenter judges it: the launch prefers spot when the
 * offerings allow spot, so only offerings of the capacity type it would launch with count, and of those
 * the dearest (it may land in any of their zones). Judging by the dearest offering of every capacity
 * type instead would price a spot-capable type at its on-demand price and miss an on-demand -> spot swap.
 * A replacement judged this way is pinned to that capacity type (see replacement.ts), so the launch can
 * never fall back to a dearer one.
 */
export function launchPricePerHour(offerings: readonly Offering[]): number {
  const capacityType = launchCapacityType(offerings);
  return worstPricePerHour(offerings.filter((o) => o.capacityType === capacityType));
}

export function cheapestPricePerHour(offerings: readonly Offering[]): number {
  return offerings.reduce((min, o) => Math.min(min, o.pricePerHour), Number.POSITIVE_INFINITY);
}

/** Options restricted to offerings of one capacity type; options left with none are dropped. */
export function restrictCapacityType(options: readonly NewNodeOption[], capacityType: 'spot' | 'on-demand'): NewNodeOption[] {
  const out: NewNodeOption[] = [];
  for (const option of options) {
    const offerings = option.offerings.filter((o) => o.capacityType === capacityType);
    if (offerings.length === 0) continue;
    out.push({ ...option, offerings, cheapestPricePerHour: cheapestPricePerHour(offerings) });
  }
  return out.sort((a, b) => a.cheapestPricePerHour - b.cheapestPricePerHour || a.instanceType.name.localeCompare(b.instanceType.name));
}

/** Rounds money for output: six decimals keep sub-cent prices exact without float noise. */
export const roundMoney = (dollars: number): number => Math.round(dollars * 1e6) / 1e6;
export const roundCost = (cost: number): number => Math.round(cost * 1e4) / 1e4;
