// Prices per hour: on-demand from the Pricing API (a global service with three endpoints), spot from
// EC2's spot price history (regional). Both are per instance type; spot is also per zone.
import { DescribeSpotPriceHistoryCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { GetProductsCommand, type Filter, type PricingClient } from '@aws-sdk/client-pricing';
import { collectPages } from './ec2InstanceTypes.ts';
import { CatalogSourceError } from './errors.ts';

/**
 * The Pricing API answers from three regions only; AWS documents the nearest one per geography.
 * Any of them returns prices for every region, so this is about latency and availability, not data.
 */
export function pricingEndpointRegion(region: string): string {
  if (region.startsWith('ap-')) return 'ap-south-1';
  if (region.startsWith('eu-')) return 'eu-central-1';
  return 'us-east-1';
}

/** The filters that leave exactly one product per instance type: shared-tenancy Linux on-demand. */
export function onDemandPriceFilters(region: string): Filter[] {
  const term = (Field: string, Value: string): Filter => ({ Type: 'TERM_MATCH', Field, Value });
  return [
    term('regionCode', region),
    term('operatingSystem', 'Linux'),
    term('preInstalledSw', 'NA'),
    term('capacitystatus', 'Used'),
    term('tenancy', 'Shared'),
    term('marketoption', 'OnDemand'),
  ];
}

export interface ProductPrice {
  readonly instanceType: string;
  readonly pricePerHour: number;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One `PriceList` entry -> its instance type and hourly USD price. Entries are JSON documents sent as
 * strings: `product.attributes.instanceType` and `terms.OnDemand.<offer>.priceDimensions.<rate>.
 * pricePerUnit.USD`. Returns undefined for entries that carry no positive price (AWS lists some SKUs
 * at 0.00); throws when the entry is not JSON at all, since then the format has changed under us.
 */
export function parsePriceListItem(item: unknown): ProductPrice | undefined {
  // Entries arrive as strings, or as String objects when the SDK wraps them as lazy JSON.
  const document: unknown = typeof item === 'string' || item instanceof String ? parseJson(String(item)) : item;
  if (!isRecord(document)) return undefined;

  const product = document.product;
  const attributes = isRecord(product) ? product.attributes : undefined;
  const instanceType = isRecord(attributes) ? attributes.instanceType : undefined;
  if (typeof instanceType !== 'string' || instanceType === '') return undefined;

  const terms = isRecord(document.terms) ? document.terms.OnDemand : undefined;
  for (const offer of isRecord(terms) ? Object.values(terms) : []) {
    const dimensions = isRecord(offer) ? offer.priceDimensions : undefined;
    for (const dimension of isRecord(dimensions) ? Object.values(dimensions) : []) {
      const perUnit = isRecord(dimension) ? dimension.pricePerUnit : undefined;
      const usd = isRecord(perUnit) ? Number(perUnit.USD) : Number.NaN;
      if (Number.isFinite(usd) && usd > 0) return { instanceType, pricePerHour: usd };
    }
  }
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CatalogSourceError('pricing:GetProducts', `a PriceList entry is not JSON: ${text.slice(0, 80)}`);
  }
}

/** Instance type -> on-demand USD per hour in `region`. */
export async function fetchOnDemandPrices(pricing: PricingClient, region: string): Promise<Map<string, number>> {
  const pages = await collectPages(
    'pricing:GetProducts',
    (NextToken) =>
      pricing.send(
        new GetProductsCommand({
          ServiceCode: 'AmazonEC2',
          Filters: onDemandPriceFilters(region),
          FormatVersion: 'aws_v1',
          MaxResults: 100,
          NextToken,
        }),
      ),
    (page) => page.NextToken,
  );
  const prices = new Map<string, number>();
  for (const page of pages) {
    for (const item of (page.PriceList ?? []) as unknown[]) {
      const price = parsePriceListItem(item);
      if (price === undefined) continue;
      // The filters should leave one product per type; if AWS ever lists two, quote the lower one.
      const known = prices.get(price.instanceType);
      if (known === undefined || price.pricePerHour < known) prices.set(price.instanceType, price.pricePerHour);
    }
  }
  return prices;
}

/** Linux spot prices are published under both descriptions depending on the account's platform. */
export const SPOT_PRODUCT_DESCRIPTIONS = ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'];

/**
 * Instance type -> zone -> latest spot USD per hour. With StartTime = now, EC2 returns the price in
 * force at that moment for each (type, zone, product); of several answers the newest wins.
 */
export async function fetchSpotPrices(ec2: EC2Client, nowMs: number): Promise<Map<string, Map<string, number>>> {
  const pages = await collectPages(
    'ec2:DescribeSpotPriceHistory',
    (NextToken) =>
      ec2.send(
        new DescribeSpotPriceHistoryCommand({
          ProductDescriptions: SPOT_PRODUCT_DESCRIPTIONS,
          StartTime: new Date(nowMs),
          MaxResults: 1000,
          NextToken,
        }),
      ),
    (page) => page.NextToken,
  );
  const latest = new Map<string, { pricePerHour: number; atMs: number }>();
  for (const entry of pages.flatMap((page) => page.SpotPriceHistory ?? [])) {
    const pricePerHour = Number(entry.SpotPrice);
    if (!entry.InstanceType || !entry.AvailabilityZone || !Number.isFinite(pricePerHour) || pricePerHour <= 0) continue;
    const key = `${entry.InstanceType}\u0000${entry.AvailabilityZone}`;
    const atMs = entry.Timestamp?.getTime() ?? 0;
    const known = latest.get(key);
    if (known === undefined || atMs > known.atMs) latest.set(key, { pricePerHour, atMs });
  }
  const prices = new Map<string, Map<string, number>>();
  for (const [key, { pricePerHour }] of latest) {
    const [type = '', zone = ''] = key.split('\u0000');
    const byZone = prices.get(type) ?? new Map<string, number>();
    byZone.set(zone, pricePerHour);
    prices.set(type, byZone);
  }
  return prices;
}
