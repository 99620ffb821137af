// The case study of Karpenter's savings-threshold design (demo/replay-seed-003), replayed over a day: an
// m6a.large at $0.086/h with 5 pods and an m7i-flex.large at $0.080/h. Without a threshold the pass
// swaps nodes for 0.6 cents an hour and its replacements are disrupted again within 30 minutes (the
// cascade); with consolidationSavingsThresholdCents 1 it never swaps for so little and nothing it
// launched is undone.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplayReport } from '../../src/core/replay/report.ts';
import { replayDir, replaySeed003 } from './seed003Fixture.ts';

let dir: string;
let report: ReplayReport;

beforeAll(async () => {
  dir = replayDir('ekc-seed003-');
  report = await replaySeed003(288, dir);
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the savings-threshold case replayed over a day', () => {
  const config = (name: string) => report.configs.find((c) => c.name === name)!;

  it('without a threshold, swaps the m6a.large for an m7i-flex.large to save 0.6 cents an hour', () => {
    const swaps = config('threshold-0').decisions.filter((d) => d.action === 'replace' && d.replacement === 'm7i-flex.large' && d.savingsPerHour === 0.006);
    expect(swaps.length).toBeGreaterThan(0);
    expect(swaps[0]!.podsEvicted).toBeGreaterThanOrEqual(5);
  });

  it('without a threshold, cascades: replacements are disrupted again within 30 minutes of their launch', () => {
    const zero = config('threshold-0');
    expect(zero.summary.regret).toBeGreaterThan(0);
    expect(zero.decisions.filter((d) => d.regret > 0).length).toBeGreaterThan(0);
  });

  it('with threshold 1, never swaps for a few cents and undoes nothing it launched', () => {
    const one = config('threshold-1');
    expect(one.summary.regret).toBe(0);
    // Karpenter's savings-threshold design: a 5-pod node needs 6 cents an hour of savings at threshold
    // 1; 0.6 cents is far below.
    expect(one.decisions.filter((d) => d.action === 'replace' && d.savingsPerHour < 0.06 && d.podsEvicted >= 5)).toEqual([]);
    expect(one.summary.podsEvicted).toBeLessThan(config('threshold-0').summary.podsEvicted);
  });

  it('replays the same workload timeline under both configs (same baseline, every pass present)', () => {
    for (const c of report.configs) {
      expect(c.passes).toHaveLength(288);
      expect(c.summary.savingsDollars).toBeCloseTo(report.baseline.totalCostDollars - c.summary.totalCostDollars, 3);
      expect(c.summary.podsEvicted).toBe(c.passes.reduce((sum, p) => sum + p.evictions, 0));
    }
  });

  it('matches the table in docs/replay.md', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/replay.md'), 'utf8');
    for (const [label, name] of [['threshold 0', 'threshold-0'], ['threshold 1', 'threshold-1']] as const) {
      const row = doc.split('\n').find((line) => line.startsWith(`| ${label} |`));
      expect(row, `docs/replay.md row for ${label}`).toBeDefined();
      const cells = row!.split('|').slice(2, -1).map((cell) => Number(cell.trim()));
      const s = config(name).summary;
      expect(cells).toEqual([s.endCostPerHour, s.averageCostPerHour, Math.round(s.savingsDollars * 100) / 100, s.podsEvicted, s.nodesDisrupted, s.nodesReplaced, s.regret, s.pendingPodMinutes]);
    }
  });
});
