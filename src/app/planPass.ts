// A pass, as both entry points run it: read, decide, and (here) build the plan. The CLI and the Lambda
// differ only in the adapters they hand in.
import { buildPlan } from '../core/buildPlan.ts';
import { runConsolidationPass } from '../core/disruption/pass.ts';
import { indexCatalog } from '../core/disruption/prices.ts';
import type { FeatureGates } from '../core/featureGates.ts';
import { parseGoDuration } from '../core/input/duration.ts';
import type { Catalog, Cluster, NodePool } from '../core/model/types.ts';
import type { Plan } from '../core/plan.ts';

export interface PassSources {
  readonly cluster: Cluster;
  readonly catalog: Catalog;
  readonly nodePools: readonly NodePool[];
}

export interface PassOptions {
  readonly nowMs: number;
  readonly gates: FeatureGates;
  readonly dryRun: boolean;
  readonly notes?: readonly string[];
}

/** Pod annotations may hold a duration (`karpenter.sh/do-not-disrupt: "2h"`); anything else is not one. */
export function durationOrNull(text: string): number | null {
  try {
    return parseGoDuration(text);
  } catch {
    return null;
  }
}

export function planPass(sources: PassSources, options: PassOptions): Plan {
  const outcome = runConsolidationPass({
    cluster: sources.cluster,
    nodePools: sources.nodePools,
    catalog: sources.catalog,
    nowMs: options.nowMs,
    gates: options.gates,
    parseDuration: durationOrNull,
  });
  return buildPlan(outcome, {
    nowMs: options.nowMs,
    dryRun: options.dryRun,
    prices: indexCatalog(sources.catalog),
    notes: options.notes,
  });
}
