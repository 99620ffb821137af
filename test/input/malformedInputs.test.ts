// Malformed input through the CLI (one case in eight through the real `bin`, the rest through its `main`):
// every case below is input the product must refuse. Each must end in exit 2 (never 1: no crash, no stack trace), with a
// message on stderr naming the file, and must leave the `--state` file byte for byte as it was.
//
// The cases are generated: a valid cluster, catalog, NodePool file and state file, each broken in one
// place, crossing the kinds of field (timestamps, quantities, prices, lists, enums ...) with the kinds
// of bad value (wrong type, overflow, out of range, no offset ...), plus whole-file damage (truncation,
// garbage, YAML alias bombs, deep nesting) for every file. A second test damages the same files at
// random, 800 times, in-process: every run must plan or be refused, never crash.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { mulberry32 } from '../../src/core/random.ts';
import { kubeNode, kubePdb, kubePod } from '../support/fakeKubeApi.ts';

const BIN = join(import.meta.dirname, '../../bin/eks-consolidator.mjs');
const NOW = '2026-11-21T12:00:00Z';
const run = promisify(execFile);

type Json = Record<string, unknown>;
type FileRole = 'cluster' | 'catalog' | 'config' | 'state';

interface Case {
  readonly name: string;
  /** The file that is broken ('now' for the --now flag). */
  readonly role: FileRole | 'now';
  /** Replacement text for that file, or the --now value. */
  readonly text: string;
}

// ---------------------------------------------------------------------------------------------------
// Valid inputs.

const validCluster = (): Json => ({
  apiVersion: 'v1',
  kind: 'List',
  items: [
    kubeNode('a', { instanceType: 'm5.large', createdAt: '2026-11-20T12:00:00Z' }),
    kubeNode('b', { instanceType: 'm5.large', createdAt: '2026-11-20T12:00:00Z' }),
    kubePod('default', 'web-1', { node: 'a', cpu: '300m', memory: '256Mi', createdAt: '2026-11-21T08:00:00Z' }),
    kubePdb('default', 'web', { app: 'web-1' }, 1),
  ],
});

const validCatalog = (): Json => ({
  region: 'us-east-1',
  instanceTypes: ['large', 'xlarge'].map((size, i) => ({
    name: `m5.${size}`,
    capacity: { cpu: String(2 * 2 ** i), memory: `${8 * 2 ** i}Gi`, pods: '29' },
    offerings: [{ zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096 * 2 ** i }],
  })),
});

const validPool = (): Json => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'default' },
  spec: {
    template: {
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5'] }],
      },
    },
    disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets: [{ nodes: '100%' }] },
  },
});

// ---------------------------------------------------------------------------------------------------
// Ways to break them.

/** A copy of `value` with `path` set to `replacement` (undefined: the member removed). */
function withPath(value: Json, path: readonly (string | number)[], replacement: unknown): Json {
  const copy = structuredClone(value);
  let at: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (replacement === undefined) delete at[last];
  else at[last] = replacement;
  return copy;
}

const BAD_TIMESTAMPS: readonly [string, unknown][] = [
  ['a word', 'yesterday'],
  ['no offset', '2026-11-21T12:00:00'],
  ['date only', '2026-11-21'],
  ['before 1970', '1969-12-31T23:59:59Z'],
  ['after 9000', '9001-01-01T00:00:00Z'],
  ['five-digit year', '+010000-01-01T00:00:00Z'],
  ['a number', 1_700_000_000],
];

const BAD_QUANTITIES: readonly [string, unknown][] = [
  ['overflowing exponent', '1e400'],
  ['beyond 2^53', '1e20'],
  ['huge binary', '99999999999Ei'],
  ['negative', '-2'],
  ['an object', { value: 2 }],
  ['unknown suffix', '2Gb'],
];

const BAD_PRICES: readonly [string, unknown][] = [
  ['negative', -0.1],
  ['text', '0.096'],
  ['a million', 1e6],
  ['huge', 1e308],
  ['null', null],
];

/** Whole-file damage, for any file (the valid text is passed in). */
const TEXT_DAMAGE: readonly [string, (valid: string) => string][] = [
  ['truncated', (valid) => valid.slice(0, Math.floor(valid.length / 2))],
  ['binary garbage', () => '\u0000\u0001\u0002\u00ff{{{'],
  ['empty', () => ''],
  ['a bare number', () => '42'],
  ['deep nesting', () => `${'['.repeat(5000)}${']'.repeat(5000)}`],
  [
    'YAML alias bomb',
    () => {
      const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
      for (let i = 1; i <= 9; i++) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
      return `${lines.join('\n')}\nkind: List\nitems: []\n`;
    },
  ],
  ['too many aliases', () => `base: &b 1\nitems:\n${Array.from({ length: 150 }, () => '  - *b').join('\n')}\nkind: List\n`],
];

function clusterCases(): Case[] {
  const cases: Case[] = [];
  const c = validCluster();
  const add = (name: string, doc: Json) => cases.push({ name: `cluster: ${name}`, role: 'cluster', text: JSON.stringify(doc) });
  for (const [what, items] of [['an object', {}], ['a string', 'nodes'], ['null', null], ['a number', 3]] as const) add(`items is ${what}`, withPath(c, ['items'], items));
  add('a List without items', withPath(c, ['items'], undefined));
  for (const [what, item] of [['null', null], ['a number', 7], ['a string', 'Node'], ['a list', []]] as const) add(`an item is ${what}`, withPath(c, ['items', 1], item));
  const timestampFields: [string, (string | number)[]][] = [
    ['node creationTimestamp', ['items', 0, 'metadata', 'creationTimestamp']],
    ['pod creationTimestamp', ['items', 2, 'metadata', 'creationTimestamp']],
    ['node Ready transition', ['items', 0, 'status', 'conditions', 1, 'lastTransitionTime']],
  ];
  // Every bad kind on one field, and each field with a couple of them.
  for (const [what, value] of BAD_TIMESTAMPS) add(`${timestampFields[0]![0]} ${what}`, withPath(c, timestampFields[0]![1], value));
  for (const [field, path] of timestampFields.slice(1)) for (const [what, value] of BAD_TIMESTAMPS.slice(0, 2)) add(`${field} ${what}`, withPath(c, path, value));
  const quantityFields: [string, (string | number)[]][] = [
    ['node allocatable cpu', ['items', 0, 'status', 'allocatable', 'cpu']],
    ['node allocatable memory', ['items', 0, 'status', 'allocatable', 'memory']],
    ['pod request cpu', ['items', 2, 'spec', 'containers', 0, 'resources', 'requests', 'cpu']],
  ];
  for (const [what, value] of BAD_QUANTITIES) add(`${quantityFields[0]![0]} ${what}`, withPath(c, quantityFields[0]![1], value));
  for (const [field, path] of quantityFields.slice(1)) for (const [what, value] of BAD_QUANTITIES.slice(0, 2)) add(`${field} ${what}`, withPath(c, path, value));
  add('pod phase unknown', withPath(c, ['items', 2, 'status', 'phase'], 'Sleeping'));
  add('pod spec a string', withPath(c, ['items', 2, 'spec'], 'run it'));
  add('pod containers an object', withPath(c, ['items', 2, 'spec', 'containers'], {}));
  add('pod tolerations a string', withPath(c, ['items', 2, 'spec', 'tolerations'], 'all'));
  add('node label a number', withPath(c, ['items', 0, 'metadata', 'labels', 'team'], 5));
  add('node without metadata', withPath(c, ['items', 0, 'metadata'], undefined));
  add('node name a number', withPath(c, ['items', 0, 'metadata', 'name'], 12));
  add('PDB disruptionsAllowed negative', withPath(c, ['items', 3, 'status', 'disruptionsAllowed'], -1));
  add('PDB disruptionsAllowed text', withPath(c, ['items', 3, 'status', 'disruptionsAllowed'], 'one'));
  add('duplicate node', withPath(c, ['items', 1], c['items'] && (c['items'] as Json[])[0]));
  // Saved API errors and wrong files: never an empty cluster (which would forget the state's nodes).
  add('an API error saved as the dump', { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'nodes is forbidden' });
  add('an object of an unknown kind', { kind: 'Banana', metadata: { name: 'b' } });
  for (const [name, damage] of TEXT_DAMAGE) cases.push({ name: `cluster: ${name}`, role: 'cluster', text: damage(JSON.stringify(c)) });
  return cases;
}

function catalogCases(): Case[] {
  const cases: Case[] = [];
  const c = validCatalog();
  const add = (name: string, doc: Json) => cases.push({ name: `catalog: ${name}`, role: 'catalog', text: JSON.stringify(doc) });
  for (const [what, value] of BAD_PRICES) add(`price ${what}`, withPath(c, ['instanceTypes', 0, 'offerings', 0, 'price'], value));
  for (const [what, value] of BAD_QUANTITIES.slice(0, 3)) add(`capacity cpu ${what}`, withPath(c, ['instanceTypes', 0, 'capacity', 'cpu'], value));
  for (const [what, value] of BAD_TIMESTAMPS.filter(([w]) => w !== 'a number')) add(`pricesAsOf ${what}`, withPath(c, ['pricesAsOf'], value));
  add('pricesAsOf a huge number', withPath(c, ['pricesAsOf'], 1e300));
  add('instanceTypes an object', withPath(c, ['instanceTypes'], {}));
  add('offerings null', withPath(c, ['instanceTypes', 0, 'offerings'], null));
  add('capacityType unknown', withPath(c, ['instanceTypes', 0, 'offerings', 0, 'capacityType'], 'reserved-ish'));
  for (const [name, damage] of TEXT_DAMAGE) cases.push({ name: `catalog: ${name}`, role: 'catalog', text: damage(JSON.stringify(c)) });
  return cases;
}

function configCases(): Case[] {
  const cases: Case[] = [];
  const p = validPool();
  const add = (name: string, doc: Json) => cases.push({ name: `config: ${name}`, role: 'config', text: JSON.stringify(doc) });
  add('misspelled consolidateAfter', withPath(p, ['spec', 'disruption', 'consolidateAfer'], '100h'));
  add('misspelled requirements', withPath(p, ['spec', 'template', 'spec', 'requirments'], []));
  add('unknown top-level spec field', withPath(p, ['spec', 'consolidation'], { enabled: true }));
  add('unknown budget field', withPath(p, ['spec', 'disruption', 'budgets', 0, 'node'], '1'));
  add('v1beta1', withPath(p, ['apiVersion'], 'karpenter.sh/v1beta1'));
  add('kubelet in the template (v1beta1)', withPath(p, ['spec', 'template', 'spec', 'kubelet'], { maxPods: 20 }));
  add('minValues 0', withPath(p, ['spec', 'template', 'spec', 'requirements', 0, 'minValues'], 0));
  add('minValues above the values listed', withPath(p, ['spec', 'template', 'spec', 'requirements', 0, 'minValues'], 2));
  add('Gte negative', withPath(p, ['spec', 'template', 'spec', 'requirements', 0], { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gte', values: ['-1'] }));
  add('replicas with weight', withPath(withPath(p, ['spec', 'replicas'], 2), ['spec', 'weight'], 10));
  add('replicas with a cpu limit', withPath(withPath(p, ['spec', 'replicas'], 2), ['spec', 'limits'], { cpu: '100' }));
  add('replicas negative', withPath(p, ['spec', 'replicas'], -1));
  add('budget of 101%', withPath(p, ['spec', 'disruption', 'budgets', 0, 'nodes'], '101%'));
  add('limits cpu 1e400', withPath(p, ['spec', 'limits'], { cpu: '1e400' }));
  add('NodePoolList with items null', { apiVersion: 'karpenter.sh/v1', kind: 'NodePoolList', items: null });
  for (const [name, damage] of TEXT_DAMAGE) cases.push({ name: `config: ${name}`, role: 'config', text: damage(JSON.stringify(p)) });
  return cases;
}

function stateCases(valid: Json): Case[] {
  const cases: Case[] = [];
  const add = (name: string, doc: unknown) => cases.push({ name: `state: ${name}`, role: 'state', text: JSON.stringify(doc) });
  const firstNode = Object.keys(valid['nodes'] as Json)[0]!;
  add('format of another tool', withPath(valid, ['format'], 'something/else'));
  add('a newer version', withPath(valid, ['version'], 99));
  add('nodes a list', withPath(valid, ['nodes'], []));
  add('a list at the top', [valid]);
  add('node time a word', withPath(valid, ['nodes', firstNode, 'lastPodEventAt'], 'recently'));
  add('node time beyond year 9999', withPath(valid, ['nodes', firstNode, 'lastPodEventAt'], 1e20));
  add('node time five-digit year', withPath(valid, ['nodes', firstNode, 'lastPodEventAt'], '+010000-01-01T00:00:00.000Z'));
  add('cluster a string', withPath(valid, ['cluster'], 'fine'));
  for (const [name, damage] of TEXT_DAMAGE.filter(([n]) => n !== 'empty')) cases.push({ name: `state: ${name}`, role: 'state', text: damage(JSON.stringify(valid)) });
  return cases;
}

const nowCases = (): Case[] =>
  ['yesterday', '2026-11-21', '2026-11-21T12:00:00', '1969-01-01T00:00:00Z', '9999-01-01T00:00:00Z', 'Sat, 21 Nov 2026 12:00:00 GMT'].map((text) => ({
    name: `--now ${text}`,
    role: 'now' as const,
    text,
  }));

// ---------------------------------------------------------------------------------------------------

let dir: string;
let validState: Json;
const paths: Record<FileRole, string> = { cluster: '', catalog: '', config: '', state: '' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ekc-malformed-'));
  paths.cluster = join(dir, 'cluster.json');
  paths.catalog = join(dir, 'catalog.json');
  paths.config = join(dir, 'nodepools.yaml');
  paths.state = join(dir, 'state.json');
  writeFileSync(paths.cluster, JSON.stringify(validCluster()));
  writeFileSync(paths.catalog, JSON.stringify(validCatalog()));
  writeFileSync(paths.config, JSON.stringify(validPool()));
  // A real state file, written by a real run on the valid inputs.
  await run(process.execPath, [BIN, 'plan', '--cluster', paths.cluster, '--catalog', paths.catalog, '--config', paths.config, '--state', paths.state, '--now', NOW]);
  validState = JSON.parse(readFileSync(paths.state, 'utf8')) as Json;
});

/** Runs one case in its own directory; returns the exit code, stderr, and whether the state file changed. */
async function runCase(c: Case, index: number): Promise<{ code: number; stderr: string; stateChanged: boolean; brokenPath: string }> {
  const files: Record<FileRole, string> = { ...paths };
  const stateCopy = join(dir, `state-${index}.json`);
  const stateText = c.role === 'state' ? c.text : readFileSync(paths.state, 'utf8');
  writeFileSync(stateCopy, stateText);
  files.state = stateCopy;
  let brokenPath = '';
  if (c.role !== 'now' && c.role !== 'state') {
    brokenPath = join(dir, `${c.role}-${index}${c.role === 'config' ? '.yaml' : '.json'}`);
    writeFileSync(brokenPath, c.text);
    files[c.role] = brokenPath;
  }
  if (c.role === 'state') brokenPath = stateCopy;
  const args = ['plan', '--cluster', files.cluster, '--catalog', files.catalog, '--config', files.config, '--state', files.state, '--now', c.role === 'now' ? c.text : NOW];
  let code = 0;
  let stderr = '';
  if (throughBin(index)) {
    try {
      await run(process.execPath, [BIN, ...args], { timeout: 30_000, env: { ...process.env, EKS_CONSOLIDATOR_STATE_WAIT_MS: '0' } });
    } catch (error) {
      const failed = error as { code?: number; stderr?: string };
      code = typeof failed.code === 'number' ? failed.code : -1;
      stderr = failed.stderr ?? '';
    }
  } else {
    code = await main(args, {
      stdout: () => undefined,
      stderr: (text) => void (stderr += text),
      clock: () => Date.now(),
      env: { EKS_CONSOLIDATOR_STATE_WAIT_MS: '0' },
    });
  }
  return { code, stderr, stateChanged: readFileSync(stateCopy, 'utf8') !== stateText, brokenPath };
}

/**
 * One case in eight starts the real bin (the process's exit code and streams); the others call the
 * CLI's `main` in this process, the same code the bin runs, without a process start each (about a
 * second apiece on a busy 2-core machine). MALFORMED_ALL_BIN=1 runs every case through the bin.
 */
const throughBin = (index: number) => process.env['MALFORMED_ALL_BIN'] === '1' || index % 8 === 0;

describe('malformed input, through the real bin and the CLI\'s main', () => {
  it('refuses every generated case with exit 2, a message naming the file, and an untouched state file', { timeout: 240_000 }, async () => {
    const cases = [...clusterCases(), ...catalogCases(), ...configCases(), ...stateCases(validState), ...nowCases()];
    expect(cases.length).toBeGreaterThanOrEqual(100);
    const results: { c: Case; code: number; stderr: string; stateChanged: boolean; brokenPath: string }[] = [];
    // A few at a time: each case is a process start, and the machine is shared.
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const index = next++;
        const c = cases[index]!;
        results.push({ c, ...(await runCase(c, index)) });
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);

    const problems = results.flatMap(({ c, code, stderr, stateChanged, brokenPath }) => {
      const out: string[] = [];
      if (code !== 2) out.push(`exit ${code}: ${stderr.slice(0, 300)}`);
      if (stateChanged) out.push('state file changed');
      if (/internal error|\n\s+at /.test(stderr)) out.push(`stack trace: ${stderr.slice(0, 300)}`);
      if (brokenPath !== '' && !stderr.includes(brokenPath)) out.push(`message does not name ${brokenPath}: ${stderr.slice(0, 300)}`);
      if (c.role === 'now' && !stderr.includes('--now')) out.push(`message does not name --now: ${stderr.slice(0, 300)}`);
      // Messages cut long values: no message is longer than a screenful.
      if (stderr.length > 2_000) out.push(`message of ${stderr.length} characters`);
      return out.map((p) => `${c.name}: ${p}`);
    });
    expect(problems).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------
// Random damage, in-process (hundreds of cases would take minutes as processes). Any single change to
// a valid file either still plans (exit 0) or is refused (exit 2, state untouched); it never crashes.

/** A small deterministic generator, so a failure can be replayed from its seed. */
const random = mulberry32;

/** Every path to a value inside `value`. */
function allPaths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = prefix.length > 0 ? [prefix] : [];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...allPaths(v, [...prefix, i])));
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) out.push(...allPaths(v, [...prefix, k]));
  return out;
}

const deep = (levels: number): unknown => (levels === 0 ? 1 : [deep(levels - 1)]);
const REPLACEMENTS: readonly unknown[] = [
  null, undefined, -1, 0, 1e308, -1e308, 2 ** 60, 0.5, '', 'x', '-5m', '1e400', '99999999999Ei', '9999-99-99T00:00:00Z', '2026-11-21',
  'Never', '100%', '101%', true, [], {}, [null], { '': '' }, 'a'.repeat(5_000), deep(150),
];

function mutate(doc: Json, next: () => number): Json {
  const paths = allPaths(doc);
  const path = paths[Math.floor(next() * paths.length)]!;
  return withPath(doc, path, REPLACEMENTS[Math.floor(next() * REPLACEMENTS.length)]);
}

describe('random damage, in-process', () => {
  it('never crashes: every run exits 0 or 2, and 2 leaves the state file as it was', { timeout: 240_000 }, async () => {
    const roles = ['cluster', 'catalog', 'config', 'state'] as const;
    const valid = { cluster: validCluster(), catalog: validCatalog(), config: validPool(), state: validState };
    const problems: string[] = [];
    const counts = { refused: 0, planned: 0 };
    for (let seed = 1; seed <= 800; seed++) {
      const next = random(seed);
      const role = roles[seed % roles.length]!;
      const files: Record<FileRole, string> = { ...paths, state: join(dir, `rand-state-${seed}.json`) };
      files[role] = join(dir, `rand-${role}-${seed}${role === 'config' ? '.yaml' : '.json'}`);
      const damaged = JSON.stringify(mutate(valid[role], next));
      const stateText = role === 'state' ? damaged : readFileSync(paths.state, 'utf8');
      if (role !== 'state') writeFileSync(files[role], damaged);
      writeFileSync(files.state, stateText);
      let stderr = '';
      const code = await main(['plan', '--cluster', files.cluster, '--catalog', files.catalog, '--config', files.config, '--state', files.state, '--now', NOW], {
        stdout: () => undefined,
        stderr: (text) => void (stderr += text),
        clock: () => Date.parse(NOW),
        env: { EKS_CONSOLIDATOR_STATE_WAIT_MS: '0' },
      });
      if (code === 2) counts.refused++;
      else if (code === 0) counts.planned++;
      if (code !== 0 && code !== 2) problems.push(`seed ${seed} (${role}): exit ${code}: ${stderr.slice(0, 300)}`);
      if (code === 2 && readFileSync(files.state, 'utf8') !== stateText) problems.push(`seed ${seed} (${role}): state changed on exit 2`);
      if (code === 2 && !stderr.includes(files[role])) problems.push(`seed ${seed} (${role}): message does not name the file: ${stderr.slice(0, 200)}`);
    }
    expect(problems).toEqual([]);
    // The damage is real: most changes are refused, some are harmless (a label value, say).
    expect(counts.refused).toBeGreaterThan(100);
    expect(counts.planned).toBeGreaterThan(0);
  });
});

