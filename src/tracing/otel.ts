import { AsyncLocalStorage } from 'node:async_hooks';
import {
  createTraceState,
  diag,
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type AttributeValue,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Request, Response } from 'express';
import type { RedisClient } from '../redis/connection';
import type { Logger } from '../observability/logger';
import { contextOf, type EventTrace } from '../http/context';
import type { OutRecord, Sink } from '../publish/sink';
import { instrumentRedisClient } from './redis';
import type { Tracing } from './tracing';
import { formatTraceparent, incomingTrace, parseTraceparent } from './w3c';

export interface OtelOptions {
  /** The OTLP/HTTP traces URL. */
  url: string;
  serviceName: string;
  logger: Logger;
}

/** Longest wait at shutdown for buffered spans to be exported: an unreachable collector must not hold the drain. */
const SHUTDOWN_EXPORT_MS = 2000;
/** The same exporter complaint is logged at most once a minute (a collector that is down repeats it). */
const DIAG_REPEAT_MS = 60_000;

/**
 * Spans exported over OTLP/HTTP (JSON) by the OpenTelemetry SDK: one SERVER span per request
 * (a child of the sender's `traceparent`), a child span per idempotency-store call and per
 * Redis command, and one PRODUCER span per sink write linked to the span of every request
 * whose record it carries. The batch size, delay and queue of the span processor, the
 * sampler and the exporter's headers, timeout and compression follow the standard OTEL_*
 * variables. The SDK is not registered globally: the current request's context is kept in
 * an AsyncLocalStorage of our own.
 */
export function otelTracing(options: OtelOptions): Tracing {
  routeDiagnostics(options.logger);
  const provider = new BasicTracerProvider({
    resource: defaultResource()
      .merge(detectResources({ detectors: [envDetector] }))
      .merge(resourceFromAttributes({ 'service.name': options.serviceName })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: options.url }))],
  });
  const tracer = provider.getTracer('ingress-gateway');
  const active = new AsyncLocalStorage<Context>();
  let shutdown: Promise<void> | undefined;

  /** A child span of the current request around `run`; outside a request, just `run`. */
  function inSpan<R>(name: string, run: () => Promise<R>): Promise<R> {
    const parent = active.getStore();
    if (!parent) return run();
    const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, parent);
    return active.run(trace.setSpan(parent, span), async () => {
      try {
        const result = await run();
        const state = (result as { state?: unknown } | undefined)?.state;
        if (typeof state === 'string') span.setAttribute('igw.idempotency.state', state);
        return result;
      } catch (error) {
        failed(span, error);
        throw error;
      } finally {
        span.end();
      }
    });
  }

  return {
    exporting: true,
    requests: (req, res, next) => {
      const incoming = incomingTrace(req.headers);
      const parent = incoming.parent
        ? trace.setSpanContext(ROOT_CONTEXT, {
            traceId: incoming.parent.traceId,
            spanId: incoming.parent.spanId,
            traceFlags: incoming.parent.flags,
            isRemote: true,
            ...(incoming.tracestate !== undefined && { traceState: createTraceState(incoming.tracestate) }),
          })
        : ROOT_CONTEXT;
      const span = tracer.startSpan(
        req.method,
        {
          kind: SpanKind.SERVER,
          // The path without its query string: query strings can carry verify tokens.
          attributes: { 'http.request.method': req.method, 'url.path': req.path, 'url.scheme': req.protocol },
        },
        parent,
      );
      const { traceId, spanId, traceFlags } = span.spanContext();
      const eventTrace: EventTrace = { traceparent: formatTraceparent({ traceId, spanId, flags: traceFlags }) };
      if (incoming.tracestate !== undefined) eventTrace.tracestate = incoming.tracestate;
      contextOf(res).trace = eventTrace;
      res.once('close', () => endRequestSpan(span, req, res));
      active.run(trace.setSpan(parent, span), next);
    },
    traceSink: (sink) => withMethod(sink, 'write', (records: OutRecord[]) => tracedWrite(tracer, sink, records)),
    traceMethods: (target, component, methods) =>
      new Proxy(target, {
        get(object, property) {
          const value = Reflect.get(object, property, object);
          if (typeof value !== 'function') return value;
          if (typeof property === 'string' && methods.includes(property)) {
            return (...args: unknown[]) => inSpan(`${component}.${property}`, () => value.apply(object, args));
          }
          return value.bind(object);
        },
      }),
    instrumentRedis: (client: RedisClient) =>
      instrumentRedisClient(client, (name, attributes) => {
        const parent = active.getStore();
        return parent && tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
      }),
    shutdown: () => (shutdown ??= boundedShutdown(provider, options.logger)),
  };
}

async function boundedShutdown(provider: BasicTracerProvider, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), SHUTDOWN_EXPORT_MS)));
  try {
    const outcome = await Promise.race([provider.shutdown().then(() => 'done' as const), late]);
    if (outcome === 'late') logger.warn({ waitedMs: SHUTDOWN_EXPORT_MS }, 'spans not exported at shutdown: the collector did not answer in time');
  } catch (error) {
    logger.warn({ err: messageOf(error) }, 'span export at shutdown failed');
  } finally {
    clearTimeout(timer);
  }
}

function endRequestSpan(span: Span, req: Request, res: Response): void {
  const httpRoute = (req.route as { path?: unknown } | undefined)?.path;
  const route = typeof httpRoute === 'string' ? httpRoute : undefined;
  span.updateName(route ? `${req.method} ${route}` : req.method);
  const context = contextOf(res);
  const attributes: Record<string, AttributeValue | undefined> = {
    'http.route': route,
    'http.response.status_code': res.statusCode,
    'igw.route': context.route,
    'igw.outcome': context.outcome,
    'igw.reason': context.reason,
    'igw.event_id': context.eventId,
    'igw.request_id': context.requestId,
  };
  span.setAttributes(defined(attributes));
  if (!res.writableFinished) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'the connection closed before the answer was sent' });
  } else if (res.statusCode >= 500) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: String(context.reason ?? res.statusCode) });
  }
  span.end();
}

/** One PRODUCER span per sink write, a root of its own, linked to each request span whose record it carries. */
async function tracedWrite(tracer: Tracer, sink: Sink, records: OutRecord[]): Promise<void> {
  const topics = new Set(records.map((record) => record.topic));
  const topic = topics.size === 1 ? [...topics][0] : undefined;
  const span = tracer.startSpan(
    topic ? `send ${topic}` : 'send',
    {
      kind: SpanKind.PRODUCER,
      links: linksOf(records),
      attributes: defined({
        'messaging.system': sink.name === 'kafka' ? 'kafka' : sink.name,
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'send',
        'messaging.batch.message_count': records.length,
        'messaging.destination.name': topic,
      }),
    },
    ROOT_CONTEXT,
  );
  try {
    await sink.write(records);
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

function linksOf(records: OutRecord[]): Link[] {
  const links = new Map<string, Link>();
  for (const record of records) {
    const ref = parseTraceparent(record.headers.traceparent);
    if (!ref || links.has(ref.spanId)) continue;
    links.set(ref.spanId, { context: { traceId: ref.traceId, spanId: ref.spanId, traceFlags: ref.flags } });
  }
  return [...links.values()];
}

/** The same object with one method replaced; everything else (name, start, close, ping) is the object's own. */
function withMethod<T extends object>(target: T, name: string, method: (...args: never[]) => unknown): T {
  return new Proxy(target, {
    get(object, property) {
      if (property === name) return method;
      const value = Reflect.get(object, property, object);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

function failed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: messageOf(error) });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function defined(attributes: Record<string, AttributeValue | undefined>): Attributes {
  const kept: Attributes = {};
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined && value !== null) kept[name] = value;
  return kept;
}

/** The SDK reports export failures through its diagnostics logger: onto pino at warn, repeats dropped. */
function routeDiagnostics(logger: Logger): void {
  const logged = new Map<string, number>();
  const warn = (message: string, ...args: unknown[]) => {
    const now = Date.now();
    const last = logged.get(message);
    if (last !== undefined && now - last < DIAG_REPEAT_MS) return;
    if (logged.size > 100) logged.clear();
    logged.set(message, now);
    logger.warn({ component: 'opentelemetry', detail: args.map(messageOf).join(' ') || undefined }, message);
  };
  const ignore = () => undefined;
  diag.setLogger({ error: warn, warn, info: ignore, debug: ignore, verbose: ignore }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
}
