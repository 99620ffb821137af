// The whole plan of a pass placed again as the actuator carries it out (every node tainted first).
import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../src/core/disruption/candidates.ts';
import type { Proposal } from '../../src/core/disruption/methods/types.ts';
import { firstStrandingMove, strandFreePrefix } from '../../src/core/disruption/planCheck.ts';
import type { Node, Pod } from '../../src/core/model/types.ts';
import { cluster, Gi, m5Catalog, node, nodePool, on, pod, T0 } from '../builders.ts';

const pools = new Map([['default', nodePool()]]);
const ctx = { nodePools: [nodePool()], pools, catalog: m5Catalog(), nowMs: T0 };
const large = (name: string) => node({ name, allocatable: { cpu: 1930, memory: 7 * Gi, pods: 29 } });
const candidate = (n: Node, pods: readonly Pod[]): Candidate => ({ node: n, pool: nodePool(), pricePerHour: 0.096, pods, disruptionCost: 1, methods: new Set(['single-node']) });
const deleteOf = (n: Node, pods: readonly Pod[]): { proposal: Proposal; names: string[] } => ({
  proposal: { method: 'single-node', reason: 'Underutilized', candidates: [candidate(n, pods)], replacements: [], savingsPerHour: 0.096 },
  names: [],
});

describe('whole-plan check', () => {
  /** `a` and `b` are deleted in that order; `keep` stays, with `keepUsed` of its 1930m taken. */
  function plan(aCpu: number, bCpu: number, keepUsed: number) {
    const [keep, a, b] = [large('keep'), large('a'), large('b')];
    const onA = on('a', pod({ name: 'from-a', requests: { cpu: aCpu, memory: Gi } }));
    const onB = on('b', pod({ name: 'from-b', requests: { cpu: bCpu, memory: Gi } }));
    const start = cluster({ nodes: [keep, a, b], pods: [...on('keep', pod({ requests: { cpu: keepUsed, memory: Gi } })), ...onA, ...onB] });
    return { start, moves: [deleteOf(a, onA), deleteOf(b, onB)] };
  }
  const first = (p: ReturnType<typeof plan>) => firstStrandingMove(ctx, p.start, p.moves);
  const kept = (p: ReturnType<typeof plan>) => strandFreePrefix(ctx, p.start, p.moves).kept;

  it('a plan whose pods all find room once every node of it is tainted holds', () => {
    expect(first(plan(1000, 500, 100))).toBeUndefined();
    expect(kept(plan(1000, 500, 100))).toBe(2);
  });

  it("names the first decision whose pod finds no room: here the second, after the first took keep's room", () => {
    const stranded = first(plan(1500, 500, 0));
    expect(stranded?.index).toBe(1);
    // the last decision strands its own pod: it is the one cut
    expect(kept(plan(1500, 500, 0))).toBe(1);
    expect(stranded?.reason).toMatch(/every node tainted first.*pod default\/from-b would stay Pending/);
  });

  it('a pod of the first decision strands when the nodes of a later decision are tainted too', () => {
    // Deciding them one at a time, a's pod could go to b; carried out together, only keep is left.
    const stranded = first(plan(1500, 100, 1000));
    expect(stranded?.index).toBe(0);
    expect(stranded?.reason).toContain('pod default/from-a would stay Pending');
    // the later decision's taint takes the room: it goes, the first decision stays
    expect(kept(plan(1500, 100, 1000))).toBe(1);
  });
});
