// The replay runner: the product's pass on the simulated world, state kept between passes.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStateStore } from '../../src/adapters/state/fileStateStore.ts';
import { runReplay, type ReplayInput } from '../../src/app/replay/runReplay.ts';
import { parseFeatureGates } from '../../src/core/featureGates.ts';
import { parseChurn } from '../../src/core/replay/churn.ts';
import { cluster, daemonSet, hours, m5Catalog, minutes, node, nodePool, on, pod, T0 } from '../builders.ts';

const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'ekc-run-replay-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let run = 0;

// Four m5.large, each a quarter used: consolidation packs them; jobs arrive and leave.
const nodes = ['a', 'b', 'c', 'd'].map((name) => node({ name, createdAt: T0 - hours(48), readySince: T0 - hours(48) }));
const pods = nodes.flatMap((n, i) => on(n.name, ...[0, 1].map((k) => pod({ name: `web-${i}-${k}`, ownerReferences: [{ kind: 'ReplicaSet', name: 'web-rs', controller: true }], requests: { cpu: 200, memory: 512 * 1024 ** 2 } }))));

function input(overrides: Partial<ReplayInput> = {}): ReplayInput {
  const id = ++run;
  return {
    cluster: cluster({ nodes, pods, daemonSets: [daemonSet()] }),
    catalog: m5Catalog(),
    configs: [{ name: 'default', nodePools: [nodePool({ consolidateAfterMs: minutes(1) })] }],
    startMs: T0,
    passes: 24,
    intervalMs: minutes(5),
    scoring: 'least-allocated',
    workload: { kind: 'synthetic', churn: parseChurn('jobs=6/h,restarts=6/h'), text: 'jobs=6/h,restarts=6/h' },
    seed: 5,
    launchDelayMs: minutes(1),
    gates: parseFeatureGates(undefined, 'FEATURE_GATES'),
    stateStore: (_c, i) => new FileStateStore(join(dir, `state-${id}-${i}.json`)),
    ...overrides,
  };
}

describe('runReplay', () => {
  it('gives the same report for the same seed, and another for another seed', async () => {
    const first = await runReplay(input());
    expect(await runReplay(input())).toEqual(first);
    expect(await runReplay(input({ seed: 6 }))).not.toEqual(first);
  });

  it('consolidates the quarter-used nodes and then keeps cost below the baseline', async () => {
    const report = await runReplay(input({ workload: { kind: 'synthetic', churn: parseChurn('none'), text: 'none' } }));
    const c = report.configs[0]!;
    expect(c.passes[0]!.costPerHour).toBeCloseTo(4 * 0.096, 6);
    expect(c.summary.endCostPerHour).toBeLessThan(4 * 0.096);
    expect(c.summary.nodesDisrupted).toBeGreaterThan(0);
    expect(c.summary.savingsDollars).toBeGreaterThan(0);
    expect(report.baseline.totalCostDollars).toBeCloseTo(4 * 0.096 * 2, 4); // 24 passes of 5 minutes: 2 hours
  });

  it('keeps the state between passes: a grace period stops the re-evaluation a pass without it repeats', async () => {
    // One lone m5.xlarge whose pod needs more than an m5.large: nothing cheaper holds it, so each pass
    // evaluates it and finds nothing. With a 1h grace period it is evaluated once, then protected.
    const big = node({ name: 'big', instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14 * 1024 ** 3, pods: 58 }, createdAt: T0 - hours(48), readySince: T0 - hours(48) });
    const base = input({
      cluster: cluster({ nodes: [big], pods: on('big', pod({ requests: { cpu: 3000, memory: 1024 ** 3 } })) }),
      workload: { kind: 'synthetic', churn: parseChurn('none'), text: 'none' },
      passes: 4,
      intervalMs: minutes(6), // longer than the 5-minute no-change pause, so each pass searches
    });
    const stores: FileStateStore[] = [];
    await runReplay({
      ...base,
      configs: [
        { name: 'no-grace', nodePools: [nodePool({ consolidateAfterMs: 0 })] },
        { name: 'grace-1h', nodePools: [nodePool({ consolidateAfterMs: 0, consolidationGracePeriodMs: hours(1) })] },
      ],
      stateStore: (c, i) => {
        const store = base.stateStore(c, i) as FileStateStore;
        stores.push(store);
        return store;
      },
    });
    const [noGrace, grace] = await Promise.all(stores.map((s) => s.load()));
    expect(noGrace!.nodes['big']!.lastEvaluatedAt).toBe(T0 + minutes(18));
    expect(grace!.nodes['big']!.lastEvaluatedAt).toBe(T0);
    expect(grace!.nodes['big']!.graceProtectedUntil).toBe(T0 + hours(1));
  });
});
