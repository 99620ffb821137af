// Reading large dumps: the List splitter (any chunking gives the same items), the projection (parsing
// projected objects gives exactly the cluster the full objects give), and the streamed file reader.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCluster } from '../../bench/generate.ts';
import { writeClusterFile } from '../../bench/writeCluster.ts';
import { readClusterFile } from '../../src/adapters/files/index.ts';
import { ListItemSplitter, NotAList, ParsedItem, splitListItems } from '../../src/adapters/files/jsonListStream.ts';
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

/** Items read with pushParsing: how many came back parsed by the fast path, and how many as bytes. */
function splitParsing(text: string, chunk: number): { items: unknown[]; parsed: number; raw: number; shell: Record<string, unknown> } {
  const bytes = Buffer.from(text, 'utf8');
  const splitter = new ListItemSplitter();
  const items: unknown[] = [];
  let parsed = 0;
  let raw = 0;
  for (let offset = 0; offset < bytes.length; offset += chunk) {
    for (const item of splitter.pushParsing(bytes.subarray(offset, offset + chunk))) {
      if (item instanceof ParsedItem) {
        parsed++;
        items.push(item.value);
      } else {
        raw++;
        items.push(JSON.parse(item.toString('utf8')));
      }
    }
  }
  return { items, parsed, raw, shell: splitter.end() };
}

describe('List splitter, fast path for indented Lists', () => {
  const list = generateCluster({ nodes: 8, podsPerNode: 12, seed: 5, kubectl: true });

  it.each([
    { name: 'kubectl indentation, 1 MiB chunks', indent: 4, eol: '\n', chunk: 1 << 20, batched: true },
    { name: 'Windows line ends, 64 KiB chunks', indent: 4, eol: '\r\n', chunk: 65536, batched: true },
    { name: 'two-space indentation, 32 KiB chunks', indent: 2, eol: '\n', chunk: 32768, batched: true },
    // Items of about 4 KB in chunks not much larger: most items span two chunks and are scanned.
    { name: 'kubectl indentation, 5,000-byte chunks', indent: 4, eol: '\n', chunk: 5000, batched: false },
    { name: 'two-space indentation, 777-byte chunks', indent: 2, eol: '\n', chunk: 777, batched: false },
  ])('$name: the same items as JSON.parse', ({ indent, eol, chunk, batched }) => {
    const text = JSON.stringify(list, null, indent).replace(/\n/g, eol);
    const { items, parsed, raw, shell } = splitParsing(text, chunk);
    expect(items).toEqual(list.items);
    expect(shell).toEqual({ ...list, items: [] });
    if (batched) expect(parsed).toBeGreaterThan(raw * 4);
  });

  it('compact JSON has no closing lines: every item is scanned byte by byte', () => {
    const { items, parsed } = splitParsing(JSON.stringify(list), 4096);
    expect(items).toEqual(list.items);
    expect(parsed).toBe(0);
  });

  it('a line that only looks like an item closing (odd indentation) is not taken for one', () => {
    // The second item's inner object closes at the items' own indentation: a cut there does not parse,
    // so the splitter scans the rest byte by byte and still finds the real items.
    const text = [
      '{"kind": "List", "items": [',
      '  {"kind": "Pod", "metadata": {"name": "a"}',
      '  },',
      '  {"kind": "Pod", "metadata": {"name": "b",',
      '"labels": {"x": "y"',
      '  }',
      '  }, "spec": {}',
      '  },',
      '  {"kind": "Pod", "metadata": {"name": "c"}',
      '  }',
      ']}',
    ].join('\n');
    const expected = (JSON.parse(text) as { items: unknown[] }).items;
    // Every chunk size: some cut the text right after the look-alike line, so it is the last closing line
    // of a chunk and the batch ending there does not parse.
    for (let chunk = 1; chunk <= text.length; chunk++) {
      expect(splitParsing(text, chunk).items, `chunks of ${chunk} bytes`).toEqual(expected);
    }
  });

  it('an item that is not valid JSON comes back as bytes, for the caller to report', () => {
    const text = ['{"items": [', '    {"kind": "Pod", "n": 1', '    },', '    {"kind": "Pod", "n": 2,', '    },', '    {"kind": "Pod", "n": 3', '    }', ']}'].join('\n');
    const splitter = new ListItemSplitter();
    const out = splitter.pushParsing(Buffer.from(text));
    expect(out.filter((item) => item instanceof ParsedItem)).toEqual([]);
    expect(out.map((item) => (item instanceof ParsedItem ? item.value : item.toString('utf8')))).toEqual([
      '{"kind": "Pod", "n": 1\n    }',
      '{"kind": "Pod", "n": 2,\n    }',
      '{"kind": "Pod", "n": 3\n    }',
    ]);
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

  /** Writes `list` as kubectl indents it and reads it back both ways: streamed, and parsed whole. */
  async function bothWays(name: string, list: Record<string, unknown>) {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(list, null, 4));
    return { streamed: await readClusterFile(path), whole: parseClusterObjects([JSON.parse(JSON.stringify(list))]) };
  }

  const pod = (name: string, volumes: unknown[] = []) => ({
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { nodeName: 'n1', containers: [{ name: 'c', resources: { requests: { cpu: '100m' } } }], volumes },
    status: { phase: 'Running' },
  });

  it('pods listed before the volumes they claim still get the volumes\' zones', async () => {
    const list = {
      apiVersion: 'v1',
      items: [
        { kind: 'Pod', ...pod('db-0', [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } }]) },
        { kind: 'Pod', ...pod('cache-0', [{ name: 'scratch', ephemeral: { volumeClaimTemplate: {} } }]) },
        {
          kind: 'Node',
          metadata: { name: 'n1', creationTimestamp: '2026-01-01T00:00:00Z', labels: { 'topology.kubernetes.io/zone': 'us-east-1c' } },
          status: { allocatable: { cpu: '4', memory: '16Gi' }, conditions: [{ type: 'Ready', status: 'True' }] },
        },
        { kind: 'PersistentVolumeClaim', metadata: { name: 'data-db-0', namespace: 'default' }, spec: { volumeName: 'pv-1' } },
        { kind: 'PersistentVolume', metadata: { name: 'pv-1', labels: { 'topology.kubernetes.io/zone': 'us-east-1b' } }, spec: {} },
      ],
      kind: 'List',
    };
    const { streamed, whole } = await bothWays('volumes-last.json', list);
    expect(streamed).toEqual(whole);
    // The claim followed to its PV; the unfollowable ephemeral claim pins the pod to its node's zone.
    expect(streamed.pods.map((p) => p.volumeZones)).toEqual([['us-east-1b'], ['us-east-1c']]);
  });

  it('a typed List (PodList) gives its kind to items that state none, which kubectl prints after them', async () => {
    const list = { apiVersion: 'v1', items: [pod('a'), pod('b')], kind: 'PodList', metadata: { resourceVersion: '1' } };
    const { streamed, whole } = await bothWays('podlist.json', list);
    expect(streamed).toEqual(whole);
    expect(streamed.pods.map((p) => p.name)).toEqual(['a', 'b']);
  });

  it('an object with items that is not a List is read as the one object it is', async () => {
    const odd = { kind: 'Namespace', metadata: { name: 'team-a', labels: { team: 'a' } }, items: [{ kind: 'Pod', ...pod('x') }] };
    const { streamed, whole } = await bothWays('not-a-list.json', odd);
    expect(streamed).toEqual(whole);
    expect(streamed.namespaces.map((n) => n.name)).toEqual(['team-a']);
    expect(streamed.pods).toEqual([]);
  });

  it('a List without a kind is refused as the whole-text reader refuses it, even with items', async () => {
    const path = join(dir, 'no-kind.json');
    writeFileSync(path, JSON.stringify({ apiVersion: 'v1', items: [{ kind: 'Pod', ...pod('a') }] }, null, 4));
    const error = await inputErrorOfAsync(() => readClusterFile(path));
    expect(error.message).toMatch(/no-kind\.json: document 1: kind: is required/);
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
