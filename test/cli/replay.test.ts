// `eks-consolidator replay` through the real bin: flags, formats, --out, --compare, bad input (exit 2).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/eks-consolidator.mjs');
const SEED = join(ROOT, 'demo/replay-seed-003');
const base = ['--cluster', join(SEED, 'cluster.json'), '--catalog', join(SEED, 'catalog.json'), '--now', '2026-11-21T14:00:00Z'];
let dir: string;

function run(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 'replay', ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ekc-replay-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('eks-consolidator replay', () => {
  it('--compare replays each config over the same timeline and writes the JSON to --out', () => {
    const out = join(dir, 'report.json');
    const r = run([...base, '--compare', join(SEED, 'threshold-0.yaml'), join(SEED, 'threshold-1.yaml'), '--passes', '12', '--churn', 'daily=0.6', '--seed', '3', '--out', out]);
    expect(r.stderr).toContain(`replay written to ${out}`);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report).toMatchObject({ format: 'eks-consolidator/replay', passes: 12, intervalMs: 300_000, scheduler: 'least-allocated', churn: 'daily=0.6', seed: 3, source: 'synthetic' });
    expect(report.configs.map((c: { name: string }) => c.name)).toEqual(['threshold-0', 'threshold-1']);
    expect(report.configs[0].passes).toHaveLength(12);
    // The first pass runs on the recorded cluster: six m6a.large at $0.086/h.
    expect(report.configs[0].passes[0].costPerHour).toBeCloseTo(6 * 0.086, 6);
  });

  it('--format table prints one summary row per config, then the decisions', () => {
    const r = run([...base, '--config', join(SEED, 'threshold-0.yaml'), '--passes', '6', '--interval', '10m', '--scheduler', 'most-allocated', '--format', 'table']);
    expect(r.code).toBe(0);
    expect(r.stdout.replace(/\n +/g, ' ')).toMatch(/6 passes every 10 min \(1\.0 h\), scheduler most-allocated/);
    expect(r.stdout).toMatch(/^threshold-0\s+\$\d/m);
    expect(r.stdout).toContain('threshold-0: decisions');
    expect(r.stdout).toMatch(/replace\s+m7i-flex\.large\s+\$0\.0060\s+\d+\s+ip-10-0-\d-10\b/);
    // laid out as the plan's table: 120 columns, node names without their shared suffix
    expect(r.stdout).toContain('node names are shown without .ec2.internal (--wide shows them whole)');
    for (const line of r.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(120);
  });

  it('--format table --wide cuts nothing: full node names and times', () => {
    const r = run([...base, '--config', join(SEED, 'threshold-0.yaml'), '--passes', '6', '--interval', '10m', '--scheduler', 'most-allocated', '--format', 'table', '--wide']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/2026-11-21T14:\d\d:00Z\s+single-node\s+replace\s+m7i-flex\.large\s+\$0\.0060\s+\d+\s+ip-10-0-\d-10\.ec2\.internal/);
    expect(r.stdout).not.toContain('shown without');
  });

  it('--format html writes one page with no reference to anything outside it', () => {
    const out = join(dir, 'replay.html');
    const r = run([...base, '--config', join(SEED, 'threshold-1.yaml'), '--passes', '4', '--format', 'html', '--out', out]);
    expect(r.code).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
    expect(html).toContain('data-config="threshold-1"');
  });

  it.each([
    ['an unknown scheduler', ['--scheduler', 'random'], '--scheduler: "random" is not least-allocated or most-allocated'],
    ['a bad churn model', ['--churn', 'daily=3'], '--churn: daily=3: expected a number from 0 to 1'],
    ['zero passes', ['--passes', '0'], '--passes: "0" is not a whole number from 1'],
    ['a bad interval', ['--interval', 'often'], '--interval: "often" is not a duration'],
    ['an unknown format', ['--format', 'pdf'], '--format: "pdf" is not json, table or html'],
    ['--config with --compare', ['--config', 'a.yaml', '--compare', 'b.yaml'], 'give either --config or --compare'],
    ['a stray argument', ['extra.yaml'], 'unexpected argument "extra.yaml"'],
  ])('rejects %s with exit 2', (_name, args, message) => {
    const out = join(dir, 'never.json');
    const r = run([...base, ...args, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(existsSync(out)).toBe(false);
  });

  it.each([
    ['a missing directory', (d: string) => join(d, 'no-such-dir', 'replay.html'), 'directory'],
    ['a directory', (d: string) => d, 'is a directory'],
  ])('--out into %s: exit 2 naming --out, before any input is read or replayed', (_name, outOf, message) => {
    // The cluster file does not exist either: the --out error comes first, so nothing was replayed.
    const r = run(['--cluster', join(dir, 'missing-cluster.json'), '--format', 'html', '--out', outOf(dir)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^eks-consolidator: --out: /);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toContain('missing-cluster.json');
    expect(r.stderr).not.toContain('internal error');
  });

  it('names the file of a bad NodePool config', () => {
    const r = run([...base, '--compare', join(SEED, 'threshold-0.yaml'), join(SEED, 'cluster.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cluster.json');
  });
});
