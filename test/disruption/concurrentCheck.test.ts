// A pass's plan checked the way the actuator carries it out (concurrentCheck.ts): every command at once,
// new nodes Ready in any order, evicted pods bound one at a time by a least-allocated scheduler in an
// order the plan does not choose. Each case has a twin that differs in one request and is kept.
import { describe, expect, it } from 'vitest';
import { firstAloneStranding, keepConcurrentlySafe } from '../../src/core/disruption/concurrentCheck.ts';
import { layOut } from '../../src/core/disruption/planCheck.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import { decideWithHeldBack, MAX_DECIDE_AGAIN, runConsolidationPass, type DecisionRound } from '../../src/core/disruption/pass.ts';
import type { Decision } from '../../src/core/plan.ts';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import type { MethodName } from '../../src/core/disruption/policy.ts';
import type { Catalog, Cluster, InstanceType, Node, NodePool, Pod } from '../../src/core/model/types.ts';
import { cluster, instanceType, m5Catalog, Mi, node, nodePool, on, pod, replacementProposal, T0 } from '../builders.ts';

const xlarge = { instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14162 * Mi, pods: 58 }, capacity: { cpu: 4000, memory: 16384 * Mi, pods: 58 } };
const taint = { key: 'dedicated', value: 'b', effect: 'NoSchedule' as const };
const tolerates = [{ key: 'dedicated', operator: 'Equal' as const, value: 'b', effect: 'NoSchedule' as const }];
const cpu = (millis: number) => ({ cpu: millis, memory: 128 * Mi });

function plan(nodes: Node[], pods: Pod[], pools: NodePool[], methods: MethodName[], workLimit?: number) {
  return runConsolidationPass({
    cluster: cluster({ nodes, pods }),
    nodePools: pools,
    catalog: m5Catalog(),
    nowMs: T0,
    gates: { spotToSpotConsolidation: false },
    parseDuration: durationOrNull,
    methods,
    ...(workLimit === undefined ? {} : { workLimit }),
  });
}

describe('two replacements in flight together: pods cross to the other command\'s empty new node', () => {
  /**
   * a (an m5.xlarge) holds one pod of `aPodMillis`; b (an m5.xlarge of a tainted pool) holds a 1000m and
   * a 900m pod that tolerate the taint. Single-node replaces each with an m5.large. Each move alone
   * holds; together, with both new nodes Ready, the 900m pod may be bound first and go to a's new node
   * (it is as empty as b's, and first by name): the 1000m pod then takes b's, and a's own pod is left
   * with 1030m on its node.
   */
  function twoReplacements(aPodMillis: number) {
    const nodes = [node({ name: 'a', ...xlarge }), node({ name: 'b', nodePool: 'tainted', taints: [taint], ...xlarge })];
    const pods = [
      ...on('a', pod({ name: 'a-pod', requests: cpu(aPodMillis) })),
      ...on('b', pod({ name: 'b-1000', tolerations: tolerates, requests: cpu(1000) }), pod({ name: 'b-900', tolerations: tolerates, requests: cpu(900) })),
    ];
    return plan(nodes, pods, [nodePool(), nodePool({ name: 'tainted', templateTaints: [taint] })], ['single-node']);
  }

  it.each([
    ['a 1500m pod on a strands when the 900m pod takes its new node: the second replacement is cut', 1500, [['replace', 'a']]],
    ['a 1000m pod on a still fits beside the 900m pod: both replacements are kept', 1000, [['replace', 'a'], ['replace', 'b']]],
  ] as const)('%s', (_name, aPodMillis, expected) => {
    const out = twoReplacements(aPodMillis);
    expect(out.decisions.map((d) => [d.action, d.nodes.join('+')])).toEqual(expected);
    if (expected.length === 1) {
      expect(out.notes.get('b')?.join(' ')).toMatch(/not taken: with decision 1 of this pass carried out together with the pass's other commands \(deletes first, then every new node Ready, .*\).*pod default\/a-pod would stay Pending.*looked at again next pass/);
      expect(out.disruptedBy.has('b')).toBe(false);
    }
  });
});

describe('a merge with no slack: it holds in one binding order only', () => {
  /**
   * a1 (a 1500m pod) and a2 (a 900m pod), two m5.xlarge, merge into one m5.large beside `keep`, which has
   * `keepFreeMillis` free. Bound largest first, the 1500m pod takes the new node and the 900m one keep;
   * bound smallest first, the 900m pod takes the empty new node and the 1500m one needs keep's room.
   */
  function merge(keepFreeMillis: number) {
    const nodes = [node({ name: 'keep', nodePool: undefined }), node({ name: 'a1', ...xlarge }), node({ name: 'a2', ...xlarge })];
    const pods = [
      ...on('keep', pod({ requests: cpu(1930 - keepFreeMillis) })),
      ...on('a1', pod({ name: 'big', requests: cpu(1500) })),
      ...on('a2', pod({ name: 'mid', requests: cpu(900) })),
    ];
    return plan(nodes, pods, [nodePool()], ['multi-node']);
  }

  it.each([
    ['1000m free on keep: the 1500m pod strands when bound last, so the merge is cut', 1000, []],
    ['1600m free on keep: every order binds both pods, so the merge is kept', 1600, [['replace', 'a1+a2']]],
  ] as const)('%s', (_name, keepFreeMillis, expected) => {
    const out = merge(keepFreeMillis);
    expect(out.decisions.map((d) => [d.action, d.nodes.join('+')])).toEqual(expected);
    if (expected.length === 0) {
      // The search's own check binds the moved pods in several orders too, so the merge is refused
      // before it is ever part of a plan.
      expect(out.notes.get('a1')?.join(' ')).toMatch(/not taken: placed the way kube-scheduler scores nodes.*pod default\/big would stay Pending/);
    }
  });
});

describe('two deletes evicted together: small pods spread before the large one comes', () => {
  const large = { instanceType: 'm5.large', allocatable: { cpu: 1930, memory: 6903 * Mi, pods: 29 }, capacity: { cpu: 2000, memory: 8192 * Mi, pods: 29 } };
  const pinned = { 'karpenter.sh/do-not-disrupt': 'true' };
  /**
   * keep2 (an m5.xlarge) has 1000m free, keep1 `keep1FreeMillis`. d1 (an m5.large) holds a 1000m pod, d2
   * two 500m pods. Each delete alone holds in every order. Together, both evict at once: bound smallest
   * first, the 500m pods spread over the keep nodes (least allocated first), and with 1000m free on keep1
   * the 1000m pod then fits on neither; with 1500m free it still does.
   */
  function twoDeletes(keep1FreeMillis: number) {
    const nodes = [node({ name: 'keep1', ...xlarge }), node({ name: 'keep2', ...xlarge }), node({ name: 'd1', ...large }), node({ name: 'd2', ...large })];
    const pods = [
      ...on('keep1', pod({ name: 'k1', requests: cpu(3920 - keep1FreeMillis), annotations: pinned })),
      ...on('keep2', pod({ name: 'k2', requests: cpu(2920), annotations: pinned })),
      ...on('d1', pod({ name: 'd1-1000', requests: cpu(1000) })),
      ...on('d2', pod({ name: 'd2-a', requests: cpu(500) }), pod({ name: 'd2-b', requests: cpu(500) })),
    ];
    return plan(nodes, pods, [nodePool()], ['single-node']);
  }

  it.each([
    ['1000m free on each keep node: in some order the 1000m pod finds no room, the second delete is cut', 1000, 1],
    ['1500m free on keep1: every order leaves room for it, both deletes are kept', 1500, 2],
  ] as const)('%s', (_name, keep1FreeMillis, kept) => {
    const out = twoDeletes(keep1FreeMillis);
    expect(out.decisions.filter((d) => d.action === 'delete')).toHaveLength(kept);
    if (kept === 2) return;
    const cutNode = ['d1', 'd2'].find((n) => !out.disruptedBy.has(n))!;
    expect(out.notes.get(cutNode)?.join(' ')).toMatch(/carried out together with the pass's other commands.*would stay Pending/);
  });
});

/** A round of deciding (decideWithHeldBack's unit) with these decisions, by node, and these cut nodes. */
function fakeRound(decisions: readonly Partial<Decision>[], cut: Record<string, string> = {}): DecisionRound {
  return {
    decisions: decisions as unknown as Decision[],
    verdicts: [],
    notes: new Map(),
    disruptedBy: new Map(),
    evaluated: new Set(),
    examined: new Set(),
    worthMoving: new Set(),
    rejectedMoves: [],
    moves: [],
    work: { simulations: 1, podsSimulated: 10, podsIndexed: 100 },
    cut: new Map(Object.entries(cut)),
  };
}

describe('a pass whose decisions are cut decides the rest again (decideWithHeldBack)', () => {
  const outcome = (decisions: string[], cut: Record<string, string> = {}): DecisionRound => fakeRound(decisions.map((name) => ({ nodes: [name] })), cut);
  /**
   * A pass in which the first `budget` of `order` not held back are decided, and `cuts` would strand a
   * pod (the check then cuts it and every decision after it).
   */
  const fakePass = (order: string[], cuts: Set<string>, budget: number) => {
    const rounds: string[][] = [];
    const given: (string[] | undefined)[] = [];
    const decide = (held: ReadonlyMap<string, string>, previous?: DecisionRound) => {
      rounds.push([...held.keys()]);
      given.push(previous?.decisions.map((d) => d.nodes[0]!));
      const open = order.filter((n) => !held.has(n)).slice(0, budget);
      // As keepConcurrentlySafe: the first decision that strands a pod and everything after it go.
      const firstCut = open.findIndex((n) => cuts.has(n));
      const kept = firstCut < 0 ? open : open.slice(0, firstCut);
      return outcome(kept, Object.fromEntries(open.slice(kept.length).map((n) => [n, cuts.has(n) ? `${n} strands a pod` : `with ${n}`])));
    };
    return { decide, rounds, given };
  };

  it.each([
    ['its only decision is cut: decided again without it, and the next move is taken', ['x', 'y'], ['x'], 1, ['y'], [[], ['x']]],
    ['a later decision is cut: the first is kept, and the budget it left goes to the next move', ['w', 'x', 'y'], ['x'], 2, ['w', 'y'], [[], ['x']]],
    ['the first of two is cut (with the second): both held back, the next two taken', ['x', 'y', 'z', 'v'], ['x'], 2, ['z', 'v'], [[], ['x', 'y']]],
    ['every move is cut: at most two more rounds, then nothing', ['a', 'b', 'c', 'd'], ['a', 'b', 'c', 'd'], 1, [], [[], ['a'], ['a', 'b']]],
    ['nothing cut: one round', ['a'], [], 1, ['a'], [[]]],
  ] as const)('%s', (_name, order, cuts, budget, expected, heldPerRound) => {
    const pass = fakePass([...order], new Set(cuts), budget);
    const out = decideWithHeldBack(pass.decide);
    expect(out.decisions.map((d) => d.nodes[0])).toEqual(expected);
    expect(pass.rounds).toEqual(heldPerRound);
    expect(pass.rounds.length).toBeLessThanOrEqual(1 + MAX_DECIDE_AGAIN);
    expect(out.work.simulations).toBe(pass.rounds.length);
    expect(out).not.toHaveProperty('cut');
    // Each round after the first is given the one before it (whose kept moves it takes again).
    expect(pass.given[0]).toBeUndefined();
    for (let k = 1; k < pass.rounds.length; k++) expect(pass.given[k]).toBeDefined();
  });

  it.each([
    // Round 1 keeps w ($1/h) and cuts x; round 2, x held back, decides y alone and cuts it too.
    ['a later round that keeps nothing: the round that kept w is the pass', 0, ['w']],
    // The same, round 2 keeping y ($2/h): the later, larger plan is the pass.
    ['a later round that saves more: its plan is the pass', 2, ['y']],
    ['a later round that saves as much: the later one, as before', 1, ['y']],
  ] as const)('%s', (_name, ySavings, expected) => {
    const withSavings = (names: string[], savings: number[], cut: Record<string, string>): DecisionRound => {
      const round = outcome(names, cut);
      return { ...round, decisions: round.decisions.map((d, i) => ({ ...d, savingsPerHour: savings[i] }) as Decision) };
    };
    const decide = (held: ReadonlyMap<string, string>): DecisionRound => {
      if (held.size === 0) return withSavings(['w'], [1], { x: 'x strands a pod' });
      if (ySavings === 0) return withSavings([], [], { y: 'y strands a pod' });
      return withSavings(['y'], [ySavings], {});
    };
    expect(decideWithHeldBack(decide).decisions.map((d) => d.nodes[0])).toEqual(expected);
  });
});

describe('a pass that keeps one move while moves that launch nodes were cut decides them again with roomy new nodes', () => {
  type Roomy = Parameters<Parameters<typeof decideWithHeldBack>[0]>[2];
  const why = (n: string) => `${n} strands a pod`;
  const round = (names: string[], savings: number, cut: string[] = [], launching = cut): DecisionRound => ({
    ...fakeRound(names.map((name) => ({ nodes: [name], savingsPerHour: savings / names.length })), Object.fromEntries(cut.map((n) => [n, why(n)]))),
    ...(launching.length > 0 ? { cutLaunching: { nodes: new Map(launching.map((n) => [n, why(n)])), cpuMillis: 1500, memoryBytes: 512 * Mi } } : {}),
  });
  /** Round k (from 0) answers `rounds[k]`; records what each round was given. */
  const scripted = (rounds: DecisionRound[]) => {
    const seen: { held: string[]; roomy?: string[]; cpuMillis?: number }[] = [];
    const decide = (held: ReadonlyMap<string, string>, _previous?: DecisionRound, roomy?: Roomy) => {
      seen.push({ held: [...held.keys()], ...(roomy ? { roomy: [...roomy.nodes.keys()], cpuMillis: roomy.cpuMillis } : {}) });
      return rounds[seen.length - 1]!;
    };
    return { decide, seen };
  };

  it.each([
    [
      'x and y (replacements) cut, w kept: decided again with roomy new nodes, not held back; that round keeps all three and saves more',
      [round(['w'], 1, ['x', 'y']), round(['w', 'x', 'y'], 2)],
      [{ held: [] }, { held: [], roomy: ['x', 'y'], cpuMillis: 1500 }],
      ['w', 'x', 'y'],
    ],
    [
      'the roomy round saves more with as few moves: a packed move traded for a roomier one is not the pass',
      [round(['w'], 1, ['x']), round(['z'], 2)],
      [{ held: [] }, { held: [], roomy: ['x'], cpuMillis: 1500 }],
      ['w'],
    ],
    [
      'a move cut again in the roomy round is then held back (the round stays roomy)',
      [round(['w'], 1, ['x', 'y']), round(['w', 'x'], 2, ['y']), round(['w', 'x', 'z'], 3)],
      [{ held: [] }, { held: [], roomy: ['x', 'y'], cpuMillis: 1500 }, { held: ['y'], roomy: ['x', 'y'], cpuMillis: 1500 }],
      ['w', 'x', 'z'],
    ],
    [
      'a cut delete is held back as before, beside the roomy retry of a cut replacement',
      [round(['w'], 1, ['d', 'x'], ['x']), round(['w', 'x'], 2)],
      [{ held: [] }, { held: ['d'], roomy: ['x'], cpuMillis: 1500 }],
      ['w', 'x'],
    ],
    [
      'two moves kept: no roomy round, the cut replacement is held back as before',
      [round(['v', 'w'], 2, ['x']), round(['v', 'w', 'z'], 3)],
      [{ held: [] }, { held: ['x'] }],
      ['v', 'w', 'z'],
    ],
  ] as const)('%s', (_name, rounds, given, expected) => {
    const pass = scripted([...rounds]);
    const out = decideWithHeldBack(pass.decide);
    expect(pass.seen).toEqual(given);
    expect(out.decisions.map((d) => d.nodes[0])).toEqual(expected);
    expect(out).not.toHaveProperty('cutLaunching');
  });
});

describe('a cut decision does not leave the rest of the budget unused', () => {
  const large = { instanceType: 'm5.large', allocatable: { cpu: 1930, memory: 6903 * Mi, pods: 29 }, capacity: { cpu: 2000, memory: 8192 * Mi, pods: 29 } };
  const pinned = { 'karpenter.sh/do-not-disrupt': 'true' };
  const dedicated = { key: 'dedicated', value: 'x', effect: 'NoSchedule' as const };
  const toleratesDedicated = [{ key: 'dedicated', operator: 'Equal' as const, value: 'x', effect: 'NoSchedule' as const }];
  /**
   * As above, d1 and d2 cannot be deleted together; d3's two pods may only run on keep3 (a dedicated
   * node). With a budget of two nodes the pass first takes d1 and d2; the concurrent check cuts d2, and
   * the pass decides again without it: d1 and d3.
   */
  it('the pass decides again without the cut decision and takes d3 instead of d2', () => {
    const nodes = [
      node({ name: 'keep1', ...xlarge }),
      node({ name: 'keep2', ...xlarge }),
      node({ name: 'keep3', ...xlarge, labels: { role: 'x' }, taints: [dedicated] }),
      node({ name: 'd1', ...large }),
      node({ name: 'd2', ...large }),
      node({ name: 'd3', ...large, labels: { role: 'x' }, taints: [dedicated] }),
    ];
    const onlyKeep3 = { nodeSelector: { role: 'x' }, tolerations: toleratesDedicated };
    const pods = [
      ...on('keep1', pod({ name: 'k1', requests: cpu(2920), annotations: pinned })),
      ...on('keep2', pod({ name: 'k2', requests: cpu(2920), annotations: pinned })),
      ...on('keep3', pod({ name: 'k3', requests: cpu(1000), annotations: pinned, ...onlyKeep3 })),
      ...on('d1', pod({ name: 'd1-1000', requests: cpu(1000) })),
      ...on('d2', pod({ name: 'd2-a', requests: cpu(500) }), pod({ name: 'd2-b', requests: cpu(500) })),
      ...on('d3', pod({ name: 'd3-a', requests: cpu(300), ...onlyKeep3 }), pod({ name: 'd3-b', requests: cpu(300), ...onlyKeep3 })),
    ];
    const out = plan(nodes, pods, [nodePool({ budgets: [{ nodes: { count: 2 } }] })], ['single-node']);
    expect(out.decisions.map((d) => d.nodes.join('+'))).toEqual(['d1', 'd3']);
    expect(out.notes.get('d2')?.join(' ')).toMatch(/not taken: with decision 1 of this pass carried out together with the pass's other commands.*would stay Pending.*looked at again next pass/);
    expect(out.disruptedBy.has('d2')).toBe(false);
  });
});

/** The pass-level check of a plan of one replacement of `c` by a node of `type` (as decision 1). */
function checkLoneReplacement(start: Cluster, c: Node, type: InstanceType, catalog: Catalog) {
  const pool = nodePool();
  const proposal = replacementProposal(c, start.pods.filter((p) => p.nodeName === c.name), type, pool, 0.4);
  return keepConcurrentlySafe({ nodePools: [pool], pools: new Map([[pool.name, pool]]), catalog, nowMs: T0 }, start, [{ proposal, names: ['replacement-1'] }]);
}

describe('a replacement whose pods overflow its new node, a largest pod bound last', () => {
  // c's nine pods (600m twice, 400m, 250m twice, 100m, 50m three times: 2,350m) are replaced by `n`
  // (`newMillis`) beside two kept nodes with 400m and 700m free at 90% and 82% allocated. While `n` is the
  // least allocated node it draws every pod; bound largest first with one 600m pod held back to the
  // end, the small ones then take the holes and the last 600m pod finds 236m, 300m and 400m. Queue order,
  // smallest first, largest first and the shuffles all place every pod; with a larger `n` all orders do.
  function replaceC(newMillis: number) {
    const catalog: Catalog = {
      region: 'us-east-1',
      instanceTypes: [instanceType('e4', { cpu: 4000, memory: 16384 * Mi, pods: 58 }, 0.2), instanceType('n', { cpu: newMillis, memory: 16384 * Mi, pods: 58 }, 0.1), instanceType('big', { cpu: 8000, memory: 32768 * Mi, pods: 58 }, 0.4)],
    };
    const kept = (name: string) => node({ name, instanceType: 'e4', allocatable: { cpu: 4000, memory: 16384 * Mi, pods: 58 }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
    const c = node({ name: 'c', instanceType: 'big', allocatable: { cpu: 8000, memory: 32768 * Mi, pods: 58 } });
    const moved = [600, 600, 400, 250, 250, 100, 50, 50, 50].map((millis, i) => pod({ name: `p${i}-${millis}`, requests: cpu(millis) }));
    const pods = [...on('e1', pod({ requests: cpu(3600) })), ...on('e2', pod({ requests: cpu(3300) })), ...on('c', ...moved)];
    return checkLoneReplacement(cluster({ nodes: [kept('e1'), kept('e2'), c], pods }), c, catalog.instanceTypes.find((t) => t.name === 'n')!, catalog);
  }

  it.each([
    ['a 1836m new node: the replacement is cut (largest first, one largest pod last)', 1836, 0],
    ['a 2400m new node: every order binds every pod, the replacement is kept', 2400, 1],
  ] as const)('%s', (_name, newMillis, kept) => {
    const verdict = replaceC(newMillis);
    expect(verdict.kept).toBe(kept);
    if (kept === 0) expect(verdict.cut.get(0)).toMatch(/largest first with one largest pod last.*pod default\/p\d-600 would stay Pending/);
  });
});

describe('a replacement whose pods overflow its new node, the pod asking the most memory bound last', () => {
  // The moved pods (5,248Mi; the largest in cpu, 400m, asks 512Mi, another 2Gi) replace c by `n`
  // (`newMi`) beside kept nodes with 1,024Mi and 1,536Mi free. Holding the 2Gi pod back to the end
  // strands it; with a larger `n` every order binds every pod.
  function replaceC(newMi: number) {
    const newType = instanceType('n', { cpu: 16000, memory: newMi * Mi, pods: 58 }, 0.1);
    const kept = (name: string, freeMi: number) => ({
      node: node({ name, allocatable: { cpu: 16000, memory: 16384 * Mi, pods: 58 }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
      pods: on(name, pod({ requests: { cpu: 100, memory: (16384 - freeMi) * Mi } })),
    });
    const [e1, e2] = [kept('e1', 1024), kept('e2', 1536)];
    const c = node({ name: 'c', allocatable: { cpu: 16000, memory: 16384 * Mi, pods: 58 } });
    const moved = on('c', ...([[100, 128], [100, 2048], [400, 512], [50, 1024], [250, 256], [250, 1024], [50, 256]] as const).map(([millis, memoryMi], i) => pod({ name: `p${i}-${memoryMi}Mi`, requests: { cpu: millis, memory: memoryMi * Mi } })));
    return checkLoneReplacement(cluster({ nodes: [e1!.node, e2!.node, c], pods: [...e1!.pods, ...e2!.pods, ...moved] }), c, newType, { region: 'us-east-1', instanceTypes: [newType] });
  }

  it.each([
    ['a 3,933Mi new node: the replacement is cut (the pod asking the most memory last)', 3933, 0],
    ['a 6,500Mi new node: every order binds every pod, the replacement is kept', 6500, 1],
  ] as const)('%s', (_name, newMi, kept) => {
    const verdict = replaceC(newMi);
    expect(verdict.kept).toBe(kept);
    if (kept === 0) expect(verdict.cut.get(0)).toMatch(/another pod last \(held-back order 2: the pod asking the most memory.*pod default\/p1-2048Mi would stay Pending/);
  });
});

describe('a projected wave stops deciding once the plan checked together is cut', () => {
  const large = { instanceType: 'm5.large', allocatable: { cpu: 1930, memory: 6903 * Mi, pods: 29 }, capacity: { cpu: 2000, memory: 8192 * Mi, pods: 29 } };
  const pinned = { 'karpenter.sh/do-not-disrupt': 'true' };
  /**
   * The two deletes above (d1, d2: the second is cut when keep1 has 1000m free, kept with 1500m), and e,
   * which neither single-node nor the m-to-n split can consolidate (two 1800m pods, prices linear), and
   * which single-node weighs after d2. A projected wave (a work limit) checks the plan together at its
   * 2nd, 4th, 8th... decision: the check at d2 cuts it, and the wave decides
   * nothing more, so e is never weighed (by single-node or the split); a real pass (no limit) goes on,
   * as does a wave whose plan holds.
   */
  function pass(keep1FreeMillis: number, workLimit: number | undefined) {
    const nodes = [node({ name: 'keep1', ...xlarge }), node({ name: 'keep2', ...xlarge }), node({ name: 'd1', ...large }), node({ name: 'd2', ...large }), node({ name: 'e', ...xlarge })];
    const pods = [
      ...on('keep1', pod({ name: 'k1', requests: cpu(3920 - keep1FreeMillis), annotations: pinned })),
      ...on('keep2', pod({ name: 'k2', requests: cpu(2920), annotations: pinned })),
      ...on('d1', pod({ name: 'd1-1000', requests: cpu(1000) })),
      ...on('d2', pod({ name: 'd2-a', requests: cpu(500) }), pod({ name: 'd2-b', requests: cpu(500) })),
      ...on('e', pod({ name: 'e-a', requests: cpu(1800) }), pod({ name: 'e-b', requests: cpu(1800) })),
    ];
    return plan(nodes, pods, [nodePool()], ['single-node', 'm-to-n'], workLimit);
  }
  const splitTried = (out: ReturnType<typeof pass>) => (out.notes.get('e') ?? []).some((n) => n.startsWith('split into two nodes'));

  it.each([
    ['a wave whose second delete is cut decides nothing more', 1000, 1e12, ['d1'], false],
    ['a wave whose plan holds goes on to e and the split', 1500, 1e12, ['d1', 'd2'], true],
    ['a real pass with the same cut goes on to e and the split', 1000, undefined, ['d1'], true],
  ] as const)('%s', (_name, keep1FreeMillis, workLimit, kept, goesOn) => {
    const out = pass(keep1FreeMillis, workLimit);
    expect(out.decisions.map((d) => d.nodes.join('+'))).toEqual(kept);
    expect(out.examined.has('e')).toBe(goesOn);
    expect(splitTried(out)).toBe(goesOn);
  });
});

describe('a plan checked as it is decided is never cut below the prefix found safe before', () => {
  /**
   * Three deletes: d1 (a 1000m pod), d2 (100m) and d3 (400m), onto k1 (1000m free, 75% allocated) and
   * k2 (500m free, 50%). Any two bind in every order; all three do not: bound largest first with d1's pod
   * held back to the end, d3's pod takes k2, d2's then goes to the emptier k1, and d1's finds 900m. The
   * stranded pod is the first decision's, so a check that knows nothing more keeps d1 alone; a projected
   * wave, which checked d1 and d2 together at its second decision, keeps both.
   */
  function deletes(workLimit: number | undefined) {
    const sized = (name: string, cpuMillis: number, pinned = false) =>
      node({ name, allocatable: { cpu: cpuMillis, memory: 14162 * Mi, pods: 58 }, capacity: { cpu: cpuMillis, memory: 16384 * Mi, pods: 58 }, annotations: pinned ? { 'karpenter.sh/do-not-disrupt': 'true' } : {} });
    const nodes = [sized('k1', 4000, true), sized('k2', 1000, true), sized('d1', 1000), sized('d2', 100), sized('d3', 400)];
    const pods = [
      ...on('k1', pod({ name: 'k1-used', requests: cpu(3000) })),
      ...on('k2', pod({ name: 'k2-used', requests: cpu(500) })),
      ...on('d1', pod({ name: 'd1-1000', requests: cpu(1000) })),
      ...on('d2', pod({ name: 'd2-100', requests: cpu(100) })),
      ...on('d3', pod({ name: 'd3-400', requests: cpu(400) })),
    ];
    return plan(nodes, pods, [nodePool()], ['single-node'], workLimit);
  }

  it.each([
    ['a projected wave keeps the two deletes it checked together at its second decision', 1e12, ['d1', 'd2']],
    ['a real pass, checking once at its end, keeps the first delete alone', undefined, ['d1']],
  ] as const)('%s', (_name, workLimit, kept) => {
    const out = deletes(workLimit);
    expect(out.decisions.map((d) => d.nodes.join('+'))).toEqual(kept);
    expect(out.notes.get('d3')?.join(' ')).toMatch(/with decision 1 of this pass carried out together.*held back to the end.*pod default\/d1-1000 would stay Pending/);
  });
});

describe("a replacement's command carried out first, alone, before any other new node is Ready", () => {
  // b's nine pods (2,350m) are replaced by `n` (`newMillis`) beside two kept nodes with 400m and 700m
  // free; a's pod by a 4000m node. In decision order a's new node is Ready first and takes what
  // overflows b's; when b's command runs first, alone, its pods have only `n` and the kept nodes' holes,
  // and bound largest first with one 600m pod held back the last one finds no room.
  function replaceBoth(newMillis: number) {
    const catalog: Catalog = {
      region: 'us-east-1',
      instanceTypes: [
        instanceType('e4', { cpu: 4000, memory: 16384 * Mi, pods: 58 }, 0.2),
        instanceType('n', { cpu: newMillis, memory: 16384 * Mi, pods: 58 }, 0.1),
        instanceType('big', { cpu: 8000, memory: 32768 * Mi, pods: 58 }, 0.4),
      ],
    };
    const pool = nodePool();
    const kept = (name: string) => node({ name, instanceType: 'e4', allocatable: { cpu: 4000, memory: 16384 * Mi, pods: 58 }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
    const a = node({ name: 'a', instanceType: 'big', allocatable: { cpu: 8000, memory: 32768 * Mi, pods: 58 } });
    const b = node({ name: 'b', instanceType: 'big', allocatable: { cpu: 8000, memory: 32768 * Mi, pods: 58 } });
    const moved = [600, 600, 400, 250, 250, 100, 50, 50, 50].map((millis, i) => pod({ name: `b${i}-${millis}`, requests: cpu(millis) }));
    const aPods = on('a', pod({ name: 'a-100', requests: cpu(100) }));
    const start = cluster({ nodes: [kept('e1'), kept('e2'), a, b], pods: [...on('e1', pod({ requests: cpu(3600) })), ...on('e2', pod({ requests: cpu(3300) })), ...aPods, ...on('b', ...moved)] });
    const type = (name: string) => catalog.instanceTypes.find((t) => t.name === name)!;
    const moves = [
      { proposal: replacementProposal(a, aPods, type('e4'), pool, 0.4), names: ['replacement-a'] },
      { proposal: replacementProposal(b, start.pods.filter((p) => p.nodeName === 'b'), type('n'), pool, 0.4), names: ['replacement-b'] },
    ];
    const ctx = { nodePools: [pool], pools: new Map([[pool.name, pool]]), catalog, nowMs: T0 };
    const laidOut = layOut(ctx, start, moves);
    const alone = firstAloneStranding(laidOut, createSimulator({ cluster: laidOut.cluster, nodePools: [pool], catalog }));
    return { verdict: keepConcurrentlySafe(ctx, start, moves), alone };
  }

  it.each([
    ["a 1836m new node for b: b's replacement is cut", 1836, 1],
    ['a 2400m new node for b: every order binds every pod, both are kept', 2400, 2],
  ] as const)('%s', (_name, newMillis, kept) => {
    const { verdict, alone } = replaceBoth(newMillis);
    expect(verdict.kept).toBe(kept);
    if (kept === 1) {
      // (The first order that strands one of b's pods names it: a whole-point shuffle strands a 400m one.)
      expect(verdict.cut.get(1)).toMatch(/pod default\/b\d-\d+ would stay Pending/);
      // b's command alone first strands its held-back 600m pod (some shuffles of the plan do too).
      expect(alone?.index).toBe(1);
      expect(alone?.reason).toMatch(/decision 2's new nodes Ready before any other, its pods largest first, held-back order 1.*pod default\/b\d-600 would stay Pending/);
    } else {
      expect(alone).toBeUndefined();
    }
  });
});

// The m5 catalog's context for plans built by hand below, an m5.2xlarge, and a single-node delete of a node.
const m5Pool = nodePool();
const m5Context = { nodePools: [m5Pool], pools: new Map([[m5Pool.name, m5Pool]]), catalog: m5Catalog(), nowMs: T0 };
const twoXlarge = (name: string) => node({ name, instanceType: 'm5.2xlarge', allocatable: { cpu: 7910, memory: 29317 * Mi, pods: 58 } });
const m5Type = (name: string) => m5Context.catalog.instanceTypes.find((t) => t.name === name)!;
const plannedDelete = (n: Node, pods: readonly Pod[]) => ({
  proposal: { method: 'single-node' as const, reason: 'Underutilized' as const, candidates: [{ node: n, pool: m5Pool, pricePerHour: 0.192, pods, disruptionCost: 1, methods: new Set(['single-node'] as const) }], replacements: [], savingsPerHour: 0.192 },
  names: [],
});

describe('a plan of deletes bound in whole points (kube-scheduler picks among tied nodes at random)', () => {
  // k0 and k1 (m5.2xlarge) stay. The 700m pod of v1 fits k0 exactly or k1 (1150m free); the 1000m pod of
  // v2 fits k1 only. In exact shares the 700m pod always goes to k0 (its free memory outweighs); in whole
  // points k0 and k1 tie at 29, and when the 700m pod lands on k1 the 1000m pod has nowhere to go.
  // Each delete passes its own check (alone, either pod finds a node); only the plan binds both.
  /**
   * The two deletes (v1's 700m pod, v2's 1000m pod) with k1 using `k1UsedMillis`; `withReplacement`: after
   * a replacement of w, an m5.2xlarge whose 3000m pod only its new node (an m5.2xlarge: the deletes' pods
   * fit there too, when they come after it is Ready) takes.
   */
  function tiedPlan(k1UsedMillis: number, withReplacement = false) {
    const [k0, k1, v1, v2, w] = [twoXlarge('k0'), twoXlarge('k1'), node({ name: 'v1', ...xlarge }), node({ name: 'v2', ...xlarge }), twoXlarge('w')];
    const onV1 = on('v1', pod({ name: 'small', requests: { cpu: 700, memory: 2048 * Mi } }));
    const onV2 = on('v2', pod({ name: 'large', requests: { cpu: 1000, memory: 2048 * Mi } }));
    const onW = withReplacement ? on('w', pod({ name: 'w-3000', requests: { cpu: 3000, memory: 2048 * Mi } })) : [];
    const start = cluster({
      nodes: [k0, k1, v1, v2, ...(withReplacement ? [w] : [])],
      pods: [...on('k0', pod({ requests: { cpu: 7210, memory: 9781 * Mi } })), ...on('k1', pod({ requests: { cpu: k1UsedMillis, memory: 11574 * Mi } })), ...onV1, ...onV2, ...onW],
    });
    const replacement = withReplacement ? [{ proposal: replacementProposal(w, onW, m5Type('m5.2xlarge'), m5Pool, 0.384), names: ['replacement-w'] }] : [];
    return keepConcurrentlySafe(m5Context, start, [...replacement, plannedDelete(v1, onV1), plannedDelete(v2, onV2)]);
  }

  it.each([
    ['k1 with 1150m free: the 700m pod may take the 1000m pod\'s room, the second delete is cut', 6760, 1],
    ['k1 with 1750m free: room for both pods there, both deletes are kept', 6160, 2],
  ] as const)('%s', (_name, k1Used, kept) => {
    const verdict = tiedPlan(k1Used);
    expect(verdict.kept).toBe(kept);
    if (kept === 1) expect(verdict.cut.get(1)).toMatch(/deletes only, pods in a shuffled order \(seed \d+, scored in whole points\).*pod default\/large would stay Pending/);
  });

  it.each([
    ['k1 with 1150m free: a delete is cut', 6760, 2],
    ['k1 with 1750m free: all three are kept', 6160, 3],
  ] as const)('beside a replacement, the shuffles of a plan that launches nodes are scored in whole points too: %s', (_name, k1Used, kept) => {
    const verdict = tiedPlan(k1Used, true);
    expect(verdict.kept).toBe(kept);
    if (kept === 2) expect(verdict.cut.get(2)).toMatch(/shuffled order \(seed \d+, scored in whole points\).*pod default\/large would stay Pending/);
  });
});

describe("a delete whose pods come after the new nodes are Ready (its drain outlasting the launches)", () => {
  /**
   * Kept m5.xlarge nodes using `keptUsed` millicores each, a delete of d (its pods `dMillis`) and a
   * replacement of w (an m5.2xlarge, its pods `wMillis`) by an m5.large, the replacement decided first.
   * Pods are named `d<i>-<millis>` and `w<i>-<millis>`.
   */
  function deleteBesideReplacement(keptUsed: readonly number[], dMillis: readonly number[], wMillis: readonly number[]) {
    const named = (prefix: string, millis: readonly number[]) => millis.map((m, i) => pod({ name: `${prefix}${i}-${m}`, requests: { cpu: m, memory: 512 * Mi } }));
    const kept = keptUsed.map((_, i) => node({ name: `k${i}`, ...xlarge }));
    const [d, w] = [node({ name: 'd', ...xlarge }), twoXlarge('w')];
    const onD = on('d', ...named('d', dMillis));
    const onW = on('w', ...named('w', wMillis));
    const fills = keptUsed.flatMap((used, i) => on(`k${i}`, pod({ requests: { cpu: used, memory: 4096 * Mi } })));
    const start = cluster({ nodes: [...kept, d, w], pods: [...fills, ...onD, ...onW] });
    return keepConcurrentlySafe(m5Context, start, [{ proposal: replacementProposal(w, onW, m5Type('m5.large'), m5Pool, 0.384), names: ['replacement-w'] }, plannedDelete(d, onD)]);
  }

  // k keeps 900m free, the hole d's 700m pod is planned into; w's 600m pod and a larger one go onto the
  // m5.large (1930m). Bound before the new node is Ready, d's pod takes the hole; bound after (a disruption
  // budget lets d's pods go one at a time), it goes to the emptier new node, and w's larger pod may find
  // neither the new node nor the hole big enough.
  it.each([
    ["a 1000m pod on w: d's pod on the new node leaves it 630m, the hole 900m; the delete is cut", 1000, 1],
    ['a 600m pod on w: the new node still holds all three, both are kept', 600, 2],
  ] as const)('%s', (_name, wLargeMillis, kept) => {
    const verdict = deleteBesideReplacement([3020], [700], [600, wLargeMillis]);
    expect(verdict.kept).toBe(kept);
    if (kept === 1) expect(verdict.cut.get(1)).toMatch(/every new node Ready before the deletes' pods are bound.*pod default\/w1-1000 would stay Pending/);
  });

  // Two kept nodes with 600m free each; d's 400m pod; w's 700m, 100m and `lastMillis` pods. With d's pod
  // on the new node, the 100m pod bound before the two others leaves the last no room: few orders do
  // that, and the first shuffles of this kind miss it (more are bound when the pass moves few pods).
  it.each([
    ['an 800m last pod: only some orders strand it, and a later shuffle finds one; the delete is cut', 800, 1],
    ['a 700m last pod: the new node holds all four, both are kept', 700, 2],
  ] as const)('%s', (_name, lastMillis, kept) => {
    const verdict = deleteBesideReplacement([3320, 3320], [400], [700, 100, lastMillis]);
    expect(verdict.kept).toBe(kept);
    if (kept === 1) expect(verdict.cut.get(1)).toMatch(/every new node Ready before the deletes' pods are bound, every pod in a shuffled order \(seed 20[2-9]/);
  });
});

