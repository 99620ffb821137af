// `replay --format table`: the what-if rows, then each config's decisions timeline, laid out as the
// plan's table is (layout.ts): 120 columns, or the terminal's width when narrower, node lists cut with
// a count; `--wide` cuts nothing.
import type { ReplayReport } from '../core/replay/report.ts';
import { fallbackNote, grid, listWithCount, painter, wrap, type Cell, type Column, type Fallback } from './layout.ts';
import { DEFAULT_TABLE_WIDTH, MIN_TABLE_WIDTH, nodeNameShortener } from './table.ts';

const money = (n: number, digits = 4) => `$${n.toFixed(digits)}`;

export interface ReplayTableOptions {
  /** Nothing cut or wrapped; full node names. */
  readonly wide?: boolean;
  /** Columns available (ignored when `wide`). Default 120. */
  readonly width?: number;
}

/** The summary rows (one per config), shared by the table and the HTML page. */
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

/** The summary's columns: the config name may be cut, the figures never; the least read go first. */
const SUMMARY_FALLBACKS: readonly Fallback[] = [{ drop: 'NODES REPLACED' }, { drop: 'AVG $/HR' }, { drop: 'PODS EVICTED' }, { drop: 'REGRET' }, { drop: 'NODES DISRUPTED' }];
/** The timeline's: the time of day stays (PASS gives the order), the method and the pod count go first. */
const DECISION_FALLBACKS: readonly Fallback[] = [{ drop: 'METHOD' }, { drop: 'PODS' }, { drop: 'REGRET' }];

/**
 * A decision's time: the time of day when the whole replay is within one UTC day (the header gives the
 * day), else the day and the time.
 */
function timeOf(report: ReplayReport): (at: string) => string {
  const oneDay = report.startedAt.slice(0, 10) === report.endedAt.slice(0, 10);
  return (at) => (oneDay ? at.slice(11, 16) : `${at.slice(5, 10)} ${at.slice(11, 16)}`);
}

export function renderReplayTable(report: ReplayReport, options: ReplayTableOptions = {}): string {
  const wide = options.wide === true;
  const width = wide ? Number.POSITIVE_INFINITY : Math.max(MIN_TABLE_WIDTH, options.width ?? DEFAULT_TABLE_WIDTH);
  const paint = painter(false);
  const lines = (text: string, indent = '  ') => (wide ? [text] : wrap(text, width, indent, ''));
  const out: string[] = [];
  const hours = (report.passes * report.intervalMs) / 3_600_000;
  out.push(
    ...lines(
      `eks-consolidator replay ${report.startedAt} .. ${report.endedAt}: ${report.passes} passes every ${report.intervalMs / 60_000} min (${hours.toFixed(1)} h), ` +
        `scheduler ${report.scheduler}, churn ${report.churn}, seed ${report.seed}, launch delay ${report.launchDelayMs / 1000} s`,
    ),
  );
  for (const note of report.notes) out.push(...(wide ? [`note: ${note}`] : wrap(note, width, '      ', 'note: ')));
  out.push(
    ...lines(
      `baseline (no consolidation): ${money(report.baseline.totalCostDollars, 2)} in all, ${money(report.baseline.averageCostPerHour)}/hr on average, ${money(report.baseline.endCostPerHour)}/hr at the end`,
    ),
  );
  out.push('');

  const [head, ...rows] = summaryRows(report);
  const summaryColumns: Column[] = head!.map((header, i) => (i === 0 ? { header, shrinkable: true, minWidth: 10, softMinWidth: 18 } : { header, align: 'right' as const }));
  const summary = grid(
    summaryColumns,
    rows.map((r) => r.map((text): Cell => ({ text }))),
    width,
    paint,
    { fallbacks: SUMMARY_FALLBACKS },
  );
  out.push(...fallbackNote(summary, width, '--wide'), ...summary.lines);
  out.push(...lines('REGRET: replacements disrupted again within 30 minutes of their launch. SAVED: against the baseline.'));

  const names = report.configs.flatMap((c) => c.decisions.flatMap((d) => d.nodes));
  const { suffix, short } = nodeNameShortener(names, wide);
  const time = timeOf(report);
  if (suffix !== '' && report.configs.some((c) => c.decisions.length > 0)) out.push('', ...lines(`node names are shown without ${suffix} (--wide shows them whole)`));
  for (const c of report.configs) {
    out.push('');
    if (c.decisions.length === 0) {
      out.push(`${c.name}: no decisions.`);
      continue;
    }
    out.push(`${c.name}: decisions`);
    const columns: Column[] = [
      { header: 'PASS', align: 'right' },
      { header: 'AT' },
      { header: 'METHOD' },
      { header: 'ACTION' },
      { header: 'REPLACEMENT', shrinkable: true, minWidth: 11 },
      { header: 'SAVES $/HR', align: 'right' },
      { header: 'PODS', align: 'right' },
      { header: 'REGRET', align: 'right' },
      // Last, so a long list takes what is left of the line.
      { header: 'NODES', shrinkable: true, minWidth: 12, softMinWidth: 24 },
    ];
    const decisionRows = c.decisions.map((d): Cell[] => {
      const nodes = d.nodes.map(short);
      return [
        { text: String(d.pass) },
        { text: wide ? d.at : time(d.at) },
        { text: d.method },
        { text: d.action },
        { text: d.replacement ?? '-' },
        { text: money(d.savingsPerHour) },
        { text: String(d.podsEvicted) },
        { text: d.regret > 0 ? String(d.regret) : '' },
        { text: nodes.join(', '), fit: (max) => listWithCount(nodes, max) },
      ];
    });
    const g = grid(columns, decisionRows, width, paint, { fallbacks: DECISION_FALLBACKS });
    out.push(...fallbackNote(g, width, '--wide'), ...g.lines);
  }
  return `${out.join('\n')}\n`;
}
