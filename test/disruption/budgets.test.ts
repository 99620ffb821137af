import { describe, expect, it } from 'vitest';
import { BudgetLedger, budgetAllowance, explainLimit, isBudgetActive } from '../../src/core/disruption/budgets.ts';
import type { Budget } from '../../src/core/model/types.ts';
import { hours, node, nodePool } from '../builders.ts';

const at = (iso: string) => Date.parse(iso);
const businessHours: Budget = { nodes: { count: 0 }, schedule: '0 9 * * mon-fri', durationMs: hours(8) };

describe('scheduled budgets (no disruption on weekdays 09:00-17:00 UTC)', () => {
  it.each([
    ['Monday 08:59 is before the window', '2026-11-23T08:59:00Z', false],
    ['Monday 09:00 opens it', '2026-11-23T09:00:00Z', true],
    ['Monday 16:59 is inside', '2026-11-23T16:59:00Z', true],
    ['Monday 17:00 closes it', '2026-11-23T17:00:00Z', false],
    ['Saturday noon is outside', '2026-11-21T12:00:00Z', false],
    ['Friday noon is inside', '2026-11-20T12:00:00Z', true],
  ])('%s', (_name, iso, active) => {
    expect(isBudgetActive(businessHours, at(iso))).toBe(active);
  });

  it('an unscheduled budget is always active', () => {
    expect(isBudgetActive({ nodes: { count: 3 } }, at('2026-11-21T12:00:00Z'))).toBe(true);
  });
});

describe('allowed disruptions', () => {
  const nodes = (n: number) => Array.from({ length: n }, (_, i) => node({ name: `n${i}` }));

  it.each([
    ['10% of 25 rounds up to 3', [{ nodes: { percent: 10 } }], 25, 3],
    ['50% of 4 is 2', [{ nodes: { percent: 50 } }], 4, 2],
    ['count 5', [{ nodes: { count: 5 } }], 25, 5],
    ['most restrictive wins', [{ nodes: { count: 5 } }, { nodes: { percent: 10 } }], 25, 3],
    ['zero stops everything', [{ nodes: { count: 0 } }, { nodes: { percent: 100 } }], 25, 0],
    ['an explicit empty list restricts nothing', [], 25, 25],
  ] as [string, Budget[], number, number][])('%s', (_name, budgets, count, allowed) => {
    const pool = nodePool({ budgets });
    expect(budgetAllowance(pool, nodes(count), 'Underutilized', at('2026-11-21T12:00:00Z'), new Set()).allowed).toBe(allowed);
  });

  it('weekday business hours block, weekend allows 10', () => {
    const pool = nodePool({ budgets: [businessHours, { nodes: { count: 10 } }] });
    expect(budgetAllowance(pool, nodes(30), 'Empty', at('2026-11-23T10:00:00Z'), new Set()).allowed).toBe(0);
    expect(budgetAllowance(pool, nodes(30), 'Empty', at('2026-11-21T10:00:00Z'), new Set()).allowed).toBe(10);
  });

  it('a budget limited to other reasons does not apply', () => {
    const pool = nodePool({ budgets: [{ nodes: { count: 0 }, reasons: ['Drifted'] }, { nodes: { count: 2 } }] });
    expect(budgetAllowance(pool, nodes(10), 'Underutilized', at('2026-11-21T12:00:00Z'), new Set()).allowed).toBe(2);
    expect(budgetAllowance(pool, nodes(10), 'Drifted', at('2026-11-21T12:00:00Z'), new Set()).allowed).toBe(0);
  });

  it('deleting, NotReady, disrupted-tainted and in-flight nodes use up budget', () => {
    const pool = nodePool({ budgets: [{ nodes: { count: 4 } }] });
    const poolNodes = [
      node({ name: 'a', deleting: true }),
      node({ name: 'b', ready: false }),
      node({ name: 'c', taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] }),
      node({ name: 'd' }),
      node({ name: 'e' }),
    ];
    expect(budgetAllowance(pool, poolNodes, 'Empty', at('2026-11-21T12:00:00Z'), new Set(['d'])).allowed).toBe(0);
    expect(budgetAllowance(pool, poolNodes, 'Empty', at('2026-11-21T12:00:00Z'), new Set()).allowed).toBe(1);
  });

  it('the ledger counts decisions of the pass against every reason of the pool', () => {
    const pool = nodePool({ budgets: [{ nodes: { count: 2 } }] });
    const ledger = new BudgetLedger(new Map([['default', pool]]), new Map([['default', nodes(10)]]), at('2026-11-21T12:00:00Z'), new Set());
    expect(ledger.canTake(['default', 'default'], 'Empty')).toBe(true);
    ledger.take(['default']);
    expect(ledger.remaining('default', 'Underutilized')).toBe(1);
    expect(ledger.canTake(['default', 'default'], 'Empty')).toBe(false);
    ledger.take(['default']);
    expect(ledger.describe('default', 'Underutilized')).toContain('allows 2 Underutilized disruption(s) at a time now (nodes: 2), all taken by earlier decisions of this pass');
  });

  it.each([
    ['a limit of 1, Underutilized: the merge fact joins the same sentence', 1, 'Underutilized', true],
    ['a limit of 2, Underutilized: a merge was possible, no merge fact', 2, 'Underutilized', false],
    ['a limit of 1, Empty: merges are not in question', 1, 'Empty', false],
  ] as const)('the used-up budget is one sentence: %s', (_name, count, reason, mentionsMerge) => {
    const pool = nodePool({ budgets: [{ nodes: { count } }] });
    const ledger = new BudgetLedger(new Map([['default', pool]]), new Map([['default', nodes(10)]]), at('2026-11-21T12:00:00Z'), new Set());
    ledger.take(Array.from({ length: count }, () => 'default'));
    const text = ledger.describe('default', reason);
    expect(text).toContain(`allows ${count} ${reason} disruption(s) at a time now (nodes: ${count}), all taken by earlier decisions of this pass`);
    expect(text.endsWith(', and a multi-node consolidation would need at least 2 nodes at once')).toBe(mentionsMerge);
    expect(text).not.toContain(';');
  });
});

describe('how a scheduled budget is explained', () => {
  it.each([
    ['inside the window: says when it ends', Date.UTC(2026, 10, 25, 12), /\(scheduled budget "0 9 \* \* mon-fri", active now until 2026-11-25T17:00:00Z\)$/],
    ['no schedule active: the default budget, no window', Date.UTC(2026, 10, 25, 20), /^10% of 4 node\(s\), rounded up to 1$/],
  ])('%s', (_name, nowMs, expected) => {
    const pool = nodePool({ budgets: [{ nodes: { percent: 10 } }, businessHours] });
    const nodes = ['a', 'b', 'c', 'd'].map((name) => node({ name }));
    expect(explainLimit(budgetAllowance(pool, nodes, 'Underutilized', nowMs, new Set()))).toMatch(expected);
  });
});
