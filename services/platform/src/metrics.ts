import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  outboxPublished: Counter;
  outboxPending: Gauge;
}

/** One Prometheus registry per service instance, so several services in one process do not collide. */
export function createMetrics(service: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    outboxPublished: new Counter({ name: 'outbox_published_total', help: 'Events relayed to JetStream', registers: [registry] }),
    outboxPending: new Gauge({ name: 'outbox_pending', help: 'Events waiting in the outbox', registers: [registry] }),
  };
}
