// `--format table`: the plan for a person who will act on it. Same content as the JSON, laid out the way
// kubectl lays things out: a summary first, then the decisions in the order they would be taken, then
// every node grouped by outcome (acted on, kept, blocked) with what it holds and why.
//
// Width: 120 columns by default (or the terminal's, when narrower). Long lists are cut with a count
// ("+4 more"), long cells with "…", and the reasons go on their own indented, wrapped line. `wide`
// cuts nothing: full node names, every instance type, the reasons as the last column.
// Colour only when asked for (the CLI decides: a terminal, no NO_COLOR), and never needed to read it.
import { HOURS_PER_MONTH, type Decision, type Plan, type PlanEfficiency, type PlanNode, type PlanProjection } from '../core/plan.ts';
import { describeActuator } from '../core/disruption/actuatorChoice.ts';
import type { ActuatorKind } from '../core/ports/actuator.ts';
import { balancedLines } from './balancedTable.ts';
import { fallbackNote, fitLine, grid, listWithCount, painter, wrap, type Cell, type Column, type Fallback, type Paint, type Style } from './layout.ts';

export const DEFAULT_TABLE_WIDTH = 120;
export const MIN_TABLE_WIDTH = 60;

export interface TableOptions {
  /** Nothing cut or wrapped; full names. */
  readonly wide?: boolean;
  /** Where each evicted pod is expected to land, under each decision. */
  readonly showMoves?: boolean;
  /** ANSI colour. */
  readonly color?: boolean;
  /** Columns available (ignored when `wide`). Default 120. */
  readonly width?: number;
}

// ---------------------------------------------------------------------------------------------------
// Units

const Mi = 1024 * 1024;
const Gi = 1024 * Mi;

/** `$0.0960`; unknown prices (absent or null) are `?`, never a made-up $0. */
const money = (n: number | null | undefined) => (n === undefined || n === null ? '?' : `$${n.toFixed(4)}`);
const monthly = (perHour: number) => `$${(perHour * HOURS_PER_MONTH).toFixed(2)}`;

/** cpu as Kubernetes writes it: whole cores `4`, else millicores `1930m`; large odd values `15.9`. */
export function formatCpu(millis: number): string {
  if (millis % 1000 === 0) return `${millis / 1000}`;
  if (millis >= 10_000) return `${(millis / 1000).toFixed(1)}`;
  return `${Math.round(millis)}m`;
}

/** memory in binary units: `6.7Gi`, `512Mi`, `0`. */
export function formatMemory(bytes: number): string {
  if (bytes === 0) return '0';
  if (bytes >= Gi) return `${Number((bytes / Gi).toFixed(1))}Gi`;
  return `${Math.max(1, Math.round(bytes / Mi))}Mi`;
}

/** `575m/1930m`; on nodes of 10 cores or more both in cores, `1.7/15.9`, so the two read alike. */
export function cpuPair(requestedMillis: number, allocatableMillis: number): string {
  if (allocatableMillis >= 10_000) return `${(requestedMillis / 1000).toFixed(1)}/${(allocatableMillis / 1000).toFixed(1)}`;
  return `${formatCpu(requestedMillis)}/${formatCpu(allocatableMillis)}`;
}

/** `4.6/6.7Gi` when both are in Gi (the unit once), else `140Mi/3Gi`. */
export function memoryPair(requestedBytes: number, allocatableBytes: number): string {
  const requested = formatMemory(requestedBytes);
  const allocatable = formatMemory(allocatableBytes);
  if (requested.endsWith('Gi') && allocatable.endsWith('Gi')) return `${requested.slice(0, -2)}/${allocatable}`;
  return `${requested}/${allocatable}`;
}

const percent = (part: number, whole: number) => (whole > 0 ? `${Math.round((100 * part) / whole)}%` : '-');

// ---------------------------------------------------------------------------------------------------
// The table

type Outcome = 'delete' | 'replace' | 'kept' | 'blocked';

function outcomeOf(node: PlanNode, plan: Plan): Outcome {
  if (node.decision !== undefined) return plan.decisions[node.decision]!.action;
  return node.candidate ? 'kept' : 'blocked';
}

const OUTCOME_STYLE: Record<Outcome, Style | undefined> = { delete: 'red', replace: 'yellow', kept: undefined, blocked: 'dim' };

/**
 * The DNS suffix every node name shares (`.ec2.internal`, `.us-west-2.compute.internal`): left out of
 * the narrow table, where it costs 13-27 columns and tells nothing apart.
 */
/**
 * Shortens node names by the DNS suffix they all share (none when `wide`): what the narrow tables show,
 * and the suffix they say was left out ('' when nothing is).
 */
export function nodeNameShortener(names: readonly string[], wide: boolean): { suffix: string; short: (name: string) => string } {
  const suffix = wide ? '' : sharedSuffix(names);
  return { suffix, short: (name) => (suffix !== '' && name.endsWith(suffix) ? name.slice(0, -suffix.length) : name) };
}

/**
 * The width a table gets: 120 columns, or a terminal's when it is narrower (a wider one keeps 120:
 * --wide for more); never below the minimum.
 */
export function tableWidthFor(terminal: { readonly isTTY?: boolean; readonly columns?: number }): number {
  return Math.max(MIN_TABLE_WIDTH, Math.min(DEFAULT_TABLE_WIDTH, terminal.isTTY === true && terminal.columns ? terminal.columns : DEFAULT_TABLE_WIDTH));
}

function sharedSuffix(names: readonly string[]): string {
  if (names.length === 0) return '';
  const suffixes = names.map((n) => (n.includes('.') ? n.slice(n.indexOf('.')) : ''));
  return suffixes.every((s) => s === suffixes[0]) ? suffixes[0]! : '';
}

/**
 * The plan's efficiency (core/efficiency): where the plan ends, the lower bound no plan can beat, and
 * the gap between them read as what it is: the most a better packing could still save, not a saving
 * anyone expects (the projected later passes say what is expected). Empty when the plan has none.
 */
function efficiencyLines(e: PlanEfficiency | undefined, p: PlanProjection | undefined): string[] {
  if (e === undefined) return [];
  const perHour = (n: number | null) => `${money(n)}/hr`;
  const lines: string[] = [];
  if (e.unpricedNodes !== undefined) {
    // Start, end and bound all leave the unpriced nodes out: a ratio of those would mean nothing.
    lines.push(`efficiency: no figure: ${e.unpricedNodes} node(s) have no price in the catalog (see the notes)`);
  } else {
    // Every node of the cluster (those outside NodePools too, as the bound counts them).
    const end = `this plan ends at ${perHour(e.endCostPerHour)} for all nodes (from ${perHour(e.startCostPerHour)})`;
    if (e.lowerBoundPerHour === null) {
      lines.push(`efficiency: ${end}; no lower bound (no capacity the NodePools allow holds the pods)`);
    } else {
      const ratio = e.ratio === null ? '' : ` (${e.ratio.toFixed(3)}x it)`;
      const expected = p === undefined ? '' : `; the later passes projected below are expected to save ${perHour(p.savingsPerHour)} of that`;
      lines.push(
        `efficiency: ${end}; no packing the NodePools allow ends below ${perHour(e.lowerBoundPerHour)}${ratio}, ` +
          `so a better packing could save at most ${perHour(e.leftPerHour)} more${expected}`,
      );
    }
  }
  const held = Object.entries(e.heldBack)
    .filter(([, v]) => v.nodes > 0)
    .sort((a, b) => b[1].pricePerHour - a[1].pricePerHour || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    // With nodes of unknown price, a sum of the others' prices would read as the group's cost.
    .map(([cause, v]) => (e.unpricedNodes === undefined ? `${cause} ${v.nodes} (${perHour(v.pricePerHour)})` : `${cause} ${v.nodes}`));
  const heading = e.unpricedNodes === undefined ? 'nodes kept, by first reason, with what they cost (not what moving them would save)' : 'nodes kept, by first reason';
  if (held.length > 0) lines.push(`${heading}: ${held.join(', ')}`);
  return lines;
}

/**
 * Which actuator acts on the pools: one line naming each actuator's pools, with the reason when every
 * pool has the same one, else a short line per pool with its reason. Empty when the plan does not say.
 */
function actuatorLines(actuators: Plan['actuators']): string[] {
  const entries = Object.entries(actuators ?? {});
  if (entries.length === 0) return [];
  const byKind = new Map<ActuatorKind, string[]>();
  for (const [pool, a] of entries) byKind.set(a.actuator, [...(byKind.get(a.actuator) ?? []), pool]);
  const groups = [...byKind].map(([kind, pools]) => `${describeActuator(kind)} for ${pools.join(', ')}`).join('; ');
  const whys = new Set(entries.map(([, a]) => a.why));
  if (whys.size === 1) return [`acting through: ${groups} (${entries[0]![1].why})`];
  return [`acting through: ${groups}`, ...entries.map(([pool, a]) => `  ${pool}: ${a.actuator}, ${a.why}`)];
}

/** The later waves in one summary line; empty when the plan projects none. */
function projectionLines(p: PlanProjection | undefined): string[] {
  if (p === undefined) return [];
  const perHour = (n: number | null) => `${money(n)}/hr`;
  const stopped = p.stoppedBecause === 'settled' ? '' : ` (projection cut short: ${p.stoppedBecause}; PLAN_WAVES sets it)`;
  if (p.waves.length === 0) return [`later passes: nothing more is expected after this plan${stopped}`];
  const ratio = p.ratio === null ? '' : `, ${p.ratio.toFixed(3)}x the lower bound`;
  const unknown = p.unpricedDecisions === undefined ? '' : ` (${p.unpricedDecisions} decision(s) of unknown price)`;
  const waited = p.waves.some((w) => w.waitedFor !== undefined) ? ', after a scheduled budget of zero ends' : '';
  return [
    `later passes (projected, not acted on now): ${p.waves.length} more wave(s)${waited}, ${p.nodesDisrupted} node(s), ${p.podsEvicted} pod(s), ` +
      `saving ${perHour(p.savingsPerHour)} more${unknown}; all nodes would end at ${perHour(p.endCostPerHour)}${ratio}${stopped}`,
  ];
}

/**
 * Each projected wave: when, what it saves, and its decisions in a line each (node lists cut with a
 * count unless `wide`).
 */
function waveLines(p: PlanProjection | undefined, layout: { wide: boolean; width: number; short: (name: string) => string }): string[] {
  if (p === undefined || p.waves.length === 0) return [];
  const { wide, width, short } = layout;
  const out: string[] = wrap('LATER WAVES, projected: what the next passes are expected to do once this plan is carried out (each pass decides again)', width, '  ', '');
  for (const wave of p.waves) {
    out.push(`  wave ${wave.wave} (${wave.evaluatedAt}): ${wave.decisions.length} decision(s), saving ${money(wave.savingsPerHour)}/hr`);
    // Why the wave comes when it does, and what it undoes: a freeze waited for, a launch replaced again
    // soon after (the regret replay counts), pods evicted again right after they moved.
    const why: string[] = [];
    if (wave.waitedFor !== undefined) why.push(`waits: ${wave.waitedFor}`);
    for (const r of wave.relaunched ?? []) why.push(`regret: disrupts ${short(r.node)}, launched by this plan at ${r.launchedAt}`);
    if (wave.evictedAgain !== undefined) {
      why.push(`evicts again ${wave.evictedAgain.length} pod(s) the wave before moved (kube-scheduler is expected to have put them on these nodes): ${wave.evictedAgain.join(', ')}`);
    }
    for (const text of why) out.push(...(wide ? [`    ${text}`] : wrap(text, width, '      ', '    ')));
    const shown = wide ? wave.decisions : wave.decisions.slice(0, MAX_WAVE_DECISIONS);
    for (const d of shown) {
      const launch = d.replacements.map((r) => `${r.capacityType} ${r.instanceTypes[0] ?? '?'}`).join(' + ');
      const tail = `${launch ? ` with ${launch}` : ''}: ${d.evictedPods.length} pod(s), saves ${money(d.savingsPerHour)}/hr`;
      const names = d.nodes.map(short);
      const nodes = wide ? names.join(', ') : listWithCount(names, Math.max(20, width - 8 - d.action.length - tail.length));
      out.push(...wrap(`${d.action} ${nodes}${tail}`, width, '      ', '    - '));
    }
    if (shown.length < wave.decisions.length) out.push(`    ... and ${wave.decisions.length - shown.length} more decision(s) (--wide lists them all)`);
  }
  return out;
}

/** Decisions listed per later wave without --wide. */
const MAX_WAVE_DECISIONS = 10;

export function renderTable(plan: Plan, options: TableOptions = {}): string {
  const wide = options.wide === true;
  const width = wide ? Number.POSITIVE_INFINITY : Math.max(MIN_TABLE_WIDTH, options.width ?? DEFAULT_TABLE_WIDTH);
  const paint = painter(options.color === true);
  const { suffix, short } = nodeNameShortener(plan.nodes.map((n) => n.name), wide);
  const out: string[] = [];

  out.push(paint('bold', `eks-consolidator plan at ${plan.evaluatedAt}${plan.dryRun ? ' (dry run: nothing is changed)' : ''}`));
  for (const note of plan.notes ?? []) out.push(...wrap(note, width, '      ', 'note: '));
  if (suffix !== '') out.push(paint('dim', `node names are shown without ${suffix} (--wide shows them whole)`));
  out.push('');

  // Summary: what a person checks first.
  const counts: Record<Outcome, number> = { delete: 0, replace: 0, kept: 0, blocked: 0 };
  for (const node of plan.nodes) counts[outcomeOf(node, plan)] += 1;
  // A decision of unknown savings makes the total no figure ("?"), never $0.
  const unpricedDecisions = plan.summary ? (plan.summary.unpricedDecisions ?? 0) : plan.decisions.filter((d) => d.savingsPerHour === null).length;
  const savingsPerHour = plan.summary ? plan.summary.savingsPerHour : unpricedDecisions > 0 ? null : plan.decisions.reduce((s, d) => s + (d.savingsPerHour ?? 0), 0);
  const podsToMove = plan.summary?.podsEvicted ?? plan.decisions.reduce((s, d) => s + d.evictedPods.length, 0);
  out.push(paint('bold', 'SUMMARY'));
  out.push(
    `  ${plan.nodes.length} node(s) in NodePools: ${paint('red', `${counts.delete} to delete`)}, ${paint('yellow', `${counts.replace} to replace`)}, ` +
      `${counts.kept} kept, ${counts.blocked} blocked; ${plan.decisions.length} decision(s), ${podsToMove} pod(s) to move`,
  );
  const outside = plan.summary?.nodesOutsideNodePools ?? 0;
  if (outside > 0) out.push(`  ${outside} node(s) without a karpenter.sh/nodepool label: never disrupted, not listed (they still receive pods)`);
  if (savingsPerHour === null) {
    const known = plan.summary?.knownSavingsPerHour;
    const rest = unpricedDecisions < plan.decisions.length && known !== undefined ? `; the other decision(s) save ${money(known)} per hour` : '';
    out.push(...wrap(`savings ? per hour: ${unpricedDecisions} decision(s) remove nodes of unknown price${rest}`, width, '    ', '  '));
  } else out.push(`  savings ${paint('green', `${money(savingsPerHour)} per hour, ${monthly(savingsPerHour)} per month`)} (${HOURS_PER_MONTH} h)`);
  const withUsage = plan.nodes.filter((n) => n.usage !== undefined);
  if (withUsage.length > 0) {
    const sum = (f: (n: PlanNode) => number) => withUsage.reduce((s, n) => s + f(n), 0);
    const cpuReq = sum((n) => n.usage!.cpuRequestedMillis);
    const cpuAlloc = sum((n) => n.usage!.cpuAllocatableMillis);
    const memReq = sum((n) => n.usage!.memoryRequestedBytes);
    const memAlloc = sum((n) => n.usage!.memoryAllocatableBytes);
    out.push(
      `  requested: cpu ${formatCpu(cpuReq)} of ${formatCpu(cpuAlloc)} (${percent(cpuReq, cpuAlloc)}), ` +
        `memory ${formatMemory(memReq)} of ${formatMemory(memAlloc)} (${percent(memReq, memAlloc)})`,
    );
  }
  const priced = plan.nodes.filter((n) => n.pricePerHour !== undefined);
  if (priced.length > 0) {
    const cost = priced.reduce((s, n) => s + n.pricePerHour!, 0);
    const unknown = plan.nodes.length - priced.length;
    out.push(`  nodes cost ${money(cost)} per hour, ${monthly(cost)} per month${unknown > 0 ? ` (${unknown} node(s) of unknown price not counted)` : ''}`);
  }
  // A pool's own line sits under the "acting through" line.
  for (const line of actuatorLines(plan.actuators)) out.push(...(line.startsWith('  ') ? wrap(line, width, '        ', '    ') : wrap(line, width, '    ', '  ')));
  for (const line of efficiencyLines(plan.efficiency, plan.projection)) out.push(...wrap(line, width, '    ', '  '));
  for (const line of projectionLines(plan.projection)) out.push(...wrap(line, width, '    ', '  '));
  out.push('');

  // Decisions.
  if (plan.decisions.length === 0) {
    out.push('DECISIONS: none. Nothing would be changed.');
  } else {
    out.push(paint('bold', 'DECISIONS, in the order they would be taken'));
    out.push(...decisionLines(plan, { wide, width, paint, short, showMoves: options.showMoves === true }));
  }
  // Balanced pools: the scores of the moves taken and refused (none when no move was scored).
  out.push(...balancedLines(plan, { width, paint, short }));
  out.push('');
  const waves = waveLines(plan.projection, { wide, width, short });
  if (waves.length > 0) out.push(...waves, '');

  // Nodes, grouped by outcome.
  out.push(`${paint('bold', 'NODES')} (CPU and MEMORY: requested by the pods / allocatable, and the share requested)`);
  if (plan.nodes.length === 0) out.push('  none: no node carries a karpenter.sh/nodepool label (see README.md, "Troubleshooting")');
  else out.push(...nodeLines(plan, { wide, width, paint, short }));
  // Every section lays itself out in `width`; this catches any line that did not (a summary sentence).
  return `${(wide ? out : out.flatMap((line) => fitLine(line, width))).join('\n')}\n`;
}

interface Layout {
  readonly wide: boolean;
  readonly width: number;
  readonly paint: Paint;
  readonly short: (name: string) => string;
}

const DECISION_INDENT = '    ';

/**
 * What the decision rows give up on a narrow terminal, in this order: the new price (the launch line
 * under the row has it), the monthly savings (the hourly ones stay), the disruption reason (METHOD
 * mostly implies it: emptiness is Empty), then the current price.
 */
export const DECISION_FALLBACKS: readonly Fallback[] = [{ drop: 'NEW $/HR' }, { drop: 'SAVES $/MONTH' }, { drop: 'REASON' }, { drop: 'NOW $/HR' }];

/**
 * What the node rows give up on a narrow terminal, in this order: the zone, the capacity type, CPU and
 * MEMORY as their shares only (`30%`, not `575m/1930m 30%`), the pod count, then the price.
 */
export const NODE_FALLBACKS: readonly Fallback[] = [
  { drop: 'ZONE' },
  { drop: 'CAPACITY' },
  { narrow: ['CPU', 'MEMORY'], as: 'as shares only' },
  { drop: 'PODS' },
  { drop: '$/HR' },
];

function decisionLines(plan: Plan, layout: Layout & { showMoves: boolean }): string[] {
  const { wide, width, paint, short } = layout;
  // NODES comes last: it is the one cell of unbounded length, and gets the columns left over.
  const columns: Column[] = [
    { header: '#', align: 'right' },
    { header: 'ACTION' },
    { header: 'METHOD' },
    { header: 'REASON' },
    { header: 'PODS', align: 'right' },
    { header: 'NOW $/HR', align: 'right' },
    { header: 'NEW $/HR', align: 'right' },
    { header: 'SAVES $/HR', align: 'right' },
    { header: 'SAVES $/MONTH', align: 'right' },
    { header: 'NODES', shrinkable: true, minWidth: 16 },
  ];
  const blocks: string[][] = [];
  const rows = plan.decisions.map((d, i) => {
    const style = d.action === 'delete' ? 'red' : 'yellow';
    return [
      { text: String(i + 1) },
      { text: d.action, style },
      { text: d.move ? `${d.method} (${d.move})` : d.method },
      { text: d.reason },
      { text: String(d.evictedPods.length) },
      { text: money(d.currentPricePerHour) },
      { text: money(d.replacementPricePerHour) },
      { text: money(d.savingsPerHour), style: 'green' },
      { text: d.savingsPerHour === null ? '?' : monthly(d.savingsPerHour), style: 'green' },
    ] satisfies Cell[] as Cell[];
  });
  // The node list takes the columns left over, cut with a count ("+4 more") rather than "…".
  plan.decisions.forEach((d, i) => {
    const names = d.nodes.map(short);
    rows[i]!.push({ text: names.join(', '), fit: (max) => listWithCount(names, max) });
  });
  const g = grid(columns, rows, width, paint, { fallbacks: DECISION_FALLBACKS });
  const [header, ...lines] = g.lines;
  plan.decisions.forEach((d, i) => blocks.push([lines[i]!, ...decisionDetail(d, layout)]));
  return [...fallbackNote(g, width).map((l) => paint('dim', l)), header!, ...blocks.flat()];
}

function decisionDetail(d: Decision, layout: Layout & { showMoves: boolean }): string[] {
  const { wide, width, paint, short } = layout;
  const out: string[] = [];
  const typesMax = wide ? Number.POSITIVE_INFINITY : 3;
  for (const r of d.replacements) {
    const types = r.instanceTypes.length <= typesMax ? r.instanceTypes.join(', ') : `${r.instanceTypes.slice(0, typesMax).join(', ')} +${r.instanceTypes.length - typesMax} more`;
    const text = `launch: ${r.capacityType} ${types} in ${r.zones.join(', ')} from NodePool ${r.nodePool} at ${money(r.pricePerHour)}/hr`;
    out.push(...(wide ? [`${DECISION_INDENT}${text}`] : wrap(text, width, `${DECISION_INDENT}        `, DECISION_INDENT)));
  }
  if (d.summary !== undefined) {
    const text = `why: ${d.summary}`;
    out.push(...(wide ? [`${DECISION_INDENT}${text}`] : wrap(text, width, `${DECISION_INDENT}     `, DECISION_INDENT)).map((l) => paint('dim', l)));
  }
  if (layout.showMoves) {
    if (d.evictedPods.length === 0) out.push(`${DECISION_INDENT}moves: no pod to move`);
    // Where kube-scheduler is expected to put each pod when the pass is carried out (the projection's
    // model); the plan's own placement only when the projection is off.
    const expected = d.expectedDestinations;
    const byDestination = new Map<string, string[]>();
    let elsewhere = 0;
    for (const pod of d.evictedPods) {
      const planned = d.podDestinations?.[pod];
      const to = expected === undefined ? planned : expected[pod];
      if (expected !== undefined && to !== undefined && planned !== undefined && to !== planned) elsewhere += 1;
      let key: string;
      if (to === undefined) key = expected === undefined ? 'unknown' : 'no node (would stay Pending)';
      else key = to.startsWith('replacement-') ? `${to} (new node)` : short(to);
      byDestination.set(key, [...(byDestination.get(key) ?? []), pod]);
    }
    let first = true;
    for (const [to, pods] of byDestination) {
      const lead = first ? `${DECISION_INDENT}moves: ` : `${DECISION_INDENT}       `;
      first = false;
      const text = `-> ${paint('cyan', to)}: ${pods.join(', ')}`;
      // Wrapping counts visible columns: measure without the colour codes.
      if (wide) out.push(`${lead}${text}`);
      else {
        const plain = `-> ${to}: ${pods.join(', ')}`;
        const wrapped = wrap(plain, width, `${DECISION_INDENT}          `, lead);
        wrapped[0] = wrapped[0]!.replace(`-> ${to}:`, `-> ${paint('cyan', to)}:`);
        out.push(...wrapped);
      }
    }
    if (d.evictedPods.length > 0) {
      const text =
        expected === undefined
          ? 'as the plan places them; with the projection off, where kube-scheduler puts them is not modelled'
          : elsewhere > 0
            ? `as kube-scheduler is expected to place them (least allocated first); ${elsewhere} of ${d.evictedPods.length} land elsewhere than the plan put them (podDestinations in --output json)`
            : 'as kube-scheduler is expected to place them (least allocated first), where the plan put them';
      out.push(...(wide ? [`${DECISION_INDENT}       ${text}`] : wrap(text, width, `${DECISION_INDENT}       `, `${DECISION_INDENT}       `)).map((l) => paint('dim', l)));
    }
  }
  return out;
}

function nodeLines(plan: Plan, layout: Layout): string[] {
  const { wide, width, paint, short } = layout;
  const order: Outcome[] = ['delete', 'replace', 'kept', 'blocked'];
  const nodes = [...plan.nodes].sort((a, b) => {
    const byOutcome = order.indexOf(outcomeOf(a, plan)) - order.indexOf(outcomeOf(b, plan));
    return byOutcome !== 0 ? byOutcome : (a.decision ?? 0) - (b.decision ?? 0);
  });
  const columns: Column[] = [
    { header: 'NODE', shrinkable: true, minWidth: 14, softMinWidth: 15 },
    { header: 'POOL', shrinkable: true, minWidth: 6, softMinWidth: 10 },
    { header: 'ZONE' },
    { header: 'TYPE', shrinkable: true, minWidth: 11, softMinWidth: 13 },
    { header: 'CAPACITY' },
    { header: 'CPU', align: 'right' },
    { header: 'MEMORY', align: 'right' },
    { header: 'PODS', align: 'right' },
    { header: '$/HR', align: 'right' },
    { header: 'OUTCOME' },
    ...(wide ? [{ header: 'WHY' }] : []),
  ];
  const whyOf = (n: PlanNode) => (n.decision !== undefined ? `see decision #${n.decision + 1}` : n.reasons.join('; '));
  const rows = nodes.map((n) => {
    const outcome = outcomeOf(n, plan);
    const u = n.usage;
    const cells: Cell[] = [
      { text: short(n.name) },
      { text: n.nodePool },
      { text: n.zone ?? '?' },
      { text: n.instanceType ?? '?' },
      { text: n.capacityType ?? '?' },
      { text: u ? `${cpuPair(u.cpuRequestedMillis, u.cpuAllocatableMillis)} ${percent(u.cpuRequestedMillis, u.cpuAllocatableMillis)}` : '?', narrow: u ? percent(u.cpuRequestedMillis, u.cpuAllocatableMillis) : '?' },
      {
        text: u ? `${memoryPair(u.memoryRequestedBytes, u.memoryAllocatableBytes)} ${percent(u.memoryRequestedBytes, u.memoryAllocatableBytes)}` : '?',
        narrow: u ? percent(u.memoryRequestedBytes, u.memoryAllocatableBytes) : '?',
      },
      { text: u ? String(u.pods) : '?' },
      { text: n.pricePerHour === undefined ? '?' : n.pricePerHour.toFixed(4) },
      { text: n.decision !== undefined ? `${outcome} #${n.decision + 1}` : outcome, ...(OUTCOME_STYLE[outcome] ? { style: OUTCOME_STYLE[outcome] } : {}) },
    ];
    if (wide) cells.push({ text: whyOf(n) });
    return cells;
  });
  const g = grid(columns, rows, width, paint, { tight: true, fallbacks: NODE_FALLBACKS });
  const [header, ...lines] = g.lines;
  const out = [...fallbackNote(g, width).map((l) => paint('dim', l)), header!];
  nodes.forEach((n, i) => {
    out.push(lines[i]!);
    // Disrupted nodes point at their decision (the why is there); the others say why on their own line.
    if (!wide && n.decision === undefined && n.reasons.length > 0) {
      out.push(...wrap(`why: ${n.reasons.join('; ')}`, width, '         ', '    ').map((l) => paint('dim', l)));
    }
  });
  return out;
}
