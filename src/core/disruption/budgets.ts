// Disruption budgets (Karpenter's disruption-controls design): how many of a pool's nodes may be
// disrupted at once, for a reason, now.
import { CronExpressionParser } from 'cron-parser';
import type { Budget, DisruptionReason, Node, NodePool } from '../model/types.ts';

/**
 * A scheduled budget is active when its schedule fired within the last `duration`, i.e. the first
 * firing strictly after (now - duration) is not later than now. Schedules are read in UTC.
 */
export function isBudgetActive(budget: Budget, nowMs: number): boolean {
  if (budget.schedule === undefined || budget.durationMs === undefined) return true;
  const checkpoint = new Date(nowMs - budget.durationMs);
  const next = CronExpressionParser.parse(budget.schedule, { currentDate: checkpoint, tz: 'UTC' }).next();
  return next.getTime() <= nowMs;
}

/** The number of nodes a budget allows disrupted at once: a count, or a percent of the pool rounded up. */
export function budgetNodeCount(budget: Budget, poolNodeCount: number): number {
  if ('count' in budget.nodes) return budget.nodes.count;
  return Math.ceil((budget.nodes.percent * poolNodeCount) / 100);
}

/**
 * Nodes that already use up budget: being deleted, already tainted as disrupted (by us or by
 * Karpenter), or NotReady (Karpenter's disruption-controls design counts unhealthy nodes against the
 * budget so that disruption does not pile onto a pool that is already short of capacity).
 */
export function isUsingBudget(node: Node, inFlight: ReadonlySet<string>): boolean {
  return node.deleting || !node.ready || inFlight.has(node.name) || node.taints.some((t) => t.key === 'karpenter.sh/disrupted');
}

export interface BudgetAllowance {
  /** How many more nodes may be disrupted for this reason. */
  readonly allowed: number;
  /** The limit of the most restrictive active budget. */
  readonly limit: number;
  /** Nodes of the pool already being disrupted or NotReady. */
  readonly inUse: number;
  readonly poolNodeCount: number;
  /** The budget that sets `limit` (undefined when none applies now). */
  readonly limitingBudget?: Budget;
  /** When the limiting budget's scheduled window ends (epoch ms), for a scheduled one. */
  readonly windowEndMs?: number;
}

/**
 * The most restrictive active budget that applies to `reason` wins (Karpenter's disruption-controls
 * design).
 */
export function budgetAllowance(
  pool: NodePool,
  poolNodes: readonly Node[],
  reason: DisruptionReason,
  nowMs: number,
  inFlight: ReadonlySet<string>,
): BudgetAllowance {
  // An absent `budgets` field is defaulted to one budget of 10% when the NodePool is read (Karpenter's
  // disruption-controls design); an explicit empty list means no budget at all, as in Karpenter.
  const budgets = pool.budgets;
  const poolNodeCount = poolNodes.length;
  let limit = Number.POSITIVE_INFINITY;
  let limitingBudget: Budget | undefined;
  for (const budget of budgets) {
    if (budget.reasons !== undefined && !budget.reasons.includes(reason)) continue;
    if (!isBudgetActive(budget, nowMs)) continue;
    const count = budgetNodeCount(budget, poolNodeCount);
    if (count < limit) {
      limit = count;
      limitingBudget = budget;
    }
  }
  if (limit === Number.POSITIVE_INFINITY) limit = poolNodeCount; // no active budget applies: no restriction
  const inUse = poolNodes.filter((node) => isUsingBudget(node, inFlight)).length;
  const windowEndMs = limitingBudget === undefined ? undefined : activeWindowEndMs(limitingBudget, nowMs);
  return {
    allowed: Math.max(0, limit - inUse),
    limit,
    inUse,
    poolNodeCount,
    ...(limitingBudget ? { limitingBudget } : {}),
    ...(windowEndMs === undefined ? {} : { windowEndMs }),
  };
}

/**
 * The key of a node's budget note (PassView.note): the merge search and single-node both explain the
 * same budget, and the later sentence replaces the earlier one.
 */
export const budgetNoteKey = (poolName: string) => `budget/${poolName}`;

/** How a budget's limit came about: `10% of 8 nodes, rounded up to 1` or `nodes: 2`. */
export function explainLimit(a: BudgetAllowance): string {
  const budget = a.limitingBudget;
  if (!budget) return `no budget applies, so all ${a.poolNodeCount} node(s)`;
  const until = a.windowEndMs === undefined ? '' : ` until ${new Date(a.windowEndMs).toISOString().replace('.000Z', 'Z')}`;
  const window = budget.schedule !== undefined ? ` (scheduled budget "${budget.schedule}", active now${until})` : '';
  if ('count' in budget.nodes) return `nodes: ${budget.nodes.count}${window}`;
  const exact = (budget.nodes.percent * a.poolNodeCount) / 100;
  const rounded = Number.isInteger(exact) ? '' : `, rounded up to ${a.limit}`;
  return `${budget.nodes.percent}% of ${a.poolNodeCount} node(s)${rounded}${window}`;
}

/**
 * Budget bookkeeping for one pass: allowances per (pool, reason), decremented as decisions are taken.
 * A decision for one reason also uses up the pool's other reasons' room, because a disrupted node
 * counts against every budget of its pool while it is being disrupted.
 */
export class BudgetLedger {
  private readonly used = new Map<string, number>();
  /** Allowances before this pass's decisions: pool nodes and time are fixed for the pass. */
  private readonly base = new Map<string, BudgetAllowance>();

  constructor(
    private readonly pools: ReadonlyMap<string, NodePool>,
    private readonly nodesByPool: ReadonlyMap<string, readonly Node[]>,
    private readonly nowMs: number,
    private readonly inFlight: ReadonlySet<string>,
  ) {}

  allowance(poolName: string, reason: DisruptionReason): BudgetAllowance {
    const pool = this.pools.get(poolName);
    const nodes = this.nodesByPool.get(poolName) ?? [];
    if (!pool) return { allowed: 0, limit: 0, inUse: 0, poolNodeCount: nodes.length };
    const key = `${poolName}/${reason}`;
    let base = this.base.get(key);
    if (!base) {
      base = budgetAllowance(pool, nodes, reason, this.nowMs, this.inFlight);
      this.base.set(key, base);
    }
    const usedNow = this.used.get(poolName) ?? 0;
    return { ...base, allowed: Math.max(0, base.allowed - usedNow), inUse: base.inUse + usedNow };
  }

  remaining(poolName: string, reason: DisruptionReason): number {
    return this.allowance(poolName, reason).allowed;
  }

  /** Whether every pool involved has room for its nodes in `nodePools` (pool name per node). */
  canTake(nodePools: readonly string[], reason: DisruptionReason): boolean {
    const need = new Map<string, number>();
    for (const pool of nodePools) need.set(pool, (need.get(pool) ?? 0) + 1);
    return [...need].every(([pool, count]) => this.remaining(pool, reason) >= count);
  }

  take(nodePools: readonly string[]): void {
    for (const pool of nodePools) this.used.set(pool, (this.used.get(pool) ?? 0) + 1);
  }

  /**
   * Why no more nodes of the pool may be disrupted for `reason`. The sentence does not depend on how
   * far the pass has got, so a node skipped several times in one pass gets it once.
   */
  describe(poolName: string, reason: DisruptionReason): string {
    const a = this.allowance(poolName, reason);
    const base = this.base.get(`${poolName}/${reason}`);
    const prefix = `disruption budget of NodePool "${poolName}"`;
    if (a.limit === 0) return `${prefix} allows no ${reason} disruptions now (${explainLimit(a)})`;
    const inUseBefore = base?.inUse ?? 0;
    const users =
      inUseBefore >= a.limit ? `${inUseBefore} node(s) already being disrupted or NotReady`
      : inUseBefore > 0 ? `${inUseBefore} node(s) already being disrupted or NotReady and earlier decisions of this pass`
      : 'earlier decisions of this pass';
    // A limit under 2 also rules out every multi-node consolidation: said here, in the same sentence, so
    // a node the merge search skipped does not carry a second sentence about the same budget.
    const noMerge = reason === 'Underutilized' && a.limit < 2 ? ', and a multi-node consolidation would need at least 2 nodes at once' : '';
    return `${prefix} allows ${a.limit} ${reason} disruption(s) at a time now (${explainLimit(a)}), all taken by ${users}${noMerge}`;
  }
}

/**
 * When the window of a scheduled budget that is active now ends (its last firing at or before now plus
 * its duration, carried on while the next firing comes before that end); undefined for a budget without
 * a schedule or not active now. Read in UTC, as isBudgetActive.
 */
export function activeWindowEndMs(budget: Budget, nowMs: number): number | undefined {
  if (budget.schedule === undefined || budget.durationMs === undefined || !isBudgetActive(budget, nowMs)) return undefined;
  const firings = CronExpressionParser.parse(budget.schedule, { currentDate: new Date(nowMs - budget.durationMs), tz: 'UTC' });
  let end = Number.NEGATIVE_INFINITY;
  // A schedule that fires more often than its duration keeps the window open; 10,000 firings is a
  // minutely schedule's week.
  for (let i = 0; i < 10_000; i++) {
    const at = firings.next().getTime();
    if (at > nowMs && at > end) break;
    end = Math.max(end, at + budget.durationMs);
  }
  return end;
}
