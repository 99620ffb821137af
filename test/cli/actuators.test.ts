// The plan says which actuator acts on each pool (JSON `actuators`, a line of the table), and how many
// nodes one decision may disrupt (`--max-nodes-per-command`): flags first, then the Lambda's variables.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { kubeNode, kubePod } from '../support/fakeKubeApi.ts';

const NOW = '2026-11-21T12:00:00Z';
let dir: string;

async function plan(args: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await main(['plan', '--cluster', join(dir, 'c.json'), '--catalog', join(dir, 'cat.json'), '--config', join(dir, 'p.yaml'), '--now', NOW, ...args], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    clock: () => Date.parse(NOW),
    env,
  });
  return { code, stdout, stderr };
}

const catalog = {
  region: 'us-east-1',
  instanceTypes: ['large', 'xlarge'].map((size, i) => ({
    name: `m5.${size}`,
    capacity: { cpu: String(2 * 2 ** i), memory: `${8 * 2 ** i}Gi`, pods: '58' },
    offerings: [{ zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096 * 2 ** i }],
  })),
};
const REGISTERED = { 'karpenter.sh/registered': 'true', 'karpenter.sh/initialized': 'true' };
const created = '2026-11-20T12:00:00Z';
const cluster = {
  apiVersion: 'v1',
  kind: 'List',
  items: [
    // default and gpu: launched and registered by Karpenter; legacy: no Karpenter labels.
    kubeNode('d1', { pool: 'default', createdAt: created, labels: REGISTERED }),
    kubeNode('d2', { pool: 'default', createdAt: created, labels: REGISTERED }),
    kubeNode('d3', { pool: 'default', createdAt: created, labels: REGISTERED }),
    kubeNode('g1', { pool: 'gpu', createdAt: created, labels: REGISTERED }),
    kubeNode('l1', { pool: 'legacy', createdAt: created }),
    kubePod('default', 'web-1', { node: 'd1', cpu: '300m', memory: '256Mi', labels: { app: 'web' }, createdAt: '2026-11-21T08:00:00Z' }),
  ],
};
const nodePool = (name: string, nodeClassRef: boolean) => `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: ${name}
spec:
  template:
    spec:
${nodeClassRef ? '      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n' : ''}      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets:
      - nodes: "100%"
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ekc-actuators-'));
  writeFileSync(join(dir, 'c.json'), JSON.stringify(cluster));
  writeFileSync(join(dir, 'cat.json'), JSON.stringify(catalog));
  writeFileSync(join(dir, 'p.yaml'), [nodePool('default', true), nodePool('gpu', true), nodePool('legacy', false)].join('---\n'));
});

describe('which actuator acts on each pool', () => {
  it('auto: karpenter where the nodes carry Karpenter registration labels, ec2 elsewhere; in JSON and in the table', async () => {
    const json = await plan([]);
    expect(json.code).toBe(0);
    const p = JSON.parse(json.stdout);
    expect(p.actuators).toEqual({
      default: { actuator: 'karpenter', why: expect.stringMatching(/registration labels/) },
      gpu: { actuator: 'karpenter', why: expect.stringMatching(/registration labels/) },
      legacy: { actuator: 'ec2', why: expect.stringMatching(/no sign of Karpenter/) },
    });
    const table = await plan(['-o', 'table']);
    expect(table.stdout).toContain('acting through: karpenter (NodeClaims) for default, gpu; ec2 (launch templates) for legacy');
    expect(table.stdout).toMatch(/^ {4}legacy: ec2, no sign of Karpenter/m);
  });

  it('--actuator karpenter: one line when every pool agrees, and a note for the pool that cannot launch', async () => {
    const r = await plan(['--actuator', 'karpenter', '-o', 'wide']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('acting through: karpenter (NodeClaims) for default, gpu, legacy');
    expect(r.stdout).toMatch(/legacy: karpenter, ACTUATOR=karpenter; but the NodePool has no spec\.template\.spec\.nodeClassRef/);
    expect(r.stdout).toMatch(/note: NodePool "legacy" is acted on through Karpenter NodeClaims but has no spec\.template\.spec\.nodeClassRef/);
  });

  it('ACTUATOR from the environment when the flag is absent; the flag wins', async () => {
    const env = JSON.parse((await plan([], { ACTUATOR: 'ec2' })).stdout);
    expect(Object.values(env.actuators).map((a) => (a as { actuator: string }).actuator)).toEqual(['ec2', 'ec2', 'ec2']);
    const table = await plan(['-o', 'table'], { ACTUATOR: 'ec2' });
    expect(table.stdout).toContain('acting through: ec2 (launch templates) for default, gpu, legacy (ACTUATOR=ec2)');
    const flag = JSON.parse((await plan(['--actuator', 'auto'], { ACTUATOR: 'ec2' })).stdout);
    expect(flag.actuators.default.actuator).toBe('karpenter');
  });

  it('--karpenter absent (or KARPENTER=absent): no pool goes through Karpenter', async () => {
    for (const r of [await plan(['--karpenter', 'absent']), await plan([], { KARPENTER: 'absent' })]) {
      expect(r.code).toBe(0);
      const p = JSON.parse(r.stdout);
      expect(Object.values(p.actuators)).toEqual([
        { actuator: 'ec2', why: 'KARPENTER=absent' },
        { actuator: 'ec2', why: 'KARPENTER=absent' },
        { actuator: 'ec2', why: 'KARPENTER=absent' },
      ]);
    }
  });

  it('--karpenter present: every pool goes through Karpenter', async () => {
    const p = JSON.parse((await plan(['--karpenter', 'present'])).stdout);
    expect(p.actuators.legacy).toEqual({ actuator: 'karpenter', why: expect.stringMatching(/^Karpenter serves the pool: KARPENTER=present; but the NodePool has no/) });
  });

  it.each([
    [['--actuator', 'fleet'], {}, '--actuator: "fleet" is not auto, karpenter or ec2'],
    [[], { ACTUATOR: 'fleet' }, 'ACTUATOR: "fleet" is not auto, karpenter or ec2'],
    [['--karpenter', 'maybe'], {}, '--karpenter: "maybe" is not auto, present or absent'],
    [[], { KARPENTER: 'maybe' }, 'KARPENTER: "maybe" is not auto, present or absent'],
    [['--max-nodes-per-command', '0'], {}, '--max-nodes-per-command: "0" is not a positive whole number of nodes'],
    [['--max-nodes-per-command', 'all'], {}, '--max-nodes-per-command: "all" is not a positive whole number of nodes'],
    [[], { MAX_NODES_PER_COMMAND: '-1' }, 'MAX_NODES_PER_COMMAND: "-1" is not a positive whole number of nodes'],
  ] as const)('%o %o is exit 2, naming the flag or variable', async (args, env, message) => {
    const r = await plan([...args], { ...env });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(message);
  });
});

describe('--max-nodes-per-command', () => {
  it('cuts a move to N nodes and the plan says so (flag, or MAX_NODES_PER_COMMAND)', async () => {
    // Four empty nodes (d2, d3, g1, l1): one emptiness decision by default, two of two with a cap of 2.
    const free = JSON.parse((await plan([])).stdout);
    expect(free.decisions.filter((d: { method: string }) => d.method === 'emptiness').map((d: { nodes: string[] }) => d.nodes.length)).toEqual([4]);
    for (const r of [await plan(['--max-nodes-per-command', '2']), await plan([], { MAX_NODES_PER_COMMAND: '2' })]) {
      const p = JSON.parse(r.stdout);
      const empties = p.decisions.filter((d: { method: string }) => d.method === 'emptiness');
      expect(empties.map((d: { nodes: string[] }) => d.nodes.length)).toEqual([2, 2]);
      expect(empties[0].cappedAt).toEqual({ maxNodes: 2, eligible: 4 });
      expect(empties[1]).not.toHaveProperty('cappedAt'); // the last two: nothing left out
      expect(p.decisions.every((d: { nodes: string[] }) => d.nodes.length <= 2)).toBe(true);
    }
    const table = await plan(['--max-nodes-per-command', '2', '-o', 'wide']);
    expect(table.stdout).toContain('cut to 2 of 4 eligible nodes by MAX_NODES_PER_COMMAND');
  });
});
