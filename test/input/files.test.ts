// File adapters: JSON and multi-document YAML, file-attributed errors, and the contract examples
// (test/fixtures/contract-examples).
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeDocuments, readCatalogFile, readClusterFile, readNodePoolsFile } from '../../src/adapters/files/index.ts';
import { inputErrorOf, inputErrorOfAsync } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'eks-consolidator-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const node = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, creationTimestamp: '2026-11-20T12:00:00Z', labels: { 'karpenter.sh/nodepool': 'default' } },
  spec: { providerID: `aws:///us-east-1a/i-${name}` },
  status: { capacity: { cpu: '2', memory: '8Gi', pods: '29' }, allocatable: { cpu: '1930m', memory: '6903Mi', pods: '29' } },
});

describe('decodeDocuments', () => {
  it.each([
    ['one JSON object', '{"kind":"Node"}', [{ kind: 'Node' }]],
    ['a JSON array', '[{"a":1},{"b":2}]', [{ a: 1 }, { b: 2 }]],
    ['one YAML document', 'kind: Node\n', [{ kind: 'Node' }]],
    ['a YAML stream with empty documents', '---\na: 1\n---\n---\nb: 2\n', [{ a: 1 }, { b: 2 }]],
    ['YAML keeps quoted percentages and unquoted numbers', 'nodes: "10%"\nweight: 10\n', [{ nodes: '10%', weight: 10 }]],
    ['a byte-order mark', '\uFEFF{"a":1}', [{ a: 1 }]],
    ['JSON documents separated by ---', '{"a":1}\n---\n{"b":2}\n', [{ a: 1 }, { b: 2 }]],
  ])('%s', (_name, text, documents) => {
    expect(decodeDocuments(text)).toEqual(documents);
  });

  it.each([
    ['broken JSON', '{"a": 1,,}', 'not valid JSON or YAML'],
    ['broken YAML', 'a: [1\nb: 2\n', 'not valid JSON or YAML'],
    ['bad YAML indentation', 'a: 1\n  b: 2\n', 'not valid JSON or YAML'],
    ['empty file', '  \n', 'the file is empty'],
    ['only separators', '---\n---\n', 'no documents'],
  ])('%s is an input error', (_name, text, problem) => {
    expect(inputErrorOf(() => decodeDocuments(text)).problem).toContain(problem);
  });
});

describe('readClusterFile', () => {
  it('reads a JSON List', async () => {
    const path = file('cluster.json', JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [node('a'), node('b')] }));
    const cluster = await readClusterFile(path);
    expect(cluster.nodes.map((n) => n.name)).toEqual(['a', 'b']);
  });

  it('reads the same objects as multi-document YAML', async () => {
    const yaml = [node('a'), node('b')].map((n) => JSON.stringify(n)).join('\n---\n');
    const cluster = await readClusterFile(file('cluster.yaml', `---\n${yaml}\n`));
    expect(cluster.nodes.map((n) => n.name)).toEqual(['a', 'b']);
  });

  it('names the file, the object and the field', async () => {
    const bad = { ...node('a'), status: { allocatable: { cpu: 'two' } } };
    const path = file('bad-cluster.json', JSON.stringify({ kind: 'List', items: [bad] }));
    const error = await inputErrorOfAsync(() => readClusterFile(path));
    expect(error.file).toBe(path);
    expect(error.message).toContain(`${path}: Node "a": status.allocatable.cpu: "two" is not a Kubernetes quantity`);
  });

  it('a missing file is an input error naming the file', async () => {
    const path = join(dir, 'nope.json');
    const error = await inputErrorOfAsync(() => readClusterFile(path));
    expect(error.message).toBe(`${path}: file not found`);
  });

  it('a directory is an input error', async () => {
    const error = await inputErrorOfAsync(() => readClusterFile(dir));
    expect(error.message).toContain('is a directory');
  });

  it('a syntax error names the file', async () => {
    const path = file('broken.json', '{"kind": "List", "items": [');
    const error = await inputErrorOfAsync(() => readClusterFile(path));
    expect(error.message).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not valid JSON or YAML: `));
  });
});

describe('readCatalogFile', () => {
  const catalog = {
    region: 'us-east-1',
    instanceTypes: [{ name: 'm5.large', capacity: { cpu: '2', memory: '8Gi', pods: '29' }, offerings: [{ zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096 }] }],
  };

  it('reads JSON', async () => {
    const parsed = await readCatalogFile(file('catalog.json', JSON.stringify(catalog)));
    expect(parsed.instanceTypes[0]?.allocatable).toEqual({ cpu: 1930, memory: 6903 * 1024 ** 2, pods: 29 });
  });

  it('rejects more than one document', async () => {
    const path = file('two-catalogs.yaml', `${JSON.stringify(catalog)}\n---\n${JSON.stringify(catalog)}\n`);
    const error = await inputErrorOfAsync(() => readCatalogFile(path));
    expect(error.message).toBe(`${path}: expected one catalog document, found 2`);
  });

  it('attributes content errors to the file', async () => {
    const path = file('neg-price.json', JSON.stringify({ ...catalog, instanceTypes: [{ ...catalog.instanceTypes[0], offerings: [{ zone: 'a', capacityType: 'spot', price: -1 }] }] }));
    const error = await inputErrorOfAsync(() => readCatalogFile(path));
    expect(error.message).toContain(`${path}: InstanceType "m5.large": instanceTypes[0].offerings[0].price:`);
  });
});

describe('readNodePoolsFile', () => {
  const yaml = (name: string, disruption = '') => `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: ${name}
spec:
  template:
    spec:
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot", "on-demand"]
${disruption}`;

  it('reads a multi-document YAML stream, skipping other kinds', async () => {
    const text = [
      yaml('a'),
      'apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\n',
      yaml('b', '  disruption:\n    consolidateAfter: 1m\n    budgets:\n      - nodes: 5\n'),
    ].join('---\n');
    const pools = await readNodePoolsFile(file('pools.yaml', text));
    expect(pools.map((p) => p.name)).toEqual(['a', 'b']);
    expect(pools[1]?.consolidateAfterMs).toBe(60_000);
    expect(pools[1]?.budgets).toEqual([{ nodes: { count: 5 } }]);
  });

  it('reads a JSON List', async () => {
    const list = { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'x' }, spec: {} }] };
    const pools = await readNodePoolsFile(file('pools.json', JSON.stringify(list)));
    expect(pools.map((p) => p.name)).toEqual(['x']);
  });

  it('reads the message the contract shows', async () => {
    const path = file('nodepools.yaml', yaml('default', '  disruption:\n    budgets:\n      - nodes: "1"\n        schedule: "@daily"\n'));
    const error = await inputErrorOfAsync(() => readNodePoolsFile(path));
    expect(error.message).toBe(`${path}: NodePool "default": spec.disruption.budgets[0]: schedule requires duration`);
  });

  it('a file without any NodePool is an error', async () => {
    const path = file('no-pools.yaml', 'apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\n');
    const error = await inputErrorOfAsync(() => readNodePoolsFile(path));
    expect(error.message).toBe(`${path}: no NodePool (kind: NodePool) found`);
  });
});

const EXAMPLES = join(import.meta.dirname, '../fixtures/contract-examples');
const exampleNames = readdirSync(EXAMPLES).filter((n) => existsSync(join(EXAMPLES, n, 'cluster.json'))).sort();

describe('the contract examples parse', () => {
  it('are all there', () => {
    expect(exampleNames.length).toBeGreaterThanOrEqual(6);
  });

  const valid = exampleNames.filter((n) => n !== 'negative-budget-is-rejected');

  it.each(exampleNames)('%s: cluster.json and catalog.json', async (name) => {
    const cluster = await readClusterFile(join(EXAMPLES, name, 'cluster.json'));
    const catalog = await readCatalogFile(join(EXAMPLES, name, 'catalog.json'));
    expect(cluster.nodes.length).toBeGreaterThan(0);
    expect(catalog.instanceTypes.length).toBeGreaterThan(0);
  });

  it.each(valid)('%s: nodepools.yaml', async (name) => {
    const pools = await readNodePoolsFile(join(EXAMPLES, name, 'nodepools.yaml'));
    expect(pools.map((p) => p.name)).toEqual(['default']);
    expect(pools[0]?.consolidateAfterMs).toBe(0);
  });

  it('negative-budget-is-rejected/nodepools.yaml fails, naming the budgets field', async () => {
    const path = join(EXAMPLES, 'negative-budget-is-rejected', 'nodepools.yaml');
    const error = await inputErrorOfAsync(() => readNodePoolsFile(path));
    expect(error.message).toContain('budgets');
    expect(error.message).toBe(
      `${path}: NodePool "default": spec.disruption.budgets[0].nodes: "-1" must be a non-negative node count or a percentage from 0% to 100%`,
    );
  });
});
