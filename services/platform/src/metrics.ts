import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
}

/** The HTTP histogram's buckets, shared by the services and the gateway so one dashboard query fits both. */
export const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** A registry with the process's default metrics, every series labelled with the process's name. */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * One Prometheus registry per service instance, so several services in one process do not collide. Only what every
 * service owns: the outbox's series come with its relay (`outboxMetrics`), so a process without one has none.
 */
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
  /** What the gauges read at each scrape (the relay's status query). */
  watch(status: () => Promise<{ pending: number; oldestPendingAgeMs: number }>): void;
}

const outboxByRegistry = new WeakMap<Registry, OutboxMetrics>();

/** The outbox relay's series, registered once per registry; the gauges ask Postgres when scraped (decision 0194). */
export function outboxMetrics(metrics: Metrics): OutboxMetrics {
  const known = outboxByRegistry.get(metrics.registry);
  if (known) return known;
  const registers = [metrics.registry];
  let status: (() => Promise<{ pending: number; oldestPendingAgeMs: number }>) | undefined;
  // One query per scrape sets both gauges; the second collect reuses the first's answer.
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

/** What a JetStream consumer's info says of its lag. */
interface ConsumerInfoSource {
  consumers: { info(stream: string, consumer: string): Promise<{ num_pending: number; num_ack_pending: number }> };
}

const lagByRegistry = new WeakMap<Registry, { source: { jsm: ConsumerInfoSource; stream: string; consumers: string[] } }>();

/**
 * Lag of the durable JetStream consumers this process reads from, asked of the server at each scrape: messages not
 * yet delivered to the consumer (`num_pending`) and delivered but not acknowledged (`num_ack_pending`).
 */
export function consumerLagMetrics(metrics: Metrics, jsm: ConsumerInfoSource, stream: string, consumers: string[]): void {
  // A consumer started again in the same process reads through the new connection; the gauges stay registered once.
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
