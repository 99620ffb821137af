// Running next to Karpenter (README.md, "Handing a pool over"): which pools a real run leaves to
// Karpenter.
import { describe, expect, it } from 'vitest';
import { karpenterConflictNotes, karpenterConflicts, type KarpenterPresence } from '../../src/core/disruption/coexistence.ts';
import { HANDOVER_ANNOTATION, parseNodePools } from '../../src/core/input/nodePools.ts';
import { InputError } from '../../src/core/errors.ts';
import { node, nodePool } from '../builders.ts';

const registered = node({ name: 'k', labels: { 'karpenter.sh/registered': 'true' } });
const plain = node({ name: 'p' });

function parse(annotations: Record<string, string> | undefined, disruption: Record<string, unknown> | undefined) {
  return parseNodePools([
    {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'default', ...(annotations ? { annotations } : {}) },
      spec: { ...(disruption ? { disruption } : {}) },
    },
  ])[0]!;
}

describe('karpenterConflicts', () => {
  it.each<[string, Parameters<typeof nodePool>[0], KarpenterPresence, boolean, readonly ReturnType<typeof node>[], boolean]>([
    ['Karpenter detected by node labels, pool consolidated by it', { karpenterConsolidates: true }, 'auto', false, [registered], true],
    ['no Karpenter label, pools from a file', { karpenterConsolidates: true }, 'auto', false, [plain], false],
    ['pools read from the cluster API: Karpenter assumed', { karpenterConsolidates: true }, 'auto', true, [plain], true],
    ['Karpenter present, but consolidateAfter: Never for it', { karpenterConsolidates: false }, 'auto', true, [registered], false],
    ['operator says Karpenter is absent', { karpenterConsolidates: true }, 'absent', true, [registered], false],
    ['operator says Karpenter is present', { karpenterConsolidates: true }, 'present', false, [plain], true],
    ['handed over but Karpenter still consolidates', { karpenterConsolidates: true, handedOver: true }, 'auto', false, [registered], true],
  ])('%s', (_name, pool, presence, poolsFromCluster, nodes, conflict) => {
    const conflicts = karpenterConflicts({ nodePools: [nodePool(pool)], nodes, presence, poolsFromCluster });
    expect(conflicts.has('default')).toBe(conflict);
  });

  it('says how to hand a pool over', () => {
    const why = karpenterConflicts({ nodePools: [nodePool({ karpenterConsolidates: true })], nodes: [registered], presence: 'auto', poolsFromCluster: false }).get('default');
    expect(why).toMatch(/Karpenter's own disruption controller also consolidates NodePool "default".*consolidateAfter: Never.*eks-consolidator.io\/disruption/);
  });
});

describe('the handover annotation', () => {
  it('a plain pool: Karpenter consolidates it with the same settings', () => {
    expect(parse(undefined, { consolidateAfter: '5m' })).toMatchObject({ karpenterConsolidates: true, consolidateAfterMs: 300_000 });
    expect(parse(undefined, { consolidateAfter: 'Never' })).toMatchObject({ karpenterConsolidates: false, consolidateAfterMs: null });
  });

  it('takes this product\'s settings from the annotation, and Karpenter\'s view from spec.disruption', () => {
    const pool = parse({ [HANDOVER_ANNOTATION]: '{"consolidationPolicy":"WhenEmpty","consolidateAfter":"2m","budgets":[{"nodes":"3"}]}' }, { consolidateAfter: 'Never' });
    expect(pool).toMatchObject({
      handedOver: true,
      karpenterConsolidates: false,
      consolidationPolicy: 'WhenEmpty',
      consolidateAfterMs: 120_000,
      budgets: [{ nodes: { count: 3 } }],
    });
  });

  it('budgets fixed at zero for both consolidation reasons also stop Karpenter', () => {
    const pool = parse({ [HANDOVER_ANNOTATION]: '{}' }, { budgets: [{ nodes: '0', reasons: ['Empty', 'Underutilized'] }] });
    expect(pool.karpenterConsolidates).toBe(false);
    const scheduled = parse({ [HANDOVER_ANNOTATION]: '{}' }, { budgets: [{ nodes: '0', schedule: '@daily', duration: '1h' }] });
    expect(scheduled.karpenterConsolidates).toBe(true);
  });

  it('an annotation that is not a JSON object is an input error naming it', () => {
    expect(() => parse({ [HANDOVER_ANNOTATION]: 'consolidateAfter: 5m' }, undefined)).toThrow(InputError);
    expect(() => parse({ [HANDOVER_ANNOTATION]: 'consolidateAfter: 5m' }, undefined)).toThrow(/metadata.annotations\["eks-consolidator.io\/disruption"\]: is not JSON/);
    expect(() => parse({ [HANDOVER_ANNOTATION]: '[1]' }, undefined)).toThrow(/eks-consolidator.io\/disruption/);
  });
});

describe('the notes for pools left to Karpenter', () => {
  const pools = [
    nodePool({ name: 'a', karpenterConsolidates: true }),
    nodePool({ name: 'b', karpenterConsolidates: true }),
    nodePool({ name: 'c', karpenterConsolidates: true, handedOver: true }),
    nodePool({ name: 'd', karpenterConsolidates: false }),
  ];
  const conflicts = karpenterConflicts({ nodePools: pools, nodes: [], presence: 'present', poolsFromCluster: false });

  it('one note names every pool not handed over; a pool handed over with a spec Karpenter still consolidates gets its own', () => {
    const notes = karpenterConflictNotes(pools, conflicts, true);
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(/^a real run would not act on NodePools "a", "b": Karpenter's own disruption controller also consolidates them, .*\(README: Handing a pool over\)$/);
    expect(notes[1]).toMatch(/^a real run would not act on NodePool "c": NodePool "c" carries eks-consolidator.io\/disruption, but/);
  });

  it.each([
    ['a dry run, one pool', true, /^a real run would not act on NodePool "a": .* consolidates it,/],
    ['a real run, one pool', false, /^NodePool "a": Karpenter's own disruption controller also consolidates it,/],
  ])('%s', (_name, dryRun, expected) => {
    expect(karpenterConflictNotes([pools[0]!], conflicts, dryRun)).toEqual([expect.stringMatching(expected)]);
  });

  it('no conflict, no note', () => {
    expect(karpenterConflictNotes([pools[3]!], conflicts, true)).toEqual([]);
  });
});
