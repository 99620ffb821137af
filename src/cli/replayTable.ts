// `replay --format table`: the what-if rows, then each config's decisions timeline.
import type { ReplayReport } from '../core/replay/report.ts';

const money = (n: number, digits = 4) => `$${n.toFixed(digits)}`;

function columns(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
}

/** The summary rows (one per config), shared by the table and the README. */
export function summaryRows(report: ReplayReport): string[][] {
  const rows = [['CONFIG', 'END $/HR', 'AVG $/HR', 'SAVED $', 'PODS EVICTED', 'NODES DISRUPTED', 'NODES REPLACED', 'REGRET', 'PENDING POD-MIN']];
  for (const c of report.configs) {
    const s = c.summary;
    rows.push([
      c.name,
      money(s.endCostPerHour),
      money(s.averageCostPerHour),
      money(s.savingsDollars, 2),
      String(s.podsEvicted),
      String(s.nodesDisrupted),
      String(s.nodesReplaced),
      String(s.regret),
      s.pendingPodMinutes.toFixed(1),
    ]);
  }
  return rows;
}

export function renderReplayTable(report: ReplayReport): string {
  const out: string[] = [];
  const hours = (report.passes * report.intervalMs) / 3_600_000;
  out.push(
    `eks-consolidator replay ${report.startedAt} .. ${report.endedAt}: ${report.passes} passes every ${report.intervalMs / 60_000} min (${hours.toFixed(1)} h), ` +
      `scheduler ${report.scheduler}, churn ${report.churn}, seed ${report.seed}, launch delay ${report.launchDelayMs / 1000} s`,
  );
  for (const note of report.notes) out.push(`note: ${note}`);
  out.push(
    `baseline (no consolidation): ${money(report.baseline.totalCostDollars, 2)} in all, ${money(report.baseline.averageCostPerHour)}/hr on average, ${money(report.baseline.endCostPerHour)}/hr at the end`,
  );
  out.push('');
  out.push(columns(summaryRows(report)));
  out.push('REGRET: replacements disrupted again within 30 minutes of their launch. SAVED: against the baseline.');
  for (const c of report.configs) {
    out.push('');
    if (c.decisions.length === 0) {
      out.push(`${c.name}: no decisions.`);
      continue;
    }
    out.push(`${c.name}: decisions`);
    const rows = [['PASS', 'AT', 'METHOD', 'ACTION', 'NODES', 'REPLACEMENT', 'SAVES $/HR', 'PODS', 'REGRET']];
    for (const d of c.decisions) {
      rows.push([String(d.pass), d.at, d.method, d.action, d.nodes.join(','), d.replacement ?? '-', money(d.savingsPerHour), String(d.podsEvicted), d.regret > 0 ? String(d.regret) : '']);
    }
    out.push(columns(rows));
  }
  return `${out.join('\n')}\n`;
}
