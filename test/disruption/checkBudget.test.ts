// A pass checks a bounded number of moves that launch nodes against kube-scheduler's placement
// (MAX_REBUILT_CHECKS_PER_PASS): once they are used up, single-node looks only for deletes, the one
// kind of move it may still take, the m-to-n repack (whose moves all launch nodes) does not run, and
// the rest is left unweighed for the next pass. A pass that has taken nothing checks on (up to
// MAX_REBUILT_CHECKS_BEFORE_A_DECISION), or it would check the same refused moves first every pass.
import { describe, expect, it } from 'vitest';
import { MAX_REBUILT_CHECKS_BEFORE_A_DECISION, MAX_REBUILT_CHECKS_PER_PASS, runConsolidationPass } from '../../src/core/disruption/pass.ts';
import type { MethodName } from '../../src/core/disruption/policy.ts';
import { goDurationOrNull } from '../../src/core/input/duration.ts';
import { cluster, Gi, m5Catalog, Mi, node, nodePool, on, pod, T0 } from '../builders.ts';

const small = { cpu: 1000, memory: 2 * Gi, pods: 20 };
const xlarge = { instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14162 * Mi, pods: 58 } };

describe('once the checks of moves that launch nodes are used up', () => {
  // n00..n27: m5.xlarge nodes, each with a taint only its own 1500m pod tolerates, so each pod can move
  // only to a new node: each node is replaced by an m5.large. w and z: untainted, with 1000m of room,
  // one small pod each (last in the candidates' order, by name): w's pod fits on z.
  const count = MAX_REBUILT_CHECKS_PER_PASS + 4;
  const names = Array.from({ length: count }, (_, i) => `n${String(i).padStart(2, '0')}`);
  const tainted = names.map((name) => node({ name, ...xlarge, taints: [{ key: 'owner', value: name, effect: 'NoSchedule' }] }));
  const pods = names.flatMap((name) => on(name, pod({ name: `p-${name}`, requests: { cpu: 1500, memory: Gi }, tolerations: [{ key: 'owner', operator: 'Equal', value: name, effect: 'NoSchedule' }] })));
  const pass = (methods: MethodName[]) => runConsolidationPass({
    cluster: cluster({
      nodes: [...tainted, node({ name: 'w', allocatable: small }), node({ name: 'z', allocatable: small })],
      pods: [...pods, ...on('w', pod({ name: 'p-w', requests: { cpu: 100, memory: 128 * Mi } })), ...on('z', pod({ name: 'p-z', requests: { cpu: 100, memory: 128 * Mi } }))],
    }),
    nodePools: [nodePool()],
    catalog: m5Catalog(),
    nowMs: T0,
    gates: { spotToSpotConsolidation: false },
    parseDuration: goDurationOrNull,
    methods,
  });
  const outcome = pass(['single-node']);
  const replaced = outcome.decisions.filter((d) => d.replacements.length > 0).flatMap((d) => d.nodes);
  const late = names.filter((name) => !replaced.includes(name));

  it('takes as many replacements as it checks, then still the delete', () => {
    expect(replaced).toHaveLength(MAX_REBUILT_CHECKS_PER_PASS);
    expect(late).toHaveLength(4);
    expect(outcome.decisions.filter((d) => d.replacements.length === 0).flatMap((d) => d.nodes)).toEqual(['w']);
  });

  it('leaves the nodes that need a new node unweighed, saying why', () => {
    for (const name of late) {
      expect(outcome.notes.get(name)?.join(' ')).toMatch(/this pass already checked \d+ moves that launch nodes; looked at again next pass/);
      // Not weighed: a grace period does not start for them (their replacement was never looked at).
      expect(outcome.examined.has(name)).toBe(false);
    }
    expect(outcome.examined.has('w')).toBe(true);
  });

  it('runs no repack: each of its moves would be refused unchecked', () => {
    const withRepack = pass(['single-node', 'm-to-n']);
    expect(withRepack.decisions).toEqual(outcome.decisions);
    for (const name of late) expect(withRepack.examined.has(name)).toBe(false);
    expect(withRepack.work.simulations).toBe(outcome.work.simulations);
  });
});

describe('a pass whose checked moves were all refused', () => {
  /**
   * `groups` copies of one refused replacement, each behind its own taint: g-a (900m free) and g-b
   * (1800m free) hold one pod each; g-c, an m5.xlarge, holds 1800m, 1100m and 900m pods. Planned, the
   * 1800m pod goes to g-b, the 900m one to g-a and the 1100m one to a new m5.large (half the price).
   * Bound in queue order, least allocated first, the 900m pod takes the empty new node, the 1100m one
   * then g-b's room, and the 1800m pod fits nowhere: refused. A larger new node costs as much as g-c.
   * Last in the candidates' order, `zz` (four pods of 300m that tolerate only its own taint) is replaced
   * by an m5.large, which any order binds.
   */
  function world(groups: number) {
    const xlarge = { instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14162 * Mi, pods: 58 } };
    const nodes = [];
    const pods = [];
    const mem = { memory: 128 * Mi };
    for (let i = 0; i < groups; i++) {
      const g = group(i);
      const taints = [{ key: 'group', value: g, effect: 'NoSchedule' as const }];
      const tolerations = [{ key: 'group', operator: 'Equal' as const, value: g, effect: 'NoSchedule' as const }];
      nodes.push(node({ name: `${g}-a`, ...xlarge, taints }), node({ name: `${g}-b`, ...xlarge, taints }), node({ name: `${g}-c`, ...xlarge, taints }));
      pods.push(
        ...on(`${g}-a`, pod({ name: `${g}-fill-a`, requests: { cpu: 3020, ...mem }, tolerations })),
        ...on(`${g}-b`, pod({ name: `${g}-fill-b`, requests: { cpu: 2120, ...mem }, tolerations })),
        ...on(
          `${g}-c`,
          pod({ name: `${g}-small`, requests: { cpu: 900, ...mem }, tolerations }),
          pod({ name: `${g}-extra`, requests: { cpu: 1100, ...mem }, tolerations }),
          pod({ name: `${g}-large`, requests: { cpu: 1800, ...mem }, tolerations }),
        ),
      );
    }
    const own = [{ key: 'owner', operator: 'Equal' as const, value: 'zz', effect: 'NoSchedule' as const }];
    nodes.push(node({ name: 'zz', ...xlarge, taints: [{ key: 'owner', value: 'zz', effect: 'NoSchedule' }] }));
    pods.push(...on('zz', ...[1, 2, 3, 4].map((k) => pod({ name: `zz-${k}`, requests: { cpu: 300, ...mem }, tolerations: own }))));
    return runConsolidationPass({
      cluster: cluster({ nodes, pods }),
      nodePools: [nodePool()],
      catalog: m5Catalog(),
      nowMs: T0,
      gates: { spotToSpotConsolidation: false },
      parseDuration: goDurationOrNull,
      methods: ['single-node'],
    });
  }
  const group = (i: number) => `g${String(i).padStart(3, '0')}`;

  it('refuses one such move on its own, saying why', () => {
    const outcome = world(1);
    expect(outcome.decisions.map((d) => d.nodes)).toEqual([['zz']]);
    expect(outcome.notes.get('g000-c')?.join(' ')).toMatch(/kube-scheduler.*pod default\/g000-large would stay Pending/);
  });

  it('checks on past the usual cap until it takes a move: the next pass would otherwise check the same ones first', () => {
    const outcome = world(MAX_REBUILT_CHECKS_PER_PASS + 2);
    expect(outcome.decisions.map((d) => [d.action, d.nodes])).toEqual([['replace', ['zz']]]);
    expect(outcome.notes.get(`${group(MAX_REBUILT_CHECKS_PER_PASS + 1)}-c`)?.join(' ')).toMatch(/would stay Pending/);
  });

  it('stops at the larger cap when nothing can be taken, and says that the same moves come first next pass', () => {
    const outcome = world(MAX_REBUILT_CHECKS_BEFORE_A_DECISION + 1);
    expect(outcome.decisions).toEqual([]);
    expect(outcome.notes.get(`${group(MAX_REBUILT_CHECKS_BEFORE_A_DECISION - 1)}-c`)?.join(' ')).toMatch(/would stay Pending/);
    for (const name of [`${group(MAX_REBUILT_CHECKS_BEFORE_A_DECISION)}-c`, 'zz']) {
      expect(outcome.notes.get(name)?.join(' ')).toContain(
        `this pass checked ${MAX_REBUILT_CHECKS_BEFORE_A_DECISION} moves that launch nodes and could take none of them; the same moves come first again next pass unless the cluster changes`,
      );
    }
  });
});
