// Prices: the Pricing API's JSON-string price list, its endpoint per region, and spot price history.
import { DescribeSpotPriceHistoryCommand, EC2Client } from '@aws-sdk/client-ec2';
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import {
  fetchOnDemandPrices,
  fetchSpotPrices,
  parsePriceListItem,
  pricingEndpointRegion,
} from '../../src/adapters/aws/pricing.ts';

const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };
const pricing = new PricingClient({ region: 'us-east-1', credentials });
const ec2 = new EC2Client({ region: 'us-east-1', credentials });
const pricingMock = mockClient(pricing);
const ec2Mock = mockClient(ec2);
afterEach(() => {
  pricingMock.reset();
  ec2Mock.reset();
});

const NOW = Date.parse('2026-11-21T12:00:00Z');

/** A PriceList entry as the API sends it: a JSON document serialized into a string. */
function priceItem(instanceType: string, usd: string): string {
  return JSON.stringify({
    product: {
      productFamily: 'Compute Instance',
      attributes: { instanceType, regionCode: 'us-east-1', operatingSystem: 'Linux', tenancy: 'Shared' },
      sku: `SKU-${instanceType}`,
    },
    serviceCode: 'AmazonEC2',
    terms: {
      OnDemand: {
        [`SKU-${instanceType}.JRTCKXETXF`]: {
          priceDimensions: {
            [`SKU-${instanceType}.JRTCKXETXF.6YS6EN2CT7`]: {
              unit: 'Hrs',
              pricePerUnit: { USD: usd },
              description: `$${usd} per On Demand Linux ${instanceType} Instance Hour`,
            },
          },
          sku: `SKU-${instanceType}`,
        },
      },
    },
  });
}

describe('Pricing endpoint region', () => {
  it.each([
    ['us-east-1', 'us-east-1'],
    ['us-west-2', 'us-east-1'],
    ['ca-central-1', 'us-east-1'],
    ['sa-east-1', 'us-east-1'],
    ['me-south-1', 'us-east-1'],
    ['af-south-1', 'us-east-1'],
    ['ap-southeast-2', 'ap-south-1'],
    ['ap-northeast-1', 'ap-south-1'],
    ['ap-south-1', 'ap-south-1'],
    ['eu-west-1', 'eu-central-1'],
    ['eu-north-1', 'eu-central-1'],
    ['eu-central-1', 'eu-central-1'],
  ])('%s -> %s', (region, endpoint) => {
    expect(pricingEndpointRegion(region)).toBe(endpoint);
  });
});

describe('PriceList entries', () => {
  it('reads the instance type and the hourly USD price from a JSON string', () => {
    expect(parsePriceListItem(priceItem('m5.large', '0.0960000000'))).toEqual({ instanceType: 'm5.large', pricePerHour: 0.096 });
  });

  it('accepts String objects (the SDK lazy JSON form) and already-parsed documents', () => {
    expect(parsePriceListItem(new String(priceItem('c5.large', '0.085')))).toEqual({ instanceType: 'c5.large', pricePerHour: 0.085 });
    expect(parsePriceListItem(JSON.parse(priceItem('c5.large', '0.085')))).toEqual({ instanceType: 'c5.large', pricePerHour: 0.085 });
  });

  it('skips entries without a positive price or an instance type', () => {
    expect(parsePriceListItem(priceItem('m5.large', '0.0000000000'))).toBeUndefined();
    expect(parsePriceListItem(JSON.stringify({ product: { attributes: {} }, terms: {} }))).toBeUndefined();
    expect(parsePriceListItem(JSON.stringify({ product: { attributes: { instanceType: 'm5.large' } } }))).toBeUndefined();
  });

  it('fails loudly, naming the call, when an entry is not JSON', () => {
    expect(() => parsePriceListItem('<html>')).toThrow(/pricing:GetProducts failed: a PriceList entry is not JSON/);
  });
});

describe('GetProducts', () => {
  it('pages with NextToken, 100 per page, filtered to shared Linux on-demand in the region', async () => {
    pricingMock
      .on(GetProductsCommand)
      .resolvesOnce({ PriceList: [priceItem('m5.large', '0.096'), priceItem('c5.large', '0.085')], NextToken: 't2' })
      .resolvesOnce({ PriceList: [priceItem('m5.xlarge', '0.192')], NextToken: 't3' })
      .resolvesOnce({ PriceList: [priceItem('t3.nano', '0.0052'), priceItem('m5.large', '0.1')] });

    const prices = await fetchOnDemandPrices(pricing, 'eu-west-1');

    expect(Object.fromEntries(prices)).toEqual({ 'm5.large': 0.096, 'c5.large': 0.085, 'm5.xlarge': 0.192, 't3.nano': 0.0052 });
    const calls = pricingMock.commandCalls(GetProductsCommand);
    expect(calls.map((c) => c.args[0].input.NextToken)).toEqual([undefined, 't2', 't3']);
    expect(calls[0]!.args[0].input).toEqual({
      ServiceCode: 'AmazonEC2',
      FormatVersion: 'aws_v1',
      MaxResults: 100,
      NextToken: undefined,
      Filters: [
        { Type: 'TERM_MATCH', Field: 'regionCode', Value: 'eu-west-1' },
        { Type: 'TERM_MATCH', Field: 'operatingSystem', Value: 'Linux' },
        { Type: 'TERM_MATCH', Field: 'preInstalledSw', Value: 'NA' },
        { Type: 'TERM_MATCH', Field: 'capacitystatus', Value: 'Used' },
        { Type: 'TERM_MATCH', Field: 'tenancy', Value: 'Shared' },
        { Type: 'TERM_MATCH', Field: 'marketoption', Value: 'OnDemand' },
      ],
    });
  });

  it('names the API call when it fails', async () => {
    pricingMock.on(GetProductsCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
    await expect(fetchOnDemandPrices(pricing, 'us-east-1')).rejects.toMatchObject({
      name: 'CatalogSourceError',
      operation: 'pricing:GetProducts',
      problem: 'ThrottlingException: Rate exceeded',
    });
  });
});

describe('DescribeSpotPriceHistory', () => {
  const at = (iso: string): Date => new Date(iso);

  it('pages, asks for both Linux descriptions from now, and keeps the newest price per type and zone', async () => {
    ec2Mock
      .on(DescribeSpotPriceHistoryCommand)
      .resolvesOnce({
        SpotPriceHistory: [
          { InstanceType: 'm5.large', AvailabilityZone: 'us-east-1a', ProductDescription: 'Linux/UNIX', SpotPrice: '0.0350', Timestamp: at('2026-11-21T11:00:00Z') },
          { InstanceType: 'm5.large', AvailabilityZone: 'us-east-1b', ProductDescription: 'Linux/UNIX', SpotPrice: '0.0410', Timestamp: at('2026-11-21T10:00:00Z') },
        ],
        NextToken: 'n2',
      })
      .resolvesOnce({
        SpotPriceHistory: [
          { InstanceType: 'm5.large', AvailabilityZone: 'us-east-1a', ProductDescription: 'Linux/UNIX (Amazon VPC)', SpotPrice: '0.0370', Timestamp: at('2026-11-21T11:30:00Z') },
          { InstanceType: 'm5.large', AvailabilityZone: 'us-east-1b', ProductDescription: 'Linux/UNIX (Amazon VPC)', SpotPrice: '0.0390', Timestamp: at('2026-11-21T09:00:00Z') },
          { InstanceType: 'c5.large', AvailabilityZone: 'us-east-1a', ProductDescription: 'Linux/UNIX', SpotPrice: 'n/a', Timestamp: at('2026-11-21T11:00:00Z') },
        ],
      });

    const prices = await fetchSpotPrices(ec2, NOW);

    expect([...prices.keys()]).toEqual(['m5.large']);
    expect(Object.fromEntries(prices.get('m5.large')!)).toEqual({ 'us-east-1a': 0.037, 'us-east-1b': 0.041 });
    const calls = ec2Mock.commandCalls(DescribeSpotPriceHistoryCommand);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.args[0].input).toMatchObject({
      ProductDescriptions: ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'],
      StartTime: new Date(NOW),
    });
    expect(calls[1]!.args[0].input.NextToken).toBe('n2');
  });

  it('names the API call when it fails', async () => {
    ec2Mock.on(DescribeSpotPriceHistoryCommand).rejects(new Error('boom'));
    await expect(fetchSpotPrices(ec2, NOW)).rejects.toMatchObject({ operation: 'ec2:DescribeSpotPriceHistory' });
  });
});
