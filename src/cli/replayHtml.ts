// `replay --format html`: one self-contained page (inline SVG and CSS, no script from anywhere, no
// network): cost per hour and evictions per pass for each config, the decisions timeline and the
// summary table. The report's JSON is embedded too, for anyone who wants the exact numbers.
import type { ReplayReport } from '../core/replay/report.ts';
import { summaryRows } from './replayTable.ts';

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
const WIDTH = 900;
const HEIGHT = 260;
const PAD = { left: 70, right: 20, top: 20, bottom: 40 };

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** `</script>` and friends cannot end the embedded JSON early. */
const embedJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c');

function axes(maxY: number, passes: number, yLabel: string, format: (n: number) => string): string {
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const plotW = WIDTH - PAD.left - PAD.right;
  const parts: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const y = PAD.top + plotH - (plotH * i) / 4;
    parts.push(`<line x1="${PAD.left}" x2="${PAD.left + plotW}" y1="${y}" y2="${y}" class="grid"/>`);
    parts.push(`<text x="${PAD.left - 6}" y="${y + 4}" text-anchor="end">${escapeHtml(format((maxY * i) / 4))}</text>`);
  }
  const ticks = Math.min(8, passes);
  for (let i = 0; i <= ticks; i++) {
    const pass = Math.round(((passes - 1) * i) / Math.max(1, ticks));
    const x = PAD.left + (plotW * pass) / Math.max(1, passes - 1);
    parts.push(`<text x="${x}" y="${HEIGHT - PAD.bottom + 16}" text-anchor="middle">${pass}</text>`);
  }
  parts.push(`<text x="${PAD.left + plotW / 2}" y="${HEIGHT - 6}" text-anchor="middle">pass</text>`);
  parts.push(`<text x="14" y="${PAD.top + plotH / 2}" transform="rotate(-90 14 ${PAD.top + plotH / 2})" text-anchor="middle">${escapeHtml(yLabel)}</text>`);
  return parts.join('');
}

function costChart(report: ReplayReport): string {
  const passes = report.passes;
  const maxY = Math.max(0.0001, ...report.configs.flatMap((c) => c.passes.map((p) => p.costPerHour))) * 1.1;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const plotW = WIDTH - PAD.left - PAD.right;
  const x = (pass: number) => PAD.left + (plotW * pass) / Math.max(1, passes - 1);
  const y = (value: number) => PAD.top + plotH - (plotH * value) / maxY;
  const series = report.configs.map((c, i) => {
    const d = c.passes.map((p, k) => `${k === 0 ? 'M' : 'L'}${x(p.pass).toFixed(1)},${y(p.costPerHour).toFixed(1)}`).join(' ');
    return `<path class="series" data-config="${escapeHtml(c.name)}" d="${d}" stroke="${COLORS[i % COLORS.length]}"><title>${escapeHtml(c.name)}</title></path>`;
  });
  return `<svg id="cost-chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="cost per hour per pass">${axes(maxY, passes, '$ per hour', (n) => `$${n.toFixed(3)}`)}${series.join('')}</svg>`;
}

function evictionChart(report: ReplayReport): string {
  const passes = report.passes;
  // A multiple of 4, so that the four grid lines fall on whole pod counts.
  const maxY = Math.ceil(Math.max(1, ...report.configs.flatMap((c) => c.passes.map((p) => p.evictions))) / 4) * 4;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const plotW = WIDTH - PAD.left - PAD.right;
  const slot = plotW / Math.max(1, passes);
  const bar = Math.max(0.5, slot / Math.max(1, report.configs.length));
  const series = report.configs.map((c, i) => {
    const bars = c.passes
      .filter((p) => p.evictions > 0)
      .map((p) => {
        const h = (plotH * p.evictions) / maxY;
        return `<rect x="${(PAD.left + slot * p.pass + bar * i).toFixed(2)}" y="${(PAD.top + plotH - h).toFixed(1)}" width="${bar.toFixed(2)}" height="${h.toFixed(1)}" data-pass="${p.pass}" data-evictions="${p.evictions}"><title>${escapeHtml(c.name)}: pass ${p.pass}, ${p.evictions} pod(s) evicted</title></rect>`;
      });
    return `<g class="series" data-config="${escapeHtml(c.name)}" fill="${COLORS[i % COLORS.length]}">${bars.join('')}</g>`;
  });
  return `<svg id="evictions-chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="evictions per pass">${axes(maxY, passes, 'pods evicted', (n) => n.toFixed(0))}${series.join('')}</svg>`;
}

function legend(report: ReplayReport): string {
  return `<p class="legend">${report.configs.map((c, i) => `<span><i style="background:${COLORS[i % COLORS.length]}"></i>${escapeHtml(c.name)}</span>`).join(' ')}</p>`;
}

function summaryTable(report: ReplayReport): string {
  const [head, ...rows] = summaryRows(report);
  const keys = ['endCostPerHour', 'averageCostPerHour', 'savingsDollars', 'podsEvicted', 'nodesDisrupted', 'nodesReplaced', 'regret', 'pendingPodMinutes'] as const;
  return `<table id="summary"><thead><tr>${head!.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((row, i) => {
      const summary = report.configs[i]!.summary;
      const cells = row.slice(1).map((cell, k) => `<td data-key="${keys[k]}" data-value="${summary[keys[k]!]}">${escapeHtml(cell)}</td>`);
      return `<tr data-config="${escapeHtml(report.configs[i]!.name)}"><th>${escapeHtml(row[0]!)}</th>${cells.join('')}</tr>`;
    })
    .join('')}</tbody></table>`;
}

function timeline(report: ReplayReport): string {
  return report.configs
    .map((c) => {
      const rows = c.decisions
        .map(
          (d) =>
            `<tr${d.regret > 0 ? ' class="regret"' : ''}><td>${d.pass}</td><td>${escapeHtml(d.at)}</td><td>${escapeHtml(d.method)}</td><td>${escapeHtml(d.action)}</td><td>${escapeHtml(d.nodes.join(', '))}</td><td>${escapeHtml(d.replacement ?? '-')}</td><td>$${d.savingsPerHour.toFixed(4)}</td><td>${d.podsEvicted}</td><td>${d.regret || ''}</td></tr>`,
        )
        .join('');
      const body = c.decisions.length === 0 ? '<p>No decisions.</p>' : `<table class="timeline"><thead><tr><th>pass</th><th>at</th><th>method</th><th>action</th><th>nodes</th><th>replacement</th><th>saves $/hr</th><th>pods</th><th>regret</th></tr></thead><tbody>${rows}</tbody></table>`;
      return `<section class="decisions" data-config="${escapeHtml(c.name)}"><h3>${escapeHtml(c.name)}: ${c.decisions.length} decision(s)</h3>${body}</section>`;
    })
    .join('');
}

export function renderReplayHtml(report: ReplayReport): string {
  const hours = (report.passes * report.intervalMs) / 3_600_000;
  const title = `eks-consolidator replay ${report.startedAt}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}h3{font-size:14px}
svg{width:100%;height:auto;background:#fafafa;border:1px solid #ddd}
svg text{font-size:11px;fill:#555}svg .grid{stroke:#e4e4e4}
path.series{fill:none;stroke-width:2}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
th:first-child,table.timeline td:nth-child(5){text-align:left}tr.regret{background:#fdecea}
.legend span{margin-right:16px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
.meta{color:#555}
</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p class="meta">${report.passes} passes every ${report.intervalMs / 60_000} min (${hours.toFixed(1)} h, until ${escapeHtml(report.endedAt)}); scheduler ${escapeHtml(report.scheduler)}; churn ${escapeHtml(report.churn)}; seed ${report.seed}; launch delay ${report.launchDelayMs / 1000} s; source ${escapeHtml(report.source)}.
Baseline without consolidation: $${report.baseline.totalCostDollars.toFixed(2)} in all, $${report.baseline.averageCostPerHour.toFixed(4)}/hr on average.</p>
${report.notes.map((n) => `<p class="meta">note: ${escapeHtml(n)}</p>`).join('')}
<h2>Summary</h2>
${summaryTable(report)}
<p class="meta">Regret: replacements disrupted again within 30 minutes of their launch. Saved: against the baseline.</p>
<h2>Cost per hour at each pass</h2>
${legend(report)}
${costChart(report)}
<h2>Pods evicted per pass</h2>
${legend(report)}
${evictionChart(report)}
<h2>Decisions</h2>
${timeline(report)}
<script type="application/json" id="replay-data">${embedJson(report)}</script>
</body></html>
`;
}
