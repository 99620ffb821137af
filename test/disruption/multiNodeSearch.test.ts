// The multi-node search narrows the gap above each ordering's largest feasible prefix only while a
// prefix in the gap could still be among the moves the scheduler check may try (a prefix saves at most
// its nodes' price): the move it returns is the one the full search returns, found with fewer
// simulations, also when kube-scheduler's placement refuses the best moves.
import { describe, expect, it } from 'vitest';
import { BudgetLedger } from '../../src/core/disruption/budgets.ts';
import type { Candidate } from '../../src/core/disruption/candidates.ts';
import { createMultiNode } from '../../src/core/disruption/methods/multiNode.ts';
import type { PassView } from '../../src/core/disruption/methods/types.ts';
import { DEFAULT_REPLACEMENT_BOUND } from '../../src/core/disruption/sizeBound.ts';
import type { Node, Pod } from '../../src/core/model/types.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import { cluster, Gi, m5Catalog, Mi, node, nodePool, pod } from '../builders.ts';

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1103515245 + 12345) >>> 0;
    return s / 2 ** 32;
  };
}

function scenario(seed: number): { nodes: Node[]; pods: Pod[]; candidates: Candidate[] } {
  const rand = random(seed);
  const pool = nodePool();
  const nodes: Node[] = [];
  const pods: Pod[] = [];
  const candidates: Candidate[] = [];
  for (let i = 0; i < 150; i++) {
    const name = `n${String(i).padStart(2, '0')}`;
    const n = node({ name, instanceType: 'm5.large', allocatable: { cpu: 1930, memory: 7 * Gi, pods: 29 } });
    nodes.push(n);
    const own = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => ({
      ...pod({ requests: { cpu: 50 + Math.floor(rand() * 250), memory: (64 + Math.floor(rand() * 400)) * Mi } }),
      nodeName: name,
    }));
    pods.push(...own);
    // Cheap nodes are the cheapest to disrupt: cheapest-to-disrupt-first and money-per-disruption-first
    // then find moves of very different worth, and the first ordering's gaps cannot compete.
    const cheap = rand() < 0.5;
    candidates.push({
      node: n,
      pool,
      pricePerHour: cheap ? 0.04 + rand() * 0.02 : 0.3 + rand() * 0.2,
      pods: own,
      disruptionCost: cheap ? 1 + rand() : 3 + rand() * 3,
      methods: new Set(['multi-node']),
    });
  }
  return { nodes, pods, candidates };
}

function search(seed: number, savingsBound: boolean, refuseLargerThan: number) {
  const { nodes, pods, candidates } = scenario(seed);
  const c = cluster({ nodes, pods });
  const pool = nodePool();
  const inner = createSimulator({ cluster: c, nodePools: [pool], catalog: m5Catalog() });
  let simulations = 0;
  const view: PassView = {
    nowMs: 0,
    gates: { spotToSpotConsolidation: false },
    cluster: c,
    catalog: m5Catalog(),
    simulator: { simulate: (request) => (simulations++, inner.simulate(request)) },
    ledger: new BudgetLedger(new Map([[pool.name, pool]]), new Map([[pool.name, nodes]]), 0, new Set()),
    candidates,
    note: () => {},
    examine: () => {},
    replacementBound: DEFAULT_REPLACEMENT_BOUND,
    // Above the 150 candidates: the search as it is without the cap.
    maxNodesPerCommand: 1_000,
    schedulerCheck: (p) => (p.candidates.length > refuseLargerThan ? 'refused' : undefined),
  };
  const proposal = createMultiNode({ savingsBound }).next(view);
  return { nodes: proposal?.candidates.map((c) => c.node.name).sort(), savings: proposal?.savingsPerHour, simulations };
}

describe('multi-node search: the savings bound on narrowing', () => {
  const runs = [1, 2, 3, 4].flatMap((seed) =>
    [Number.POSITIVE_INFINITY, 100].map((refuse) => ({ seed, refuse, bounded: search(seed, true, refuse), full: search(seed, false, refuse) })),
  );

  it.each(runs)('seed $seed, moves of more than $refuse nodes refused: the same move as the full search, with no more simulations', ({ bounded, full }) => {
    expect(full.nodes?.length).toBeGreaterThan(1);
    expect(bounded.nodes).toEqual(full.nodes);
    expect(bounded.savings).toBe(full.savings);
    expect(bounded.simulations).toBeLessThanOrEqual(full.simulations);
  });

  it('leaves out narrowing that cannot pay in some of them', () => {
    expect(runs.some((r) => r.bounded.simulations < r.full.simulations)).toBe(true);
  });
});
