// The CLI through the real `bin` (docs/file-formats.md): exit codes, messages, formats, the state file.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { kubeNode, kubePdb, kubePod } from '../support/fakeKubeApi.ts';

const BIN = join(import.meta.dirname, '../../bin/eks-consolidator.mjs');
const NOW = '2026-11-21T12:00:00Z';
let dir: string;

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const catalog = {
  region: 'us-east-1',
  instanceTypes: ['large', 'xlarge', '2xlarge', '4xlarge'].map((size, i) => ({
    name: `m5.${size}`,
    capacity: { cpu: String(2 * 2 ** i), memory: `${8 * 2 ** i}Gi`, pods: '58' },
    offerings: ['us-east-1a', 'us-east-1b'].map((zone) => ({ zone, capacityType: 'on-demand', price: 0.096 * 2 ** i })),
  })),
};
const cluster = {
  apiVersion: 'v1',
  kind: 'List',
  items: [
    kubeNode('a', { pool: 'default', instanceType: 'm5.large', cpu: '2', memory: '8Gi', createdAt: '2026-11-20T12:00:00Z' }),
    kubeNode('b', { pool: 'default', instanceType: 'm5.large', cpu: '2', memory: '8Gi', createdAt: '2026-11-20T12:00:00Z' }),
    kubeNode('empty', { pool: 'default', instanceType: 'm5.large', cpu: '2', memory: '8Gi', createdAt: '2026-11-20T12:00:00Z' }),
    kubePod('default', 'web-1', { node: 'a', cpu: '300m', memory: '256Mi', labels: { app: 'web' }, createdAt: '2026-11-21T08:00:00Z' }),
    kubePod('default', 'db-0', { node: 'b', cpu: '300m', memory: '256Mi', labels: { app: 'db' }, createdAt: '2026-11-21T08:00:00Z' }),
    kubePdb('default', 'db', { app: 'db' }, 0),
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
    consolidationGracePeriod: 1h
    budgets:
      - nodes: "100%"
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ekc-cli-'));
});

describe('eks-consolidator plan', () => {
  it('prints a JSON plan and exits 0', () => {
    const r = run(['plan', '--cluster', file('c.json', JSON.stringify(cluster)), '--catalog', file('cat.json', JSON.stringify(catalog)), '--config', file('p.yaml', pools), '--now', NOW]);
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan).toMatchObject({ dryRun: true, evaluatedAt: NOW });
    expect(plan.decisions.flatMap((d: { nodes: string[] }) => d.nodes).sort()).toEqual(['a', 'empty']);
    expect(plan.nodes.find((n: { name: string }) => n.name === 'b').reasons.join(' ')).toMatch(/PodDisruptionBudget default\/db/);
  });

  it('reads the cluster as multi-document YAML too', () => {
    const yaml = cluster.items.map((o) => JSON.stringify(o)).join('\n---\n');
    const r = run(['plan', '--cluster', file('c.yaml', yaml), '--catalog', join(dir, 'cat.json'), '--config', join(dir, 'p.yaml'), '--now', NOW]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).decisions.length).toBeGreaterThan(0);
  });

  it('--format table is for a person', () => {
    const r = run(['plan', '--cluster', join(dir, 'c.json'), '--catalog', join(dir, 'cat.json'), '--config', join(dir, 'p.yaml'), '--now', NOW, '--format', 'table']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/DECISIONS, in the order they would be taken/);
    expect(r.stdout).toMatch(/per month/);
    expect(r.stdout).toMatch(/ blocked\n +why: pod default\/db-0 is protected by PodDisruptionBudget/);
  });

  it('with no inputs plans the embedded demo', () => {
    const r = run(['plan', '--now', NOW]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).decisions.length).toBeGreaterThan(0);
  });

  it('a missing --cluster plans the bundled sample cluster with the given NodePools', () => {
    const r = run(['plan', '--config', join(dir, 'p.yaml'), '--now', NOW]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).notes.join(' ')).toMatch(/bundled sample cluster/);
  });

  it.each([
    ['a negative budget', 'budgets:\n      - nodes: "-1"', /p-bad\.yaml: NodePool "default": spec\.disruption\.budgets\[0\]\.nodes/],
    ['a schedule without duration', 'budgets:\n      - nodes: "1"\n        schedule: "@daily"', /schedule requires duration|duration/],
    ['a negative threshold', 'consolidationSavingsThresholdCents: "-1"', /consolidationSavingsThresholdCents/],
    ['an unknown policy', 'consolidationPolicy: Sometimes', /consolidationPolicy/],
  ])('exits 2 on %s, naming file, object and field', (_name, disruption, message) => {
    const bad = `apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  disruption:\n    ${disruption}\n`;
    const r = run(['plan', '--cluster', join(dir, 'c.json'), '--catalog', join(dir, 'cat.json'), '--config', file('p-bad.yaml', bad), '--now', NOW]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });

  it.each([
    ['a missing cluster file', ['--cluster', '/nonexistent/cluster.json'], /\/nonexistent\/cluster\.json/],
    ['a cluster file that is not JSON or YAML', ['--cluster', '__BAD__'], /bad\.json/],
    ['an unknown format', ['--format', 'xml'], /--format/],
    ['a bad --now', ['--now', 'yesterday'], /--now/],
    ['an unknown feature gate', ['--feature-gates', 'Teleport=true'], /unknown feature gate "Teleport"/],
    ['an unknown flag', ['--fast'], /fast/],
  ])('exits 2 on %s', (_name, args, message) => {
    const resolved = args.map((a) => (a === '__BAD__' ? file('bad.json', '{ not json: [') : a));
    const base = ['--cluster', join(dir, 'c.json'), '--catalog', join(dir, 'cat.json'), '--config', join(dir, 'p.yaml'), '--now', NOW];
    const r = run(['plan', ...base, ...resolved]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('exits 2 on an unknown command and on no command', () => {
    expect(run(['apply']).code).toBe(2);
    const none = run([]);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^usage: eks-consolidator plan/);
  });

  it('projects the later waves by default (the demo: one more delete once this plan is carried out); PLAN_WAVES=off leaves them out', () => {
    const projected = JSON.parse(run(['plan', '--now', NOW]).stdout);
    expect(projected.projection).toMatchObject({ stoppedBecause: 'settled', waves: [{ wave: 2, decisions: [{ action: 'delete' }] }] });
    expect(projected.projection.endCostPerHour).toBeCloseTo(projected.efficiency.endCostPerHour - projected.projection.savingsPerHour, 4);
    const off = JSON.parse(run(['plan', '--now', NOW], { PLAN_WAVES: 'off' }).stdout);
    expect(off.projection).toBeUndefined();
    // The same decisions; only the projection knows where kube-scheduler is expected to put their pods.
    const withoutExpected = (decisions: Record<string, unknown>[]) => decisions.map(({ expectedDestinations: _expected, ...d }) => d);
    expect(off.decisions).toEqual(withoutExpected(projected.decisions));
    expect(off.decisions.every((d: Record<string, unknown>) => d['expectedDestinations'] === undefined)).toBe(true);
    expect(projected.decisions.filter((d: { evictedPods: string[] }) => d.evictedPods.length > 0).every((d: Record<string, unknown>) => d['expectedDestinations'] !== undefined)).toBe(true);
    const bad = run(['plan', '--now', NOW], { PLAN_WAVES: 'lots' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/PLAN_WAVES.*"lots" is not a number of waves/);
  });

  it('reads FEATURE_GATES from the environment like the Lambda', () => {
    const r = run(['plan', '--cluster', join(dir, 'c.json'), '--catalog', join(dir, 'cat.json'), '--config', join(dir, 'p.yaml'), '--now', NOW], { FEATURE_GATES: 'Nope=true' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/FEATURE_GATES/);
  });
});

describe('--state', () => {
  const args = (state: string, now: string) => ['plan', '--cluster', join(dir, 'c.json'), '--catalog', join(dir, 'cat.json'), '--config', join(dir, 'p.yaml'), '--state', state, '--now', now];

  it('writes the state atomically, and consecutive runs see the grace period start', () => {
    const state = join(dir, 'state.json');
    expect(run(args(state, NOW)).code).toBe(0);
    expect(existsSync(state)).toBe(true);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toBeTruthy();
    const second = JSON.parse(run(args(state, '2026-11-21T12:10:00Z')).stdout);
    // a and empty were planned but not carried out: they are chosen again, with no grace protection
    expect(second.decisions.flatMap((d: { nodes: string[] }) => d.nodes).sort()).toEqual(['a', 'empty']);
  });

  it('a corrupt state file is exit 2 naming the file, and is left as it was', () => {
    const state = file('corrupt.json', '{"format": "something else"');
    const r = run(args(state, NOW));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/corrupt\.json/);
    expect(readFileSync(state, 'utf8')).toBe('{"format": "something else"');
  });

  it('bad input writes no state file', () => {
    const state = join(dir, 'never.json');
    const r = run(['plan', '--cluster', '/nonexistent.json', '--state', state, '--now', NOW]);
    expect(r.code).toBe(2);
    expect(existsSync(state)).toBe(false);
  });
});
