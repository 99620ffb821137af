// Later waves (docs/how-a-pass-decides.md, step 8): a plan projects what the later passes are expected
// to do once it is carried out.
import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../src/core/buildPlan.ts';
import { carryOutPlan } from '../../src/core/disruption/planCheck.ts';
import { limitsFor, parsePlanWaves, projectLaterWaves } from '../../src/core/disruption/laterWaves.ts';
import { runConsolidationPass, type PassInput } from '../../src/core/disruption/pass.ts';
import { indexCatalog } from '../../src/core/disruption/prices.ts';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import type { NodePool } from '../../src/core/model/types.ts';
import { cluster, m5Catalog, Mi, minutes, node, nodePool, on, pod, T0 } from '../builders.ts';

const xlarge = (name: string) => node({ name, instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14162 * Mi, pods: 58 } });

/**
 * One-for-one moves only (WhenCheaper), and a 15-minute consolidateAfter. `a` (an m5.large, one 300m pod)
 * is cheapest to disrupt: it is deleted, its pod going to `b` (an m5.xlarge with two 500m pods). `b` has
 * just received a pod, so this pass leaves it alone; once that settles, 1300m fit an m5.large.
 */
function input(pool: Partial<NodePool> = {}): PassInput {
  return {
    cluster: cluster({
      nodes: [node({ name: 'a' }), xlarge('b')],
      pods: [
        ...on('a', pod({ name: 'from-a', requests: { cpu: 300, memory: 256 * Mi } })),
        ...on('b', pod({ requests: { cpu: 500, memory: 256 * Mi } }), pod({ requests: { cpu: 500, memory: 256 * Mi } })),
      ],
    }),
    nodePools: [nodePool({ consolidationPolicy: 'WhenCheaper', consolidateAfterMs: minutes(15), ...pool })],
    catalog: m5Catalog(),
    nowMs: T0,
    gates: { spotToSpotConsolidation: false },
    parseDuration: durationOrNull,
  };
}

const summaries = (decisions: readonly { action: string; nodes: readonly string[] }[]) => decisions.map((d) => `${d.action} ${d.nodes.join('+')}`);

describe('later waves', () => {
  it('a node that receives pods is replaced in the next wave, once its pod event has settled', () => {
    const first = runConsolidationPass(input());
    expect(summaries(first.decisions)).toEqual(['delete a']);
    const projection = projectLaterWaves(input(), first, { waves: 10 });
    expect(projection.stoppedBecause).toBe('settled');
    expect(projection.waves.map((w) => [w.wave, w.atMs - T0, summaries(w.decisions)])).toEqual([[2, minutes(15), ['replace b']]]);
    const replacement = projection.waves[0]!.decisions[0]!;
    expect(replacement.replacements[0]?.instanceTypes[0]).toBe('m5.large');
    // its pods, the one moved from a included, go to a node named for its wave
    expect(Object.values(replacement.podDestinations ?? {})).toEqual(['wave2-replacement-1', 'wave2-replacement-1', 'wave2-replacement-1']);
  });

  it('the pods of each wave land where its decisions expect (kube-scheduler\'s least allocated node), which the plan\'s packing may not', () => {
    // `from-a` fits on b and on c (both kept: their pods may not be disrupted); the plan packs it on the
    // fuller c, kube-scheduler's default scoring sends it to the emptier b.
    const keep = { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } };
    const world: PassInput = {
      ...input({ consolidationPolicy: 'WhenEmptyOrUnderutilized' }),
      cluster: cluster({
        nodes: [node({ name: 'a' }), xlarge('b'), xlarge('c')],
        pods: [
          ...on('a', pod({ name: 'from-a', requests: { cpu: 300, memory: 256 * Mi } })),
          ...on('b', pod({ ...keep, requests: { cpu: 500, memory: 256 * Mi } })),
          ...on('c', pod({ ...keep, requests: { cpu: 2500, memory: 256 * Mi } })),
        ],
      }),
    };
    const first = runConsolidationPass(world);
    expect(first.decisions.map((d) => [d.action, d.nodes, d.podDestinations])).toEqual([['delete', ['a'], { 'default/from-a': 'c' }]]);
    const projection = projectLaterWaves(world, first, { waves: 3 });
    expect(projection.firstDestinations).toEqual([{ 'default/from-a': 'b' }]);
    const plan = buildPlan(first, { nowMs: T0, dryRun: true, prices: indexCatalog(m5Catalog()), projection });
    expect(plan.decisions[0]!.expectedDestinations).toEqual({ 'default/from-a': 'b' });
    expect(plan.decisions[0]!.podDestinations).toEqual({ 'default/from-a': 'c' });
    // without a projection, nothing claims to know where kube-scheduler puts them
    expect(buildPlan(first, { nowMs: T0, dryRun: true, prices: indexCatalog(m5Catalog()) }).decisions[0]!.expectedDestinations).toBeUndefined();
  });

  it('a later wave\'s decisions say where their pods land when that wave is carried out', () => {
    const first = runConsolidationPass(input());
    const projection = projectLaterWaves(input(), first, { waves: 10 });
    expect(projection.firstDestinations).toEqual([{ 'default/from-a': 'b' }]);
    const replacement = projection.waves[0]!.decisions[0]!;
    expect(replacement.expectedDestinations).toEqual(replacement.podDestinations);
    expect(Object.keys(replacement.expectedDestinations ?? {}).sort()).toEqual([...replacement.evictedPods].sort());
  });

  it('the plan says where this pass and the waves lead: $0.288/hr now, $0.096/hr in the end', () => {
    const first = runConsolidationPass(input());
    const projection = projectLaterWaves(input(), first, { waves: 10 });
    const plan = buildPlan(first, {
      nowMs: T0,
      dryRun: true,
      prices: indexCatalog(m5Catalog()),
      projection,
      lowerBound: { startCostPerHour: 0.288, lowerBoundPerHour: 0.096, lockedCostPerHour: 0 } as never,
    });
    expect(plan.summary?.savingsPerHour).toBe(0.096);
    expect(plan.projection).toMatchObject({ stoppedBecause: 'settled', savingsPerHour: 0.096, endCostPerHour: 0.096, ratio: 1, nodesDisrupted: 1, podsEvicted: 3 });
    expect(plan.projection?.waves[0]).toMatchObject({ wave: 2, evaluatedAt: '2026-11-21T12:15:00Z', savingsPerHour: 0.096 });
  });

  it('under consolidateAfter 0s too: the replacement of b cannot come in the same pass, so it is a later wave', () => {
    // The actuator taints every node of a pass before it evicts: from-a would need room elsewhere when
    // a drains, before b's replacement is Ready, and there is none (schedulerCheck.ts).
    const first = runConsolidationPass(input({ consolidateAfterMs: 0 }));
    expect(summaries(first.decisions)).toEqual(['delete a']);
    expect(first.notes.get('b')?.join(' ')).toMatch(/would stay Pending when that decision drains/);
    const projection = projectLaterWaves(input({ consolidateAfterMs: 0 }), first, { waves: 10 });
    // the next pass comes at least 5 minutes later: a new node's minimum lifetime
    expect(projection.waves.map((w) => [w.wave, w.atMs - T0, summaries(w.decisions)])).toEqual([[2, minutes(5), ['replace b']]]);
  });

  it.each([
    ['no waves asked for', { waves: 0 }, 'wave limit'],
    ['no work allowed (carrying the plan out is work too)', { waves: 10, work: 0 }, 'work limit'],
  ] as const)('stops at its limits: %s', (_name, limits, stopped) => {
    const first = runConsolidationPass(input());
    const projection = projectLaterWaves(input(), first, limits);
    expect(projection.stoppedBecause).toBe(stopped);
    expect(projection.waves).toEqual([]);
  });

  it('a work limit cuts a projection that would go on', () => {
    // x, y and z are deleted one per pass (the budget allows one node at a time), their pods going to keep.
    const pools = [nodePool({ consolidationPolicy: 'WhenCheaper', budgets: [{ nodes: { count: 1 } }] })];
    const small = () => pod({ requests: { cpu: 100, memory: Mi } });
    const base: PassInput = {
      ...input(),
      nodePools: pools,
      cluster: cluster({
        nodes: [xlarge('keep'), node({ name: 'x' }), node({ name: 'y' }), node({ name: 'z' })].map((n) => (n.name === 'keep' ? { ...n, nodePool: undefined } : n)),
        pods: [...on('x', small()), ...on('y', small()), ...on('z', small())],
      }),
    };
    const first = runConsolidationPass(base);
    expect(first.decisions).toHaveLength(1);
    const all = projectLaterWaves(base, first, { waves: 10 });
    expect(all).toMatchObject({ stoppedBecause: 'settled', waves: [{ wave: 2 }, { wave: 3 }] });
    expect(all.work).toBeGreaterThan(0);
    // Less work allowed than the whole projection did: it stops on the way, and says why.
    expect(projectLaterWaves(base, first, { waves: 10, work: all.work - 1 }).stoppedBecause).toBe('work limit');
    const half = projectLaterWaves(base, first, { waves: 10, work: all.work / 2 });
    expect(half.stoppedBecause).toBe('work limit');
    expect(half.waves.length).toBeLessThan(2);
    expect(projectLaterWaves(base, first, { waves: 10, work: all.work })).toMatchObject({ stoppedBecause: 'settled', waves: [{ wave: 2 }, { wave: 3 }] });
    expect(projectLaterWaves(base, first, { waves: 1 })).toMatchObject({ stoppedBecause: 'wave limit', waves: [{ wave: 2 }] });
  });

  it('PLAN_WAVES by default bounds the waves and their work by the pass’s own', () => {
    const first = runConsolidationPass(input());
    expect(limitsFor('default', first)).toEqual({ waves: 20, work: 20_000 });
    expect(limitsFor(0, first)).toBeUndefined();
    expect(limitsFor(7, first)).toEqual({ waves: 7 });
  });

  it.each([
    [undefined, 'default'],
    ['', 'default'],
    ['default', 'default'],
    ['off', 0],
    ['0', 0],
    ['25', 25],
  ] as const)('PLAN_WAVES=%o is %o', (text, expected) => {
    expect(parsePlanWaves(text)).toBe(expected);
  });

  it.each(['-1', '2.5', 'ten', '101'])('PLAN_WAVES=%o is refused, naming the variable', (text) => {
    expect(() => parsePlanWaves(text)).toThrow(/PLAN_WAVES.*is not a number of waves from 0 to 100/);
  });
});

describe('carrying a plan out', () => {
  it('removes the decided nodes, places their pods and reports the nodes that received them', () => {
    const start = input();
    const first = runConsolidationPass(start);
    const pools = new Map(start.nodePools.map((p) => [p.name, p]));
    const carried = carryOutPlan({ nodePools: start.nodePools, pools, catalog: start.catalog, nowMs: T0 }, start.cluster, first.moves);
    expect(carried.cluster.nodes.map((n) => n.name)).toEqual(['b']);
    expect(carried.pending).toEqual([]);
    const moved = carried.cluster.pods.find((p) => p.name === 'from-a');
    expect(moved?.nodeName).toBe('b');
    // it comes back as a new pod: created and started when the plan is carried out
    expect([moved?.createdAt, moved?.startedAt]).toEqual([T0, T0]);
    expect([...carried.touched]).toEqual(['b']);
  });

  it('the evicted pods go to the least allocated node that takes them, as kube-scheduler places them', () => {
    // Only a's move, with c (an empty m5.xlarge) kept: c is emptier than b, so from-a goes there.
    const start = { ...input(), cluster: { ...input().cluster, nodes: [...input().cluster.nodes, xlarge('c')] } };
    const first = runConsolidationPass(start);
    const moves = first.moves.filter((m) => m.proposal.candidates.some((c) => c.node.name === 'a'));
    const pools = new Map(start.nodePools.map((p) => [p.name, p]));
    const carried = carryOutPlan({ nodePools: start.nodePools, pools, catalog: start.catalog, nowMs: T0 }, start.cluster, moves);
    expect(carried.cluster.pods.find((p) => p.name === 'from-a')?.nodeName).toBe('c');
    expect(carried.destinations).toEqual([{ 'default/from-a': 'c' }]);
  });

  it('a pod that finds no node stays Pending, and is reported', () => {
    const start = input();
    const first = runConsolidationPass(start);
    // The same plan on a cluster where b has no room left: from-a has nowhere to go.
    const full = { ...start.cluster, pods: [...start.cluster.pods, ...on('b', pod({ requests: { cpu: 2900, memory: Mi } }))] };
    const pools = new Map(start.nodePools.map((p) => [p.name, p]));
    const carried = carryOutPlan({ nodePools: start.nodePools, pools, catalog: start.catalog, nowMs: T0 }, full, first.moves);
    expect(carried.pending.map((p) => p.name)).toEqual(['from-a']);
    expect(carried.pending[0]?.phase).toBe('Pending');
    expect(carried.cluster.nodes.map((n) => n.name)).toEqual(['b']);
    // a pod with no node has no destination
    expect(carried.destinations).toEqual([{}]);
  });
});

describe('later waves during a change freeze', () => {
  // A scheduled budget of zero (Karpenter's `nodes: "0"` with a schedule and a duration) that began an
  // hour before the pass and lasts three: the pass takes nothing, and the projection waits for its end.
  const firing = Math.floor((T0 - 60 * 60_000) / 3_600_000) * 3_600_000;
  const freeze = { nodes: { count: 0 }, schedule: `0 ${new Date(firing).getUTCHours()} * * *`, durationMs: 3 * 3_600_000 };

  it.each([
    ['a one-for-one replacement pool', { consolidationPolicy: 'WhenCheaper' as const }],
    ['a pool that deletes and merges', { consolidationPolicy: 'WhenEmptyOrUnderutilized' as const }],
  ])('%s: the first wave comes when the freeze ends, and says so', (_name, pool) => {
    const frozen = input({ ...pool, budgets: [{ nodes: { percent: 100 } }, freeze] });
    const first = runConsolidationPass(frozen);
    expect(first.decisions).toEqual([]);
    const projection = projectLaterWaves(frozen, first, { waves: 5 });
    expect(projection.waves.length).toBeGreaterThan(0);
    expect(projection.waves[0]!.atMs).toBe(firing + freeze.durationMs);
    expect(projection.waves[0]!.waitedFor).toContain('allows no disruption until');
    // The same cluster without the freeze decides the same first move at once.
    const open = runConsolidationPass(input({ ...pool, budgets: [{ nodes: { percent: 100 } }] }));
    expect(summaries(projection.waves[0]!.decisions)).toEqual(summaries(open.decisions));
  });

  it('a freeze that has ended is not waited for', () => {
    const ended = input({ budgets: [{ nodes: { percent: 100 } }, { ...freeze, durationMs: 30 * 60_000 }] });
    const first = runConsolidationPass(ended);
    const projection = projectLaterWaves(ended, first, { waves: 5 });
    expect(projection.waves.every((w) => w.waitedFor === undefined)).toBe(true);
  });
});
