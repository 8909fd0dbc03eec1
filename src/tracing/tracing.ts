import type { RequestHandler } from 'express';
import type { RedisClient } from '../redis/connection';
import type { Config } from '../config/schema';
import type { Logger } from '../observability/logger';
import type { Sink } from '../publish/sink';
import { contextOf, type EventTrace } from '../http/context';
import { incomingTrace, passThroughTrace } from './w3c';

/**
 * How the gateway takes part in a distributed trace. Every request's context gets its `trace`
 * (the context its events carry, W3C Trace Context); with span export on, the request, its
 * store calls and the sink's batch writes are also spans.
 */
export interface Tracing {
  readonly exporting: boolean;
  /** Sets the request context's `trace` (an EventTrace); with export on, runs the rest of the request inside its span. */
  readonly requests: RequestHandler;
  /** A sink whose writes are spans linked to the requests whose records they carry. */
  traceSink<S extends Sink>(sink: S): S;
  /** The same object, with the named async methods as child spans of the current request. */
  traceMethods<T extends object>(target: T, component: string, methods: readonly string[]): T;
  /** Each command sent on this client during a request becomes a child span of it. */
  instrumentRedis(client: RedisClient): void;
  /** Exports what is buffered; safe twice. */
  shutdown(): Promise<void>;
}

/** No span export: the sender's context (or a new one) goes into the events, nothing else runs. */
export const passThroughTracing: Tracing = {
  exporting: false,
  requests: (req, res, next) => {
    contextOf(res).trace = passThroughTrace(incomingTrace(req.headers));
    next();
  },
  traceSink: (sink) => sink,
  traceMethods: (target) => target,
  instrumentRedis: () => undefined,
  shutdown: async () => undefined,
};

/** Where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces` (OTLP/HTTP). */
export function otlpTracesUrl(config: Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'>): string | undefined {
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT) return `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
  return undefined;
}

/** Tracing's section of the settings (the container builds it from OTEL_*). */
export interface TracingSettings {
  /** Where spans go (see otlpTracesUrl); unset: none are exported. */
  tracesUrl?: string;
  /** `service.name` of the exported spans. */
  serviceName: string;
}

/**
 * Span export only when an OTLP endpoint is configured. The OpenTelemetry SDK is required
 * here and nowhere else, so a gateway without an endpoint never loads it.
 */
export function createTracing(settings: TracingSettings, logger: Logger): Tracing {
  const url = settings.tracesUrl;
  if (!url) return passThroughTracing;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { otelTracing } = require('./otel') as typeof import('./otel');
  return otelTracing({ url, serviceName: settings.serviceName, logger });
}
