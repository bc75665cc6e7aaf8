import { AckPolicy, type ConsumerMessages, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { AppError } from '@svc/platform/errors';
import type { EventMessage } from '@svc/platform/events/outbox';
import { type CrmPeer, planValidAt } from '@svc/platform/peers/crm';
import type { ServiceContext } from '@svc/platform/service';
import type { Company } from '@svc/proto/crm/v1/crm';
import { v7 as uuidv7 } from 'uuid';
import type { SubscriptionService } from '../subscriptions/subscription.service.js';

export const CONSUMER_NAME = 'webhooks';

/**
 * Turns each event on JetStream into one durable delivery per matching subscription, capturing the URL,
 * configuration and envelope at that moment. The message is acked only after the deliveries are
 * committed; a redelivered message inserts nothing new (unique subscription + event id).
 */
export class EventConsumer {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly crm: CrmPeer,
    private readonly subscriptions: SubscriptionService,
    private readonly onDeliveries: () => void,
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
    const consumer = await js.consumers.get(stream, CONSUMER_NAME);
    this.messages = await consumer.consume({ max_messages: 500 });
    this.loop = (async () => {
      for await (const msg of this.messages!) await this.handle(msg);
    })();
  }

  async stop(): Promise<void> {
    await this.messages?.close();
    await this.loop?.catch(() => undefined);
  }

  private async handle(msg: JsMsg): Promise<void> {
    let event: EventMessage;
    try {
      event = msg.json<EventMessage>();
    } catch {
      this.ctx.logger.error({ subject: msg.subject }, 'dropping a malformed event');
      msg.term();
      return;
    }
    try {
      const created = await this.issue(event);
      msg.ack();
      if (created) this.onDeliveries();
    } catch (err) {
      this.ctx.logger.warn({ err: (err as Error).message, event_id: event.event_id }, 'could not issue deliveries; will retry');
      msg.nak(1000);
    }
  }

  /** Stores the deliveries of one event; returns how many were new. */
  async issue(event: EventMessage): Promise<number> {
    let company: Company;
    try {
      company = await this.crm.getCompany(event.company_id);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'not_found') return 0;
      throw err;
    }
    // Events are issued only while the company's plan is valid; outside it they are never queued.
    if (!planValidAt(company, new Date(event.occurred_at))) return 0;
    const em = this.ctx.orm.em.fork();
    const subs = await this.subscriptions.matching(em, event.company_id, event.event_key);
    if (!subs.length) return 0;
    const body = JSON.stringify({ event_id: event.event_id, event_key: event.event_key, payload: event.payload });
    const now = new Date();
    const rows = subs.map((s) => [
      uuidv7(),
      s.companyId,
      s.id,
      event.event_id,
      event.event_key,
      s.url,
      JSON.stringify({
        secret: s.secret,
        previousSecret: s.previousSecret ?? null,
        previousSecretExpiresAt: s.previousSecretExpiresAt?.toISOString() ?? null,
        headers: s.headers,
        auth: s.auth,
      }),
      body,
      s.maxRetries,
      now,
    ]);
    const placeholders = rows.map(() => `(?, ?, ?, ?, ?, ?, ?::jsonb, ?, 'pending', 0, ?, ?, null, ?, ?, null)`).join(', ');
    const params = rows.flatMap((r) => [...r.slice(0, 9), r[9], r[9], r[9]]);
    const inserted = await em.execute<{ id: string }[]>(
      `insert into deliveries (id, company_id, subscription_id, event_id, event_key, url, config, body, status, attempt_count,
         max_retries, next_attempt_at, lease_until, created_at, updated_at, completed_at)
       values ${placeholders}
       on conflict (subscription_id, event_id) do nothing returning id`,
      params,
    );
    return inserted.length;
  }
}
