import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * OpenTelemetry tracing (decision 0200): on only when OTEL_EXPORTER_OTLP_ENDPOINT is set, exported over OTLP/HTTP.
 * Spans are made by hand at the hops that matter (the gateway, each service's HTTP and gRPC server side, the outbox
 * relay's publish, the webhooks consumer, the delivery attempt); the W3C `traceparent` carries the context between
 * them: HTTP header, gRPC metadata, outbox column, NATS header, delivery column. With tracing off nothing here runs
 * but a lookup that finds no tracer.
 */
export const TRACEPARENT = 'traceparent';
export { type Span, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';

import { SpanStatusCode } from '@opentelemetry/api';

const propagator = new W3CTraceContextPropagator();

/** Each traced service's tracer (services may share a process in tests and the dev stack). */
const tracers = new Map<string, { tracer: Tracer; provider: BasicTracerProvider; users: number }>();

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; spans go to `<endpoint>/v1/traces`. Unset: off. */
  endpoint: string | undefined;
  /** OTEL_BSP_SCHEDULE_DELAY: how long spans wait to be sent in a batch (ms). */
  delayMs?: number | undefined;
}

export interface Tracing {
  tracer: Tracer;
  /** Sends the spans still waiting, then stops this service's exporter (the last user's stop). */
  stop(): Promise<void>;
}

/** Starts tracing for `service` when an endpoint is configured; undefined (off) otherwise. */
export function startTracing(service: string, o: TracingOptions): Tracing | undefined {
  if (!o.endpoint) return undefined;
  let entry = tracers.get(service);
  if (!entry) {
    const url = `${o.endpoint.replace(/\/+$/, '')}/v1/traces`;
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': service }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }), { scheduledDelayMillis: o.delayMs ?? 5000 })],
    });
    entry = { tracer: provider.getTracer(service), provider, users: 0 };
    tracers.set(service, entry);
  }
  entry.users++;
  const mine = entry;
  let stopped = false;
  return {
    tracer: mine.tracer,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      if (--mine.users > 0) return;
      tracers.delete(service);
      await mine.provider.shutdown().catch(() => undefined);
    },
  };
}

/** The tracer of a service, when it traces. */
export const tracerOf = (service: string): Tracer | undefined => (tracers.size ? tracers.get(service)?.tracer : undefined);

/** The parent a `traceparent` value names (invalid or absent: a new trace). */
export function contextOf(traceparent: string | string[] | undefined | null): Context {
  const value = Array.isArray(traceparent) ? traceparent[0] : traceparent;
  if (!value) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { [TRACEPARENT]: value }, defaultTextMapGetter);
}

/** The `traceparent` that makes the next hop a child of `span`. */
export function traceparentOf(span: Span): string {
  const carrier: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  return carrier[TRACEPARENT] as string;
}

/** A span of `tracer`, child of the hop `traceparent` names. */
export function startSpan(
  tracer: Tracer,
  name: string,
  kind: SpanKind,
  traceparent: string | string[] | undefined | null,
  attributes: Record<string, string | number> = {},
): Span {
  return tracer.startSpan(name, { kind, attributes }, contextOf(traceparent));
}

/** The span being served in this async context (services only: the gateway passes its span itself, decision 0146). */
const active = new AsyncLocalStorage<Span>();

export function withSpan<T>(span: Span, work: () => T): T {
  return active.run(span, work);
}

/** The `traceparent` of the span being served, for the next hop; undefined with tracing off or outside a span. */
export function currentTraceparent(): string | undefined {
  if (!tracers.size) return undefined;
  const span = active.getStore();
  return span ? traceparentOf(span) : undefined;
}

/** A service's HTTP handler served inside a server span, child of the caller's `traceparent` (the gateway's span). */
export function servedInSpan(
  tracer: Tracer,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = req.url ?? '';
    if (isProbe(url)) return handle(req, res);
    const q = url.indexOf('?');
    const span = startSpan(tracer, `http ${req.method}`, SpanKind.SERVER, req.headers[TRACEPARENT], {
      'http.request.method': req.method ?? '',
      'url.path': q === -1 ? url : url.slice(0, q),
    });
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    withSpan(span, () => handle(req, res));
  };
}

/** Health, readiness and metrics probes: every few seconds from the orchestrator, never part of a trace worth having. */
export const isProbe = (url: string): boolean => /^\/(healthz|readyz|metrics)(\?|$)/.test(url);
