// The interruption function: EventBridge delivers EC2 spot interruption warnings, rebalance
// recommendations, instance state changes and AWS Health scheduled changes for EC2 (serverless.yml), and
// for an instance this product launched it taints, cordons and, when the notice calls for it, drains the
// node before the instance goes (app/interruption/respond.ts). Karpenter's interruption controller does
// the same for the instances it launched, and only for those: a NodeClaim is how it finds them.
//
// Nothing to do, and no AWS or Kubernetes call, when:
// - ACTUATOR=karpenter: every replacement is a Karpenter NodeClaim, so Karpenter handles its
//   interruptions (the deployment also keeps the rules disabled there);
// - the event is not one of those above (logged, not retried: a retry cannot make it readable).
// DRY_RUN=true looks the instance and node up and reports what it would do, writing nothing.
//
// A failure (EC2 or the Kubernetes API unreachable) fails the invocation, so that Lambda delivers the
// event again; every step is idempotent, and a retry past a spot warning's deadline only taints.
import type { Context } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { handlerSetup } from './observability.ts';
import type { MiddlewareObj } from '@middy/core';
import type { Config } from '../app/config.ts';
import { respondToNotice, type InstanceReport } from '../app/interruption/respond.ts';
import { interruptionMetrics, skippedInterruptionMetrics } from '../app/observability/interruption.ts';
import { publishMetrics } from '../app/observability/metrics.ts';
// Type-only: the wiring (the AWS SDK and the Kubernetes client) is loaded on the first invocation.
import type { InterruptionRuntime } from '../app/wiring.ts';
import { parseInterruptionEvent, type InterruptionNotice } from '../core/interruption/notice.ts';
import { DEADLINE_MARGIN_MS, type HandlerDeps } from './pass.ts';

export interface InterruptionHandlerDeps extends HandlerDeps {
  /** Waits between eviction rounds (tests: a fake that moves the clock). Default: a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface NoticeSummary {
  readonly id: string;
  readonly kind: InterruptionNotice['kind'];
  readonly detailType: string;
  readonly time: string;
  readonly instanceIds: readonly string[];
  readonly reclaimAt?: string;
}

export type InterruptionResponse =
  | { readonly function: 'interruption'; readonly skipped: string; readonly notice?: NoticeSummary }
  | { readonly function: 'interruption'; readonly dryRun: boolean; readonly notice: NoticeSummary; readonly instances: readonly InstanceReport[] };

export function createInterruptionHandler(deps: InterruptionHandlerDeps = {}) {
  const clock = deps.clock ?? deps.overrides?.clock ?? Date.now;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const env = deps.env ?? process.env;

  const { log, metrics, config, configError } = handlerSetup('interruption', env);

  let runtime: Promise<InterruptionRuntime> | undefined;
  const getRuntime = (cfg: Config): Promise<InterruptionRuntime> => {
    runtime ??= import('../app/wiring.ts')
      .then(({ buildInterruptionRuntime }) => buildInterruptionRuntime(cfg, { ...deps.overrides, clock }))
      .catch((error: unknown) => {
        runtime = undefined;
        throw error;
      });
    return runtime;
  };

  const run = async (event: unknown, context: Context): Promise<InterruptionResponse> => {
    if (configError !== undefined) throw configError;
    const cfg = config!;
    const startedAt = clock();
    const invocationDeadlineMs = startedAt + context.getRemainingTimeInMillis() - DEADLINE_MARGIN_MS;
    const parsed = parseInterruptionEvent(event);
    if ('unrecognised' in parsed) {
      log.warn('interruption: event ignored', { problem: parsed.unrecognised });
      publishMetrics(metrics, skippedInterruptionMetrics('unrecognised'));
      return { function: 'interruption', skipped: parsed.unrecognised };
    }
    const notice = parsed.notice;
    const summary = summarize(notice);
    log.appendKeys({ eventId: notice.id, kind: notice.kind, dryRun: cfg.dryRun });
    log.info('interruption: notice received', { ...summary, action: notice.action, lagMs: startedAt - notice.time });
    if (cfg.actuator === 'karpenter') {
      const why = 'ACTUATOR=karpenter: this deployment launches no instance of its own (Karpenter handles the interruptions of its NodeClaims)';
      log.info(`interruption: nothing to do: ${why}`);
      publishMetrics(metrics, skippedInterruptionMetrics('karpenter_actuator', notice.kind));
      return { function: 'interruption', skipped: why, notice: summary };
    }
    const rt = await getRuntime(cfg);
    if (rt.nodes === undefined) {
      const why = 'CLUSTER_SOURCE is a file: there is no Kubernetes API to act on';
      log.warn(`interruption: nothing done: ${why}`);
      return { function: 'interruption', skipped: why, notice: summary };
    }
    const report = await respondToNotice(notice, { instances: rt.instances, nodes: rt.nodes, now: clock, sleep, log }, { dryRun: cfg.dryRun, invocationDeadlineMs });
    publishMetrics(metrics, interruptionMetrics(report));
    const failed = report.instances.filter((i) => i.error !== undefined);
    if (failed.length > 0) {
      throw new Error(`interruption: ${failed.map((i) => `${i.instanceId}: ${i.error}`).join('; ')} (the event will be delivered again)`);
    }
    log.info('interruption: notice handled', { outcomes: report.instances.map((i) => ({ instanceId: i.instanceId, outcome: i.outcome, node: i.node })), durationMs: clock() - startedAt });
    return { function: 'interruption', dryRun: report.dryRun, notice: summary, instances: report.instances };
  };

  return middy<unknown, InterruptionResponse, Error, Context>(run)
    .use(injectLambdaContext(log, { resetKeys: true }))
    .use(logMetrics(metrics))
    .use(failureGuard(log, metrics));
}

/** Counts a failed invocation in eks_consolidator_pass_errors_total{function=interruption}, as the passes count theirs. */
function failureGuard(log: Logger, metrics: Metrics): MiddlewareObj<unknown, InterruptionResponse, Error, Context> {
  return {
    before: () => {
      metrics.addDimension('function', 'interruption');
    },
    onError: (request) => {
      metrics.addMetric('eks_consolidator_pass_errors_total', MetricUnit.Count, 1);
      log.error('invocation failed', { requestId: request.context?.awsRequestId, error: request.error });
    },
  };
}

function summarize(notice: InterruptionNotice): NoticeSummary {
  return {
    id: notice.id,
    kind: notice.kind,
    detailType: notice.detailType,
    time: new Date(notice.time).toISOString(),
    instanceIds: notice.instanceIds,
    ...(notice.reclaimAt === undefined ? {} : { reclaimAt: new Date(notice.reclaimAt).toISOString() }),
  };
}

// Built on the container's first invocation, not at import: importing the module reads no
// configuration and prints nothing.
let built: ReturnType<typeof createInterruptionHandler> | undefined;
export const handler = (event: unknown, context: Context): Promise<InterruptionResponse> => (built ??= createInterruptionHandler())(event, context);
export default handler;
