// `replay --format table` laid out as the plan's table: a width it keeps, lists cut with a count,
// columns left out in a stated order, `--wide` cutting nothing.
import { describe, expect, it } from 'vitest';
import type { ReplayConfigResult, ReplayDecisionRow, ReplayReport } from '../../src/core/replay/report.ts';
import { renderReplayTable } from '../../src/cli/replayTable.ts';

const node = (i: number) => `ip-10-0-${i}-${100 + i}.us-west-2.compute.internal`;

function decision(overrides: Partial<ReplayDecisionRow> = {}): ReplayDecisionRow {
  return { pass: 0, at: '2026-11-21T12:00:00Z', method: 'multi-node', action: 'replace', nodes: [node(1)], replacement: 'm6i.large', savingsPerHour: 0.162, podsEvicted: 3, regret: 0, ...overrides };
}

function config(name: string, decisions: ReplayDecisionRow[]): ReplayConfigResult {
  const summary = {
    startCostPerHour: 7.0288,
    endCostPerHour: 5.9108,
    averageCostPerHour: 5.9531,
    totalCostDollars: 5.95,
    savingsDollars: 1.08,
    podsEvicted: 15,
    nodesDisrupted: 8,
    nodesReplaced: 4,
    regret: 1,
    pendingPodMinutes: 0,
    decisions: decisions.length,
    nodesLaunchedForPending: 0,
  };
  return { name, summary, passes: [], decisions } as unknown as ReplayConfigResult;
}

function report(configs: readonly ReplayConfigResult[], endedAt = '2026-11-21T13:00:00Z'): ReplayReport {
  return {
    format: 'eks-consolidator/replay',
    version: 1,
    startedAt: '2026-11-21T12:00:00Z',
    endedAt,
    passes: 12,
    intervalMs: 300_000,
    launchDelayMs: 90_000,
    scheduler: 'least-allocated',
    churn: 'daily=0.5,jobs=6/h,restarts=4/h',
    seed: 1,
    source: 'synthetic',
    baseline: { totalCostDollars: 7.03, averageCostPerHour: 7.0288, endCostPerHour: 7.0288 },
    configs,
    notes: ['no --cluster: replaying the bundled sample cluster from its recording time, which is a long note that has to wrap on a narrow terminal'],
  } as unknown as ReplayReport;
}

const many = report([
  config('a-config-with-a-rather-long-name', [
    decision({ nodes: Array.from({ length: 12 }, (_, i) => node(i)), regret: 2 }),
    decision({ pass: 1, at: '2026-11-21T12:05:00Z', method: 'emptiness', action: 'delete', nodes: [node(20), node(21)], replacement: undefined, podsEvicted: 0 }),
  ]),
  config('careful', []),
]);
const widest = (text: string) => Math.max(...text.split('\n').map((l) => l.length));

describe('replay --format table', () => {
  it.each([120, 100, 80, 60])('fits %i columns, and says what it left out', (width) => {
    const text = renderReplayTable(many, { width });
    const over = text.split('\n').filter((l) => l.length > width);
    expect(over).toEqual([]);
    // the node list is cut with a count, never silently
    expect(text).toMatch(/ip-.* \+\d+ more/);
    if (width >= 80) expect(text).toMatch(/ip-10-0-0-100.* \+\d+ more/);
    expect(text).toContain('node names are shown without .us-west-2.compute.internal');
    if (width < 100) expect(text.replace(/\n +/g, ' ')).toMatch(/left out; a wider terminal or --wide shows them/);
    expect(text).toContain('careful: no decisions.');
  });

  it('a replay within one day shows the time of day; across days, the day too', () => {
    expect(renderReplayTable(many)).toMatch(/^ +0 {2}12:00 {2}multi-node/m);
    expect(renderReplayTable(report(many.configs, '2026-11-22T12:00:00Z'))).toMatch(/^ +0 {2}11-21 12:00 {2}multi-node/m);
  });

  it('--wide cuts nothing: every node whole, full times, no note about names', () => {
    const text = renderReplayTable(many, { wide: true });
    for (let i = 0; i < 12; i++) expect(text).toContain(node(i));
    expect(text).toContain('2026-11-21T12:05:00Z');
    expect(text).not.toContain('shown without');
    expect(text).not.toContain('more');
  });

  it('the summary keeps every figure at 120 columns, one row per config', () => {
    const lines = renderReplayTable(many).split('\n');
    const header = lines.find((l) => l.startsWith('CONFIG'))!;
    for (const h of ['END $/HR', 'AVG $/HR', 'SAVED $', 'PODS EVICTED', 'NODES DISRUPTED', 'NODES REPLACED', 'REGRET', 'PENDING POD-MIN']) expect(header).toContain(h);
    expect(lines.filter((l) => /^(a-config\S*|careful)\s+\$/.test(l))).toHaveLength(2);
  });
});
