// CLI habits: help, version, -o, `plan -` from standard input, table flags.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { kubeNode, kubePod } from '../support/fakeKubeApi.ts';

const BIN = join(import.meta.dirname, '../../bin/eks-consolidator.mjs');
const NOW = '2026-11-21T12:00:00Z';
let dir: string;

function run(args: string[], options: { input?: string; env?: Record<string, string> } = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...options.env },
    timeout: 60_000,
    ...(options.input === undefined ? {} : { input: options.input }),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const catalog = {
  region: 'us-east-1',
  instanceTypes: ['large', 'xlarge'].map((size, i) => ({
    name: `m5.${size}`,
    capacity: { cpu: String(2 * 2 ** i), memory: `${8 * 2 ** i}Gi`, pods: '58' },
    offerings: [{ zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096 * 2 ** i }],
  })),
};
const cluster = {
  apiVersion: 'v1',
  kind: 'List',
  items: [
    kubeNode('a', { pool: 'default', instanceType: 'm5.large', cpu: '2', memory: '8Gi', createdAt: '2026-11-20T12:00:00Z' }),
    kubeNode('empty', { pool: 'default', instanceType: 'm5.large', cpu: '2', memory: '8Gi', createdAt: '2026-11-20T12:00:00Z' }),
    kubePod('default', 'web-1', { node: 'a', cpu: '300m', memory: '256Mi', labels: { app: 'web' }, createdAt: '2026-11-21T08:00:00Z' }),
  ],
};
const pools = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets:
      - nodes: "100%"
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ekc-habits-'));
  writeFileSync(join(dir, 'c.json'), JSON.stringify(cluster));
  writeFileSync(join(dir, 'cat.json'), JSON.stringify(catalog));
  writeFileSync(join(dir, 'p.yaml'), pools);
});
const inputs = () => ['--catalog', join(dir, 'cat.json'), '--config', join(dir, 'p.yaml'), '--now', NOW];

describe('--help and --version', () => {
  it.each([['--help'], ['-h'], ['help'], ['plan', '--help'], ['plan', '-h']])('%s prints every flag, its default, the formats and the exit codes', (...args) => {
    const r = run(args);
    expect(r.code).toBe(0);
    for (const flag of ['--cluster', '--catalog', '--config', '--state', '--now', '--format', '-o', '--wide', '--show-moves', '--color', '--feature-gates', '--version']) {
      expect(r.stdout).toContain(flag);
    }
    expect(r.stdout).toMatch(/json \(default\)/);
    expect(r.stdout).toMatch(/table/);
    expect(r.stdout).toMatch(/default: the bundled us-east-1 catalog/);
    expect(r.stdout).toMatch(/NO_COLOR/);
    for (const variable of ['FEATURE_GATES', 'REPLACEMENT_BOUND', 'PLAN_WAVES']) expect(r.stdout).toContain(variable);
    for (const code of ['0  a plan was printed', '1  internal error', '2  bad input', '3  the --state file is in use']) expect(r.stdout).toContain(code);
  });

  it('the usage lines line up under the first flag', () => {
    const lines = run(['--help']).stdout.split('\n');
    const column = lines[0]!.indexOf('[');
    expect(column).toBeGreaterThan(0);
    for (const line of lines.slice(1, 4)) expect(line.indexOf('[')).toBe(column);
  });

  it.each([['--version'], ['plan', '--version']])('%s prints the package version', (...args) => {
    const version = (JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }).version;
    const r = run(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`eks-consolidator ${version}\n`);
  });
});

describe('-o and plan -', () => {
  it('-o is --format', () => {
    const long = run(['plan', '--cluster', join(dir, 'c.json'), ...inputs(), '--format', 'table']);
    const short = run(['plan', '--cluster', join(dir, 'c.json'), ...inputs(), '-o', 'table']);
    expect(short.code).toBe(0);
    expect(short.stdout).toBe(long.stdout);
    expect(short.stdout).toMatch(/^SUMMARY$/m);
  });

  it('-o wide is the table at full width', () => {
    const r = run(['plan', '--cluster', join(dir, 'c.json'), ...inputs(), '-o', 'wide']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^NODE .* OUTCOME +WHY$/m);
  });

  it('plan - reads the cluster from standard input, as a pipe from kubectl would', () => {
    const fromFile = run(['plan', '--cluster', join(dir, 'c.json'), ...inputs()]);
    const fromStdin = run(['plan', '-', ...inputs()], { input: JSON.stringify(cluster) });
    expect(fromStdin.code).toBe(0);
    expect(JSON.parse(fromStdin.stdout)).toEqual(JSON.parse(fromFile.stdout));
    expect(JSON.parse(fromStdin.stdout).decisions.flatMap((d: { nodes: string[] }) => d.nodes)).toContain('empty');
    // --cluster - is the same; a positional file is --cluster FILE.
    expect(JSON.parse(run(['plan', '--cluster', '-', ...inputs()], { input: JSON.stringify(cluster) }).stdout)).toEqual(JSON.parse(fromFile.stdout));
    expect(JSON.parse(run(['plan', join(dir, 'c.json'), ...inputs()]).stdout)).toEqual(JSON.parse(fromFile.stdout));
  });

  it.each([
    ['bad JSON on standard input', ['plan', '-'], '{ "kind": "List", "items": [', /^eks-consolidator: stdin: not valid JSON or YAML/],
    ['empty standard input', ['plan', '-'], '', /stdin: the file is empty/],
    ['a cluster given twice', ['plan', '-', '--cluster', 'x.json'], '{}', /the cluster is given twice/],
    ['two positional files', ['plan', 'a.json', 'b.json'], '', /one cluster file at most/],
    ['a bad --color', ['plan', '-', '--color', 'sometimes'], '{}', /--color/],
  ])('exits 2 on %s', (_name, args, input, message) => {
    const r = run([...args, ...inputs()], { input });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });
});
