/**
 * OpenTelemetry tracing of one process (API or worker). Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set: then nothing is created — no provider, no exporter, no interceptors,
 * no log mixin — so tracing off costs nothing. On, spans go in batches to the OTLP/HTTP endpoint; the provider is
 * registered globally because the Temporal interceptors and the log mixin read the active context through the
 * OpenTelemetry API (AsyncLocalStorage), which is global by design.
 */
import { trace, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Config } from '../config';

export interface Tracing {
  tracer: Tracer;
  resource: Resource;
  /** Also takes the workflow sandbox's spans (the worker's exporter sink). */
  processor: SpanProcessor;
  /** Flushes what is buffered; call before the process exits. */
  shutdown(): Promise<void>;
}

type TracingConfig = Pick<
  Config,
  | 'OTEL_EXPORTER_OTLP_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_HEADERS'
  | 'OTEL_SERVICE_NAME'
>;

/** Where spans go, or undefined when tracing is off. */
export function tracesUrl(config: TracingConfig): string | undefined {
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (!config.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  return `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
}

function parseHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

/** Starts tracing when configured (or when a test hands in its own exporter); undefined means off. */
export function startTracing(
  config: TracingConfig,
  defaultServiceName: string,
  exporter?: SpanExporter,
): Tracing | undefined {
  const url = tracesUrl(config);
  if (url === undefined && exporter === undefined) return undefined;
  const resource = new Resource({ 'service.name': config.OTEL_SERVICE_NAME ?? defaultServiceName });
  const processor = new BatchSpanProcessor(
    exporter ?? new OTLPTraceExporter({ url, headers: parseHeaders(config.OTEL_EXPORTER_OTLP_HEADERS) }),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  return { tracer: provider.getTracer('stepwise'), resource, processor, shutdown: () => provider.shutdown() };
}

/** The active span's ids (a log line's, a run's), or undefined outside a sampled span. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/**
 * Runs `fn` in a child span of the active one, ended with its outcome; with tracing off (no tracer) just runs `fn`,
 * with no span. For the calls worth timing inside an activity: model calls, tool and action executions (their HTTP
 * requests). `fn` gets the span to pass its context on (an MCP request's `_meta`).
 */
export async function inSpan<T>(
  tracer: Tracer | undefined,
  name: string,
  attributes: Record<string, string | number | boolean>,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracer) return fn(undefined);
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: 2, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}
