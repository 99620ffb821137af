// `--format table`: the Balanced scores of the plan (decisions[].scores and rejectedMoves), so a person
// sees why a Balanced pool took or left a move. Empty when no move was scored.
//
// A move is scored once per source pool, and passes only when every pool's score does (Karpenter's
// Balanced consolidation RFC): a row per (move, pool), whose verdict says what that pool's score did.
import type { ConsolidationScore, Plan, RejectedMove } from '../core/plan.ts';
import { fallbackNote, grid, listWithCount, wrap, type Cell, type Column, type Fallback, type Paint } from './layout.ts';

/** Refused moves shown at most; the JSON plan has them all. */
export const MAX_REJECTED_ROWS = 20;

const pct = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;

const COLUMNS: readonly Column[] = [
  { header: 'MOVE' },
  { header: 'METHOD' },
  { header: 'NODES', shrinkable: true, minWidth: 16 },
  { header: 'POOL', shrinkable: true, minWidth: 6, softMinWidth: 10 },
  { header: 'SCORE', align: 'right' },
  { header: 'NEEDS' },
  { header: 'SAVES', align: 'right' },
  { header: 'DISRUPTS', align: 'right' },
  { header: 'VERDICT', shrinkable: true, minWidth: 12 },
];

/**
 * On a narrow terminal, in this order: the method (the move's node count shows it), the threshold (the
 * heading gives it), then the two shares the score is made of (the score stays).
 */
export const BALANCED_FALLBACKS: readonly Fallback[] = [{ drop: 'METHOD' }, { drop: 'NEEDS' }, { drop: 'DISRUPTS' }, { drop: 'SAVES' }];

export interface BalancedLayout {
  readonly width: number;
  readonly paint: Paint;
  /** A node's name as the rest of the table prints it. */
  readonly short: (name: string) => string;
}

/**
 * What a pool's row of a refused move says. The move is refused when any pool's score is too low;
 * "as a delete" marks a move refused on its best case (scored as if its nodes were deleted outright, so
 * no replacement would have done better).
 */
export function rejectedVerdict(move: RejectedMove, s: ConsolidationScore): string {
  if (!s.approved) return move.bound ? 'too low even as a delete' : `too low as a ${move.action ?? 'move'}`;
  const failing = move.scores.filter((o) => !o.approved).map((o) => o.nodePool);
  return failing.length > 0 ? `passes; refused by ${failing.join(', ')}` : 'passes; refused';
}

function row(id: string, method: string, nodes: readonly string[], s: ConsolidationScore, verdict: string): Cell[] {
  return [
    { text: id },
    { text: method },
    { text: nodes.join(', '), fit: (max) => listWithCount(nodes, max) },
    { text: s.nodePool },
    { text: s.score.toFixed(2) },
    { text: `${s.threshold.toFixed(2)} (k ${s.k})` },
    { text: pct(s.savingsFraction) },
    { text: pct(s.disruptionFraction) },
    { text: verdict },
  ];
}

/** Lines to print (none when nothing was scored), in `layout.width` columns. */
export function balancedLines(plan: Plan, layout: BalancedLayout): string[] {
  const { width, paint, short } = layout;
  const rejected = plan.rejectedMoves ?? [];
  const approved = plan.decisions.flatMap((d, i) => (d.scores ?? []).map((s) => row(`#${i + 1}`, d.method, d.nodes.map(short), s, 'approved')));
  if (approved.length === 0 && rejected.length === 0) return [];
  const rows = [...approved];
  for (const move of rejected.slice(0, MAX_REJECTED_ROWS)) {
    for (const s of move.scores) rows.push(row('-', move.method, move.nodes.map(short), s, rejectedVerdict(move, s)));
  }
  const g = grid(COLUMNS, rows, width, paint, { tight: true, fallbacks: BALANCED_FALLBACKS });
  const lines = [
    '',
    ...wrap('Balanced scores: a move passes when each Balanced pool it takes nodes from scores >= 1/k (SAVES, DISRUPTS: pool shares)', width, '  ', ''),
    ...fallbackNote(g, width).map((l) => paint('dim', l)),
    ...g.lines,
  ];
  if (rejected.length > MAX_REJECTED_ROWS) lines.push(...wrap(`... and ${rejected.length - MAX_REJECTED_ROWS} more refused move(s) in the JSON plan (rejectedMoves).`, width, '  ', ''));
  return lines;
}
