// The "Balanced scores" section of the table: it fits the table's width (long node lists cut with a
// count, columns left out in the documented order), and each row's verdict says what that pool did.
import { describe, expect, it } from 'vitest';
import { BALANCED_FALLBACKS, balancedLines, rejectedVerdict } from '../../src/cli/balancedTable.ts';
import { painter } from '../../src/cli/layout.ts';
import type { ConsolidationScore, Plan, RejectedMove } from '../../src/core/plan.ts';

const score = (nodePool: string, approved: boolean, extra: Partial<ConsolidationScore> = {}): ConsolidationScore => ({
  nodePool,
  k: 2,
  threshold: 0.5,
  savingsPerHour: 0.1,
  disruptionCost: 4,
  poolCostPerHour: 3,
  poolDisruptionCost: 40,
  savingsFraction: 0.033,
  disruptionFraction: 0.1,
  score: approved ? 0.65 : 0.33,
  approved,
  ...extra,
});

const move = (nodes: string[], scores: ConsolidationScore[], extra: Partial<RejectedMove> = {}): RejectedMove => ({
  method: nodes.length > 1 ? 'multi-node' : 'single-node',
  nodes,
  bound: true,
  savingsPerHour: 0.1,
  scores,
  ...extra,
});

const suffix = '.us-west-2.compute.internal';
const names = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `ip-10-0-${100 + from + i}-${200 + i}${suffix}`);
const short = (name: string) => name.replace(suffix, '');
const widest = (lines: string[]) => Math.max(...lines.map((l) => l.length));

describe('rejectedVerdict', () => {
  it.each([
    ['too low on its best case', move(['a'], [score('default', false)]), 0, 'too low even as a delete'],
    ['too low as the replace it would be', move(['a'], [score('default', false)], { bound: false, action: 'replace' }), 0, 'too low as a replace'],
    ['this pool passes, another refuses', move(['a', 'b'], [score('default', true), score('batch', false)]), 0, 'passes; refused by batch'],
    ['the refusing pool', move(['a', 'b'], [score('default', true), score('batch', false)]), 1, 'too low even as a delete'],
  ])('%s', (_name, m, index, verdict) => {
    expect(rejectedVerdict(m, m.scores[index]!)).toBe(verdict);
  });
});

describe('balancedLines', () => {
  const plan: Plan = {
    dryRun: true,
    evaluatedAt: '2026-11-21T12:00:00Z',
    nodes: [],
    decisions: [],
    rejectedMoves: [
      move(names(8), [score('general-purpose', true), score('batch', false)]),
      move(names(2, 20), [score('general-purpose', false)], { bound: false, action: 'replace' }),
    ],
  };

  it.each([80, 120])('at %i columns: every line fits, node names are the short ones, cut with a count', (width) => {
    const lines = balancedLines(plan, { width, paint: painter(false), short });
    expect(widest(lines)).toBeLessThanOrEqual(width);
    expect(lines.join('\n')).not.toContain(suffix);
    expect(lines.join('\n')).toMatch(/ip-10-0-10\S* \+\d more/);
    expect(lines.join('\n')).toContain('passes; refused by batch');
  });

  it('what a narrow table leaves out is said, in the documented order', () => {
    const lines = balancedLines(plan, { width: 80, paint: painter(false), short });
    const header = lines.find((l) => l.startsWith('MOVE'))!;
    const out = BALANCED_FALLBACKS.flatMap((f) => ('drop' in f ? [f.drop] : [])).filter((h) => !` ${header} `.includes(` ${h} `));
    expect(out.length).toBeGreaterThan(0);
    expect(lines.join('\n')).toContain(`(80 columns: ${out.join(', ')} left out`);
    expect(balancedLines(plan, { width: 120, paint: painter(false), short }).join('\n')).not.toContain('left out');
  });

  it('nothing scored: no section', () => {
    expect(balancedLines({ ...plan, rejectedMoves: [] }, { width: 120, paint: painter(false), short })).toEqual([]);
  });
});
