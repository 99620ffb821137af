// Two nodes merged onto one new node, the pass's last resort. The multi-node search weighs prefixes of
// its orderings, so two nodes that no ordering puts side by side are never weighed together: a settled
// cluster can keep two full nodes of a type dear per vCPU (two c6g.8xlarge, $0.034 per vCPU-hour) that
// one larger type cheaper per vCPU holds (an hpc7g.16xlarge, $0.026). When the pass has decided nothing
// else, the pairs whose merge could save the most are weighed with every pod of both on one new node:
// no binding order strands a pod there, since a pod kube-scheduler binds elsewhere only leaves it more
// room. It is a multi-node consolidation (several nodes into one, Karpenter's consolidation-policies
// design) and is reported as one.
import type { NodePool } from '../../model/types.ts';
import { typeCatalogOf } from '../../scheduling/instanceTypes.ts';
import { buildPools } from '../../scheduling/nodePools.ts';
import type { Candidate } from '../candidates.ts';
import { evaluateRemoval } from './evaluateRemoval.ts';
import type { ConsolidationMethod, PassView, Proposal } from './types.ts';

/** The nodes dearest for what their pods ask among which pairs are formed (a pass weighs ~N²/2 bounds). */
export const PAIR_MERGE_NODES = 40;
/** The most pairs simulated in one pass, best bound first (each a small simulation and, if it saves, a check). */
export const PAIR_MERGE_TRIES = 8;

interface Demand {
  readonly cpuMillis: number;
  readonly memoryBytes: number;
  readonly pods: number;
}

const demandOf = (c: Candidate): Demand => ({
  cpuMillis: c.pods.reduce((sum, p) => sum + (p.requests['cpu'] ?? 0), 0),
  memoryBytes: c.pods.reduce((sum, p) => sum + (p.requests['memory'] ?? 0), 0),
  pods: c.pods.length,
});

/** What one new node offers the pods: its room after daemonsets, and its cheapest allowed offering. */
interface Launchable {
  readonly cpuMillis: number;
  readonly memoryBytes: number;
  readonly pods: number;
  readonly pricePerHour: number;
}

/**
 * The least one new node holding `need` may cost: the cheapest of `launchable` (cheapest first) with
 * that much room. A lower bound (the pods' own constraints only make it dearer), so a pair whose two
 * prices do not exceed it cannot save.
 */
export function cheapestHolding(launchable: readonly Launchable[], need: Demand): number {
  for (const t of launchable) if (t.cpuMillis >= need.cpuMillis && t.memoryBytes >= need.memoryBytes && t.pods >= need.pods) return t.pricePerHour;
  return Number.POSITIVE_INFINITY;
}

/** Every type the candidates' pools may launch, with the room it leaves pods, cheapest first. */
function launchableOf(view: PassView, pools: readonly NodePool[]): Launchable[] {
  const out: Launchable[] = [];
  for (const info of buildPools(pools, typeCatalogOf(view.catalog), view.cluster.daemonSets, [])) {
    for (const t of info.types) {
      const offering = t.offerings[0];
      if (offering) out.push({ cpuMillis: t.roomCpu, memoryBytes: t.roomMemory, pods: t.roomPods, pricePerHour: offering.pricePerHour });
    }
  }
  return out.sort((a, b) => a.pricePerHour - b.pricePerHour);
}

export function createPairMerge(): ConsolidationMethod {
  const tried = new Set<string>();
  // The pools, the catalog and the daemonsets do not change within a pass: each set of pools is worked
  // out once, not on every call.
  const launchableByPools = new Map<string, Launchable[]>();
  return {
    name: 'multi-node',
    lastResort: true,
    next(view: PassView): Proposal | undefined {
      const eligible = view.candidates.filter((c) => c.methods.has('multi-node') && c.pods.length > 0 && c.pricePerHour !== undefined);
      if (eligible.length < 2 || view.maxNodesPerCommand < 2) return undefined;
      const demands = new Map(eligible.map((c) => [c, demandOf(c)] as const));
      // Dearest per requested cpu first (ties by name): full nodes of a dear type, and part-empty ones.
      const perCpu = (c: Candidate) => c.pricePerHour! / Math.max(1, demands.get(c)!.cpuMillis);
      const dearest = [...eligible].sort((a, b) => perCpu(b) - perCpu(a) || a.node.name.localeCompare(b.node.name)).slice(0, PAIR_MERGE_NODES);
      const pools = [...new Set(eligible.map((c) => c.pool))];
      const poolsKey = pools.map((p) => p.name).join('\n');
      let launchable = launchableByPools.get(poolsKey);
      if (!launchable) launchableByPools.set(poolsKey, (launchable = launchableOf(view, pools)));
      const pairs: { a: Candidate; b: Candidate; bound: number; key: string }[] = [];
      for (let i = 0; i < dearest.length; i++) {
        for (let j = i + 1; j < dearest.length; j++) {
          const a = dearest[i]!;
          const b = dearest[j]!;
          const key = [a.node.name, b.node.name].sort().join(',');
          if (tried.has(key)) continue;
          const da = demands.get(a)!;
          const db = demands.get(b)!;
          const need = { cpuMillis: da.cpuMillis + db.cpuMillis, memoryBytes: da.memoryBytes + db.memoryBytes, pods: da.pods + db.pods };
          const bound = a.pricePerHour! + b.pricePerHour! - cheapestHolding(launchable, need);
          if (bound > 1e-9) pairs.push({ a, b, bound, key });
        }
      }
      pairs.sort((x, y) => y.bound - x.bound || x.key.localeCompare(y.key));
      let simulated = 0;
      for (const { a, b, key } of pairs) {
        if (simulated >= PAIR_MERGE_TRIES) break;
        tried.add(key);
        if (!view.ledger.canTake([a.pool.name, b.pool.name], 'Underutilized')) continue;
        simulated += 1;
        const verdict = evaluateRemoval(view, [a, b], 'multi-node', { maxNewNodes: 1, newNodesOnly: true });
        if (!verdict.ok) continue;
        const rejected = view.schedulerCheck(verdict.proposal);
        if (rejected === undefined) return verdict.proposal;
        for (const c of [a, b]) view.note(c.node.name, rejected);
      }
      return undefined;
    },
  };
}
