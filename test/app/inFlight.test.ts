// docs/safety.md, "The promises" (nothing a command still needs is planned away): every node an
// unfinished command launched, drains or targets is in flight until the command ends, and the next pass
// treats the room promised to the command's pods as taken (audit C1: a slow drain let the next pass
// delete the empty replacement).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStateStore } from '../../src/adapters/state/fileStateStore.ts';
import { runPass } from '../../src/app/runPass.ts';
import { planAroundInFlight } from '../../src/core/disruption/inFlight.ts';
import type { Cluster, NodePool } from '../../src/core/model/types.ts';
import type { Plan } from '../../src/core/plan.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import type { DisruptionCommand } from '../../src/core/state/types.ts';
import { cluster, m5Catalog, minutes, node, nodePool, on, pdb, pod, T0 } from '../builders.ts';

const disrupted = [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' as const }];

function command(overrides: Partial<DisruptionCommand>): DisruptionCommand {
  return {
    id: 'c1',
    createdAt: T0 - minutes(20),
    nodes: ['a'],
    method: 'single-node',
    reason: 'Underutilized',
    step: 'evicting',
    updatedAt: T0 - minutes(1),
    version: 0,
    detail: JSON.stringify({ pool: 'default' }),
    ...overrides,
  };
}

async function planWith(c: Cluster, commands: DisruptionCommand[], pools: NodePool[] = [nodePool()]): Promise<Plan> {
  const store = new FileStateStore(join(mkdtempSync(join(tmpdir(), 'ekc-inflight-')), 'state.json'));
  for (const cmd of commands) await store.putCommand(cmd);
  const result = await runPass(
    { readCluster: async () => c, loadCatalog: async () => ({ catalog: m5Catalog(), warnings: [] }), loadNodePools: async () => pools, state: store },
    { nowMs: T0, gates: { spotToSpotConsolidation: false }, dryRun: true, persistState: true, scope: 'all', owner: 'test', leaseTtlMs: minutes(5) },
  );
  return result.plan;
}

const reasons = (plan: Plan, name: string) => (plan.nodes.find((n) => n.name === name)?.reasons ?? []).join(' | ');
const decided = (plan: Plan) => plan.decisions.flatMap((d) => d.nodes);
// The controls run without the command and without a's disruption taint: a node Karpenter's taint marks
// as being disrupted has its pods placed first even with no command of ours (inFlight.ts).
const untainted = (c: Cluster): Cluster => ({ ...c, nodes: c.nodes.map((n) => (n.name === 'a' ? { ...n, taints: [], unschedulable: false } : n)) });

describe('the next pass, while a command drains slowly', () => {
  it('never plans to delete the replacement of an unfinished command', async () => {
    // a: tainted, its pod held by a PDB at zero; b: the replacement, Ready for 10 minutes, empty.
    const held = pod({ name: 'db-0', labels: { app: 'db' } });
    const c = cluster({
      nodes: [
        node({ name: 'a', taints: disrupted, unschedulable: true }),
        node({ name: 'b', createdAt: T0 - minutes(12), readySince: T0 - minutes(10), instanceId: 'i-b', providerId: 'aws:///us-east-1a/i-b' }),
      ],
      pods: on('a', held),
      pdbs: [pdb({ selector: { matchLabels: { app: 'db' } }, disruptionsAllowed: 0 })],
    });
    // Control: without the command, b is an empty node and is deleted.
    expect(decided(await planWith(untainted(c), []))).toContain('b');
    const replacement = { instanceTypes: ['m5.large'], capacityType: 'on-demand' as const, zones: ['us-east-1a'], pricePerHour: 0.096 };
    const plan = await planWith(c, [command({ launched: [{ index: 0, ref: 'i-b', instanceId: 'i-b', nodeName: 'b' }], replacements: [replacement] })]);
    expect(decided(plan)).toEqual([]);
    expect(reasons(plan, 'b')).toMatch(/already being disrupted by an unfinished command/);
    expect(reasons(plan, 'a')).toMatch(/already being disrupted by an unfinished command/);
  });

  it('keeps the room a draining node\'s pods need: the node they will land on is not deleted', async () => {
    // A delete command drains a; its pod fits only on e, which looks empty.
    const big = pod({ name: 'big', requests: { cpu: 1500, memory: 1024 ** 3 } });
    const c = cluster({
      nodes: [node({ name: 'a', taints: disrupted, unschedulable: true }), node({ name: 'e' })],
      pods: on('a', big),
    });
    expect(decided(await planWith(untainted(c), []))).toContain('e');
    const plan = await planWith(c, [command({})]);
    expect(decided(plan)).toEqual([]);
    expect(reasons(plan, 'e')).toMatch(/receives pods of unfinished command c1/);
  });

  it('decides nothing new while a command\'s pods have no place', async () => {
    const huge = pod({ name: 'huge', requests: { cpu: 1900, memory: 1024 ** 3 } });
    const c = cluster({
      nodes: [node({ name: 'a', taints: disrupted, unschedulable: true }), node({ name: 'f' }), node({ name: 'g' })],
      pods: [...on('a', huge), ...on('f', pod({ name: 'filler', requests: { cpu: 1000, memory: 1024 ** 3 } })), ...on('g', pod({ name: 'small' }))],
    });
    // Control: without the command, f's pod moves to g and f goes.
    expect((await planWith(untainted(c), [])).decisions.length).toBeGreaterThan(0);
    const plan = await planWith(c, [command({})]);
    expect(plan.decisions).toEqual([]);
    expect(plan.notes?.join(' ')).toMatch(/1 pod\(s\) of unfinished disruption commands have no place yet \(default\/huge\)/);
  });

  it('counts a launched replacement that has not registered yet as the node it will be', async () => {
    // a's two pods go to the m5.xlarge being launched; h, empty, is free to go.
    const c = cluster({
      nodes: [node({ name: 'a', instanceType: 'm5.xlarge', taints: disrupted, unschedulable: true }), node({ name: 'h' })],
      pods: on('a', pod({ name: 'p1', requests: { cpu: 1500, memory: 1024 ** 3 } }), pod({ name: 'p2', requests: { cpu: 1500, memory: 1024 ** 3 } })),
    });
    const replacement = { instanceTypes: ['m5.xlarge'], capacityType: 'on-demand' as const, zones: ['us-east-1a'], pricePerHour: 0.192 };
    const plan = await planWith(c, [command({ step: 'launched', launched: [{ index: 0, ref: 'i-pending', instanceId: 'i-pending' }], replacements: [replacement] })]);
    expect(decided(plan)).toEqual(['h']);
    expect(plan.nodes.map((n) => n.name).sort()).toEqual(['a', 'h']);
  });
});

describe('planAroundInFlight', () => {
  it('places the pods on the command\'s own replacement first', () => {
    const c = cluster({
      nodes: [node({ name: 'a', taints: disrupted, unschedulable: true }), node({ name: 'b', instanceId: 'i-b' }), node({ name: 'other' })],
      pods: on('a', pod({ name: 'x' }), pod({ name: 'y' })),
    });
    const view = planAroundInFlight({
      cluster: c,
      commands: [command({ launched: [{ index: 0, ref: 'i-b', instanceId: 'i-b' }], replacements: [{ instanceTypes: ['m5.large'], capacityType: 'on-demand', zones: ['us-east-1a'], pricePerHour: 0.096 }] })],
      nodePools: [nodePool()],
      catalog: m5Catalog(),
      nowMs: T0,
      replacementPool: () => 'default',
      simulatorFactory: createSimulator,
    });
    expect([...view.inFlight].sort()).toEqual(['a', 'b']);
    expect(view.cluster.pods.filter((p) => !p.isDaemonSetPod).map((p) => p.nodeName)).toEqual(['b', 'b']);
    expect(view.nominated.size).toBe(0);
    expect(view.unplaced).toEqual([]);
  });

  it('finished commands change nothing', () => {
    const c = cluster({ nodes: [node({ name: 'a' })], pods: [] });
    const view = planAroundInFlight({
      cluster: c,
      commands: [command({ step: 'done' }), command({ id: 'c2', step: 'rolledBack' }), command({ id: 'c3', step: 'abandoned' })],
      nodePools: [nodePool()],
      catalog: m5Catalog(),
      nowMs: T0,
      replacementPool: () => undefined,
      simulatorFactory: createSimulator,
    });
    expect(view.cluster).toBe(c);
    expect(view.inFlight.size).toBe(0);
  });
});
