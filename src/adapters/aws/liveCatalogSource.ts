// The catalog the Lambda plans with: live EC2 and Pricing data, kept in a cache so that a pass every
// few minutes does not page through the Pricing API (14+ pages per region) each time, and a fallback
// chain (stale cache, then the bundled list) so that an AWS outage degrades prices, not the pass.
import { awsDeadlines } from './deadlines.ts';
import { EC2Client } from '@aws-sdk/client-ec2';
import { PricingClient } from '@aws-sdk/client-pricing';
import type { Catalog, InstanceType, Offering } from '../../core/model/types.ts';
import type { CachedCatalog, CatalogCache, CatalogLoad, CatalogSource } from '../../core/ports/catalog.ts';
import { describeInstanceTypes, describeZoneOfferings, type InstanceTypeFacts } from './ec2InstanceTypes.ts';
import { eksAllocatable, eksCapacity, type EksOverheadOptions } from './eksAllocatable.ts';
import { CatalogSourceError, describeError } from './errors.ts';
import { fetchOnDemandPrices, fetchSpotPrices, pricingEndpointRegion } from './pricing.ts';

export const DEFAULT_MAX_AGE_MS = 12 * 60 * 60 * 1000;
/** The date of the bundled price list (Karpenter's generated table), used when the bundle carries none. */
export const BUNDLED_PRICES_AS_OF = Date.parse('2026-07-20T00:00:00Z');
/** A cache entry dated this far in the future is trusted as fresh (clock skew); beyond, it is suspect. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

export interface CatalogParts {
  readonly region: string;
  readonly types: readonly InstanceTypeFacts[];
  /** Instance type -> zones offering it. */
  readonly zonesByType: ReadonlyMap<string, readonly string[]>;
  /** Instance type -> on-demand USD per hour. */
  readonly onDemandPrices: ReadonlyMap<string, number>;
  /** Instance type -> zone -> spot USD per hour. */
  readonly spotPrices: ReadonlyMap<string, ReadonlyMap<string, number>>;
  readonly pricesAsOf: number;
  readonly overhead?: EksOverheadOptions;
}

/**
 * Builds the domain catalog. An offering exists only where its price is known: on-demand in every
 * zone offering the type when the Pricing API quotes it, spot in every zone with a spot price. A type
 * with neither still appears (existing nodes of it need their capacity), with no offerings.
 */
export function assembleCatalog(parts: CatalogParts): Catalog {
  const instanceTypes: InstanceType[] = [...parts.types]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((facts) => {
      const zones = parts.zonesByType.get(facts.name) ?? [];
      const onDemandPricePerHour = parts.onDemandPrices.get(facts.name);
      const spotByZone = parts.spotPrices.get(facts.name) ?? new Map<string, number>();
      const offerings: Offering[] = [];
      for (const zone of [...new Set([...zones, ...spotByZone.keys()])].sort()) {
        if (onDemandPricePerHour !== undefined && zones.includes(zone)) {
          offerings.push({ zone, capacityType: 'on-demand', pricePerHour: onDemandPricePerHour, available: true });
        }
        const spotPricePerHour = spotByZone.get(zone);
        if (spotPricePerHour !== undefined) {
          offerings.push({ zone, capacityType: 'spot', pricePerHour: spotPricePerHour, available: true });
        }
      }
      return {
        name: facts.name,
        capacity: eksCapacity(facts, parts.overhead),
        allocatable: eksAllocatable(facts, parts.overhead),
        labels: { ...facts.labels, 'topology.kubernetes.io/region': parts.region },
        offerings,
      };
    });
  return {
    region: parts.region,
    instanceTypes,
    source: `live: EC2 and Pricing APIs (${parts.region})`,
    pricesAsOf: parts.pricesAsOf,
  };
}

export interface LiveFetchDeps {
  readonly region: string;
  readonly ec2: EC2Client;
  readonly pricing: PricingClient;
  readonly overhead?: EksOverheadOptions;
}

/** Fetches everything live (four paginated listings, in parallel). Throws CatalogSourceError. */
export async function fetchLiveCatalog(deps: LiveFetchDeps, nowMs: number): Promise<Catalog> {
  const [types, zonesByType, onDemandPrices, spotPrices] = await Promise.all([
    describeInstanceTypes(deps.ec2),
    describeZoneOfferings(deps.ec2),
    fetchOnDemandPrices(deps.pricing, deps.region),
    fetchSpotPrices(deps.ec2, nowMs),
  ]);
  // An empty answer is as useless as an error, and worse if cached for 12 hours: treat it as one.
  if (types.length === 0) throw new CatalogSourceError('ec2:DescribeInstanceTypes', 'no instance types returned');
  if (onDemandPrices.size === 0) {
    throw new CatalogSourceError('pricing:GetProducts', `no on-demand prices returned for ${deps.region}`);
  }
  return assembleCatalog({
    region: deps.region,
    types,
    zonesByType,
    onDemandPrices,
    spotPrices,
    pricesAsOf: nowMs,
    ...(deps.overhead === undefined ? {} : { overhead: deps.overhead }),
  });
}

export interface LiveCatalogSourceOptions extends LiveFetchDeps {
  readonly cache: CatalogCache;
  /** The catalog shipped with the product, last resort. Injected so this module needs no file. */
  readonly bundled: () => Catalog | Promise<Catalog>;
  /** How long a cached catalog is used without asking AWS. Default 12 hours. */
  readonly maxAgeMs?: number;
}

export class LiveCatalogSource implements CatalogSource {
  private readonly maxAgeMs: number;

  constructor(private readonly options: LiveCatalogSourceOptions) {
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  }

  async load(nowMs: number): Promise<CatalogLoad> {
    const warnings: string[] = [];
    let cached: CachedCatalog | undefined;
    try {
      cached = await this.options.cache.get();
    } catch (error) {
      warnings.push(`the catalog cache could not be read (${describeError(error)}); fetching live data`);
    }

    if (cached !== undefined && this.isFresh(cached, nowMs)) {
      return { catalog: dated(cached.catalog, cached.pricesAsOf), pricesAsOf: cached.pricesAsOf, source: 'cache', warnings };
    }

    let live: Catalog;
    try {
      live = await fetchLiveCatalog(this.options, nowMs);
    } catch (error) {
      return this.fallBack(error, cached, nowMs, warnings);
    }
    try {
      await this.options.cache.put({ catalog: live, pricesAsOf: nowMs });
    } catch (error) {
      // The catalog is good; only the next pass pays for the failure by fetching again.
      warnings.push(`the live catalog could not be cached (${describeError(error)}); the next pass fetches again`);
    }
    return { catalog: live, pricesAsOf: nowMs, source: 'live', warnings };
  }

  private isFresh(cached: CachedCatalog, nowMs: number): boolean {
    const ageMs = nowMs - cached.pricesAsOf;
    return ageMs < this.maxAgeMs && ageMs >= -CLOCK_SKEW_MS;
  }

  private async fallBack(
    error: unknown,
    cached: CachedCatalog | undefined,
    nowMs: number,
    warnings: string[],
  ): Promise<CatalogLoad> {
    const why = `live catalog refresh failed (${describeError(error)})`;
    if (cached !== undefined) {
      warnings.push(
        `${why}; using the cached catalog with prices from ${new Date(cached.pricesAsOf).toISOString()} ` +
          `(${formatAge(nowMs - cached.pricesAsOf)} old)`,
      );
      return { catalog: dated(cached.catalog, cached.pricesAsOf), pricesAsOf: cached.pricesAsOf, source: 'cache', warnings };
    }

    let bundled: Catalog;
    try {
      bundled = await this.options.bundled();
    } catch (bundleError) {
      // Nothing left to plan with: this is a packaging defect, not an AWS outage, so it must surface.
      throw new CatalogSourceError('bundled catalog', `${describeError(bundleError)} (after: ${why})`, {
        cause: bundleError,
      });
    }
    const pricesAsOf =
      bundled.pricesAsOf !== undefined && Number.isFinite(bundled.pricesAsOf) ? bundled.pricesAsOf : BUNDLED_PRICES_AS_OF;
    warnings.push(
      `${why}; prices are the bundled list from ${new Date(pricesAsOf).toISOString().slice(0, 10)}, spot prices estimated`,
    );
    if (bundled.region !== this.options.region) {
      warnings.push(
        `the bundled catalog is for ${bundled.region}, not ${this.options.region}: its zones and prices may not match the cluster`,
      );
    }
    return { catalog: dated(bundled, pricesAsOf), pricesAsOf, source: 'bundled', warnings };
  }
}

/** The catalog with its price date on it too, so whoever only gets the catalog still knows it. */
function dated(catalog: Catalog, pricesAsOf: number): Catalog {
  return catalog.pricesAsOf === pricesAsOf ? catalog : { ...catalog, pricesAsOf };
}

/** `45m`, `26h`, `3d`: the age of stale prices in a warning. */
export function formatAge(ageMs: number): string {
  const minutes = Math.max(0, Math.round(ageMs / 60_000));
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours}h`;
  return `${Math.round(hours / 24)}d`;
}

export interface CreateLiveCatalogSourceOptions extends Omit<LiveCatalogSourceOptions, 'ec2' | 'pricing'> {
  readonly ec2?: EC2Client;
  readonly pricing?: PricingClient;
}

/** The production wiring: SDK clients for the cluster's region and the matching Pricing endpoint. */
export function createLiveCatalogSource(options: CreateLiveCatalogSourceOptions): LiveCatalogSource {
  return new LiveCatalogSource({
    ...options,
    ec2: options.ec2 ?? new EC2Client({ region: options.region, ...awsDeadlines() }),
    pricing: options.pricing ?? new PricingClient({ region: pricingEndpointRegion(options.region), ...awsDeadlines() }),
  });
}
