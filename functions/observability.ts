/**
 * Powertools for AWS Lambda (Logger, Metrics, Tracer), set up once per function. The Logger is
 * adapted to the service's Log port; every line about a request carries its `requestId`, and the
 * worker adds `jobId` and `kind`, so one request can be followed from the API call through every
 * job in CloudWatch Logs Insights (`filter requestId = "..."`).
 *
 * Outside Lambda the Tracer is disabled by Powertools itself, and the Metrics only print EMF lines.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import type { Config } from '../lib/config.js';
import { setLanguageDetectorLog } from '../lib/language/detect.js';
import type { Log } from '../lib/log.js';

export { MetricUnit };

export interface Observability {
  logger: Logger;
  metrics: Metrics;
  tracer: Tracer;
  log: Log;
  count(name: string, value?: number): void;
}

/** The log level (POWERTOOLS_LOG_LEVEL over LINKPREVIEW_LOG_LEVEL) and the metrics namespace (POWERTOOLS_METRICS_NAMESPACE). */
export type ObservabilityConfig = Pick<Config, 'logLevel' | 'powertoolsLogLevel' | 'metricsNamespace'>;

export function createObservability(serviceName: string, config: ObservabilityConfig): Observability {
  const { logLevel } = config;
  const level = (config.powertoolsLogLevel || (logLevel === 'silent' ? 'SILENT' : logLevel)).toUpperCase();
  const logger = new Logger({ serviceName, logLevel: level as never });
  const metrics = new Metrics({ namespace: config.metricsNamespace, serviceName });
  const tracer = new Tracer({ serviceName });
  const at = (fn: (message: string, ...extra: never[]) => void) => (message: string, extra?: Record<string, unknown>) =>
    extra ? fn.call(logger, message, extra as never) : fn.call(logger, message);
  const log: Log = { debug: at(logger.debug), info: at(logger.info), warn: at(logger.warn), error: at(logger.error) };
  setLanguageDetectorLog(log);
  return { logger, metrics, tracer, log, count: (name, value = 1) => metrics.addMetric(name, MetricUnit.Count, value) };
}
