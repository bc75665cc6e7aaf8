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
  /**
   * Longest wait between looks when this process commits no events (default 1000 ms): how soon the relay finds events
   * that no wake-up announced (written by another replica that died before its relay ran, or from outside the
   * service's processes), and those of a relay restart.
   */
  idleSweepMs?: number;
  /**
   * While events flow (batches with rows less than STREAM_GAP_MS apart), the relay ignores wake-ups and publishes a
   * batch every this many ms (default 5): with one event per commit, a batch's round trips cost more than its events,
   * so gathering commits makes the relay and everything downstream cheaper per event. An event after a quiet spell is
   * published as soon as its commit wakes the relay.
   */
  coalesceMs?: number;
  /**
   * Published rows older than this are deleted (they are kept until then for `events:replay`). Unset:
   * the relay deletes nothing. Unpublished rows are never deleted.
   */
  retentionHours?: number;
  /** How often the relay deletes expired rows (default 5 minutes). */
  pruneIntervalMs?: number;
  /** Rows deleted per statement, so no transaction holds many locks for long (default 1000). */
  pruneBatchSize?: number;
  /** Set when tracing is on: each traced row's publish is a span, child of the request that wrote it (decision 0200). */
  tracer?: Tracer | undefined;
}

/**
 * The JetStream message of an outbox row (an EventMessage as JSON): the same bytes whether the relay or a replay
 * publishes it. A payload read as text is put in as Postgres printed it, neither parsed nor stringified again
 * (decision 0035).
 */
export function outboxMessageData(row: OutboxRow): string {
  const payload = typeof row.payload === 'string' ? row.payload : JSON.stringify(row.payload);
  return `{"event_id":${JSON.stringify(row.id)},"event_key":${JSON.stringify(row.event_key)},"company_id":${JSON.stringify(row.company_id)},"occurred_at":"${new Date(row.occurred_at).toISOString()}","payload":${payload}}`;
}

/**
 * The smallest UUID v7 of a millisecond: every v7 id generated at or after `at` sorts at or above it,
 * every one generated before sorts below. Outbox ids are v7, so a time range is a primary-key range.
 */
export function uuidV7Floor(at: Date): string {
  const hex = Math.max(0, Math.floor(at.getTime())).toString(16).padStart(12, '0').slice(-12);
  return `${hex.slice(0, 8)}-${hex.slice(8)}-0000-0000-000000000000`;
}

/**
 * Publishes outbox rows to JetStream with Nats-Msg-Id = event id. Woken in-process by each commit of this process that
 * recorded events (decision 0033), with a sweep every `idleSweepMs` as the safety net; while events flow it polls
 * every `coalesceMs` instead (decision 0031). Rows are claimed with SKIP LOCKED, so replicas share the work; a crash
 * between publish and mark republishes the same ids, which JetStream's duplicate window drops.
 */
export class OutboxRelay {
  private running = false;
  private stopping = false;
  private wake: (() => void) | undefined;
  /** A commit that came while a batch was being published: the next wait returns at once. */
  private notified = false;
  private polling = false;
  private unregister: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private pruning: Promise<void> | undefined;
  private wakePruner: (() => void) | undefined;
  publishedTotal = 0;
  prunedTotal = 0;

  private readonly metrics: OutboxMetrics;

  /** Whether events are flowing (the relay polls): a commit then needs no wake-up to be published. */
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

  /** This process committed events: publish them now, unless a flow is being polled (the next batch takes them). */
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
    /** When the last batch with rows was published; while they keep coming, the relay polls. */
    let lastFound = Number.NEGATIVE_INFINITY;
    /** This look was not asked for (the sweep's timer ran out): first ask whether there is anything to publish. */
    let swept = false;
    while (this.running) {
      this.notified = false;
      const sweep = swept;
      swept = false;
      let n = 0;
      try {
        // Most sweeps find nothing: one read on the unpublished index instead of a transaction's three round trips.
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
        // A steady flow: the next batch in `poll` ms gathers the commits made meanwhile, and no wake-up runs a batch for
        // each of them.
        if (this.polling) await sleep(poll);
        continue;
      }
      if (this.polling) {
        // The flow stopped: wake-ups count again; look once more (one ignored during the last poll may have no rows
        // taken yet).
        this.polling = false;
        continue;
      }
      // stop() may have come while this batch ran, when there was no wait to wake yet: it must not wait `idle` ms.
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

  /** Publishes one batch; returns how many rows it published (claimed until JetStream acked them all). */
  async drainOnce(): Promise<number> {
    const n = await claimUnpublished(this.o.orm, this.o.schema, this.o.batchSize ?? 500, async (rows) => {
      // Published in id order (the order the rows were recorded in, as far as their transactions let).
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
    // A JetStream client that connectNats did not make: one request per message.
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

/** Batches with rows closer than this are a flow (the relay polls); a gap this long ends it (wake-ups count again). */
const STREAM_GAP_MS = 25;
