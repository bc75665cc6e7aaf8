import type { MikroORM } from '@mikro-orm/postgresql';
import type { JetStreamClient } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import type { Logger } from '../logging.js';
import { type Metrics, type OutboxMetrics, outboxMetrics } from '../metrics.js';
import { type Span, SpanKind, startSpan, TRACEPARENT, type Tracer, traceparentOf } from '../tracing.js';
import { type StreamMessage, streamPublisherOf } from './nats.js';
import { type OutboxRow, onEventsCommitted } from './outbox.js';
import { anyUnpublished, claimUnpublished, deletePublishedBefore, unpublishedStatus } from './outbox.store.js';

export type { OutboxRow };

export interface RelayOptions {
  orm: MikroORM;
  js: JetStreamClient;
  schema: string;
  subjectPrefix: string;
  logger: Logger;
  metrics: Metrics;
  batchSize?: number;
  /** Longest wait between looks while this process commits nothing: bounds how late unannounced events are found. */
  idleSweepMs?: number;
  /**
   * While events flow, wake-ups are ignored and a batch goes every `coalesceMs`: gathering commits makes the relay and
   * everything downstream cheaper per event (decision 0031).
   */
  coalesceMs?: number;
  /** Published rows are kept this long for `events:replay`; unset, nothing is deleted. Unpublished rows never are. */
  retentionHours?: number;
  pruneIntervalMs?: number;
  /** Rows deleted per statement, so no transaction holds many locks for long. */
  pruneBatchSize?: number;
  /** Each traced row's publish is a span, child of the request that wrote it (decision 0200). */
  tracer?: Tracer | undefined;
}

/** The same bytes whether the relay or a replay publishes; a text payload is not re-parsed (decision 0035). */
export function outboxMessageData(row: OutboxRow): string {
  const payload = typeof row.payload === 'string' ? row.payload : JSON.stringify(row.payload);
  return `{"event_id":${JSON.stringify(row.id)},"event_key":${JSON.stringify(row.event_key)},"company_id":${JSON.stringify(row.company_id)},"occurred_at":"${new Date(row.occurred_at).toISOString()}","payload":${payload}}`;
}

/** Every v7 id generated at or after `at` sorts at or above it, so a time range is a primary-key range. */
export function uuidV7Floor(at: Date): string {
  const hex = Math.max(0, Math.floor(at.getTime())).toString(16).padStart(12, '0').slice(-12);
  return `${hex.slice(0, 8)}-${hex.slice(8)}-0000-0000-000000000000`;
}

/**
 * Woken by this process's commits (decision 0033), with a sweep as the safety net; polls while events flow (decision
 * 0031). SKIP LOCKED shares rows between replicas; a crash between publish and mark republishes ids that JetStream's
 * duplicate window drops.
 */
export class OutboxRelay {
  private running = false;
  private stopping = false;
  private wake: (() => void) | undefined;
  private notified = false;
  private polling = false;
  private unregister: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private pruning: Promise<void> | undefined;
  private wakePruner: (() => void) | undefined;
  publishedTotal = 0;
  prunedTotal = 0;

  private readonly metrics: OutboxMetrics;

  get flowing(): boolean {
    return this.polling;
  }

  constructor(private readonly o: RelayOptions) {
    this.metrics = outboxMetrics(o.metrics);
    this.metrics.watch(() => this.status());
  }

  async start(): Promise<void> {
    this.running = true;
    this.stopping = false;
    this.unregister = onEventsCommitted(this.o.schema, () => this.committed());
    this.loop = this.run();
    if (this.o.retentionHours !== undefined) this.pruning = this.pruneLoop();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopping = true;
    this.unregister?.();
    this.wake?.();
    this.wakePruner?.();
    await Promise.all([this.loop, this.pruning]);
  }

  private committed(): void {
    if (this.polling) return;
    this.notified = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    const idle = this.o.idleSweepMs ?? 1000;
    const poll = this.o.coalesceMs ?? 5;
    const full = this.o.batchSize ?? 500;
    let backoff = 100;
    let lastFound = Number.NEGATIVE_INFINITY;
    /** The sweep's timer ran out: first ask whether there is anything to publish. */
    let swept = false;
    while (this.running) {
      this.notified = false;
      const sweep = swept;
      swept = false;
      let n = 0;
      const started = performance.now();
      try {
        // Most sweeps find nothing: one indexed read instead of a transaction.
        n = sweep && !(await anyUnpublished(this.o.orm, this.o.schema)) ? 0 : await this.drainOnce();
        backoff = 100;
      } catch (err) {
        this.o.logger.warn({ err: (err as Error).message }, 'outbox relay failed a batch; retrying');
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 5000);
        continue;
      }
      const now = performance.now();
      if (n >= full) {
        lastFound = now;
        continue;
      }
      if (n > 0 || (this.polling && now - lastFound < STREAM_GAP_MS)) {
        if (n > 0 && now - lastFound < STREAM_GAP_MS && poll > 0) this.polling = true;
        if (n > 0) lastFound = now;
        // A steady flow: sleeping gathers the commits made meanwhile into one batch.
        if (this.polling) await sleep(pollWaitMs(poll, started, now));
        continue;
      }
      if (this.polling) {
        // The flow stopped: wake-ups count again; look once more for a wake-up ignored during the last poll.
        this.polling = false;
        continue;
      }
      // stop() may have come while this batch ran: it must not wait `idle` ms.
      if (this.notified || !this.running) continue;
      swept = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(true), idle);
        this.wake = () => {
          clearTimeout(timer);
          resolve(false);
        };
      });
      this.wake = undefined;
    }
  }

  /** Rows stay claimed until JetStream acked them all. */
  async drainOnce(): Promise<number> {
    const n = await claimUnpublished(this.o.orm, this.o.schema, this.o.batchSize ?? 500, async (rows) => {
      // In recording order, as far as their transactions let.
      rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const spans: Span[] = [];
      const { tracer } = this.o;
      await this.publish(
        rows.map((row) => {
          let traceparent = row.traceparent ?? undefined;
          if (tracer && traceparent) {
            const span = startSpan(tracer, `outbox publish ${row.event_key}`, SpanKind.PRODUCER, traceparent, {
              'messaging.system': 'nats',
              'messaging.message.id': row.id,
              'messaging.destination.name': `${this.o.subjectPrefix}.${row.event_key}`,
            });
            spans.push(span);
            traceparent = traceparentOf(span);
          }
          return { subject: `${this.o.subjectPrefix}.${row.event_key}`, data: outboxMessageData(row), msgId: row.id, traceparent };
        }),
      ).finally(() => {
        for (const span of spans) span.end();
      });
    });
    this.publishedTotal += n;
    if (n) this.metrics.published.inc(n);
    return n;
  }

  private async publish(messages: StreamMessage[]): Promise<void> {
    const publisher = streamPublisherOf(this.o.js);
    if (publisher) return publisher.publishAll(messages, 5000);
    await Promise.all(
      messages.map((m) => {
        const h = m.traceparent ? headers() : undefined;
        h?.set(TRACEPARENT, m.traceparent as string);
        return this.o.js.publish(m.subject, m.data, { msgID: m.msgId, timeout: 5000, ...(h ? { headers: h } : {}) });
      }),
    );
  }

  private async pruneLoop(): Promise<void> {
    const interval = this.o.pruneIntervalMs ?? 5 * 60_000;
    while (this.running) {
      try {
        const deleted = await this.pruneExpired();
        if (deleted) this.o.logger.info({ deleted, retentionHours: this.o.retentionHours }, 'deleted expired outbox rows');
      } catch (err) {
        this.o.logger.warn({ err: (err as Error).message }, 'could not delete expired outbox rows; will retry');
      }
      if (!this.running) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, interval);
        this.wakePruner = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakePruner = undefined;
    }
  }

  async pruneExpired(now = new Date()): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.pruneOnce(now);
      total += n;
      if (n < (this.o.pruneBatchSize ?? 1000) || this.stopping) return total;
    }
  }

  async pruneOnce(now = new Date()): Promise<number> {
    if (this.o.retentionHours === undefined) return 0;
    const cutoff = new Date(now.getTime() - this.o.retentionHours * 3_600_000);
    const n = await deletePublishedBefore(this.o.orm, this.o.schema, uuidV7Floor(cutoff), cutoff, this.o.pruneBatchSize ?? 1000);
    this.prunedTotal += n;
    return n;
  }

  async status(): Promise<{ pending: number; oldestPendingAgeMs: number }> {
    const { pending, oldest } = await unpublishedStatus(this.o.orm, this.o.schema);
    return { pending, oldestPendingAgeMs: oldest ? Math.max(0, Date.now() - new Date(oldest).getTime()) : 0 };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * While events flow, batches start every `pollMs` counted from the previous batch's start: a commit waits at most
 * `pollMs` plus one batch for its relay, where a wait counted from the batch's end added the batch's own time (publish
 * and PubAcks, decision 0246). A batch longer than `pollMs` is followed at once.
 */
export function pollWaitMs(pollMs: number, batchStartedAt: number, now: number): number {
  return Math.max(0, pollMs - (now - batchStartedAt));
}

/** Batches closer than this are a flow (the relay polls). */
const STREAM_GAP_MS = 25;
