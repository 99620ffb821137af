// The replacement size bound against Karpenter's best-known merge (kubernetes-sigs/karpenter issue
// 3305): eight small compute nodes whose memory-heavy pods all fit one memory-optimised node that is
// as large as the eight together and costs far less. Through the real `bin` with the bundled catalog and
// a 100% budget, the merge must be found, and its replacement must be no larger than the nodes it removes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { kubeNode, kubePod } from '../support/fakeKubeApi.ts';

const BIN = join(import.meta.dirname, '../../bin/eks-consolidator.mjs');
const NOW = '2026-11-21T12:00:00Z';
const SMALL_NODES = 8;
let dir: string;

const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

/** A c6g.large as a kubelet reports it: 2 cpu, 4 GiB, allocatable as in the bundled catalog. */
function c6gLarge(name: string) {
  const node = kubeNode(name, { instanceType: 'c6g.large', cpu: '1930m', memory: '3055Mi', labels: { 'kubernetes.io/arch': 'arm64' }, createdAt: '2026-11-20T12:00:00Z' });
  const status = node['status'] as { capacity: Record<string, string> };
  status.capacity = { ...status.capacity, cpu: '2', memory: '4096Mi' };
  return node;
}

const pool = (budget: string) => `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets:
      - nodes: "${budget}"
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ekc-merge-bound-'));
});

describe('the replacement size bound and the eight-into-one memory merge', () => {
  it('merges the eight compute nodes into one node no larger than they are together, at a 100% budget', () => {
    const names = Array.from({ length: SMALL_NODES }, (_, i) => `c${i + 1}`);
    const cluster = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        ...names.map(c6gLarge),
        // Each pod takes most of its node's memory and little cpu: the nodes are full by memory only.
        ...names.map((n) => kubePod('default', `cache-${n}`, { node: n, cpu: '250m', memory: '2800Mi', createdAt: '2026-11-21T08:00:00Z' })),
      ],
    };
    const r = spawnSync(
      process.execPath,
      [BIN, 'plan', '--cluster', file('cluster.json', JSON.stringify(cluster)), '--config', file('pool.yaml', pool('100%')), '--now', NOW, '--format', 'json'],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const plan = JSON.parse(r.stdout) as { decisions: { nodes: string[]; replacements: { instanceTypes: string[] }[]; savingsPerHour: number }[] };
    const merge = plan.decisions.find((d) => d.nodes.length === SMALL_NODES);
    expect(merge, JSON.stringify(plan.decisions.map((d) => [d.nodes, d.replacements.map((x) => x.instanceTypes[0])]))).toBeDefined();
    expect(merge!.nodes.sort()).toEqual([...names].sort());
    expect(merge!.replacements).toHaveLength(1);
    expect(merge!.savingsPerHour).toBeGreaterThan(0);
    // Its cheapest type holds the 8 x 2800Mi, yet has at most the 8 x 4 GiB the nodes had together.
    const bundled = JSON.parse(readFileSync(join(import.meta.dirname, '../../src/adapters/catalog/bundled/catalog.json'), 'utf8')) as { instanceTypes: { name: string; capacity: { memory: string } }[] };
    const type = bundled.instanceTypes.find((t) => t.name === merge!.replacements[0]!.instanceTypes[0]);
    const memoryMi = Number(/^(\d+)Mi$/.exec(type?.capacity.memory ?? '')?.[1]);
    expect(memoryMi).toBeGreaterThanOrEqual(SMALL_NODES * 2800);
    expect(memoryMi).toBeLessThanOrEqual(SMALL_NODES * 4096);
  });
});
