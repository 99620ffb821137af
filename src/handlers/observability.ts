// What every handler sets up once per container, before its first invocation: the configuration
// (parsed once; a bad one is logged at cold start and fails every invocation until fixed), the JSON
// logger at the configured level, and the EMF metrics with the cluster as default dimension.
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { ConfigError, loadConfig, type Config, type Env } from '../app/config.ts';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../app/observability/metrics.ts';

export interface HandlerSetup {
  readonly log: Logger;
  readonly metrics: Metrics;
  /** Undefined when the configuration is invalid (then `configError` says why). */
  readonly config: Config | undefined;
  readonly configError: unknown;
}

export function handlerSetup(functionName: string, env: Env): HandlerSetup {
  // Powertools writes the JSON log lines and the EMF documents to stdout (as CloudWatch Logs reads them).
  // The logger's level comes from LOG_LEVEL through the configuration; until that is read, the default.
  const log = new Logger({ serviceName: SERVICE_NAME, persistentKeys: { function: functionName } });
  let config: Config | undefined;
  let configError: unknown;
  try {
    config = loadConfig(env);
    log.setLogLevel(config.logLevel.toUpperCase() as Uppercase<Config['logLevel']>);
    log.appendPersistentKeys({ cluster: config.clusterName });
  } catch (error) {
    configError = error;
    const fields = error instanceof ConfigError ? { variable: error.variable, problem: error.problem } : { error };
    log.error(`invalid configuration: every invocation will fail until it is fixed: ${(error as Error).message}`, fields);
  }
  const metrics = new Metrics({
    namespace: METRICS_NAMESPACE,
    serviceName: SERVICE_NAME,
    // Its own warnings (e.g. a timestamp out of range) as JSON log lines too.
    logger: log,
    ...(config === undefined ? {} : { defaultDimensions: { cluster: config.clusterName } }),
  });
  return { log, metrics, config, configError };
}
