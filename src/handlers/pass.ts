// What both scheduled functions share: one pass per invocation, as thin as the Lambda allows.
//
// Event: an EventBridge scheduled event, or a manual invoke `{"dryRun": true}`. The configuration's
// DRY_RUN is the default; an event may only make a run drier: `{"dryRun": true}` plans even where
// DRY_RUN=false, while `{"dryRun": false}` where DRY_RUN=true is still a dry run (with a note saying
// so). Turning acting on is a deployment decision (the stage's `dryRun` parameter), never a payload's.
//
// A dry run returns the plan and changes nothing anywhere: no lease, no state write, no catalog cache
// write, no Kubernetes write (events included), no EC2 call other than Describe*. A real run takes the
// lease (owner: the request id plus a random nonce, unique per invocation), first carries unfinished
// commands forward (before reading anything else, so a failing read cannot strand them), saves the
// observed state, records node events, and acts through the actuator within the remaining time. A pass that finds the lease
// held returns `{ skipped: 'lease held' }` and does nothing else.
//
// Configuration is read once per container, when the handler is built (the deployed `handler` exports
// build it on the first invocation). A bad value is logged at once and every invocation then fails
// with the same `ConfigError` naming the variable.
import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { handlerSetup } from './observability.ts';
import type { MiddlewareObj } from '@middy/core';
import { ConfigError, type Config, type Env } from '../app/config.ts';
import { EventDeduper, nodeEventsFor, publishNodeEvents, type PublishReport } from '../app/observability/events.ts';
import { actionMetrics, passMetrics, publishMetrics } from '../app/observability/metrics.ts';
import type { ExecutionReport } from '../app/act/types.ts';
import { runPass, type Actor, type PassScope } from '../app/runPass.ts';
// Type-only: the wiring (and with it the AWS SDK and the Kubernetes client, most of the bundle) is
// loaded on the first invocation, not when Lambda loads the module (the cold start figures of
// docs/benchmarks.md, "Against the goals").
import type { CatalogInfo, Runtime, WiringOverrides } from '../app/wiring.ts';
import type { Plan } from '../core/plan.ts';

export type FunctionName = 'consolidate' | 'emptiness';

const SCOPE: Record<FunctionName, PassScope> = { consolidate: 'consolidation', emptiness: 'emptiness' };

/** Time kept back from the Lambda's remaining time for saving, releasing the lease and logging. */
export const DEADLINE_MARGIN_MS = 15_000;

export interface HandlerDeps {
  /** Default: process.env. */
  readonly env?: Env;
  /** Clients and the actuator (tests inject these). */
  readonly overrides?: WiringOverrides;
  /** The clock, epoch ms. Default: Date.now. */
  readonly clock?: () => number;
}

/** A manual invoke's payload. */
export interface ManualEvent {
  readonly dryRun?: boolean;
}

export type PassEvent = ScheduledEvent | ManualEvent | null | undefined;

export interface PassInfo {
  readonly id: string;
  readonly function: FunctionName;
  readonly scope: PassScope;
  readonly trigger: 'schedule' | 'manual';
  readonly durationMs: number;
  readonly catalog?: { readonly source?: string; readonly pricesAsOf?: string };
}

/** The plan (docs/file-formats.md, "The plan") with what this invocation did. */
export type PassResponse = Plan & {
  readonly pass: PassInfo;
  /** Non-dry runs: what the actuator reported. */
  readonly actions?: unknown;
  readonly events?: PublishReport;
};

export interface SkippedResponse {
  readonly skipped: 'lease held';
  readonly pass: Omit<PassInfo, 'catalog'>;
  readonly heldBy?: string;
  readonly heldUntil?: string;
}

export type HandlerResponse = PassResponse | SkippedResponse;

/** The payload cannot be understood (the invocation fails; nothing is done). */
export class InvalidEventError extends Error {
  override readonly name = 'InvalidEventError';
}

interface Invocation {
  readonly trigger: 'schedule' | 'manual';
  readonly requestedDryRun?: boolean;
}

export function parseInvocation(event: unknown): Invocation {
  if (event === undefined || event === null) return { trigger: 'manual' };
  if (typeof event !== 'object' || Array.isArray(event)) {
    throw new InvalidEventError(`the event must be an object such as {"dryRun": true}, got ${JSON.stringify(event)}`);
  }
  const record = event as Record<string, unknown>;
  const trigger = record['source'] === 'aws.events' || record['detail-type'] === 'Scheduled Event' ? 'schedule' : 'manual';
  if (!('dryRun' in record) || record['dryRun'] === undefined) return { trigger };
  const dryRun = record['dryRun'];
  if (typeof dryRun !== 'boolean') throw new InvalidEventError(`event.dryRun must be true or false, got ${JSON.stringify(dryRun)}`);
  return { trigger, requestedDryRun: dryRun };
}

/**
 * Middy middleware: gives the invocation's own metrics their `function` dimension, checks the payload
 * before any work, and on any failure (configuration, payload, the pass) logs it once and counts it in
 * eks_consolidator_pass_errors_total (flushed by logMetrics, which runs after it).
 */
function invocationGuard(log: Logger, metrics: Metrics, functionName: FunctionName): MiddlewareObj<PassEvent, HandlerResponse, Error, Context> {
  return {
    before: (request) => {
      metrics.addDimension('function', functionName);
      parseInvocation(request.event);
    },
    onError: (request) => {
      const error = request.error;
      metrics.addMetric('eks_consolidator_pass_errors_total', MetricUnit.Count, 1);
      log.error('invocation failed', { passId: request.context?.awsRequestId, error });
    },
  };
}

/** A Lambda handler that builds the real one on its first call and keeps it for the warm ones. */
export function builtOnFirstCall<H extends (event: PassEvent, context: Context) => Promise<HandlerResponse>>(build: () => H) {
  let built: H | undefined;
  return (event: PassEvent, context: Context): Promise<HandlerResponse> => {
    built ??= build();
    return built(event, context);
  };
}

export function createPassHandler(functionName: FunctionName, deps: HandlerDeps = {}) {
  const clock = deps.clock ?? deps.overrides?.clock ?? Date.now;
  const env = deps.env ?? process.env;
  const scope = SCOPE[functionName];

  const { log, metrics, config, configError } = handlerSetup(functionName, env);

  // Built on the first invocation, kept for the warm ones. A failed build is retried next time.
  let runtime: Promise<Runtime> | undefined;
  const getRuntime = (cfg: Config): Promise<Runtime> => {
    runtime ??= import('../app/wiring.ts').then(({ buildRuntime }) => buildRuntime(cfg, { ...deps.overrides, clock })).catch((error: unknown) => {
      runtime = undefined;
      throw error;
    });
    return runtime;
  };
  const deduper = new EventDeduper();

  const run = async (event: PassEvent, context: Context): Promise<HandlerResponse> => {
    if (configError !== undefined) throw configError;
    const cfg = config!;
    const startedAt = clock();
    const passId = context.awsRequestId;
    const invocation = parseInvocation(event);
    const dryRun = cfg.dryRun || invocation.requestedDryRun === true;
    // Temporary keys: injectLambdaContext({ resetKeys: true }) clears them after the invocation.
    log.appendKeys({ passId, dryRun });
    const passLog = log;
    const notes: string[] = [];
    if (invocation.requestedDryRun === false && cfg.dryRun) {
      notes.push('the event asked for dryRun=false, but DRY_RUN=true for this deployment: dry run (an event can only make a run drier)');
    }
    passLog.info('pass started', { trigger: invocation.trigger, scope, requestedDryRun: invocation.requestedDryRun });

    const remainingAtStartMs = context.getRemainingTimeInMillis();
    // The lease must outlive the invocation (config.ts checks the declared timeout at cold start; this
    // catches a deployment whose real timeout is longer than declared).
    if (!dryRun && remainingAtStartMs >= cfg.leaseTtlMs) {
      throw new ConfigError(
        'LEASE_TTL_SECONDS',
        `${cfg.leaseTtlMs / 1000} s is not longer than this invocation may run (${Math.ceil(remainingAtStartMs / 1000)} s): raise it above the function timeout`,
      );
    }
    const deadlineMs = startedAt + remainingAtStartMs - DEADLINE_MARGIN_MS;
    // Unique per invocation: a retried delivery may carry the same request id, and must not share the lease.
    const owner = `${passId}/${randomUUID()}`;
    let actions: unknown;
    let events: PublishReport | undefined;
    const catalogInfo: CatalogInfo = {};
    try {
      const rt = await getRuntime(cfg);
      const session = dryRun
        ? undefined
        : rt.actuator.begin({ owner, scope, nowMs: startedAt, deadlineMs, remainingMs: () => context.getRemainingTimeInMillis(), log: passLog });
      const actor: Actor | undefined =
        session === undefined
          ? undefined
          : {
              resume: async () => {
                try {
                  await session.resume();
                } catch (error) {
                  passLog.error('resuming unfinished commands failed', { error });
                }
              },
              act: async (result) => {
                try {
                  // Events first: cheap, and worth having even if acting runs out of time.
                  if (result !== undefined && rt.events !== undefined) {
                    events = await publishNodeEvents(nodeEventsFor(result, scope), rt.events, deduper, clock(), passLog);
                  }
                  await session.act(result);
                } catch (error) {
                  passLog.error('acting failed', { error });
                } finally {
                  actions = session.report();
                }
              },
            };
      const result = await runPass(
        rt.passDependencies(dryRun, catalogInfo),
        {
          nowMs: startedAt,
          gates: cfg.gates,
          replacementBound: cfg.replacementBound,
          planWaves: cfg.planWaves,
          dryRun,
          persistState: false,
          scope,
          owner,
          leaseTtlMs: cfg.leaseTtlMs,
          notes,
          karpenterPresence: cfg.karpenter,
          nodePoolsFromCluster: cfg.nodePoolsSource.kind === 'kubernetes',
          actuator: cfg.actuator,
          maxNodesPerCommand: cfg.maxNodesPerCommand,
          preferencePolicy: cfg.preferencePolicy,
        },
        actor,
      );
      const durationMs = clock() - startedAt;
      const pass = { id: passId, function: functionName, scope, trigger: invocation.trigger, durationMs };
      // Records this build could not read were skipped (the rest resumed): say which, once each.
      const unreadable = rt.store.takeUnreadable?.() ?? [];
      for (const record of unreadable) passLog.warn('state record skipped: this build cannot read it', { key: record.key, problem: record.problem });
      if (unreadable.length > 0) metrics.addMetric('eks_consolidator_state_records_unreadable_total', MetricUnit.Count, unreadable.length);
      metrics.addMetric('eks_consolidator_pass_duration_seconds', MetricUnit.Seconds, durationMs / 1000);

      if (!result.leaseAcquired) {
        const lease = await rt.store.readLease().catch(() => undefined);
        publishMetrics(metrics, [{ name: 'eks_consolidator_pass_skipped_total', unit: 'Count', value: 1, dimensions: { function: functionName, reason: 'lease_held' } }]);
        passLog.info('pass skipped: another pass holds the lease', { heldBy: lease?.owner, durationMs });
        return {
          skipped: 'lease held',
          pass,
          ...(lease === undefined ? {} : { heldBy: lease.owner, heldUntil: new Date(lease.until).toISOString() }),
        };
      }

      publishMetrics(metrics, [...passMetrics(result, scope, startedAt), ...actionMetrics(actions as ExecutionReport | undefined)]);
      const { plan } = result;
      for (const decision of plan.decisions) {
        passLog.info(dryRun ? 'decision planned' : 'decision taken', {
          method: decision.method,
          action: decision.action,
          reason: decision.reason,
          nodes: decision.nodes,
          savingsPerHour: decision.savingsPerHour,
          summary: decision.summary,
        });
      }
      passLog.info('pass finished', {
        durationMs,
        decisions: plan.decisions.length,
        candidates: plan.nodes.filter((n) => n.candidate).length,
        nodes: plan.nodes.length,
        savingsPerHour: plan.summary?.savingsPerHour,
        catalog: catalogInfo.source,
        notes: plan.notes,
      });
      return {
        ...plan,
        pass: {
          ...pass,
          catalog: {
            ...(catalogInfo.source === undefined ? {} : { source: catalogInfo.source }),
            ...(catalogInfo.pricesAsOf === undefined ? {} : { pricesAsOf: new Date(catalogInfo.pricesAsOf).toISOString() }),
          },
        },
        ...(actions === undefined ? {} : { actions }),
        ...(events === undefined ? {} : { events }),
      };
    } catch (error) {
      metrics.addMetric('eks_consolidator_pass_duration_seconds', MetricUnit.Seconds, (clock() - startedAt) / 1000);
      throw error;
    }
  };

  // injectLambdaContext adds the request id, function name, ARN, memory and cold start to every line;
  // logMetrics flushes the pass's own metrics (duration, errors) after the invocation, failed or not.
  // Middy runs `after`/`onError` in reverse order: the guard counts a failure before logMetrics flushes.
  return middy<PassEvent, HandlerResponse, Error, Context>(run)
    .use(injectLambdaContext(log, { resetKeys: true }))
    .use(logMetrics(metrics))
    .use(invocationGuard(log, metrics, functionName));
}
