// The data the product ships with: the bundled catalog, the embedded demo, the benchmark generator.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { generateCluster, generateNodePools } from '../../bench/generate.ts';
import { buildCatalog, DEFAULT_INPUT } from '../../scripts/build-catalog.ts';
import { buildDemo, DEMO_NOW } from '../../scripts/build-demo.ts';
import { parseCatalog } from '../../src/core/input/catalog.ts';

const root = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(fileURLToPath(new URL(path, root)), 'utf8');

interface Offering {
  zone: string;
  capacityType: 'on-demand' | 'spot';
  price: number;
  priceIsEstimate?: boolean;
}
interface CatalogType {
  name: string;
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  labels: Record<string, string>;
  offerings: Offering[];
}
interface CatalogDoc {
  region: string;
  source: string;
  spotPricesAreEstimates: boolean;
  spotEstimateMethod: string;
  instanceTypes: CatalogType[];
}
type Item = { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: Record<string, unknown> };

const catalogText = read('src/adapters/catalog/bundled/catalog.json');
const catalog = JSON.parse(catalogText) as CatalogDoc;
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const types = new Set(catalog.instanceTypes.map((t) => t.name));

describe('bundled catalog', () => {
  it('has all 1,345 instance types of the source data, once each', () => {
    expect(catalog.instanceTypes).toHaveLength(1345);
    expect(new Set(catalog.instanceTypes.map((t) => t.name)).size).toBe(1345);
    expect(catalog.region).toBe('us-east-1');
  });

  it('says where the data comes from and that spot prices are estimates', () => {
    expect(catalog.source).toContain('karpenter-provider-aws v1.14.1');
    expect(catalog.source).toContain('Apache-2.0');
    expect(catalog.spotPricesAreEstimates).toBe(true);
    expect(catalog.spotEstimateMethod).toMatch(/55% and 75%/);
  });

  it('offers every type on demand in three zones, and as spot with an estimated price', () => {
    for (const t of catalog.instanceTypes) {
      const onDemand = t.offerings.filter((o) => o.capacityType === 'on-demand');
      const spot = t.offerings.filter((o) => o.capacityType === 'spot');
      expect(onDemand.map((o) => o.zone).sort(), t.name).toEqual(ZONES);
      expect(spot.map((o) => o.zone).sort(), t.name).toEqual(ZONES);
      for (const o of onDemand) {
        expect(o.price, t.name).toBeGreaterThan(0);
        expect(o.priceIsEstimate, t.name).toBeUndefined();
      }
      for (const o of spot) {
        expect(o.priceIsEstimate, `${t.name} ${o.zone}`).toBe(true);
        const od = onDemand.find((x) => x.zone === o.zone)!.price;
        // 55-75% off, give or take the 4-decimal rounding.
        expect(o.price).toBeGreaterThan(0);
        expect(o.price).toBeLessThanOrEqual(od * 0.45 + 0.00005);
        expect(o.price).toBeGreaterThanOrEqual(Math.max(0.0001, od * 0.25 - 0.00005));
      }
    }
  });

  it('has m5.large at its real on-demand price and Karpenter allocatable', () => {
    const m5 = catalog.instanceTypes.find((t) => t.name === 'm5.large')!;
    expect(m5.offerings.filter((o) => o.capacityType === 'on-demand').map((o) => o.price)).toEqual([0.096, 0.096, 0.096]);
    expect(m5.allocatable).toMatchObject({ cpu: '1930m', pods: '29' });
    expect(m5.capacity).toMatchObject({ cpu: '2', memory: '8192Mi', pods: '29' });
    expect(m5.labels['karpenter.k8s.aws/instance-family']).toBe('m5');
  });

  it('is compact JSON that the product accepts', () => {
    expect(catalogText.includes('\n')).toBe(false);
    const parsed = parseCatalog(catalog);
    expect(parsed.instanceTypes).toHaveLength(1345);
    const m5 = parsed.instanceTypes.find((t) => t.name === 'm5.large')!;
    expect(m5.allocatable['cpu']).toBe(1930);
    expect(m5.offerings.filter((o) => o.capacityType === 'spot').every((o) => o.priceIsEstimate === true)).toBe(true);
  });

  it('is what scripts/build-catalog.ts makes of the source data in data/', () => {
    const built = buildCatalog(JSON.parse(read(DEFAULT_INPUT)));
    expect(built.skipped).toEqual([]);
    expect(built.json === catalogText).toBe(true);
  });
});

describe('embedded demo', () => {
  const list = JSON.parse(read('demo/cluster.json')) as { apiVersion: string; kind: string; items: Item[] };
  const nodes = list.items.filter((i) => i.kind === 'Node');
  const pods = list.items.filter((i) => i.kind === 'Pod');

  it('is a kubectl List of about 30 nodes and a few hundred pods', () => {
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(nodes.length).toBeGreaterThanOrEqual(25);
    expect(nodes.length).toBeLessThanOrEqual(40);
    expect(pods.length).toBeGreaterThanOrEqual(150);
    expect(pods.length).toBeLessThanOrEqual(500);
    const kinds = new Set(list.items.map((i) => i.kind));
    for (const kind of ['PodDisruptionBudget', 'DaemonSet', 'Deployment', 'StatefulSet']) expect(kinds.has(kind), kind).toBe(true);
  });

  it('puts every pod on a demo node', () => {
    const names = new Set(nodes.map((n) => n.metadata.name));
    for (const p of pods) expect(names.has(p.spec!['nodeName'] as string), p.metadata.name).toBe(true);
  });

  it('uses only instance types from the bundled catalog', () => {
    for (const n of nodes) expect(types.has(n.metadata.labels!['node.kubernetes.io/instance-type']!), n.metadata.name).toBe(true);
  });

  it('comes with two karpenter.sh/v1 NodePools', () => {
    const docs = parseAllDocuments(read('demo/nodepools.yaml')).map((d) => d.toJS() as { apiVersion: string; kind: string; metadata: { name: string } });
    expect(docs.map((d) => [d.apiVersion, d.kind, d.metadata.name])).toEqual([
      ['karpenter.sh/v1', 'NodePool', 'default'],
      ['karpenter.sh/v1', 'NodePool', 'batch'],
    ]);
    const pools = new Set(nodes.map((n) => n.metadata.labels!['karpenter.sh/nodepool']).filter(Boolean));
    expect([...pools].sort()).toEqual(['batch', 'default']);
  });

  it('is what scripts/build-demo.ts generates, and every node shows its case', () => {
    const demo = buildDemo(catalog);
    expect(demo.problems).toEqual([]);
    expect(demo.clusterJson === read('demo/cluster.json')).toBe(true);
    expect(demo.nodePoolsYaml).toBe(read('demo/nodepools.yaml'));
    expect(demo.readme).toBe(read('demo/README.md'));
    expect(DEMO_NOW).toBe('2026-11-21T12:00:00Z');
  });
});

describe('benchmark generator', () => {
  it('is deterministic and makes the requested number of nodes', () => {
    const a = generateCluster({ nodes: 100, podsPerNode: 30, seed: 1 });
    const b = generateCluster({ nodes: 100, podsPerNode: 30, seed: 1 });
    expect(JSON.stringify(a) === JSON.stringify(b)).toBe(true);
    expect(a.items.filter((i) => i['kind'] === 'Node')).toHaveLength(100);
    const c = generateCluster({ nodes: 100, podsPerNode: 30, seed: 2 });
    expect(JSON.stringify(c) === JSON.stringify(a)).toBe(false);
  });

  it('fills nodes with about podsPerNode pods within allocatable, on known types', () => {
    const list = generateCluster({ nodes: 60, podsPerNode: 30, seed: 5 });
    const items = list.items as unknown as Item[];
    const alloc = new Map<string, { cpu: number; pods: number; usedCpu: number; count: number }>();
    const milli = (q: string) => (q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000);
    for (const n of items.filter((i) => i.kind === 'Node')) {
      expect(types.has(n.metadata.labels!['node.kubernetes.io/instance-type']!)).toBe(true);
      const a = (n as unknown as { status: { allocatable: { cpu: string; pods: string } } }).status.allocatable;
      alloc.set(n.metadata.name, { cpu: milli(a.cpu), pods: Number(a.pods), usedCpu: 0, count: 0 });
    }
    for (const p of items.filter((i) => i.kind === 'Pod')) {
      const n = alloc.get(p.spec!['nodeName'] as string)!;
      const containers = p.spec!['containers'] as { resources: { requests: { cpu: string } } }[];
      n.usedCpu += milli(containers[0]!.resources.requests.cpu);
      n.count++;
    }
    for (const n of alloc.values()) {
      expect(n.usedCpu).toBeLessThanOrEqual(n.cpu);
      expect(n.count).toBeLessThanOrEqual(n.pods);
    }
    const perNode = [...alloc.values()].reduce((s, n) => s + n.count, 0) / alloc.size;
    expect(perNode).toBeGreaterThan(25);
    expect(perNode).toBeLessThan(38);
    expect(generateNodePools()).toContain('name: default');
  });
});
