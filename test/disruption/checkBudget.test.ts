// A pass checks a bounded number of moves that launch nodes against kube-scheduler's placement
// (MAX_REBUILT_CHECKS_PER_PASS): once they are used up, single-node looks only for deletes, the one
// kind of move it may still take, the m-to-n repack (whose moves all launch nodes) does not run, and
// the rest is left unweighed for the next pass.
import { describe, expect, it } from 'vitest';
import { MAX_REBUILT_CHECKS_PER_PASS, runConsolidationPass } from '../../src/core/disruption/pass.ts';
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
