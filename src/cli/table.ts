// `--format table`: the plan for a person. Same content as the JSON, laid out to be read.
import { describeEfficiency } from '../core/efficiency/efficiency.ts';
import { HOURS_PER_MONTH, type Plan } from '../core/plan.ts';

const money = (n: number) => `$${n.toFixed(4)}`;

function columns(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
}

export function renderTable(plan: Plan): string {
  const out: string[] = [];
  out.push(`eks-consolidator plan at ${plan.evaluatedAt}${plan.dryRun ? ' (dry run: nothing is changed)' : ''}`);
  for (const note of plan.notes ?? []) out.push(`note: ${note}`);
  out.push('');

  if (plan.decisions.length === 0) {
    out.push('Decisions: none. Nothing would be changed.');
  } else {
    out.push('Decisions, in the order they would be taken:');
    const rows = [['#', 'METHOD', 'ACTION', 'NODES', 'REPLACEMENT', 'NOW $/HR', 'NEW $/HR', 'SAVES $/HR', 'SAVES $/MONTH', 'PODS']];
    plan.decisions.forEach((d, i) => {
      const r = d.replacements[0];
      rows.push([
        String(i + 1),
        d.method,
        d.action,
        d.nodes.join(','),
        r ? `${r.capacityType} ${r.instanceTypes.slice(0, 3).join('|')}${r.instanceTypes.length > 3 ? `|+${r.instanceTypes.length - 3}` : ''}${d.replacements.length > 1 ? ` (+${d.replacements.length - 1} more node(s))` : ''}` : '-',
        money(d.currentPricePerHour),
        money(d.replacementPricePerHour),
        money(d.savingsPerHour),
        `$${(d.savingsPerHour * HOURS_PER_MONTH).toFixed(2)}`,
        String(d.evictedPods.length),
      ]);
    });
    out.push(columns(rows));
    const total = plan.decisions.reduce((s, d) => s + d.savingsPerHour, 0);
    out.push('');
    out.push(`Total savings: ${money(total)} per hour, $${(total * HOURS_PER_MONTH).toFixed(2)} per month (${HOURS_PER_MONTH} h).`);
    plan.decisions.forEach((d, i) => {
      if (d.dryRunOnly) out.push(`Decision ${i + 1} is planned only: ${d.dryRunOnly}.`);
    });
  }
  if (plan.efficiency) {
    out.push('');
    out.push(describeEfficiency(plan.efficiency));
  }
  out.push('');
  out.push('Nodes:');
  const rows = [['NODE', 'POOL', 'TYPE', '$/HR', 'OUTCOME', 'WHY']];
  for (const n of plan.nodes) {
    const outcome = n.decision !== undefined ? `${plan.decisions[n.decision]!.action} (#${n.decision + 1})` : n.candidate ? 'kept' : 'blocked';
    const why = n.decision !== undefined ? plan.decisions[n.decision]!.summary ?? '' : n.reasons.join('; ');
    rows.push([
      n.name,
      n.nodePool,
      `${n.instanceType ?? '?'}${n.capacityType === 'spot' ? ' (spot)' : ''}`,
      n.pricePerHour !== undefined ? money(n.pricePerHour) : '?',
      outcome,
      why,
    ]);
  }
  out.push(columns(rows));
  return `${out.join('\n')}\n`;
}
