// The table (README.md, "Reading the table"): snapshots of the demo, widths, colour only on a terminal.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Decision, Plan, PlanEfficiency, PlanNode } from '../../src/core/plan.ts';
import { cpuPair, DECISION_FALLBACKS, formatCpu, formatMemory, memoryPair, NODE_FALLBACKS, renderTable } from '../../src/cli/table.ts';
import type { Fallback } from '../../src/cli/layout.ts';

const ROOT = join(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/eks-consolidator.mjs');
const NOW = '2026-11-21T12:00:00Z';
const ESC = '\u001b[';

function cli(args: string[], env: Record<string, string | undefined> = {}) {
  const r = spawnSync(process.execPath, [BIN, 'plan', '--now', NOW, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs the CLI under a pseudo-terminal (util-linux `script`), `cols` columns wide. */
function underTerminal(args: string[], env: Record<string, string> = {}, cols = 120) {
  const command = `stty cols ${cols} rows 50; ${[process.execPath, BIN, 'plan', '--now', NOW, ...args].map((a) => `'${a}'`).join(' ')}`;
  const r = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '', ...env }, timeout: 60_000 });
  // A terminal ends lines with CR LF.
  return { code: r.status, stdout: r.stdout.replace(/\r\n/g, '\n') };
}

const widest = (text: string) => Math.max(...text.split('\n').map((l) => l.length));
const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

describe('the demo as a table', () => {
  it('at 120 columns, without colour (NO_COLOR wins over --color always)', async () => {
    const r = cli(['-o', 'table', '--color', 'always'], { NO_COLOR: '1' });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(ESC);
    expect(widest(r.stdout)).toBeLessThanOrEqual(120);
    await expect(r.stdout).toMatchFileSnapshot('__snapshots__/demo-table.txt');
  });

  it('--wide --show-moves: full names, every type, where each pod goes', async () => {
    const r = cli(['-o', 'wide', '--show-moves']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ip-10-0-19-71\.ec2\.internal +default/);
    expect(r.stdout).not.toMatch(/\+\d+ more/);
    expect(r.stdout).toMatch(/moves: -> replacement-\d+ \(new node\): /);
    await expect(r.stdout).toMatchFileSnapshot('__snapshots__/demo-table-wide-moves.txt');
  });

  it('--show-moves lists every evicted pod of the JSON plan under its decision', () => {
    const plan = JSON.parse(cli([]).stdout) as Plan;
    const table = cli(['-o', 'table', '--show-moves']).stdout;
    for (const decision of plan.decisions) {
      for (const pod of decision.evictedPods) expect(table).toContain(pod);
    }
    expect(widest(table)).toBeLessThanOrEqual(120);
  });

  it('--show-moves shows where kube-scheduler is expected to put each pod: the projection\'s placement, not the plan\'s', () => {
    const plan = JSON.parse(cli([]).stdout) as Plan;
    const table = cli(['-o', 'wide', '--show-moves']).stdout;
    const moved = plan.decisions.filter((d) => d.evictedPods.length > 0);
    expect(moved.length).toBeGreaterThan(0);
    let differs = 0;
    for (const d of moved) {
      // every evicted pod has an expected node, and the table lists it under that node
      for (const pod of d.evictedPods) {
        const to = d.expectedDestinations?.[pod];
        expect(to, pod).toBeDefined();
        if (to !== d.podDestinations?.[pod]) differs += 1;
        const line = table.split('\n').find((l) => l.includes(pod))!;
        expect(line, pod).toContain(`-> ${to}`);
      }
    }
    // The demo has a delete whose pods kube-scheduler spreads to the least allocated nodes, not where
    // the plan packed them: the table says so.
    expect(differs).toBeGreaterThan(0);
    expect(table).toMatch(/\d+ of \d+ land elsewhere than the plan put them/);
    const off = cli(['-o', 'table', '--show-moves'], { PLAN_WAVES: 'off' }).stdout;
    expect(off).toContain('as the plan places them; with the projection off');
    expect((JSON.parse(cli([], { PLAN_WAVES: 'off' }).stdout) as Plan).decisions.every((d) => d.expectedDestinations === undefined)).toBe(true);
  });

  it('piped (not a terminal): no colour with --color auto', () => {
    expect(cli(['-o', 'table']).stdout).not.toContain(ESC);
  });

  it.runIf(hasScript)('on a terminal: colour, and the terminal width when narrower than 120', () => {
    const wide = underTerminal(['-o', 'table']);
    expect(wide.code).toBe(0);
    expect(wide.stdout).toContain(`${ESC}1mSUMMARY${ESC}0m`);
    expect(wide.stdout).toMatch(new RegExp(`${ESC.replace('[', '\\[')}31mdelete`));

    const narrow = underTerminal(['-o', 'table'], {}, 90);
    const plain = narrow.stdout.replace(/\u001b\[[0-9;]*m/g, '');
    // The reasons wrap to the terminal.
    const whyLines = plain.split('\n').filter((l) => /^ +why: /.test(l));
    expect(whyLines.length).toBeGreaterThan(0);
    for (const line of whyLines) expect(line.length).toBeLessThanOrEqual(90);
  });

  it.runIf(hasScript)('an 80-column terminal gets an 80-column table, node and decision rows included', () => {
    const r = underTerminal(['-o', 'table', '--color', 'never'], {}, 80);
    expect(r.code).toBe(0);
    expect(widest(r.stdout)).toBeLessThanOrEqual(80);
    expect(r.stdout).toMatch(/^NODE +POOL +TYPE +CPU +MEMORY /m);
    expect(r.stdout).toContain('(80 columns: ZONE, CAPACITY left out; CPU and MEMORY as shares only;');
  });

  it.runIf(hasScript)('on a terminal with NO_COLOR set: no colour', () => {
    const r = underTerminal(['-o', 'table'], { NO_COLOR: '1' });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/SUMMARY/);
    expect(r.stdout).not.toContain(ESC);
  });

  it.runIf(hasScript)('on a terminal, --color never and JSON have no colour', () => {
    expect(underTerminal(['-o', 'table', '--color', 'never']).stdout).not.toContain(ESC);
    expect(underTerminal([]).stdout).not.toContain(ESC);
  });
});

// ---------------------------------------------------------------------------------------------------
// Rendering rules on hand-made plans

const node = (name: string, extra: Partial<PlanNode> = {}): PlanNode => ({
  name,
  nodePool: 'default',
  candidate: true,
  reasons: [],
  instanceType: 'm5.large',
  capacityType: 'on-demand',
  zone: 'us-east-1a',
  pricePerHour: 0.096,
  usage: { cpuRequestedMillis: 500, cpuAllocatableMillis: 1930, memoryRequestedBytes: 2 * 1024 ** 3, memoryAllocatableBytes: 7134 * 1024 ** 2, pods: 4, podsAllocatable: 29 },
  ...extra,
});

const decision = (nodes: string[], extra: Partial<Decision> = {}): Decision => ({
  method: 'multi-node',
  reason: 'Underutilized',
  action: 'delete',
  nodes,
  replacements: [],
  currentPricePerHour: 0.096 * nodes.length,
  replacementPricePerHour: 0,
  savingsPerHour: 0.096 * nodes.length,
  disruptionCost: 1,
  evictedPods: [],
  ...extra,
});

const plan = (decisions: Decision[], nodes: PlanNode[], extra: Partial<Plan> = {}): Plan => ({
  dryRun: true,
  evaluatedAt: NOW,
  decisions,
  nodes,
  notes: [],
  ...extra,
});

describe('the table fits its width', () => {
  // Long names, many decisions of every kind, a launch and a reason under a few.
  const names = Array.from({ length: 30 }, (_, i) => `ip-10-0-${100 + i}-${200 + i}.us-west-2.compute.internal`);
  const decisions = [
    decision(names.slice(0, 12), { action: 'replace', move: 'm-to-n', summary: `replace ${names.slice(0, 12).join(', ')} with two nodes` }),
    decision([names[12]!], { method: 'emptiness', reason: 'Empty', savingsPerHour: null, currentPricePerHour: null }),
    decision([names[13]!], { method: 'single-node', evictedPods: ['ns/a', 'ns/b'] }),
  ];
  const nodes = names.map((n, i) =>
    node(n, {
      nodePool: i % 2 === 0 ? 'general-purpose' : 'batch',
      instanceType: 'm7i-flex.2xlarge',
      ...(i < 12 ? { decision: 0 } : i === 12 ? { decision: 1 } : i === 13 ? { decision: 2 } : { reasons: ['the pod ns/web-0 has a PodDisruptionBudget that allows no disruption'] }),
    }),
  );
  const p = plan(decisions, nodes, { notes: ['a long note '.repeat(20)] });

  const dropsOf = (fallbacks: readonly Fallback[]) => fallbacks.flatMap((f) => ('drop' in f ? [f.drop] : []));
  /** The columns a section's header line lacks, in its table's fallback order. */
  const leftOut = (text: string, headerStart: RegExp, fallbacks: readonly Fallback[]) => {
    const header = text.split('\n').find((l) => headerStart.test(l))!;
    return dropsOf(fallbacks).filter((h) => !` ${header} `.includes(` ${h} `));
  };

  it.each([
    [80, true],
    [100, true],
    [120, false],
  ])('at %i columns every line fits (columns left out: %s), in the documented order', (width, someLeftOut) => {
    const text = renderTable(p, { width });
    expect(widest(text)).toBeLessThanOrEqual(width);
    const decisionsOut = leftOut(text, /^# +ACTION/, DECISION_FALLBACKS);
    const nodesOut = leftOut(text, /^NODE +POOL/, NODE_FALLBACKS);
    // Columns go in the order the tables document: what is left out is always the start of that list.
    expect(decisionsOut).toEqual(dropsOf(DECISION_FALLBACKS).slice(0, decisionsOut.length));
    expect(nodesOut).toEqual(dropsOf(NODE_FALLBACKS).slice(0, nodesOut.length));
    expect(decisionsOut.length + nodesOut.length > 0).toBe(someLeftOut);
    // What was left out is said, and the node rows keep their names whole.
    if (someLeftOut) expect(text).toMatch(new RegExp(`\\(${width} columns: .*left out`));
    else expect(text).not.toMatch(/columns: .*left out/);
    expect(text).toMatch(/^ip-10-0-113-213 /m);
  });

  it('at 80 columns the node rows show CPU and MEMORY as shares, and say so', () => {
    const text = renderTable(p, { width: 80 });
    expect(text).toMatch(/^ip-10-0-113-213 +batch +m7i-flex\.2xl… +26% +29% /m);
    expect(text).toContain('CPU and MEMORY as shares only');
  });

  it('-o wide cuts nothing and leaves nothing out', () => {
    const text = renderTable(p, { wide: true });
    expect(text).toMatch(/^# +ACTION +METHOD +REASON +PODS +NOW \$\/HR +NEW \$\/HR/m);
    expect(text).not.toContain('left out');
  });
});

describe('table rules', () => {
  it('a long node list is cut with a count; --wide lists every node', () => {
    const names = Array.from({ length: 12 }, (_, i) => `ip-10-0-${i}-${100 + i}.eu-west-1.compute.internal`);
    const p = plan([decision(names)], names.map((n) => node(n, { decision: 0 })));
    const narrow = renderTable(p);
    const [, shown, more] = /^1 .*  (ip-10-0-0-100.*) \+(\d+) more$/m.exec(narrow) ?? [];
    expect(shown!.split(', ').length + Number(more)).toBe(12);
    expect(widest(narrow)).toBeLessThanOrEqual(120);
    expect(narrow).toContain('node names are shown without .eu-west-1.compute.internal');
    const wide = renderTable(p, { wide: true });
    for (const n of names) expect(wide).toContain(n);
  });

  it('summary: nodes by outcome, pods to move, savings per hour and per month', () => {
    const p = plan(
      [decision(['a'], { evictedPods: ['ns/p1', 'ns/p2'], savingsPerHour: 0.1 })],
      [node('a', { decision: 0 }), node('b'), node('c', { candidate: false, reasons: ['node is not Ready'] })],
      { summary: { savingsPerHour: 0.1, savingsPerMonth: 73, nodesDisrupted: 1, podsEvicted: 2 } },
    );
    const text = renderTable(p);
    expect(text).toContain('3 node(s) in NodePools: 1 to delete, 0 to replace, 1 kept, 1 blocked; 1 decision(s), 2 pod(s) to move');
    expect(text).toContain('savings $0.1000 per hour, $73.00 per month (730 h)');
    expect(text.indexOf('SUMMARY')).toBeLessThan(text.indexOf('DECISIONS'));
    expect(text).toMatch(/^c .* blocked\n +why: node is not Ready$/m);
  });

  const efficiency = (extra: Partial<PlanEfficiency> = {}): PlanEfficiency => ({
    startCostPerHour: 1,
    endCostPerHour: 0.6,
    lowerBoundPerHour: 0.5,
    ratio: 1.2,
    leftPerHour: 0.1,
    lockedCostPerHour: 0.2,
    heldBack: {},
    ...extra,
  });

  it('prints the plan efficiency: end cost, the bound, and what is left as an upper limit next to what is expected', () => {
    const text = renderTable(plan([], [node('a')], { efficiency: efficiency() }), { wide: true });
    expect(text).toContain(
      'efficiency: this plan ends at $0.6000/hr for all nodes (from $1.0000/hr); no packing the NodePools allow ends below $0.5000/hr (1.200x it), ' +
        'so a better packing could save at most $0.1000/hr more',
    );
    expect(text.indexOf('efficiency:')).toBeLessThan(text.indexOf('DECISIONS'));
    expect(widest(renderTable(plan([], [node('a')], { efficiency: efficiency() })))).toBeLessThanOrEqual(120);
    // With a projection, the line says how much of that the later passes are expected to save.
    const projection = { waves: [], stoppedBecause: 'settled' as const, savingsPerHour: 0.04, endCostPerHour: 0.56, ratio: 1.12, nodesDisrupted: 0, podsEvicted: 0 };
    expect(renderTable(plan([], [node('a')], { efficiency: efficiency(), projection }), { wide: true })).toContain(
      'at most $0.1000/hr more; the later passes projected below are expected to save $0.0400/hr of that',
    );
  });

  it('efficiency: what kept nodes, dearest cause first, priced as what they cost', () => {
    const text = renderTable(
      plan([], [node('a')], {
        efficiency: efficiency({ heldBack: { pdb: { nodes: 1, pricePerHour: 0.1 }, budget: { nodes: 2, pricePerHour: 0.3 } } }),
      }),
      { wide: true },
    );
    expect(text).toContain('nodes kept, by first reason, with what they cost (not what moving them would save): budget 2 ($0.3000/hr), pdb 1 ($0.1000/hr)');
  });

  it('efficiency without a lower bound says so', () => {
    const text = renderTable(plan([], [node('a')], { efficiency: efficiency({ lowerBoundPerHour: null, ratio: null, leftPerHour: null }) }), { wide: true });
    expect(text).toContain('efficiency: this plan ends at $0.6000/hr for all nodes (from $1.0000/hr); no lower bound (no capacity the NodePools allow holds the pods)');
  });

  it('unknown prices are never $0 or 0.000x: summary savings, efficiency, held-back prices, projection and wave headers', () => {
    const unknown = decision(['a'], { currentPricePerHour: null, savingsPerHour: null });
    const projection = {
      waves: [{ wave: 2, evaluatedAt: '2026-11-21T12:15:00Z', savingsPerHour: null, decisions: [decision(['b'], { currentPricePerHour: null, savingsPerHour: null })] }],
      stoppedBecause: 'settled' as const,
      savingsPerHour: null,
      unpricedDecisions: 1,
      endCostPerHour: null,
      ratio: null,
      nodesDisrupted: 1,
      podsEvicted: 0,
    };
    const text = renderTable(
      plan([unknown], [node('a', { decision: 0, pricePerHour: undefined }), node('b', { pricePerHour: undefined })], {
        summary: { savingsPerHour: null, savingsPerMonth: null, knownSavingsPerHour: 0, unpricedDecisions: 1, nodesDisrupted: 1, podsEvicted: 0 },
        efficiency: efficiency({ lowerBoundPerHour: null, ratio: null, leftPerHour: null, unpricedNodes: 2, heldBack: { budget: { nodes: 1, pricePerHour: 0 } } }),
        projection,
      }),
      { wide: true },
    );
    expect(text).toContain('savings ? per hour: 1 decision(s) remove nodes of unknown price');
    expect(text).toContain('efficiency: no figure: 2 node(s) have no price in the catalog');
    expect(text).toContain('nodes kept, by first reason: budget 1');
    expect(text).toContain('saving ?/hr more (1 decision(s) of unknown price); all nodes would end at ?/hr');
    expect(text).toContain('wave 2 (2026-11-21T12:15:00Z): 1 decision(s), saving ?/hr');
    expect(text).not.toMatch(/\$0\.0000\/hr|0\.000x|\$0\.0000 per hour/);
  });

  it('a wave says what it waited for, which launches it undoes, and which pods it evicts again', () => {
    const projection = {
      waves: [
        {
          wave: 2,
          evaluatedAt: '2026-11-21T17:00:00Z',
          savingsPerHour: 0.1,
          decisions: [decision(['replacement-1'], { evictedPods: ['ns/p1'], savingsPerHour: 0.1 })],
          waitedFor: 'scheduled budget "0 9 * * *" of NodePool "default" allows no disruption until 2026-11-21T17:00:00Z',
          relaunched: [{ node: 'replacement-1', launchedAt: '2026-11-21T12:00:00Z' }],
          evictedAgain: ['ns/p1'],
        },
      ],
      stoppedBecause: 'settled' as const,
      savingsPerHour: 0.1,
      endCostPerHour: 0.5,
      ratio: null,
      nodesDisrupted: 1,
      podsEvicted: 1,
    };
    const text = renderTable(plan([], [node('a')], { projection }), { wide: true });
    expect(text).toContain('1 more wave(s), after a scheduled budget of zero ends,');
    expect(text).toContain('waits: scheduled budget "0 9 * * *" of NodePool "default" allows no disruption until 2026-11-21T17:00:00Z');
    expect(text).toContain('regret: disrupts replacement-1, launched by this plan at 2026-11-21T12:00:00Z');
    expect(text).toContain('evicts again 1 pod(s) the wave before moved');
  });

  it('an m-to-n move is marked in METHOD, and carried out like any other (no "planned only")', () => {
    const d = decision(['a', 'b', 'c'], { action: 'replace', move: 'm-to-n' });
    const text = renderTable(plan([d], ['a', 'b', 'c'].map((n) => node(n, { decision: 0 }))));
    expect(text).toMatch(/^1 +replace +multi-node \(m-to-n\) /m);
    expect(text).not.toContain('planned only');
  });

  it('later waves: a summary line, then each wave with its decisions, long node lists cut unless --wide', () => {
    const many = Array.from({ length: 40 }, (_, i) => `node-${i}`);
    const projection = {
      waves: [
        { wave: 2, evaluatedAt: '2026-11-21T12:15:00Z', savingsPerHour: 0.5, decisions: [decision(many, { evictedPods: ['ns/p1'], savingsPerHour: 0.5 })] },
      ],
      stoppedBecause: 'work limit' as const,
      savingsPerHour: 0.5,
      endCostPerHour: 0.1,
      ratio: 1.05,
      nodesDisrupted: 40,
      podsEvicted: 1,
    };
    const text = renderTable(plan([], [node('a')], { projection }));
    expect(text).toContain('later passes (projected, not acted on now): 1 more wave(s), 40 node(s), 1 pod(s), saving $0.5000/hr more;');
    expect(text).toMatch(/would end at \$0\.1000\/hr, 1\.050x the lower bound \(projection cut short: work limit; PLAN_WAVES sets it\)/);
    expect(text).toContain('  wave 2 (2026-11-21T12:15:00Z): 1 decision(s), saving $0.5000/hr');
    expect(text).toMatch(/^ {4}- delete node-0, node-1, .* \+\d+ more: 1 pod\(s\), saves \$0\.5000\/hr$/m);
    expect(text.indexOf('LATER WAVES')).toBeGreaterThan(text.indexOf('DECISIONS'));
    expect(widest(text)).toBeLessThanOrEqual(120);
    expect(renderTable(plan([], [node('a')], { projection }), { wide: true })).toContain(`- delete ${many.join(', ')}: 1 pod(s)`);
    // a wave of many decisions lists ten of them, --wide every one
    const busy = { ...projection, waves: [{ ...projection.waves[0]!, decisions: many.map((n) => decision([n], { savingsPerHour: 0.01 })) }] };
    const cut = renderTable(plan([], [node('a')], { projection: busy }));
    expect(cut.match(/^ {4}- delete /gm)).toHaveLength(10);
    expect(cut).toContain('    ... and 30 more decision(s) (--wide lists them all)');
    expect(renderTable(plan([], [node('a')], { projection: busy }), { wide: true }).match(/^ {4}- delete /gm)).toHaveLength(40);
    // none projected: the summary says so, and there is no section
    const none = renderTable(plan([], [node('a')], { projection: { ...projection, waves: [], stoppedBecause: 'settled' as const } }));
    expect(none).toContain('later passes: nothing more is expected after this plan');
    expect(none).not.toContain('LATER WAVES');
  });

  it('no efficiency line when the plan has none', () => {
    expect(renderTable(plan([], [node('a')]))).not.toMatch(/efficiency/);
  });

  it('an unknown price is ?, and the nodes cost says how many were left out', () => {
    const text = renderTable(plan([], [node('a'), node('b', { pricePerHour: undefined })]));
    expect(text).toMatch(/^b .* \? +kept$/m);
    expect(text).toContain('nodes cost $0.0960 per hour, $70.08 per month (1 node(s) of unknown price not counted)');
  });

  it('no nodes: says why instead of an empty header', () => {
    const text = renderTable(plan([], [], { summary: { savingsPerHour: 0, savingsPerMonth: 0, nodesDisrupted: 0, podsEvicted: 0, nodesOutsideNodePools: 3 } }));
    expect(text).toContain('none: no node carries a karpenter.sh/nodepool label');
    expect(text).toContain('3 node(s) without a karpenter.sh/nodepool label: never disrupted, not listed');
  });

  it.each([
    [1930, '1930m'],
    [4000, '4'],
    [250, '250m'],
    [15_890, '15.9'],
  ])('cpu %d millicores prints as %s', (millis, text) => {
    expect(formatCpu(millis)).toBe(text);
  });

  it.each([
    [7134 * 1024 ** 2, '7Gi'],
    [512 * 1024 ** 2, '512Mi'],
    [0, '0'],
    [Math.round(6.74 * 1024 ** 3), '6.7Gi'],
  ])('memory %d bytes prints as %s', (bytes, text) => {
    expect(formatMemory(bytes)).toBe(text);
  });

  it('pairs read alike: cores with cores, the Gi unit once', () => {
    expect(cpuPair(1675, 15_890)).toBe('1.7/15.9');
    expect(cpuPair(575, 1930)).toBe('575m/1930m');
    expect(memoryPair(4.6 * 1024 ** 3, 6.7 * 1024 ** 3)).toBe('4.6/6.7Gi');
    expect(memoryPair(140 * 1024 ** 2, 3 * 1024 ** 3)).toBe('140Mi/3Gi');
  });

  it('colour only when asked, and the same text without it', () => {
    const p = plan([decision(['a'])], [node('a', { decision: 0 }), node('b')]);
    const colour = renderTable(p, { color: true });
    expect(colour).toContain(ESC);
    expect(colour.replace(/\u001b\[[0-9;]*m/g, '')).toBe(renderTable(p));
  });
});
