import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
}

/** Shared by services and gateway so one dashboard query fits both. */
export const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** One registry per instance, so services sharing a process do not collide; outbox series come with the relay. */
export function createMetrics(service: string): Metrics {
  const registry = createRegistry(service);
  return {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers: [registry],
    }),
  };
}

export interface OutboxMetrics {
  published: Counter;
  pending: Gauge;
  oldestAge: Gauge;
  watch(status: () => Promise<{ pending: number; oldestPendingAgeMs: number }>): void;
}

const outboxByRegistry = new WeakMap<Registry, OutboxMetrics>();

/** Registered once per registry; the gauges ask Postgres when scraped (decision 0194). */
export function outboxMetrics(metrics: Metrics): OutboxMetrics {
  const known = outboxByRegistry.get(metrics.registry);
  if (known) return known;
  const registers = [metrics.registry];
  let status: (() => Promise<{ pending: number; oldestPendingAgeMs: number }>) | undefined;
  let reading: Promise<void> | undefined;
  const read = () => {
    reading ??= (async () => {
      try {
        const s = await status?.();
        if (s) {
          pending.set(s.pending);
          oldestAge.set(s.oldestPendingAgeMs / 1000);
        }
      } catch {
        // Postgres unreachable: no value rather than a stale one.
        pending.reset();
        oldestAge.reset();
      }
    })().finally(() => {
      setImmediate(() => {
        reading = undefined;
      });
    });
    return reading;
  };
  const pending: Gauge = new Gauge({ name: 'outbox_pending', help: 'Events waiting in the outbox', registers, collect: read });
  const oldestAge: Gauge = new Gauge({
    name: 'outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest outbox row not yet published to JetStream (0 when none waits)',
    registers,
    collect: read,
  });
  const m: OutboxMetrics = {
    published: new Counter({ name: 'outbox_published_total', help: 'Events relayed to JetStream', registers }),
    pending,
    oldestAge,
    watch: (s) => {
      status = s;
    },
  };
  outboxByRegistry.set(metrics.registry, m);
  return m;
}

interface ConsumerInfoSource {
  consumers: { info(stream: string, consumer: string): Promise<{ num_pending: number; num_ack_pending: number }> };
}

const lagByRegistry = new WeakMap<Registry, { source: { jsm: ConsumerInfoSource; stream: string; consumers: string[] } }>();

/** Asked of the server at each scrape. */
export function consumerLagMetrics(metrics: Metrics, jsm: ConsumerInfoSource, stream: string, consumers: string[]): void {
  const known = lagByRegistry.get(metrics.registry);
  if (known) {
    known.source = { jsm, stream, consumers };
    return;
  }
  const state = { source: { jsm, stream, consumers } };
  lagByRegistry.set(metrics.registry, state);
  const registers = [metrics.registry];
  let reading: Promise<void> | undefined;
  const read = () => {
    const { jsm, stream, consumers } = state.source;
    reading ??= Promise.all(
      consumers.map(async (consumer) => {
        try {
          const info = await jsm.consumers.info(stream, consumer);
          pending.set({ consumer }, info.num_pending);
          ackPending.set({ consumer }, info.num_ack_pending);
        } catch {
          // NATS unreachable: the series go away rather than show a stale lag.
          pending.remove({ consumer });
          ackPending.remove({ consumer });
        }
      }),
    )
      .then(() => undefined)
      .finally(() => {
        setImmediate(() => {
          reading = undefined;
        });
      });
    return reading;
  };
  const pending: Gauge<'consumer'> = new Gauge({
    name: 'jetstream_consumer_pending_messages',
    help: 'Messages of the stream not yet delivered to the consumer',
    labelNames: ['consumer'],
    registers,
    collect: read,
  });
  const ackPending: Gauge<'consumer'> = new Gauge({
    name: 'jetstream_consumer_ack_pending_messages',
    help: 'Messages delivered to the consumer and not yet acknowledged',
    labelNames: ['consumer'],
    registers,
    collect: read,
  });
}
