// Prices of what exists and what could be launched (CONTRACT section 3).
import type { Catalog, InstanceType, Node, Offering } from '../model/types.ts';
import type { NewNodeOption } from '../scheduling/types.ts';

export type PriceIndex = ReadonlyMap<string, InstanceType>;

export function indexCatalog(catalog: Catalog): PriceIndex {
  return new Map(catalog.instanceTypes.map((type) => [type.name, type]));
}

/**
 * An existing node's price is the price of its exact offering: instance type, zone and capacity type.
 * Unknown (undefined) when any of the three is missing or the catalog has no such offering; such a
 * node may still be deleted but is never replaced (CONTRACT section 3).
 */
export function nodePricePerHour(node: Node, index: PriceIndex): number | undefined {
  if (!node.instanceType || !node.zone || !node.capacityType) return undefined;
  const offering = index
    .get(node.instanceType)
    ?.offerings.find((o) => o.zone === node.zone && o.capacityType === node.capacityType);
  return offering?.pricePerHour;
}

/**
 * The most a launch of this option could cost: the launch may land on any of its allowed offerings,
 * so a replacement is only "cheaper" if even its dearest allowed offering is (Karpenter compares by
 * the worst launch price for the same reason).
 */
export function worstPricePerHour(offerings: readonly Offering[]): number {
  return offerings.reduce((max, o) => Math.max(max, o.pricePerHour), 0);
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
