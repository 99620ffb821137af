// `consolidationPolicy: Balanced` through the real `bin`: scores in the JSON plan and the table, the
// integer form refused in spec.disruption (as Karpenter v1.14's CRD refuses it) and accepted in the
// handover annotation (the RFC's escape hatch).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { kubeNode, kubePod } from '../support/fakeKubeApi.ts';

const BIN = join(import.meta.dirname, '../../bin/eks-consolidator.mjs');
const NOW = '2026-11-21T12:00:00Z';
let dir: string;
let clusterFile: string;
let catalogFile: string;

function run(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const plan = (poolsFile: string, format = 'json') =>
  run(['plan', '--cluster', clusterFile, '--catalog', catalogFile, '--config', poolsFile, '--now', NOW, '--format', format]);

const catalog = {
  region: 'us-east-1',
  instanceTypes: ['large', 'xlarge', '2xlarge'].map((size, i) => ({
    name: `m5.${size}`,
    capacity: { cpu: String(2 * 2 ** i), memory: `${8 * 2 ** i}Gi`, pods: '58' },
    allocatable: { cpu: `${1930 * 2 ** i}m`, memory: `${7 * 2 ** i}Gi`, pods: '58' },
    offerings: [{ zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096 * 2 ** i }],
  })),
};
// x moves 3 pods and would fit on an m5.large (saves 16.7% of the pool); y and z hold pods that may
// not be disrupted: pool disruption 4 + 3 + 3, x's share 40%, score 0.42.
const pinned = { 'karpenter.sh/do-not-disrupt': 'true' };
const xlarge = (name: string) => kubeNode(name, { instanceType: 'm5.xlarge', cpu: '3920m', memory: '14Gi', pods: '58', createdAt: '2026-11-20T12:00:00Z' });
const cluster = {
  apiVersion: 'v1',
  kind: 'List',
  items: [
    xlarge('x'),
    xlarge('y'),
    xlarge('z'),
    ...[1, 2, 3].map((i) => kubePod('default', `web-${i}`, { node: 'x', cpu: '500m', createdAt: '2026-11-21T08:00:00Z' })),
    ...['y', 'z'].flatMap((n) => [1, 2].map((i) => kubePod('default', `db-${n}${i}`, { node: n, cpu: '1750m', annotations: pinned, createdAt: '2026-11-21T08:00:00Z' }))),
  ],
};
const pool = (disruption: string, annotations = '') => `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
${annotations}spec:
  disruption:
${disruption}`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ekc-balanced-'));
  clusterFile = file('cluster.json', JSON.stringify(cluster));
  catalogFile = file('catalog.json', JSON.stringify(catalog));
});

describe('eks-consolidator plan with consolidationPolicy: Balanced', () => {
  it('a move the score refuses is not planned; the plan carries its score and the node says why', () => {
    const r = plan(file('balanced.yaml', pool('    consolidationPolicy: Balanced\n    consolidateAfter: 0s\n')));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.decisions).toEqual([]);
    expect(out.rejectedMoves).toContainEqual(
      expect.objectContaining({
        method: 'single-node',
        nodes: ['x'],
        action: 'replace',
        bound: false,
        scores: [expect.objectContaining({ nodePool: 'default', k: 2, threshold: 0.5, score: 0.4167, approved: false, savingsFraction: 0.166667, disruptionFraction: 0.4 })],
      }),
    );
    const x = out.nodes.find((n: { name: string }) => n.name === 'x');
    expect(x.reasons).toContainEqual(expect.stringMatching(/^Balanced: score 0\.42 < 0\.50 \(k 2\)/));
  });

  it('the same move under WhenEmptyOrUnderutilized is planned, without scores', () => {
    const out = JSON.parse(plan(file('all.yaml', pool('    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 0s\n'))).stdout);
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]).toMatchObject({ method: 'single-node', action: 'replace', nodes: ['x'] });
    expect(out.decisions[0].scores).toBeUndefined();
    expect(out.rejectedMoves).toBeUndefined();
  });

  it('the table lists the scores', () => {
    const r = plan(file('balanced-table.yaml', pool('    consolidationPolicy: Balanced\n    consolidateAfter: 0s\n')), 'table');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Balanced scores: a move passes when each Balanced pool it takes nodes from scores >= 1/k');
    expect(r.stdout).toMatch(/-\s+single-node\s+x\s+default\s+0\.42\s+0\.50 \(k 2\)\s+16\.7%\s+40\.0%\s+too low as a replace/);
  });

  it.each([
    ['an integer', '2'],
    ['a quoted integer', '"3"'],
  ])('%s in spec.disruption.consolidationPolicy is exit 2 (Karpenter v1.14 refuses it)', (_name, value) => {
    const path = file('integer.yaml', pool(`    consolidationPolicy: ${value}\n    consolidateAfter: 0s\n`));
    const r = plan(path);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(path);
    expect(r.stderr).toContain('NodePool "default"');
    expect(r.stderr).toContain('spec.disruption.consolidationPolicy');
    expect(r.stderr).toContain('no integer consolidationPolicy');
  });

  it('escape hatch: k 3 in the handover annotation approves the 0.42 move (threshold 0.33)', () => {
    const annotations = `  annotations:\n    eks-consolidator.io/disruption: '{"consolidationPolicy": 3, "consolidateAfter": "0s"}'\n`;
    const r = plan(file('handover.yaml', pool('    consolidateAfter: Never\n', annotations)));
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out.decisions).toHaveLength(1);
    expect(out.decisions[0]).toMatchObject({ action: 'replace', nodes: ['x'] });
    expect(out.decisions[0].scores).toEqual([expect.objectContaining({ k: 3, score: 0.4167, approved: true })]);
    expect(out.decisions[0].scores[0].threshold).toBeCloseTo(1 / 3, 5);
  });

  it.each([
    ['k 4 (beyond the RFC range)', '4'],
    ['k 0', '0'],
    ['a fraction', '2.5'],
  ])('escape hatch out of range: %s is exit 2', (_name, k) => {
    const annotations = `  annotations:\n    eks-consolidator.io/disruption: '{"consolidationPolicy": ${k}}'\n`;
    const r = plan(file('handover-bad.yaml', pool('    consolidateAfter: Never\n', annotations)));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('an integer k from 1 to 3');
  });
});
