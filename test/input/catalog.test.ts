// The instance-type catalog (docs/file-formats.md, "The catalog"): defaults, derived allocatable and
// labels, validation.
import { describe, expect, it } from 'vitest';
import { parseCatalog } from '../../src/core/input/catalog.ts';
import { expectInputError } from './helpers.ts';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;

function m5large(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'm5.large',
    capacity: { cpu: '2', memory: '8Gi', pods: '29' },
    offerings: [
      { zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096 },
      { zone: 'us-east-1a', capacityType: 'spot', price: 0.035, available: false, priceIsEstimate: true },
    ],
    ...overrides,
  };
}

const catalogOf = (...instanceTypes: unknown[]) => ({ region: 'us-east-1', instanceTypes });

describe('parseCatalog', () => {
  it('reads the contract example', () => {
    const catalog = parseCatalog(
      catalogOf({
        name: 'm5.large',
        capacity: { cpu: '2', memory: '8Gi', pods: '29' },
        allocatable: { cpu: '1930m', memory: '7134Mi', pods: '29' },
        labels: { 'kubernetes.io/arch': 'amd64' },
        offerings: [
          { zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096 },
          { zone: 'us-east-1a', capacityType: 'spot', price: 0.035, available: true },
        ],
      }),
    );
    expect(catalog.region).toBe('us-east-1');
    const [type] = catalog.instanceTypes;
    expect(type?.capacity).toEqual({ cpu: 2000, memory: 8 * Gi, pods: 29 });
    expect(type?.allocatable).toEqual({ cpu: 1930, memory: 7134 * Mi, pods: 29 });
    expect(type?.offerings).toEqual([
      { zone: 'us-east-1a', capacityType: 'on-demand', pricePerHour: 0.096, available: true },
      { zone: 'us-east-1a', capacityType: 'spot', pricePerHour: 0.035, available: true },
    ]);
  });

  it('derives allocatable from capacity when absent (EKS overheads)', () => {
    const [type] = parseCatalog(catalogOf(m5large())).instanceTypes;
    expect(type?.allocatable).toEqual({ cpu: 1930, memory: 6903 * Mi, pods: 29 });
  });

  it('derives arm64 allocatable with the CMA reservation', () => {
    const [type] = parseCatalog(catalogOf(m5large({ name: 'm6g.large' }))).instanceTypes;
    expect(type?.labels['kubernetes.io/arch']).toBe('arm64');
    expect(type?.allocatable['memory']).toBe(6844 * Mi);
  });

  it('fills resources missing from a listed allocatable from the derivation', () => {
    const [type] = parseCatalog(catalogOf(m5large({ allocatable: { cpu: '1900m', memory: '7000Mi' } }))).instanceTypes;
    expect(type?.allocatable).toEqual({ cpu: 1900, memory: 7000 * Mi, pods: 29 });
  });

  it('derives well-known labels, and explicit labels win', () => {
    const [type] = parseCatalog(
      catalogOf(m5large({ labels: { 'kubernetes.io/arch': 'arm64', 'example.com/team': 'x' } })),
    ).instanceTypes;
    expect(type?.labels).toMatchObject({
      'node.kubernetes.io/instance-type': 'm5.large',
      'karpenter.k8s.aws/instance-family': 'm5',
      'karpenter.k8s.aws/instance-category': 'm',
      'karpenter.k8s.aws/instance-generation': '5',
      'karpenter.k8s.aws/instance-size': 'large',
      'karpenter.k8s.aws/instance-cpu': '2',
      'karpenter.k8s.aws/instance-memory': '8192',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'arm64',
      'example.com/team': 'x',
    });
  });

  it('defaults available to true and keeps priceIsEstimate', () => {
    const [type] = parseCatalog(catalogOf(m5large())).instanceTypes;
    expect(type?.offerings).toEqual([
      { zone: 'us-east-1a', capacityType: 'on-demand', pricePerHour: 0.096, available: true },
      { zone: 'us-east-1a', capacityType: 'spot', pricePerHour: 0.035, available: false, priceIsEstimate: true },
    ]);
  });

  it('accepts a tiny price, source and pricesAsOf, and a missing region', () => {
    const catalog = parseCatalog({
      source: 'bundled',
      pricesAsOf: '2026-07-20T00:00:00Z',
      instanceTypes: [m5large({ offerings: [{ zone: 'z', capacityType: 'on-demand', price: 0.0001 }] })],
    });
    expect(catalog.region).toBe('');
    expect(catalog.source).toBe('bundled');
    expect(catalog.pricesAsOf).toBe(Date.parse('2026-07-20T00:00:00Z'));
    expect(catalog.instanceTypes[0]?.offerings[0]?.pricePerHour).toBe(0.0001);
  });

  it('accepts allocatable equal to capacity', () => {
    const [type] = parseCatalog(catalogOf(m5large({ allocatable: { cpu: '2', memory: '8Gi', pods: '29' } }))).instanceTypes;
    expect(type?.allocatable).toMatchObject({ cpu: 2000, memory: 8 * 2 ** 30, pods: 29 });
  });
});

describe('parseCatalog validation', () => {
  const withOffering = (offering: Record<string, unknown>) =>
    catalogOf(m5large({ offerings: [{ zone: 'us-east-1a', capacityType: 'on-demand', price: 0.1, ...offering }] }));

  it.each([
    ['not an object', [], 'Catalog', '', 'must be an object'],
    ['no instanceTypes', { region: 'r' }, 'Catalog', 'instanceTypes', 'is required'],
    ['instance type without name', catalogOf(m5large({ name: undefined })), 'instanceTypes[0]', 'instanceTypes[0].name', 'is required'],
    ['no capacity', catalogOf(m5large({ capacity: undefined })), 'InstanceType "m5.large"', 'instanceTypes[0].capacity', 'is required'],
    ['capacity without memory', catalogOf(m5large({ capacity: { cpu: '2' } })), 'InstanceType "m5.large"', 'instanceTypes[0].capacity.memory', 'is required'],
    ['bad quantity', catalogOf(m5large({ capacity: { cpu: 'two', memory: '8Gi' } })), 'InstanceType "m5.large"', 'instanceTypes[0].capacity.cpu', 'not a Kubernetes quantity'],
    ['bad allocatable', catalogOf(m5large({ allocatable: { memory: '-1' } })), 'InstanceType "m5.large"', 'instanceTypes[0].allocatable.memory', 'must not be negative'],
    ['label not a string', catalogOf(m5large({ labels: { a: 1 } })), 'InstanceType "m5.large"', 'instanceTypes[0].labels.a', 'must be a string'],
    ['no offerings', catalogOf(m5large({ offerings: undefined })), 'InstanceType "m5.large"', 'instanceTypes[0].offerings', 'is required'],
    ['negative price', withOffering({ price: -0.1 }), 'InstanceType "m5.large"', 'instanceTypes[0].offerings[0].price', 'positive number'],
    ['zero price', withOffering({ price: 0 }), 'InstanceType "m5.large"', 'instanceTypes[0].offerings[0].price', '0 must be a positive number'],
    ['price too large to represent', withOffering({ price: Number.POSITIVE_INFINITY }), 'InstanceType "m5.large"', 'instanceTypes[0].offerings[0].price', 'a number too large to represent must be'],
    ['price as text', withOffering({ price: '0.1' }), 'InstanceType "m5.large"', 'instanceTypes[0].offerings[0].price', 'positive number'],
    [
      'allocatable cpu above capacity',
      catalogOf(m5large({ allocatable: { cpu: '2100m' } })),
      'InstanceType "m5.large"',
      'instanceTypes[0].allocatable.cpu',
      '"2100m" is more than its capacity "2"',
    ],
    [
      'allocatable pods above capacity',
      catalogOf(m5large({ allocatable: { pods: 30 } })),
      'InstanceType "m5.large"',
      'instanceTypes[0].allocatable.pods',
      'is more than its capacity',
    ],
    ['missing price', withOffering({ price: undefined }), 'InstanceType "m5.large"', 'instanceTypes[0].offerings[0].price', 'is required'],
    ['bad capacity type', withOffering({ capacityType: 'reserved' }), 'InstanceType "m5.large"', 'instanceTypes[0].offerings[0].capacityType', 'must be one of on-demand, spot'],
    ['missing zone', withOffering({ zone: undefined }), 'InstanceType "m5.large"', 'instanceTypes[0].offerings[0].zone', 'is required'],
    ['available not boolean', withOffering({ available: 'yes' }), 'InstanceType "m5.large"', 'instanceTypes[0].offerings[0].available', 'true or false'],
    ['priceIsEstimate not boolean', withOffering({ priceIsEstimate: 1 }), 'InstanceType "m5.large"', 'instanceTypes[0].offerings[0].priceIsEstimate', 'true or false'],
    [
      'duplicate offering',
      catalogOf(m5large({ offerings: [{ zone: 'a', capacityType: 'spot', price: 1 }, { zone: 'a', capacityType: 'spot', price: 2 }] })),
      'InstanceType "m5.large"',
      'instanceTypes[0].offerings[1]',
      'duplicate offering',
    ],
    ['duplicate instance type', catalogOf(m5large(), m5large()), 'InstanceType "m5.large"', 'instanceTypes[1].name', 'duplicate instance type'],
    ['bad pricesAsOf', { pricesAsOf: 'yesterday', instanceTypes: [] }, 'Catalog', 'pricesAsOf', 'RFC 3339 time with an offset'],
  ])('%s', (_name, json, object, field, problem) => {
    expectInputError(() => parseCatalog(json), object, field, problem);
  });
});
