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
 * On only when OTEL_EXPORTER_OTLP_ENDPOINT is set (decision 0200); spans are made by hand at the hops that matter and
 * `traceparent` carries the context between them. Off, nothing here runs but a lookup.
 */
export const TRACEPARENT = 'traceparent';
export { type Span, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';

import { SpanStatusCode } from '@opentelemetry/api';

const propagator = new W3CTraceContextPropagator();

/** Services may share a process in tests and the dev stack. */
const tracers = new Map<string, { tracer: Tracer; provider: BasicTracerProvider; users: number }>();

export interface TracingOptions {
  /** Spans go to `<endpoint>/v1/traces`; unset: off. */
  endpoint: string | undefined;
  /** Milliseconds. */
  delayMs?: number | undefined;
}

export interface Tracing {
  tracer: Tracer;
  /** Sends the spans still waiting; the last user's stop ends the exporter. */
  stop(): Promise<void>;
}

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

export const tracerOf = (service: string): Tracer | undefined => (tracers.size ? tracers.get(service)?.tracer : undefined);

/** Invalid or absent: a new trace. */
export function contextOf(traceparent: string | string[] | undefined | null): Context {
  const value = Array.isArray(traceparent) ? traceparent[0] : traceparent;
  if (!value) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { [TRACEPARENT]: value }, defaultTextMapGetter);
}

export function traceparentOf(span: Span): string {
  const carrier: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  return carrier[TRACEPARENT] as string;
}

export function startSpan(
  tracer: Tracer,
  name: string,
  kind: SpanKind,
  traceparent: string | string[] | undefined | null,
  attributes: Record<string, string | number> = {},
): Span {
  return tracer.startSpan(name, { kind, attributes }, contextOf(traceparent));
}

/** Services only: the gateway passes its span itself (decision 0146). */
const active = new AsyncLocalStorage<Span>();

export function withSpan<T>(span: Span, work: () => T): T {
  return active.run(span, work);
}

export function currentTraceparent(): string | undefined {
  if (!tracers.size) return undefined;
  const span = active.getStore();
  return span ? traceparentOf(span) : undefined;
}

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

/** Never part of a trace worth having. */
export const isProbe = (url: string): boolean => /^\/(healthz|readyz|metrics)(\?|$)/.test(url);
