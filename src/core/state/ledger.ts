// The ledger (docs/replay.md, "The Lambda's ledger"): each real pass records what it did and what it
// saved, so that an operator can see churn against savings over time on the real cluster (`replay
// --from-ledger`). An entry holds the pass's decisions with their planned prices, the realised price of
// replacements whose commands finished since, and the nodes it disrupts that were replacements launched
// less than 30 minutes before (the cascade Karpenter's savings-threshold design warns of). Stores keep
// entries as opaque JSON; `readLedgerEntry` checks their shape.
import { indexCatalog, nodePricePerHour, roundMoney } from '../disruption/prices.ts';
import type { Catalog, Cluster } from '../model/types.ts';
import type { Plan } from '../plan.ts';
import { replacementNodeNames, type DisruptionCommand } from './types.ts';

/** A replacement disrupted again this soon after its launch is a re-replacement. */
export const RE_REPLACED_WINDOW_MS = 30 * 60_000;
/** How long stores keep ledger entries. */
export const LEDGER_RETENTION_MS = 90 * 24 * 3_600_000;

export interface LedgerDecision {
  readonly method: string;
  readonly action: 'delete' | 'replace';
  readonly nodes: readonly string[];
  readonly replacementType?: string;
  /** null: a node of unknown price (never recorded as $0). */
  readonly currentPricePerHour: number | null;
  /** The replacement's price as planned (0 for a delete). */
  readonly plannedPricePerHour: number;
  /** null when the current price is unknown. */
  readonly plannedSavingsPerHour: number | null;
  readonly podsEvicted: number;
}

export interface LedgerRealised {
  readonly commandId: string;
  readonly nodes: readonly string[];
  readonly replacementNode: string;
  readonly plannedPricePerHour: number;
  /** The price of the node that was actually launched (its type, zone and capacity type). */
  readonly realisedPricePerHour: number;
}

export interface LedgerReReplaced {
  readonly node: string;
  readonly launchedAt: number;
  readonly minutesAfterLaunch: number;
}

export interface LedgerEntry {
  readonly at: number;
  /** Price per hour of every node of the cluster when the pass ran (nodes of unknown price count 0). */
  readonly clusterCostPerHour: number;
  readonly nodes: number;
  readonly pods: number;
  readonly pendingPods: number;
  readonly decisions: readonly LedgerDecision[];
  readonly realised: readonly LedgerRealised[];
  readonly reReplaced: readonly LedgerReReplaced[];
}

/** The ledger entry of a real pass, from what it saw and decided. */
export function ledgerEntryFor(input: {
  readonly plan: Plan;
  readonly cluster: Cluster;
  readonly catalog: Catalog;
  readonly commands: readonly DisruptionCommand[];
  readonly nowMs: number;
  /**
   * Only commands updated after this time are reported as realised (finished commands are kept for days:
   * without it every entry would repeat them). The pass gives its previous search time, so a command is
   * reported by the first pass after it finished (a skipped pass may report it twice; readers dedupe).
   */
  readonly finishedAfterMs?: number;
}): LedgerEntry {
  const prices = indexCatalog(input.catalog);
  const nodesByName = new Map(input.cluster.nodes.map((n) => [n.name, n]));
  const workload = input.cluster.pods.filter((p) => !p.isDaemonSetPod && !p.isMirrorPod && p.phase !== 'Succeeded' && p.phase !== 'Failed');
  const replacementOf = new Map<string, DisruptionCommand>();
  for (const cmd of input.commands) for (const name of replacementNodeNames(cmd)) replacementOf.set(name, cmd);

  const realised: LedgerRealised[] = [];
  for (const cmd of input.commands) {
    if (cmd.step !== 'done') continue;
    if (input.finishedAfterMs !== undefined && cmd.updatedAt <= input.finishedAfterMs) continue;
    for (const launched of cmd.launched ?? []) {
      const spec = cmd.replacements?.[launched.index];
      if (launched.nodeName === undefined || spec === undefined) continue;
      const node = nodesByName.get(launched.nodeName);
      const price = node ? nodePricePerHour(node, prices) : undefined;
      if (price === undefined) continue;
      realised.push({ commandId: cmd.id, nodes: cmd.nodes, replacementNode: launched.nodeName, plannedPricePerHour: spec.pricePerHour, realisedPricePerHour: price });
    }
  }

  const reReplaced: LedgerReReplaced[] = [];
  for (const decision of input.plan.decisions) {
    for (const name of decision.nodes) {
      const node = nodesByName.get(name);
      if (!node || !replacementOf.has(name)) continue;
      const age = input.nowMs - node.createdAt;
      if (age >= 0 && age < RE_REPLACED_WINDOW_MS) reReplaced.push({ node: name, launchedAt: node.createdAt, minutesAfterLaunch: Math.round(age / 6_000) / 10 });
    }
  }

  return {
    at: input.nowMs,
    clusterCostPerHour: roundMoney(input.cluster.nodes.reduce((sum, n) => sum + (nodePricePerHour(n, prices) ?? 0), 0)),
    nodes: input.cluster.nodes.length,
    pods: workload.length,
    pendingPods: workload.filter((p) => p.nodeName === undefined && !p.terminating).length,
    decisions: input.plan.decisions.map((d) => ({
      method: d.method,
      action: d.action,
      nodes: d.nodes,
      ...(d.replacements[0]?.instanceTypes[0] ? { replacementType: d.replacements[0].instanceTypes[0] } : {}),
      currentPricePerHour: d.currentPricePerHour,
      plannedPricePerHour: d.replacementPricePerHour,
      plannedSavingsPerHour: d.savingsPerHour,
      podsEvicted: d.evictedPods.length,
    })),
    realised,
    reReplaced,
  };
}

type Fail = (field: string, problem: string) => never;

/** Checks a stored entry's shape (a ledger is read back from files people may edit). */
export function readLedgerEntry(raw: unknown, fail: Fail): LedgerEntry {
  const obj = (value: unknown, field: string): Record<string, unknown> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(field, 'not an object');
    return value as Record<string, unknown>;
  };
  const num = (o: Record<string, unknown>, key: string, field: string): number => {
    const v = o[key];
    if (typeof v !== 'number' || !Number.isFinite(v)) fail(`${field}.${key}`, 'not a number');
    return v as number;
  };
  const str = (o: Record<string, unknown>, key: string, field: string): string => {
    const v = o[key];
    if (typeof v !== 'string') fail(`${field}.${key}`, 'not a string');
    return v as string;
  };
  const list = (o: Record<string, unknown>, key: string, field: string): unknown[] => {
    const v = o[key] ?? [];
    if (!Array.isArray(v)) fail(`${field}.${key}`, 'not a list');
    return v as unknown[];
  };
  const strings = (o: Record<string, unknown>, key: string, field: string): string[] =>
    list(o, key, field).map((v, i) => (typeof v === 'string' ? v : fail(`${field}.${key}[${i}]`, 'not a string')));
  const e = obj(raw, '');
  return {
    at: num(e, 'at', 'entry'),
    clusterCostPerHour: num(e, 'clusterCostPerHour', 'entry'),
    nodes: num(e, 'nodes', 'entry'),
    pods: num(e, 'pods', 'entry'),
    pendingPods: num(e, 'pendingPods', 'entry'),
    decisions: list(e, 'decisions', 'entry').map((raw, i) => {
      const f = `decisions[${i}]`;
      const d = obj(raw, f);
      const action = str(d, 'action', f);
      if (action !== 'delete' && action !== 'replace') fail(`${f}.action`, `"${action}" is not delete or replace`);
      return {
        method: str(d, 'method', f),
        action: action as 'delete' | 'replace',
        nodes: strings(d, 'nodes', f),
        ...(d['replacementType'] === undefined ? {} : { replacementType: str(d, 'replacementType', f) }),
        currentPricePerHour: d['currentPricePerHour'] === null ? null : num(d, 'currentPricePerHour', f),
        plannedPricePerHour: num(d, 'plannedPricePerHour', f),
        plannedSavingsPerHour: d['plannedSavingsPerHour'] === null ? null : num(d, 'plannedSavingsPerHour', f),
        podsEvicted: num(d, 'podsEvicted', f),
      };
    }),
    realised: list(e, 'realised', 'entry').map((raw, i) => {
      const f = `realised[${i}]`;
      const r = obj(raw, f);
      return {
        commandId: str(r, 'commandId', f),
        nodes: strings(r, 'nodes', f),
        replacementNode: str(r, 'replacementNode', f),
        plannedPricePerHour: num(r, 'plannedPricePerHour', f),
        realisedPricePerHour: num(r, 'realisedPricePerHour', f),
      };
    }),
    reReplaced: list(e, 'reReplaced', 'entry').map((raw, i) => {
      const f = `reReplaced[${i}]`;
      const r = obj(raw, f);
      return { node: str(r, 'node', f), launchedAt: num(r, 'launchedAt', f), minutesAfterLaunch: num(r, 'minutesAfterLaunch', f) };
    }),
  };
}
