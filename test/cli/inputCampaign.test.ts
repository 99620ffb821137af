// Bad input an outside audit fed the real `bin`: every case was once accepted (exit 0) or crashed
// (exit 1). Each must now end in exit 2 with a message naming the file (or the flag) and the field,
// and leave the `--state` file byte for byte as it was (docs/file-formats.md, "Bad input").
//
// One row per kind of bad input; a row may hold a few variants (each is one run of the bin). The runs
// start from a copy of a contract example (test/fixtures/contract-examples) and of a state file a real run wrote.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = join(import.meta.dirname, '../../bin/eks-consolidator.mjs');
const EXAMPLE = join(import.meta.dirname, '../fixtures/contract-examples/empty-node-is-deleted');
const NOW = '2026-11-21T12:00:00Z';
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

type Role = 'cluster' | 'catalog' | 'config' | 'state';
/** A parsed input file, edited in place by the cases (any: the cases reach deep into known shapes). */
type Json = Record<string, any>;
const FILE_NAMES: Record<Role, string> = { cluster: 'cluster.json', catalog: 'catalog.json', config: 'nodepools.yaml', state: 'state.json' };

interface Variant {
  readonly label: string;
  /** The input file this variant breaks: its contents are made from the valid ones. */
  readonly role?: Role;
  /** The broken contents (`json` edits a parsed copy of the valid file; `write` makes the file itself). */
  readonly json?: (valid: Json) => unknown;
  readonly text?: (valid: string) => string | Buffer;
  readonly write?: (path: string) => void;
  /** Flags that replace the valid run's own (the value may name a special file such as /dev/urandom). */
  readonly flags?: Readonly<Record<string, string>>;
  /** What the message must name besides the file: the object (when there is one) and the field. */
  readonly names: readonly string[];
  /** Where the file is named: the broken file's path (default), or this text (a flag, a device). */
  readonly source?: string;
  readonly problem: RegExp;
}

const catalogOffering = (price: unknown) => (catalog: Json) => {
  catalog['instanceTypes'][0]['offerings'][0]['price'] = price;
  return catalog;
};
const clusterItem = (kind: string, name: string, edit: (item: Json) => void) => (cluster: Json) => {
  edit(cluster['items'].find((i: Json) => i['kind'] === kind && i['metadata']['name'] === name));
  return cluster;
};
const stateEdit = (edit: (state: Json) => void) => (state: Json) => {
  edit(state);
  return state;
};

const ROWS: readonly (readonly [string, readonly Variant[]])[] = [
  ['an empty --state path', [{ label: '--state ""', flags: { '--state': '' }, source: '--state', names: [], problem: /empty/ }]],
  ['an impossible calendar date in --now', [{ label: 'February 30th', flags: { '--now': '2026-02-30T00:00:00Z' }, source: '--now', names: ['2026-02-30'], problem: /not a real calendar date/ }]],
  [
    'state times in the far future that must lie in the past',
    [
      { label: 'a pod event in 8999', role: 'state', json: stateEdit((s) => (s['nodes']['b']['lastPodEventAt'] = '8999-01-01T00:00:00.000Z')), names: ['nodes.b.lastPodEventAt'], problem: /later than the pass time/ },
      { label: 'a search a day ahead', role: 'state', json: stateEdit((s) => (s['cluster']['lastSearchAt'] = '2026-11-22T12:00:00.000Z')), names: ['cluster.lastSearchAt'], problem: /later than the pass time/ },
    ],
  ],
  [
    'NodePool requirement keys and names that Kubernetes refuses',
    [
      {
        label: 'a 100,000-character key',
        role: 'config',
        text: (valid) => valid.replace('        - key: node.kubernetes.io/instance-type', `        - key: ${'k'.repeat(100_000)}\n          operator: Exists\n        - key: node.kubernetes.io/instance-type`),
        names: ['NodePool "default"', 'spec.template.spec.requirements[0].key'],
        problem: /not a valid label key/,
      },
      { label: 'an emoji name', role: 'config', text: (valid) => valid.replace('name: default', 'name: "🚀"'), names: ['metadata.name'], problem: /DNS subdomain/ },
    ],
  ],
  ['a pod whose containers are null', [{ label: 'containers: null', role: 'cluster', json: clusterItem('Pod', 'web-0', (p) => (p['spec']['containers'] = null)), names: ['Pod default/web-0', 'spec.containers'], problem: /must be a list/ }]],
  [
    'a Ready condition whose status is a number',
    [{ label: 'status: 1', role: 'cluster', json: clusterItem('Node', 'a', (n) => (n['status']['conditions'][0]['status'] = 1)), names: ['Node "a"', 'status.conditions[0].status'], problem: /True, False, Unknown/ }],
  ],
  ['a node with an empty allocatable', [{ label: 'allocatable: {}', role: 'cluster', json: clusterItem('Node', 'a', (n) => (n['status']['allocatable'] = {})), names: ['Node "a"', 'status.allocatable.cpu'], problem: /is required/ }]],
  [
    'catalog prices of zero and allocatable above capacity',
    [
      { label: 'price 0', role: 'catalog', json: catalogOffering(0), names: ['InstanceType "m5.large"', 'instanceTypes[0].offerings[0].price'], problem: /positive number/ },
      {
        label: 'allocatable memory above capacity',
        role: 'catalog',
        json: (c) => ((c['instanceTypes'][0]['allocatable']['memory'] = '9Gi'), c),
        names: ['InstanceType "m5.large"', 'instanceTypes[0].allocatable.memory'],
        problem: /more than its capacity/,
      },
    ],
  ],
  [
    'state members of the wrong shape',
    [
      { label: 'nodes: null', role: 'state', json: stateEdit((s) => (s['nodes'] = null)), names: ['nodes'], problem: /not an object/ },
      { label: 'a negative lease token', role: 'state', json: stateEdit((s) => (s['lease'] = { until: '2026-11-21T11:00:00.000Z', token: -3 })), names: ['lease.token'], problem: /non-negative integer/ },
    ],
  ],
  ['feature gates with empty names', [{ label: '",,,"', flags: { '--feature-gates': ',,,' }, source: '--feature-gates', names: [], problem: /empty/ }]],
  [
    'input files larger than their cap, regular or not',
    [
      { label: 'the catalog is /dev/urandom', flags: { '--catalog': '/dev/urandom' }, source: '/dev/urandom', names: [], problem: /not valid UTF-8|UTF-16|UTF-32|larger than/ },
      { label: 'the NodePools come from a FIFO that never ends', role: 'config', write: endlessFifo, names: [], problem: /larger than 64 MiB/ },
      { label: 'a 5 GiB cluster file', role: 'cluster', write: (path) => sparseFile(path, 5 * GiB), names: [], problem: /larger than 4 GiB/ },
      { label: 'a 65 MiB state file', role: 'state', write: (path) => sparseFile(path, 65 * MiB), names: [], problem: /larger than 64 MiB/ },
    ],
  ],
  [
    'text that is not UTF-8, and numbers too large',
    [
      { label: 'a UTF-16 catalog', role: 'catalog', text: (valid) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(valid, 'utf16le')]), names: [], problem: /UTF-16; save it as UTF-8/ },
      { label: 'invalid UTF-8 in a label', role: 'cluster', text: (valid) => Buffer.concat([Buffer.from(valid.slice(0, 200)), Buffer.from([0xc3, 0x28]), Buffer.from(valid.slice(200))]), names: [], problem: /not valid UTF-8.*offset 200/ },
      { label: 'a priority of 1e400', role: 'cluster', text: (valid) => valid.replace('"nodeName": "a"', '"nodeName": "a", "priority": 1e400'), names: ['Pod default/web-0', 'spec.priority'], problem: /too large/ },
    ],
  ],
];

let validDir: string;
let validState: string;
/** Every directory the runs used, removed at the end (sparse files and FIFOs included). */
const dirs: string[] = [];
const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

beforeAll(() => {
  validDir = tempDir('ekc-campaign-');
  for (const role of ['cluster', 'catalog', 'config'] as const) copyFileSync(join(EXAMPLE, FILE_NAMES[role]), join(validDir, FILE_NAMES[role]));
  // A real state file: what a run on the valid inputs writes.
  const first = spawnSync(process.execPath, [BIN, ...argsIn(validDir, {})], { encoding: 'utf8', timeout: 120_000 });
  expect(first.status, first.stderr).toBe(0);
  validState = readFileSync(join(validDir, FILE_NAMES.state), 'utf8');
}, 150_000);

function argsIn(dir: string, flags: Readonly<Record<string, string>>): string[] {
  const all: Record<string, string> = {
    '--cluster': join(dir, FILE_NAMES.cluster),
    '--catalog': join(dir, FILE_NAMES.catalog),
    '--config': join(dir, FILE_NAMES.config),
    '--state': join(dir, FILE_NAMES.state),
    '--now': NOW,
    ...flags,
  };
  return ['plan', ...Object.entries(all).flat()];
}

/** A file that reads as `bytes` zero bytes without taking the disk space. */
function sparseFile(path: string, bytes: number): void {
  writeFileSync(path, '');
  truncateSync(path, bytes);
}

/** Writers started for FIFOs, stopped once the run is over. */
const writers: { kill: () => void }[] = [];

/** A FIFO that a writer fills with valid YAML-ish text for as long as anyone reads it. */
function endlessFifo(path: string): void {
  rmSync(path);
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
  const writer = spawn('sh', ['-c', `yes '# padding' > '${path}'`], { stdio: 'ignore' });
  writers.push({ kill: () => writer.kill('SIGKILL') });
}

function runBin(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000, maxBuffer: 16 * MiB, env: { ...process.env, EKS_CONSOLIDATOR_STATE_WAIT_MS: '0' } }, (error, _stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr });
    });
  });
}

/** Runs one variant in a directory of its own; returns what is wrong with the outcome (nothing: fine). */
async function problemsOf(v: Variant): Promise<string[]> {
  const dir = tempDir('ekc-case-');
  for (const role of ['cluster', 'catalog', 'config'] as const) copyFileSync(join(validDir, FILE_NAMES[role]), join(dir, FILE_NAMES[role]));
  writeFileSync(join(dir, FILE_NAMES.state), validState);
  const brokenPath = v.role ? join(dir, FILE_NAMES[v.role]) : '';
  if (v.role) {
    const valid = readFileSync(brokenPath, 'utf8');
    if (v.write) v.write(brokenPath);
    else writeFileSync(brokenPath, v.json ? JSON.stringify(v.json(JSON.parse(valid) as Json), null, 2) : v.text!(valid));
  }
  const statePath = join(dir, FILE_NAMES.state);
  const stateBefore = readFileSync(statePath);
  let result: { code: number | null; stderr: string };
  try {
    result = await runBin(argsIn(dir, v.flags ?? {}));
  } finally {
    for (const writer of writers.splice(0)) writer.kill();
  }
  const { code, stderr } = result;
  const out: string[] = [];
  if (code !== 2) out.push(`exit ${code}`);
  if (/internal error|\n\s+at /.test(stderr)) out.push('a stack trace');
  for (const name of [v.source ?? brokenPath, ...v.names]) if (!stderr.includes(name)) out.push(`does not name ${name.slice(0, 80)}`);
  if (!v.problem.test(stderr)) out.push(`does not say ${v.problem}`);
  if (!readFileSync(statePath).equals(stateBefore)) out.push('the state file changed');
  return out.length === 0 ? [] : [`${v.label}: ${out.join('; ')} (stderr: ${stderr.slice(0, 300).trim()})`];
}

describe('the bad-input campaign through the real bin', () => {
  it.each(ROWS)('%s: exit 2, named, state untouched', { timeout: 300_000 }, async (_row, variants) => {
    const problems: string[] = [];
    // One at a time: every variant is a process start, and the machine is shared.
    for (const v of variants) problems.push(...(await problemsOf(v)));
    expect(problems).toEqual([]);
  });

  it('times that are meant to lie ahead (expiry, grace protection) are still accepted', { timeout: 150_000 }, async () => {
    const dir = tempDir('ekc-ahead-');
    for (const role of ['cluster', 'catalog', 'config'] as const) copyFileSync(join(validDir, FILE_NAMES[role]), join(dir, FILE_NAMES[role]));
    const state = JSON.parse(validState) as Json;
    state['nodes']['b']['graceProtectedUntil'] = '8999-01-01T00:00:00.000Z';
    state['nodes']['b']['expiresAt'] = '8999-01-01T00:00:00.000Z';
    writeFileSync(join(dir, FILE_NAMES.state), JSON.stringify(state));
    const r = await runBin(argsIn(dir, {}));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  });
});
