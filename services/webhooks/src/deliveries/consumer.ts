import { AckPolicy, type ConsumerMessages, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { AppError } from '@svc/platform/errors';
import type { EventMessage } from '@svc/platform/events/outbox';
import { consumerLagMetrics } from '@svc/platform/metrics';
import { type CrmPeer, planValidAt } from '@svc/platform/peers/crm';
import type { ServiceContext } from '@svc/platform/service';
import { type Span, SpanKind, startSpan, TRACEPARENT, traceparentOf, tracerOf } from '@svc/platform/tracing';
import type { Company } from '@svc/proto/crm/v1/crm';
import type { Pool } from 'pg';
import type { Delivery } from './delivery.entity.js';
import type { DeliveryMetrics } from './delivery.metrics.js';
import { type IssuedEvent, type IssuedRow, insertIssued } from './delivery.store.js';

export const CONSUMER_NAME = 'webhooks';

/** One statement per batch: its subscriptions matched and its deliveries inserted (decision 0245). */
const BATCH = 500;
/** Bounds one statement's JSON (about 2 KB an event). */
const INSERT_EVENTS = 2000;

/** Then a batch's deliveries are queued in Postgres instead. */
const ROOM_WAIT_MS = 250;

/** The dispatcher of this process (see Dispatcher.reserve). */
export interface DeliveryOutlet {
  /** When none, resolves once some are free or after `maxWaitMs`. */
  room(maxWaitMs: number): Promise<number>;
  /** Slots for deliveries about to be leased as they are inserted. */
  reserve(wanted: number): number;
  /** `queued`: others were left in Postgres for a claim; `leasedAt`: performance.now() when the lease was sent. */
  deliver(reserved: number, leased: Delivery[], queued: boolean, leasedAt: number): void;
  /** Over every replica. */
  readonly perSubscription: number;
  /** Held as lease_owner. */
  readonly owner: string;
  readonly leaseMs: number;
}

/**
 * One durable delivery per matching subscription, capturing URL, configuration and envelope at that moment. A batch
 * takes one query and one insert; each message is acked only once its deliveries committed, and a redelivered one
 * inserts nothing new. Deliveries the dispatcher has room for are inserted already leased to it (decision 0030).
 */
export class EventConsumer {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private pending: JsMsg[] = [];
  private handling: Promise<void> | undefined;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly crm: CrmPeer,
    private readonly outlet: DeliveryOutlet,
    private readonly metrics: DeliveryMetrics,
    private readonly pool: () => Promise<Pool>,
  ) {}

  async start(): Promise<void> {
    const { jsm, js } = this.ctx.nats;
    const stream = this.ctx.config.NATS_STREAM;
    try {
      await jsm.consumers.info(stream, CONSUMER_NAME);
    } catch {
      await jsm.consumers.add(stream, {
        durable_name: CONSUMER_NAME,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: `${this.ctx.config.EVENT_SUBJECT_PREFIX}.>`,
        ack_wait: 30_000_000_000,
        max_ack_pending: 10_000,
      });
    }
    consumerLagMetrics(this.ctx.metrics, jsm, stream, [CONSUMER_NAME]);
    const consumer = await js.consumers.get(stream, CONSUMER_NAME);
    this.messages = await consumer.consume({ max_messages: BATCH });
    this.loop = (async () => {
      for await (const msg of this.messages!) {
        this.pending.push(msg);
        this.handling ??= this.handleAll();
        // Back-pressure: stop pulling while a full batch waits.
        if (this.pending.length >= BATCH) await this.handling;
      }
      await this.handling;
    })();
  }

  async stop(): Promise<void> {
    await this.messages?.close();
    await this.loop?.catch(() => undefined);
  }

  private async handleAll(): Promise<void> {
    // Let the messages that arrived together join the batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (;;) {
      // Checked and cleared in the same tick as the loop above pushes, so no message is left waiting.
      if (!this.pending.length) {
        this.handling = undefined;
        return;
      }
      // With no room after a short wait, a whole batch goes to Postgres for a claim.
      const room = await this.outlet.room(ROOM_WAIT_MS);
      try {
        await this.handle(this.pending.splice(0, room > 0 ? Math.min(room, BATCH) : BATCH));
      } catch (err) {
        // Unacked messages are redelivered after ack_wait.
        this.ctx.logger.error({ err: (err as Error).message }, 'could not handle a batch of events');
      }
    }
  }

  private readonly traced = new WeakMap<EventMessage, string>();

  private async handle(msgs: JsMsg[]): Promise<void> {
    const events: { msg: JsMsg; event: EventMessage }[] = [];
    for (const msg of msgs) {
      try {
        events.push({ msg, event: msg.json<EventMessage>() });
      } catch {
        this.ctx.logger.error({ subject: msg.subject }, 'dropping a malformed event');
        msg.term();
      }
    }
    if (!events.length) return;
    // Deliveries keep the consumer span's traceparent so each attempt continues the integrator's trace (decision 0200).
    const tracer = tracerOf(this.ctx.name);
    const spans: Span[] = [];
    if (tracer)
      for (const { msg, event } of events) {
        const parent = msg.headers?.get(TRACEPARENT);
        if (!parent) continue;
        const span = startSpan(tracer, `webhooks consume ${event.event_key}`, SpanKind.CONSUMER, parent, {
          'messaging.system': 'nats',
          'messaging.message.id': event.event_id,
        });
        spans.push(span);
        this.traced.set(event, traceparentOf(span));
      }
    const { failed } = await this.issueAll(events.map((e) => e.event))
      .catch((err: Error) => ({
        issued: -1,
        failed: new Map(events.map((e) => [e.event, err])),
      }))
      .finally(() => {
        for (const span of spans) span.end();
      });
    for (const { msg, event } of events) {
      const err = failed.get(event);
      if (!err) msg.ack();
      else {
        this.ctx.logger.warn({ err: err.message, event_id: event.event_id }, 'could not issue deliveries; will retry');
        msg.nak(1000);
      }
    }
  }

  /** Returns how many were new. */
  async issue(event: EventMessage): Promise<number> {
    const { issued, failed } = await this.issueAll([event]);
    const err = failed.get(event);
    if (err) throw err;
    return issued;
  }

  /** Events whose company could not be looked up get nothing now and are retried. */
  async issueAll(events: EventMessage[]): Promise<{ issued: number; failed: Map<EventMessage, Error> }> {
    const failed = new Map<EventMessage, Error>();
    const companies = new Map<string, Company | null | Error>();
    await Promise.all(
      [...new Set(events.map((e) => e.company_id))].map(async (id) => {
        try {
          companies.set(id, await this.crm.getCompany(id));
        } catch (err) {
          companies.set(id, err instanceof AppError && err.kind === 'not_found' ? null : (err as Error));
        }
      }),
    );
    const issuable: EventMessage[] = [];
    for (const event of events) {
      const company = companies.get(event.company_id);
      if (company instanceof Error) failed.set(event, company);
      // Outside the company's plan, events are never queued.
      else if (company && planValidAt(company, new Date(event.occurred_at))) issuable.push(event);
    }
    if (!issuable.length) return { issued: 0, failed };
    const pool = await this.pool();
    const now = new Date();
    const issued: IssuedEvent[] = issuable.map((event) => ({
      eventId: event.event_id,
      eventKey: event.event_key,
      companyId: event.company_id,
      body: JSON.stringify({ event_id: event.event_id, event_key: event.event_key, payload: event.payload }),
      traceparent: this.traced.get(event) ?? null,
    }));
    let inserted = 0;
    // The message is acked only once every row is in.
    for (let from = 0; from < issued.length; from += INSERT_EVENTS)
      inserted += await this.insert(pool, issued.slice(from, from + INSERT_EVENTS), now);
    return { issued: inserted, failed };
  }

  private async insert(pool: Pool, events: IssuedEvent[], now: Date): Promise<number> {
    // How many deliveries the events have is known only once the statement matched them: every slot the dispatcher
    // grants is held for the statement's round trip, and those it did not lease go back in deliver().
    const reserved = this.outlet.reserve(Number.POSITIVE_INFINITY);
    let leased: Delivery[] = [];
    let queued = false;
    const leasedAt = performance.now();
    try {
      const rows = await insertIssued(pool, events, now, {
        perSubscription: this.outlet.perSubscription,
        reserved,
        leaseMs: this.outlet.leaseMs,
        owner: this.outlet.owner,
      });
      this.metrics.statements.inc({ kind: 'issue' });
      this.metrics.statementRows.inc({ kind: 'issue' }, rows.length);
      const byId = new Map(events.map((e) => [e.eventId, e]));
      leased = rows.filter((r) => r.leased).map((r) => deliveryOf(r, byId.get(r.event_id)!, now));
      queued = leased.length < rows.length;
      return rows.length;
    } finally {
      this.outlet.deliver(reserved, leased, queued, leasedAt);
    }
  }
}

/** As the issue statement wrote it. */
function deliveryOf(r: IssuedRow, e: IssuedEvent, now: Date): Delivery {
  return {
    id: r.id,
    companyId: e.companyId,
    subscriptionId: r.subscription_id,
    eventId: e.eventId,
    eventKey: e.eventKey,
    url: r.url,
    config: r.config,
    body: e.body,
    status: 'pending',
    attemptCount: 0,
    maxRetries: r.max_retries,
    nextAttemptAt: now,
    leaseUntil: null,
    createdAt: now,
    updatedAt: now,
    completedAt: null,
    traceparent: e.traceparent,
  } as Delivery;
}
