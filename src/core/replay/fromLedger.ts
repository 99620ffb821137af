// `replay --from-ledger`: the real passes a state store recorded (core/state/ledger.ts), shown as a
// replay report, so that the real cluster's churn and savings read like a replay's.
import { formatTime } from '../disruption/text.ts';
import type { LedgerEntry } from '../state/ledger.ts';
import { money, REPLAY_REPORT_FORMAT, type ReplayDecisionRow, type ReplayPassRow, type ReplayReport } from './report.ts';

/** The usual gap between passes: the median of the gaps (5 minutes when there is only one pass). */
function typicalIntervalMs(entries: readonly LedgerEntry[]): number {
  const gaps = entries.slice(1).map((e, i) => e.at - entries[i]!.at).filter((g) => g > 0).sort((a, b) => a - b);
  return gaps.length === 0 ? 5 * 60_000 : gaps[Math.floor(gaps.length / 2)]!;
}

export function reportFromLedger(entries: readonly LedgerEntry[], name: string): ReplayReport {
  const sorted = [...entries].sort((a, b) => a.at - b.at);
  const intervalMs = typicalIntervalMs(sorted);
  const startMs = sorted[0]?.at ?? 0;
  const endMs = sorted.length === 0 ? startMs : sorted[sorted.length - 1]!.at + intervalMs;
  // Realised prices, by the nodes a replacement took over (each command once, whichever pass saw it done).
  const realisedByNodes = new Map<string, number>();
  for (const entry of sorted) for (const r of entry.realised) realisedByNodes.set(r.nodes.join(','), r.realisedPricePerHour);

  const passes: ReplayPassRow[] = [];
  const decisions: ReplayDecisionRow[] = [];
  let dollars = 0;
  let pendingPodMinutes = 0;
  let savedDollars = 0;
  let nodesDisrupted = 0;
  let nodesReplaced = 0;
  let regret = 0;
  sorted.forEach((entry, k) => {
    const untilMs = sorted[k + 1]?.at ?? endMs;
    const hours = (untilMs - entry.at) / 3_600_000;
    dollars += entry.clusterCostPerHour * hours;
    pendingPodMinutes += entry.pendingPods * hours * 60;
    const reReplaced = new Set(entry.reReplaced.map((r) => r.node));
    for (const d of entry.decisions) {
      const realised = d.action === 'replace' ? realisedByNodes.get(d.nodes.join(',')) : undefined;
      // A node of unknown price saved an unknown amount: counted as nothing rather than guessed.
      const savingsPerHour = realised === undefined || d.currentPricePerHour === null ? (d.plannedSavingsPerHour ?? 0) : d.currentPricePerHour - realised;
      savedDollars += savingsPerHour * ((endMs - entry.at) / 3_600_000);
      nodesDisrupted += d.nodes.length;
      if (d.action === 'replace') nodesReplaced += d.nodes.length;
      const again = d.nodes.filter((n) => reReplaced.has(n)).length;
      regret += again;
      decisions.push({
        pass: k,
        at: formatTime(entry.at),
        method: d.method,
        action: d.action,
        nodes: d.nodes,
        ...(d.replacementType ? { replacement: d.replacementType } : {}),
        savingsPerHour: money(savingsPerHour),
        podsEvicted: d.podsEvicted,
        regret: again,
      });
    }
    passes.push({
      pass: k,
      at: formatTime(entry.at),
      costPerHour: money(entry.clusterCostPerHour),
      nodes: entry.nodes,
      pods: entry.pods,
      pendingPods: entry.pendingPods,
      evictions: entry.decisions.reduce((sum, d) => sum + d.podsEvicted, 0),
      decisions: entry.decisions.length,
    });
  });
  const hours = (endMs - startMs) / 3_600_000;
  const realisedCount = sorted.reduce((n, e) => n + e.realised.length, 0);
  return {
    format: REPLAY_REPORT_FORMAT,
    version: 1,
    startedAt: formatTime(startMs),
    endedAt: formatTime(endMs),
    passes: sorted.length,
    intervalMs,
    launchDelayMs: 0,
    scheduler: 'real cluster',
    churn: 'real cluster',
    seed: 0,
    source: 'ledger',
    // No counterfactual run exists for a real cluster: the baseline is what was spent plus what the
    // decisions saved from when they were taken to the end.
    baseline: { totalCostDollars: money(dollars + savedDollars), averageCostPerHour: money(hours > 0 ? (dollars + savedDollars) / hours : 0), endCostPerHour: money(sorted[sorted.length - 1]?.clusterCostPerHour ?? 0) },
    configs: [
      {
        name,
        summary: {
          startCostPerHour: money(sorted[0]?.clusterCostPerHour ?? 0),
          endCostPerHour: money(sorted[sorted.length - 1]?.clusterCostPerHour ?? 0),
          averageCostPerHour: money(hours > 0 ? dollars / hours : 0),
          totalCostDollars: money(dollars),
          savingsDollars: money(savedDollars),
          podsEvicted: passes.reduce((sum, p) => sum + p.evictions, 0),
          nodesDisrupted,
          nodesReplaced,
          regret,
          pendingPodMinutes: Math.round(pendingPodMinutes * 10) / 10,
          decisions: decisions.length,
          nodesLaunchedForPending: 0,
        },
        passes,
        decisions,
      },
    ],
    notes: [
      `ledger of ${sorted.length} real pass(es); savings are each decision's (realised where known, else planned) savings per hour from its pass to the end`,
      ...(realisedCount > 0 ? [`${realisedByNodes.size} replacement(s) with a realised price`] : []),
    ],
  };
}
