// The simulated world: launches, drains, recreated pods, provisioning, regret.
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../src/core/plan.ts';
import { seededRandom } from '../../src/core/replay/random.ts';
import { World } from '../../src/core/replay/world.ts';
import { cluster, daemonSet, Gi, m5Catalog, minutes, Mi, node, nodePool, on, pod, T0 } from '../builders.ts';

const settings = (overrides: Partial<ConstructorParameters<typeof World>[2]> = {}) => ({
  nodePools: [nodePool()],
  catalog: m5Catalog(),
  scoring: 'least-allocated' as const,
  launchDelayMs: minutes(2),
  random: seededRandom(1),
  ...overrides,
});

function replaceDecision(nodes: string[], instanceType = 'm5.large'): Decision {
  return {
    method: 'single-node',
    reason: 'Underutilized',
    action: 'replace',
    nodes,
    replacements: [{ instanceTypes: [instanceType], capacityType: 'on-demand', zones: ['us-east-1a'], pricePerHour: 0.096, nodePool: 'default', worstPricePerHour: 0.096 }],
    currentPricePerHour: 0.192,
    replacementPricePerHour: 0.096,
    savingsPerHour: 0.096,
    disruptionCost: 2,
    evictedPods: [],
  };
}

const deleteDecision = (nodes: string[]): Decision => ({ ...replaceDecision(nodes), action: 'delete', replacements: [], replacementPricePerHour: 0 });

describe('World', () => {
  it('launches a replacement, drains the old node only once it is Ready, and recreates the evicted pods there', () => {
    const big = node({ name: 'big', instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14 * Gi, pods: 58 } });
    const web = pod({ name: 'web-1' });
    const world = new World(cluster({ nodes: [big], pods: on('big', web) }), T0, settings());

    world.carryOut([replaceDecision(['big'])]);
    let now = world.snapshot();
    expect(now.nodes.map((n) => [n.instanceType, n.ready])).toEqual([['m5.xlarge', true], ['m5.large', false]]);
    expect(now.pods.find((p) => p.name === 'web-1')?.nodeName).toBe('big');
    expect(now.nodes[0]!.taints).toContainEqual({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' });

    world.advanceTo(T0 + minutes(1), minutes(1));
    expect(world.snapshot().nodes).toHaveLength(2); // still launching: nothing drained yet

    world.advanceTo(T0 + minutes(2), minutes(1));
    now = world.snapshot();
    expect(now.nodes.map((n) => n.instanceType)).toEqual(['m5.large']);
    const moved = now.pods.filter((p) => p.name.startsWith('web-1'));
    expect(moved).toHaveLength(1);
    expect(moved[0]!.uid).not.toBe(web.uid); // a new pod, as a ReplicaSet would create
    expect(moved[0]!.nodeName).toBe(now.nodes[0]!.name);
    expect(world.counters).toMatchObject({ podsEvicted: 1, nodesDisrupted: 1, nodesReplaced: 1, replacementsLaunched: 1 });
  });

  it('does not recreate a pod without a controller', () => {
    const world = new World(cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: on('a', pod({ name: 'bare', ownerReferences: [] })) }), T0, settings());
    world.carryOut([deleteDecision(['a'])]);
    expect(world.snapshot().pods.filter((p) => p.name.startsWith('bare'))).toEqual([]);
    expect(world.counters.podsEvicted).toBe(1);
  });

  it('launches the cheapest node that fits for pods that fit nowhere, and binds them once it is Ready', () => {
    const small = node({ name: 'small' });
    const world = new World(cluster({ nodes: [small], pods: on('small', pod({ requests: { cpu: 1800, memory: Gi } })), daemonSets: [daemonSet()] }), T0, settings());
    world.addPods([pod({ name: 'big-job', requests: { cpu: 3000, memory: 4 * Gi } })]);
    world.settle();
    const launched = world.snapshot().nodes.filter((n) => n.name !== 'small');
    expect(launched.map((n) => n.instanceType)).toEqual(['m5.xlarge']); // m5.large is too small, m5.xlarge the cheapest that fits
    expect(world.pendingCount()).toBe(1);
    expect(world.counters.nodesLaunchedForPending).toBe(1);

    world.advanceTo(T0 + minutes(2), minutes(1));
    expect(world.pendingCount()).toBe(0);
    expect(world.snapshot().pods.find((p) => p.name === 'big-job')?.nodeName).toBe(launched[0]!.name);
    // Two minutes of one pending pod; the launching node was paid for from its launch.
    expect(world.counters.pendingPodMinutes).toBeCloseTo(2, 6);
    expect(world.counters.dollars).toBeCloseTo((0.096 + 0.192) * (2 / 60), 6);
  });

  it.each([
    // A 1000m pod fits on the launching m5.large (1930m, beside old's 100m pod it replaces): it waits
    // for it, as Karpenter's scheduler places pending pods on its in-flight nodes before it creates new ones.
    { name: 'waits for the launching replacement it fits on', cpu: 1000, launchedForPending: 0 },
    // A 3000m pod does not fit on an m5.large: it gets a node of its own.
    { name: 'gets a node of its own when it fits on no launching node', cpu: 3000, launchedForPending: 1 },
  ])('a pod pending while a replacement launches $name', ({ cpu, launchedForPending }) => {
    const full = node({ name: 'full' });
    const old = node({ name: 'old', instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14 * Gi, pods: 58 } });
    const world = new World(cluster({ nodes: [full, old], pods: [...on('full', pod({ name: 'filler', requests: { cpu: 1900, memory: Gi } })), ...on('old', pod({ name: 'small', requests: { cpu: 100, memory: 100 * Mi } }))] }), T0, settings());
    world.carryOut([replaceDecision(['old'])]);
    const replacement = world.snapshot().nodes.find((n) => !n.ready)!.name;

    world.addPods([pod({ name: 'newcomer', requests: { cpu, memory: Gi } })]);
    world.settle();
    expect(world.pendingCount()).toBe(1); // no Ready node has room: full is full, old is tainted
    expect(world.counters.nodesLaunchedForPending).toBe(launchedForPending);
    expect(world.snapshot().nodes).toHaveLength(3 + launchedForPending); // full, old, its replacement

    world.advanceTo(T0 + minutes(2), minutes(1));
    const now = world.snapshot();
    expect(world.pendingCount()).toBe(0);
    const newcomerOn = now.pods.find((p) => p.name === 'newcomer')!.nodeName;
    if (launchedForPending === 0) expect(newcomerOn).toBe(replacement);
    else expect(newcomerOn).not.toBe(replacement);
  });

  it('counts the pods already waiting for a launching node against its room', () => {
    const full = node({ name: 'full' });
    const old = node({ name: 'old', instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14 * Gi, pods: 58 } });
    const world = new World(cluster({ nodes: [full, old], pods: [...on('full', pod({ name: 'filler', requests: { cpu: 1900, memory: Gi } })), ...on('old', pod({ name: 'small', requests: { cpu: 100, memory: 100 * Mi } }))] }), T0, settings());
    world.carryOut([replaceDecision(['old'])]);
    // One 1000m pod, then another a step later: the launching m5.large (1930m) holds only the first.
    world.addPods([pod({ name: 'first', requests: { cpu: 1000, memory: Gi } })]);
    world.settle();
    world.addPods([pod({ name: 'second', requests: { cpu: 1000, memory: Gi } })]);
    world.settle();
    expect(world.counters.nodesLaunchedForPending).toBe(1);
    world.advanceTo(T0 + minutes(2), minutes(1));
    expect(world.pendingCount()).toBe(0);
    const nodeOf = (name: string) => world.snapshot().pods.find((p) => p.name === name)!.nodeName;
    expect(nodeOf('first')).not.toBe(nodeOf('second'));
  });

  it.each([
    { name: 'before the replacement is Ready', restartAtS: 70 },
    { name: 'after it is Ready, within the same step', restartAtS: 100 },
  ])('a pod restarted $name does not take the room the drained pod was planned into', ({ restartAtS }) => {
    // old's 1500m pod moves to an m5.large replacement Ready at 90 s; other's 1500m pod restarts at
    // restartAtS. The drain comes when the replacement is Ready, whatever else the minute brings: the
    // moved pod lands on the replacement and the restarted one back where it was (before, a whole step's
    // launches turned Ready first, and a restart in it took the empty replacement).
    const old = node({ name: 'old', instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14 * Gi, pods: 58 } });
    const other = node({ name: 'other' });
    const moved = pod({ name: 'moved', requests: { cpu: 1500, memory: Gi } });
    const restarted = pod({ name: 'restarted', requests: { cpu: 1500, memory: Gi } });
    const world = new World(cluster({ nodes: [old, other], pods: [...on('old', moved), ...on('other', restarted)] }), T0, settings({ launchDelayMs: 90_000 }));
    world.carryOut([replaceDecision(['old'])]);
    const replacement = world.snapshot().nodes.find((n) => !n.ready)!.name;
    world.advanceTo(T0 + minutes(2), minutes(1), (w, fromMs, toMs) => {
      const at = T0 + restartAtS * 1000;
      if (at <= fromMs || at > toMs) return;
      w.catchUp(at);
      const victim = w.workloadPods().find((p) => p.name === 'restarted')!;
      w.removePods(new Set([victim.uid]));
      w.addPods([w.recreate(victim)]);
      w.bindNow();
    });
    const now = world.snapshot();
    expect(now.pods.find((p) => p.name.startsWith('moved'))!.nodeName).toBe(replacement);
    expect(now.pods.find((p) => p.name.startsWith('restarted'))!.nodeName).toBe('other');
    expect(world.counters.nodesLaunchedForPending).toBe(0);
  });

  it('counts regret when a replacement is disrupted again within 30 minutes, not after', () => {
    const world = new World(cluster({ nodes: [node({ name: 'old', instanceType: 'm5.xlarge' })], pods: on('old', pod({ requests: { cpu: 100, memory: 100 * Mi } })) }), T0, settings({ launchDelayMs: 0 }));
    world.carryOut([replaceDecision(['old'])]);
    const first = world.snapshot().nodes[0]!.name;
    world.advanceTo(T0 + minutes(10), minutes(1));
    expect(world.regretOf([first])).toBe(1);
    world.advanceTo(T0 + minutes(30), minutes(1));
    expect(world.regretOf([first])).toBe(0);
    world.carryOut([replaceDecision([first])]);
    expect(world.counters.regret).toBe(0);
    const second = world.snapshot().nodes[0]!.name;
    world.advanceTo(T0 + minutes(40), minutes(1));
    world.carryOut([deleteDecision([second])]);
    expect(world.counters.regret).toBe(1);
  });
});
