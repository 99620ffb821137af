// Kubernetes Events on nodes, with Karpenter's reasons, so `kubectl describe node` tells an operator
// why a node was left alone:
//   Unconsolidatable   a candidate the pass weighed but did not consolidate (the plan's reason);
//   DisruptionBlocked  a node of a pool in scope that may not be disrupted at all (do-not-disrupt, a
//                      PDB at zero, not Ready, ...). Waiting out consolidateAfter, the grace period or
//                      the minimum lifetime is not "blocked" (Karpenter says nothing then either).
//   ConsolidationApproved / ConsolidationRejected  a Balanced pool's score of a move (balanced.ts).
// Never in a dry run (the caller only publishes from the acting path).
//
// Deduplication: a pass runs every few minutes and would repeat the same event each time. An event is
// sent once per (node, reason, message) per 15 minutes (Karpenter's dedupe timeout for
// Unconsolidatable) per warm container, in memory. The message is compared with its digits masked,
// so "last pod event 3m ago" and "... 8m ago" count as the same. A new container (cold start, or the
// other function) may repeat an event once: Events are informational and the API server aggregates
// repeats, so a shared store (DynamoDB) was not worth a write per event.
import { createHash } from 'node:crypto';
import type { PassResult, PassScope } from '../runPass.ts';
import type { Logger } from '@aws-lambda-powertools/logger';
import { scoreEvents, withoutScoreSentences } from './balanced.ts';
import { poolInScope } from './metrics.ts';

export const EVENT_DEDUPE_TTL_MS = 15 * 60_000;
/** Events sent per pass at most: a cluster of thousands of blocked nodes must not flood the API. */
export const MAX_EVENTS_PER_PASS = 100;

export interface NodeEventSpec {
  readonly nodeName: string;
  readonly reason: 'Unconsolidatable' | 'DisruptionBlocked' | 'ConsolidationApproved' | 'ConsolidationRejected';
  readonly message: string;
  readonly type: 'Normal' | 'Warning';
}

/** What publishing needs of the Kubernetes writer (KubeWriter implements it). */
export interface EventWriter {
  createEvent(event: NodeEventSpec): Promise<string>;
}

/** Reasons that only say "not yet": they are not a block. */
const WAITING = [/waits consolidateAfter/, /consolidationGracePeriod protects/, /minimum node lifetime/];

/** The events a pass's plan calls for, before deduplication. */
export function nodeEventsFor(result: PassResult, scope: PassScope): NodeEventSpec[] {
  const pools = new Map((result.nodePools ?? []).map((p) => [p.name, p]));
  // A held or skipped search puts the pass-level note on every candidate: nothing was weighed.
  const passNotes = new Set(result.plan.notes ?? []);
  const events: NodeEventSpec[] = [];
  for (const node of result.plan.nodes) {
    const pool = pools.get(node.nodePool);
    if (pool === undefined || !poolInScope(scope, pool) || node.decision !== undefined) continue;
    if (node.candidate) {
      // A Balanced score's verdict goes out as ConsolidationRejected (below), not twice.
      const reasons = withoutScoreSentences(node.reasons).filter((r) => !passNotes.has(r));
      if (reasons.length === 0) continue;
      events.push({ nodeName: node.name, reason: 'Unconsolidatable', type: 'Normal', message: reasons.join('; ') });
    } else {
      const reasons = node.reasons.filter((r) => !passNotes.has(r) && !WAITING.some((w) => w.test(r)));
      if (reasons.length === 0) continue;
      events.push({ nodeName: node.name, reason: 'DisruptionBlocked', type: 'Normal', message: `Cannot disrupt Node: ${reasons.join('; ')}` });
    }
  }
  const poolInScopeByName = (name: string) => {
    const pool = pools.get(name);
    return pool !== undefined && poolInScope(scope, pool);
  };
  // Score verdicts first: MAX_EVENTS_PER_PASS must not cut them in favour of the routine ones.
  return [...scoreEvents(result.plan, poolInScopeByName), ...events];
}

/** Remembers what was sent recently, per container. */
export class EventDeduper {
  private readonly sent = new Map<string, number>();

  constructor(private readonly ttlMs: number = EVENT_DEDUPE_TTL_MS) {}

  static key(event: NodeEventSpec): string {
    const message = event.message.replace(/\d+(\.\d+)?/g, '#');
    return createHash('sha256').update(`${event.nodeName}\u0000${event.reason}\u0000${message}`).digest('hex').slice(0, 32);
  }

  /** True when the same event went out less than the TTL ago. */
  isDuplicate(event: NodeEventSpec, nowMs: number): boolean {
    const at = this.sent.get(EventDeduper.key(event));
    return at !== undefined && nowMs - at < this.ttlMs && nowMs >= at;
  }

  markSent(event: NodeEventSpec, nowMs: number): void {
    this.sent.set(EventDeduper.key(event), nowMs);
  }

  /** Forgets entries older than the TTL (keeps a long-lived container's memory bounded). */
  prune(nowMs: number): void {
    for (const [key, at] of this.sent) if (nowMs - at >= this.ttlMs || at > nowMs) this.sent.delete(key);
  }

  get size(): number {
    return this.sent.size;
  }
}

export interface PublishReport {
  readonly sent: number;
  readonly deduplicated: number;
  readonly failed: number;
  /** Left out because of MAX_EVENTS_PER_PASS. */
  readonly capped: number;
}

/** Sends the events that are not duplicates. A failed event is logged, never fails the pass. */
export async function publishNodeEvents(
  events: readonly NodeEventSpec[],
  writer: EventWriter,
  deduper: EventDeduper,
  nowMs: number,
  log: Logger,
  max: number = MAX_EVENTS_PER_PASS,
): Promise<PublishReport> {
  deduper.prune(nowMs);
  const fresh = events.filter((e) => !deduper.isDuplicate(e, nowMs));
  const toSend = fresh.slice(0, max);
  let sent = 0;
  let failed = 0;
  const queue = [...toSend];
  const worker = async (): Promise<void> => {
    for (let event = queue.shift(); event !== undefined; event = queue.shift()) {
      try {
        await writer.createEvent(event);
        deduper.markSent(event, nowMs);
        sent += 1;
      } catch (error) {
        failed += 1;
        log.warn('could not record a Kubernetes event', { node: event.nodeName, reason: event.reason, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, toSend.length) }, worker));
  const report = { sent, deduplicated: events.length - fresh.length, failed, capped: fresh.length - toSend.length };
  log.info('kubernetes events', { events: report, detail: toSend.map((e) => ({ node: e.nodeName, reason: e.reason })) });
  return report;
}
