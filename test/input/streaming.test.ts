// Reading large dumps: the List splitter (any chunking gives the same items), the projection (parsing
// projected objects gives exactly the cluster the full objects give), and the streamed file reader.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster } from '../../bench/generate.ts';
import { writeClusterFile } from '../../bench/writeCluster.ts';
import { readClusterFile } from '../../src/adapters/files/index.ts';
import { ListItemSplitter, NotAList, splitListItems } from '../../src/adapters/files/jsonListStream.ts';
import { parseClusterObjects } from '../../src/core/input/cluster.ts';
import { projectClusterObject } from '../../src/core/input/projection.ts';
import { inputErrorOfAsync } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'eks-consolidator-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function split(text: string, chunk: number): { items: unknown[]; shell: Record<string, unknown> } {
  const bytes = Buffer.from(text, 'utf8');
  const splitter = new ListItemSplitter();
  const items: unknown[] = [];
  for (let offset = 0; offset < bytes.length; offset += chunk) {
    for (const item of splitter.push(bytes.subarray(offset, offset + chunk))) items.push(JSON.parse(item.toString('utf8')));
  }
  return { items, shell: splitter.end() };
}

describe('List splitter', () => {
  const tricky = {
    apiVersion: 'v1',
    kind: 'List',
    metadata: { resourceVersion: '', note: 'a "quoted" } ] { [ string' },
    items: [
      { kind: 'Pod', metadata: { name: 'a', annotations: { 'x/y': 'braces } { and \\ backslash \\" quote', 'ünï': 'çödé ✓' } } },
      { kind: 'Node', metadata: { name: 'b' }, status: { images: [{ names: ['i:1', 'i:2'] }], nested: [[1, 2], { deep: [] }] } },
      { kind: 'Pod', metadata: { name: 'items' }, spec: { items: ['not', 'the', 'list'] } },
    ],
  };
  it.each([
    { name: 'compact, one chunk', text: JSON.stringify(tricky), chunk: 1 << 20 },
    { name: 'compact, 1-byte chunks', text: JSON.stringify(tricky), chunk: 1 },
    { name: 'kubectl indentation, 7-byte chunks', text: JSON.stringify(tricky, null, 4), chunk: 7 },
    { name: 'byte order mark, 3-byte chunks', text: `\uFEFF${JSON.stringify(tricky, null, 2)}\n`, chunk: 3 },
  ])('$name: the same items and List fields as JSON.parse', ({ text, chunk }) => {
    const { items, shell } = split(text, chunk);
    expect(items).toEqual(tricky.items);
    expect(shell).toEqual({ ...tricky, items: [] });
  });

  it('strings of escapes cut at every position of every chunk size read the same', () => {
    // Runs of backslashes and escaped quotes: a chunk may end right after a backslash, between the two
    // characters of an escape, or on a quote that an earlier backslash escapes.
    const escapes = {
      kind: 'List',
      'it\\"ems': 'a key that only looks like items',
      items: [
        { kind: 'Pod', metadata: { name: '\\', annotations: { 'a\\\\"b': '\\\\\\"} ] {\\', q: '"\\"\\\\"', u: '\u00e9\n\t' } } },
        { kind: 'Pod', metadata: { name: 'z"\\' } },
      ],
    };
    const text = JSON.stringify(escapes);
    for (let chunk = 1; chunk <= 24; chunk++) {
      const { items, shell } = split(text, chunk);
      expect(items, `chunks of ${chunk} bytes`).toEqual(escapes.items);
      expect(shell, `chunks of ${chunk} bytes`).toEqual({ ...escapes, items: [] });
    }
  });

  it.each([
    { name: 'a top-level array', text: '[{"kind":"Pod"}]' },
    { name: 'items holding strings', text: '{"items":["a"]}' },
    { name: 'no items at all', text: '{"kind":"Pod","metadata":{}}' },
    { name: 'a text that stops early', text: '{"items":[{"kind":"Pod"}' },
  ])('$name is not a List it reads', ({ text }) => {
    expect(() => split(text, 4)).toThrow(NotAList);
  });

  it('splits a generated kubectl dump into its objects', () => {
    const list = generateCluster({ nodes: 6, podsPerNode: 10, seed: 3, kubectl: true });
    const pieces = [...splitListItems(Buffer.from(JSON.stringify(list, null, 4)))].map((b) => JSON.parse(b.toString('utf8')));
    expect(pieces).toEqual(list.items);
  });
});

describe('projection', () => {
  it('parses to exactly the cluster the full kubectl objects give, and is much smaller', () => {
    const list = generateCluster({ nodes: 30, podsPerNode: 30, seed: 9, kubectl: true });
    const full = JSON.parse(JSON.stringify(list)) as typeof list;
    const projected = projectClusterObject(full);
    expect(parseClusterObjects([projected])).toEqual(parseClusterObjects([full]));
    expect(JSON.stringify(projected).length).toBeLessThan(JSON.stringify(full).length * 0.6);
    // The input is left as it was.
    expect(full).toEqual(JSON.parse(JSON.stringify(list)));
  });

  it('keeps what scheduling reads: claims, requests, ports, restart policies, annotations', () => {
    const pod = {
      kind: 'Pod',
      metadata: {
        name: 'p',
        annotations: { 'karpenter.sh/do-not-disrupt': 'true', 'kubectl.kubernetes.io/last-applied-configuration': '{"huge":true}' },
        managedFields: [{ manager: 'x' }],
      },
      spec: {
        containers: [{ name: 'c', image: 'i', env: [{ name: 'A', value: '1' }], resources: { requests: { cpu: '1' } }, ports: [{ containerPort: 80, hostPort: 80 }] }],
        initContainers: [{ name: 'sidecar', restartPolicy: 'Always', livenessProbe: {}, resources: { requests: { cpu: '100m' } } }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-0' } }, { name: 'tmp', emptyDir: {} }, { name: 'e', ephemeral: { volumeClaimTemplate: {} } }],
      },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'c' }] },
    };
    expect(projectClusterObject(pod)).toEqual({
      kind: 'Pod',
      metadata: { name: 'p', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } },
      spec: {
        containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '1' } }, ports: [{ containerPort: 80, hostPort: 80 }] }],
        initContainers: [{ name: 'sidecar', restartPolicy: 'Always', resources: { requests: { cpu: '100m' } } }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-0' } }, { name: 'tmp' }, { name: 'e', ephemeral: { volumeClaimTemplate: {} } }],
      },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    });
  });

  it.each([null, 'text', 42, [1], { kind: 'Pod', spec: 'odd' }])('passes %j through as it is', (value) => {
    expect(projectClusterObject(value)).toEqual(value);
  });
});

describe('streamed cluster file', () => {
  it('reads a kubectl dump written in kubectl indentation as the whole-text reader would', async () => {
    const path = join(dir, 'dump.json');
    writeClusterFile(path, { nodes: 20, podsPerNode: 20, seed: 4, kubectl: true });
    const list = generateCluster({ nodes: 20, podsPerNode: 20, seed: 4, kubectl: true });
    expect(await readClusterFile(path)).toEqual(parseClusterObjects([JSON.parse(JSON.stringify(list))]));
  });

  it('a List that is not valid JSON still gets the JSON syntax error, naming the file', async () => {
    const path = join(dir, 'broken.json');
    writeFileSync(path, '{"apiVersion":"v1","kind":"List","items":[{"kind":"Pod"}}]}');
    const error = await inputErrorOfAsync(() => readClusterFile(path));
    expect(error.message).toMatch(/^.*broken\.json: not valid JSON or YAML/);
  });

  it('a bad object in a streamed List is reported with file, object and field', async () => {
    const path = join(dir, 'bad-node.json');
    const list = generateCluster({ nodes: 2, podsPerNode: 3, seed: 1, kubectl: true });
    const nodeItem = list.items.find((i) => i['kind'] === 'Node') as { status: { allocatable: Record<string, unknown> } };
    nodeItem.status.allocatable['cpu'] = 'lots';
    writeFileSync(path, JSON.stringify(list, null, 4));
    const error = await inputErrorOfAsync(() => readClusterFile(path));
    expect(error.message).toMatch(/bad-node\.json: Node "ip-10-1-0-1\.ec2\.internal": status\.allocatable/);
  });
});
