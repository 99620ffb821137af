// The live catalog source: assembling offerings from the four listings, and the cache/fallback rules
// (fresh cache: no AWS calls; stale: refresh; AWS down: stale cache, else the bundled list; always dated).
import {
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  DescribeSpotPriceHistoryCommand,
  EC2Client,
  type InstanceTypeInfo,
} from '@aws-sdk/client-ec2';
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  assembleCatalog,
  BUNDLED_PRICES_AS_OF,
  createLiveCatalogSource,
  formatAge,
  LiveCatalogSource,
} from '../../src/adapters/aws/liveCatalogSource.ts';
import type { Catalog } from '../../src/core/model/types.ts';
import { InMemoryCatalogCache, type CachedCatalog, type CatalogCache } from '../../src/core/ports/catalog.ts';

const Mi = 1024 ** 2;
const HOUR = 3_600_000;
const NOW = Date.parse('2026-11-21T12:00:00Z');
const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };

const ec2 = new EC2Client({ region: 'us-east-1', credentials });
const pricing = new PricingClient({ region: 'us-east-1', credentials });
const ec2Mock = mockClient(ec2);
const pricingMock = mockClient(pricing);

function typeInfo(name: string, vcpu: number, memoryMiB: number, enis: number, ipv4: number): InstanceTypeInfo {
  return {
    InstanceType: name as InstanceTypeInfo['InstanceType'],
    VCpuInfo: { DefaultVCpus: vcpu },
    MemoryInfo: { SizeInMiB: memoryMiB },
    ProcessorInfo: { SupportedArchitectures: ['x86_64'] },
    NetworkInfo: { MaximumNetworkInterfaces: enis, Ipv4AddressesPerInterface: ipv4 },
  };
}

const priceItem = (instanceType: string, usd: string): string =>
  JSON.stringify({
    product: { attributes: { instanceType } },
    terms: { OnDemand: { a: { priceDimensions: { b: { unit: 'Hrs', pricePerUnit: { USD: usd } } } } } },
  });

/** AWS as it answers for a small region: three types, two zones. */
function awsAnswers(): void {
  ec2Mock
    .on(DescribeInstanceTypesCommand)
    .resolvesOnce({ InstanceTypes: [typeInfo('m5.large', 2, 8192, 3, 10)], NextToken: 't' })
    .resolvesOnce({ InstanceTypes: [typeInfo('c5.large', 2, 4096, 3, 10), typeInfo('x2gd.large', 2, 4096, 3, 10)] });
  ec2Mock.on(DescribeInstanceTypeOfferingsCommand).resolves({
    InstanceTypeOfferings: [
      { InstanceType: 'm5.large', Location: 'us-east-1a' },
      { InstanceType: 'm5.large', Location: 'us-east-1b' },
      { InstanceType: 'c5.large', Location: 'us-east-1a' },
      { InstanceType: 'x2gd.large', Location: 'us-east-1a' },
    ],
  });
  ec2Mock.on(DescribeSpotPriceHistoryCommand).resolves({
    SpotPriceHistory: [
      { InstanceType: 'm5.large', AvailabilityZone: 'us-east-1b', SpotPrice: '0.04', Timestamp: new Date(NOW) },
      { InstanceType: 'x2gd.large', AvailabilityZone: 'us-east-1a', SpotPrice: '0.02', Timestamp: new Date(NOW) },
    ],
  });
  pricingMock
    .on(GetProductsCommand)
    .resolvesOnce({ PriceList: [priceItem('m5.large', '0.096')], NextToken: 'p' })
    .resolvesOnce({ PriceList: [priceItem('c5.large', '0.085')] });
}

function awsDown(): void {
  ec2Mock.on(DescribeInstanceTypesCommand).rejects(Object.assign(new Error('Could not connect'), { name: 'TimeoutError' }));
  ec2Mock.on(DescribeInstanceTypeOfferingsCommand).rejects(new Error('Could not connect'));
  ec2Mock.on(DescribeSpotPriceHistoryCommand).rejects(new Error('Could not connect'));
  pricingMock.on(GetProductsCommand).rejects(new Error('Could not connect'));
}

const awsCallCount = (): number => ec2Mock.calls().length + pricingMock.calls().length;

function smallCatalog(region: string, pricePerHour: number, pricesAsOf?: number): Catalog {
  return {
    region,
    instanceTypes: [
      {
        name: 'm5.large',
        capacity: { cpu: 2000, memory: 8192 * Mi, pods: 29 },
        allocatable: { cpu: 1930, memory: 6903 * Mi, pods: 29 },
        labels: { 'kubernetes.io/arch': 'amd64' },
        offerings: [{ zone: `${region}a`, capacityType: 'on-demand', pricePerHour, available: true }],
      },
    ],
    ...(pricesAsOf === undefined ? {} : { pricesAsOf }),
  };
}

let bundledCalls = 0;
const bundled = (): Catalog => {
  bundledCalls += 1;
  return smallCatalog('us-east-1', 0.1);
};

function source(cache: CatalogCache, maxAgeMs?: number): LiveCatalogSource {
  return new LiveCatalogSource({ region: 'us-east-1', ec2, pricing, cache, bundled, ...(maxAgeMs ? { maxAgeMs } : {}) });
}

beforeEach(() => {
  bundledCalls = 0;
});
afterEach(() => {
  ec2Mock.reset();
  pricingMock.reset();
});

describe('assembling the catalog', () => {
  it('offers on-demand in every offered zone at the quoted price, spot only where a spot price exists', async () => {
    awsAnswers();
    const load = await source(new InMemoryCatalogCache()).load(NOW);
    const byName = new Map(load.catalog.instanceTypes.map((t) => [t.name, t]));

    expect([...byName.keys()]).toEqual(['c5.large', 'm5.large', 'x2gd.large']);
    expect(byName.get('m5.large')!.offerings).toEqual([
      { zone: 'us-east-1a', capacityType: 'on-demand', pricePerHour: 0.096, available: true },
      { zone: 'us-east-1b', capacityType: 'on-demand', pricePerHour: 0.096, available: true },
      { zone: 'us-east-1b', capacityType: 'spot', pricePerHour: 0.04, available: true },
    ]);
    expect(byName.get('c5.large')!.offerings).toEqual([
      { zone: 'us-east-1a', capacityType: 'on-demand', pricePerHour: 0.085, available: true },
    ]);
    // No on-demand price quoted: no on-demand offering, but the spot one stands.
    expect(byName.get('x2gd.large')!.offerings).toEqual([
      { zone: 'us-east-1a', capacityType: 'spot', pricePerHour: 0.02, available: true },
    ]);
  });

  it('derives allocatable with the EKS overheads and keeps raw capacity', async () => {
    awsAnswers();
    const load = await source(new InMemoryCatalogCache()).load(NOW);
    const m5 = load.catalog.instanceTypes.find((t) => t.name === 'm5.large')!;
    expect(m5.capacity).toMatchObject({ cpu: 2000, memory: 8192 * Mi, pods: 29 });
    expect(m5.allocatable).toMatchObject({ cpu: 1930, memory: 6903 * Mi, pods: 29 });
    expect(m5.labels).toMatchObject({ 'kubernetes.io/arch': 'amd64', 'topology.kubernetes.io/region': 'us-east-1' });
  });

  it('keeps a type nobody prices, with no offerings', () => {
    const catalog = assembleCatalog({
      region: 'us-east-1',
      types: [{ name: 'z1.large', vcpu: 2, memoryMiB: 4096, maxPods: 29, arch: 'amd64', extendedResources: {}, labels: {} }],
      zonesByType: new Map([['z1.large', ['us-east-1a']]]),
      onDemandPrices: new Map(),
      spotPrices: new Map(),
      pricesAsOf: NOW,
    });
    expect(catalog.instanceTypes[0]!.offerings).toEqual([]);
    expect(catalog.pricesAsOf).toBe(NOW);
  });
});

describe('caching', () => {
  it('a fresh cache answers alone: zero EC2 and Pricing calls', async () => {
    awsAnswers();
    const cache = new InMemoryCatalogCache({ catalog: smallCatalog('us-east-1', 0.5), pricesAsOf: NOW - 11 * HOUR });

    const load = await source(cache).load(NOW);

    expect(awsCallCount()).toBe(0);
    expect(ec2Mock.commandCalls(DescribeInstanceTypesCommand)).toHaveLength(0);
    expect(pricingMock.commandCalls(GetProductsCommand)).toHaveLength(0);
    expect(load).toMatchObject({ source: 'cache', pricesAsOf: NOW - 11 * HOUR, warnings: [] });
    expect(load.catalog.pricesAsOf).toBe(NOW - 11 * HOUR);
    expect(load.catalog.instanceTypes[0]!.offerings[0]!.pricePerHour).toBe(0.5);
    expect(cache.putCalls).toBe(0);
  });

  it('a stale cache is refreshed from AWS and the new catalog stored', async () => {
    awsAnswers();
    const cache = new InMemoryCatalogCache({ catalog: smallCatalog('us-east-1', 0.5), pricesAsOf: NOW - 13 * HOUR });

    const load = await source(cache).load(NOW);

    expect(load).toMatchObject({ source: 'live', pricesAsOf: NOW, warnings: [] });
    expect(ec2Mock.commandCalls(DescribeInstanceTypesCommand)).toHaveLength(2);
    expect(ec2Mock.commandCalls(DescribeInstanceTypeOfferingsCommand)).toHaveLength(1);
    expect(ec2Mock.commandCalls(DescribeSpotPriceHistoryCommand)).toHaveLength(1);
    expect(pricingMock.commandCalls(GetProductsCommand)).toHaveLength(2);
    expect(cache.putCalls).toBe(1);
    const stored = (await cache.get())!;
    expect(stored.pricesAsOf).toBe(NOW);
    expect(stored.catalog).toEqual(load.catalog);

    // The next pass, an hour later, is served from what was just stored.
    ec2Mock.resetHistory();
    pricingMock.resetHistory();
    const next = await source(cache).load(NOW + HOUR);
    expect(next.source).toBe('cache');
    expect(awsCallCount()).toBe(0);
  });

  it('honours a configured maximum age', async () => {
    awsAnswers();
    const cache = new InMemoryCatalogCache({ catalog: smallCatalog('us-east-1', 0.5), pricesAsOf: NOW - 2 * HOUR });
    const load = await source(cache, HOUR).load(NOW);
    expect(load.source).toBe('live');
  });

  it('distrusts a cache dated in the future beyond clock skew', async () => {
    awsAnswers();
    const cache = new InMemoryCatalogCache({ catalog: smallCatalog('us-east-1', 0.5), pricesAsOf: NOW + 24 * HOUR });
    expect((await source(cache).load(NOW)).source).toBe('live');
  });

  it('with no cache at all, fetches live and stores it', async () => {
    awsAnswers();
    const cache = new InMemoryCatalogCache();
    const load = await source(cache).load(NOW);
    expect(load.source).toBe('live');
    expect(cache.putCalls).toBe(1);
  });
});

describe('falling back', () => {
  it('AWS failing with a stale cache: the stale cache, with a warning giving its age', async () => {
    awsDown();
    const cache = new InMemoryCatalogCache({ catalog: smallCatalog('us-east-1', 0.5), pricesAsOf: NOW - 30 * HOUR });

    const load = await source(cache).load(NOW);

    expect(load.source).toBe('cache');
    expect(load.pricesAsOf).toBe(NOW - 30 * HOUR);
    expect(load.catalog.pricesAsOf).toBe(NOW - 30 * HOUR);
    expect(load.warnings).toHaveLength(1);
    expect(load.warnings[0]).toMatch(/^live catalog refresh failed \((ec2|pricing):\w+ failed: (TimeoutError: )?Could not connect\)/);
    expect(load.warnings[0]).toContain('prices from 2026-11-20T06:00:00.000Z (30h old)');
    expect(cache.putCalls).toBe(0);
    expect(bundledCalls).toBe(0);
  });

  it('AWS failing with no cache: the bundled catalog, dated 2026-07-20, with a warning', async () => {
    awsDown();
    const cache = new InMemoryCatalogCache();

    const load = await source(cache).load(NOW);

    expect(load.source).toBe('bundled');
    expect(load.pricesAsOf).toBe(Date.parse('2026-07-20T00:00:00Z'));
    expect(load.pricesAsOf).toBe(BUNDLED_PRICES_AS_OF);
    expect(load.catalog.pricesAsOf).toBe(BUNDLED_PRICES_AS_OF);
    expect(load.warnings).toEqual([
      expect.stringMatching(/^live catalog refresh failed \(.*\); prices are the bundled list from 2026-07-20, spot prices estimated$/),
    ]);
    expect(cache.putCalls).toBe(0);
    expect(bundledCalls).toBe(1);
  });

  it("uses the bundled catalog's own date when it carries one, and warns when its region differs", async () => {
    awsDown();
    const asOf = Date.parse('2026-08-01T00:00:00Z');
    const src = new LiveCatalogSource({
      region: 'eu-west-1',
      ec2,
      pricing,
      cache: new InMemoryCatalogCache(),
      bundled: async () => smallCatalog('us-east-1', 0.1, asOf),
    });
    const load = await src.load(NOW);
    expect(load.pricesAsOf).toBe(asOf);
    expect(load.warnings[0]).toContain('bundled list from 2026-08-01');
    expect(load.warnings[1]).toMatch(/bundled catalog is for us-east-1, not eu-west-1/);
  });

  it('an empty price list counts as a failure rather than a catalog without prices', async () => {
    awsAnswers();
    pricingMock.reset();
    pricingMock.on(GetProductsCommand).resolves({ PriceList: [] });
    const cache = new InMemoryCatalogCache({ catalog: smallCatalog('us-east-1', 0.5), pricesAsOf: NOW - 13 * HOUR });

    const load = await source(cache).load(NOW);

    expect(load.source).toBe('cache');
    expect(load.warnings[0]).toMatch(/pricing:GetProducts failed: no on-demand prices returned for us-east-1/);
  });

  it('a spot price failure alone also falls back (a catalog without spot would misprice spot nodes)', async () => {
    awsAnswers();
    ec2Mock.on(DescribeSpotPriceHistoryCommand).rejects(new Error('denied'));
    const load = await source(new InMemoryCatalogCache()).load(NOW);
    expect(load.source).toBe('bundled');
    expect(load.warnings[0]).toMatch(/ec2:DescribeSpotPriceHistory failed: denied/);
  });

  it('an unreadable cache is reported and the live data used', async () => {
    awsAnswers();
    const broken: CatalogCache = {
      get: async () => {
        throw new Error('ResourceNotFoundException: table missing');
      },
      put: async () => {
        throw new Error('ResourceNotFoundException: table missing');
      },
    };
    const load = await source(broken).load(NOW);
    expect(load.source).toBe('live');
    expect(load.warnings).toEqual([
      expect.stringMatching(/^the catalog cache could not be read \(ResourceNotFoundException: table missing\)/),
      expect.stringMatching(/^the live catalog could not be cached/),
    ]);
  });

  it('an unreadable cache and AWS down: the bundled catalog, both warnings', async () => {
    awsDown();
    const broken: CatalogCache = {
      get: async () => {
        throw new Error('no table');
      },
      put: async (_entry: CachedCatalog) => undefined,
    };
    const load = await source(broken).load(NOW);
    expect(load.source).toBe('bundled');
    expect(load.warnings).toHaveLength(2);
  });

  it('a broken bundle is the one failure that surfaces, as a CatalogSourceError', async () => {
    awsDown();
    const src = new LiveCatalogSource({
      region: 'us-east-1',
      ec2,
      pricing,
      cache: new InMemoryCatalogCache(),
      bundled: () => {
        throw new Error('catalog.json missing');
      },
    });
    await expect(src.load(NOW)).rejects.toMatchObject({ name: 'CatalogSourceError', operation: 'bundled catalog' });
  });
});

describe('wiring', () => {
  it('creates SDK clients itself when none are given, without calling AWS', () => {
    const src = createLiveCatalogSource({ region: 'eu-west-1', cache: new InMemoryCatalogCache(), bundled });
    expect(src).toBeInstanceOf(LiveCatalogSource);
  });

  it.each([
    [45 * 60_000, '45m'],
    [26 * HOUR, '26h'],
    [72 * HOUR, '3d'],
  ])('formats an age of %i ms as %s', (ageMs, text) => {
    expect(formatAge(ageMs)).toBe(text);
  });
});
