// `--format table`: the Balanced scores of the plan (decisions[].scores and rejectedMoves), so a person
// sees why a Balanced pool took or left a move. Empty when no move was scored.
import type { ConsolidationScore, Plan } from '../core/plan.ts';

/** Refused moves shown at most; the JSON plan has them all. */
export const MAX_REJECTED_ROWS = 20;

const pct = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;
const nodeList = (nodes: readonly string[]) => (nodes.length <= 3 ? nodes.join(',') : `${nodes.slice(0, 3).join(',')},+${nodes.length - 3}`);

function row(id: string, method: string, nodes: readonly string[], s: ConsolidationScore, verdict: string): string[] {
  return [id, method, nodeList(nodes), s.nodePool, s.score.toFixed(2), `${s.threshold.toFixed(2)} (k ${s.k})`, pct(s.savingsFraction), pct(s.disruptionFraction), verdict];
}

/** Lines to print (none when nothing was scored). `columns` lays out rows as the rest of the table. */
export function balancedLines(plan: Plan, columns: (rows: string[][]) => string): string[] {
  const rejected = plan.rejectedMoves ?? [];
  const approved = plan.decisions.flatMap((d, i) => (d.scores ?? []).map((s) => row(`#${i + 1}`, d.method, d.nodes, s, 'approved')));
  if (approved.length === 0 && rejected.length === 0) return [];
  const rows = [['MOVE', 'METHOD', 'NODES', 'POOL', 'SCORE', 'NEEDS', 'SAVES', 'DISRUPTS', 'VERDICT']];
  rows.push(...approved);
  for (const move of rejected.slice(0, MAX_REJECTED_ROWS)) {
    const what = move.bound ? 'rejected (even as a delete)' : `rejected (${move.action ?? 'move'})`;
    for (const s of move.scores) rows.push(row('-', move.method, move.nodes, s, s.approved ? `${what}; this pool approved` : what));
  }
  const lines = ['', 'Balanced scores (a move passes when score >= 1/k; SAVES and DISRUPTS are shares of the pool):', columns(rows)];
  if (rejected.length > MAX_REJECTED_ROWS) lines.push(`... and ${rejected.length - MAX_REJECTED_ROWS} more refused move(s) in the JSON plan (rejectedMoves).`);
  return lines;
}
