// A round decided again with roomy new nodes (PassView.roomyRetry; pass.ts decideWithHeldBack): every move
// that launches nodes is offered only with all its pods on its new nodes, each keeping room for the
// largest pod the pass moves (methods/costEfficient.ts movesToCheck).
import { describe, expect, it } from 'vitest';
import { BudgetLedger } from '../../src/core/disruption/budgets.ts';
import type { Candidate } from '../../src/core/disruption/candidates.ts';
import { movesToCheck } from '../../src/core/disruption/methods/costEfficient.ts';
import { evaluateRemoval } from '../../src/core/disruption/methods/evaluateRemoval.ts';
import type { PassView, RoomyRetry } from '../../src/core/disruption/methods/types.ts';
import { DEFAULT_REPLACEMENT_BOUND } from '../../src/core/disruption/sizeBound.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import { cluster, m5Catalog, Mi, node, nodePool, on, pod } from '../builders.ts';

/**
 * c, an m5.2xlarge ($0.384/h), holds a 1000m and a 900m pod; k, an m5.xlarge, has 1000m free. Packed,
 * the 1000m pod goes to k and the 900m one to a new m5.large.
 */
function world(roomyRetry?: RoomyRetry) {
  const pool = nodePool();
  const nodes = [
    node({ name: 'c', instanceType: 'm5.2xlarge', allocatable: { cpu: 7910, memory: 28783 * Mi, pods: 58 } }),
    node({ name: 'k', instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14162 * Mi, pods: 58 } }),
  ];
  const movedPods = on('c', pod({ name: 'p1000', requests: { cpu: 1000, memory: 256 * Mi } }), pod({ name: 'p900', requests: { cpu: 900, memory: 256 * Mi } }));
  const c = cluster({ nodes, pods: [...movedPods, ...on('k', pod({ name: 'fill', requests: { cpu: 2920, memory: Mi } }))] });
  const candidate: Candidate = { node: nodes[0]!, pool, pricePerHour: 0.384, pods: movedPods, disruptionCost: 3, methods: new Set(['single-node']) };
  const notes = new Map<string, string[]>();
  const view: PassView = {
    nowMs: 0,
    gates: { spotToSpotConsolidation: false },
    cluster: c,
    catalog: m5Catalog(),
    simulator: createSimulator({ cluster: c, nodePools: [pool], catalog: m5Catalog() }),
    ledger: new BudgetLedger(new Map([[pool.name, pool]]), new Map([[pool.name, nodes]]), 0, new Set()),
    candidates: [candidate],
    note: (name, text) => notes.set(name, [...(notes.get(name) ?? []), text]),
    examine: () => {},
    replacementBound: DEFAULT_REPLACEMENT_BOUND,
    maxNodesPerCommand: 100,
    schedulerCheck: () => undefined,
    ...(roomyRetry ? { roomyRetry } : {}),
  };
  const verdict = evaluateRemoval(view, [candidate], 'single-node');
  if (!verdict.ok) throw new Error(verdict.reason);
  return { moves: [...movesToCheck(view, verdict.proposal)], notes };
}

const retry = (cpuMillis: number): RoomyRetry => ({ nodes: new Map([['c', 'with decision 1 of this pass carried out together, pod default/x would stay Pending']]), cpuMillis, memoryBytes: 256 * Mi });
const shape = (moves: ReturnType<typeof world>['moves']) =>
  moves.map((m) => ({ types: m.replacements.map((r) => r.instanceTypes[0]), destinations: Object.fromEntries((m.simulation?.placements ?? []).map((p) => [p.pod.name, p.nodeName])) }));

describe('movesToCheck in a roomy round', () => {
  it('outside one, the packed move comes first: one pod onto k, the other onto a new m5.large', () => {
    expect(shape(world().moves)[0]).toEqual({ types: ['m5.large'], destinations: { p1000: 'k', p900: 'new:0' } });
  });

  it('in one, the only move offered puts both pods on a new node keeping room for the pass\'s largest pod (1500m): an m5.xlarge', () => {
    expect(shape(world(retry(1500)).moves)).toEqual([{ types: ['m5.xlarge'], destinations: { p1000: 'new:0', p900: 'new:0' } }]);
  });

  it('when that room makes the new node cost as much as the old one, nothing is offered and the node says why', () => {
    const { moves, notes } = world(retry(2100));
    expect(moves).toEqual([]);
    expect(notes.get('c')?.join(' ')).toMatch(
      /^not taken: with decision 1 of this pass carried out together, pod default\/x would stay Pending; with every moved pod on its new nodes, each keeping room for the largest pod of the pass \(2100m cpu \/ 256Mi memory\): .+; looked at again next pass$/,
    );
  });
});
