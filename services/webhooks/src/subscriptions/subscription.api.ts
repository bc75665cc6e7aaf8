import { nativePool } from '@svc/platform/db/native';
import type { EntityManager } from '@svc/platform/db/orm';
import { invalidField, notFound, requireUuid } from '@svc/platform/errors';
import { type ApiRequest, type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { iso } from '@svc/platform/http/json';
import type { ServiceContext } from '@svc/platform/service';
import { v7 as uuidv7 } from 'uuid';
import { type CapturedConfig, Delivery, DeliveryAttempt } from '../deliveries/delivery.entity.js';
import { deliveryId } from '../deliveries/delivery-ids.js';
import { DESTINATION_NOT_ALLOWED, type DestinationPolicy, refusedLiteral } from '../deliveries/destination.js';
import { standardWebhooksSecret } from '../deliveries/signing.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  redeliverWebhookDelivery,
  replayWebhook,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
} from './subscription.contract.js';
import type { Subscription } from './subscription.entity.js';
import { Subscription as SubscriptionEntity } from './subscription.entity.js';
import type { SubscriptionService } from './subscription.service.js';

/** What a subscriber sees of its subscription: no secret (shown only when made or rotated), no operator settings. */
export const integrationView = (s: Subscription) => ({
  id: s.id,
  url: s.url,
  description: s.description ?? null,
  events: s.events,
  headers: s.headers,
  active: s.active,
  disabled_at: iso(s.disabledAt),
  disabled_reason: s.disabledReason ?? null,
  previous_secret_expires_at: s.previousSecret && s.previousSecretExpiresAt ? s.previousSecretExpiresAt.toISOString() : null,
  created_at: s.createdAt.toISOString(),
  updated_at: s.updatedAt.toISOString(),
});

const withSecret = (s: Subscription) => ({
  ...integrationView(s),
  secret: s.secret,
  standard_webhooks_secret: standardWebhooksSecret(s.secret),
});

const deliveryView = (d: Delivery, attempts: DeliveryAttempt[]) => ({
  id: d.id,
  event_id: d.eventId,
  event_key: d.eventKey,
  status: d.status as 'pending' | 'succeeded' | 'failed',
  attempts: attempts.map((a) => ({
    at: a.at.toISOString(),
    status_code: a.statusCode ?? null,
    duration_ms: a.durationMs,
    error: a.error ?? null,
    response_body: a.responseBody ?? null,
  })),
  next_attempt_at: iso(d.nextAttemptAt),
  created_at: d.createdAt.toISOString(),
});

/** A list position: the last record's creation time and id (lists order by both). */
const encodeCursor = (r: { createdAt: Date; id: string }) =>
  Buffer.from(JSON.stringify([r.createdAt.toISOString(), r.id])).toString('base64url');
function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof createdAt === 'string' && !Number.isNaN(Date.parse(createdAt)) && typeof id === 'string' && requireUuid(id, 'x'))
      return { createdAt: new Date(createdAt), id };
  } catch {
    // falls through to the 400
  }
  throw invalidField('cursor', 'not a cursor of this list');
}

/** The note shown on a test event's request, so a receiver can tell it from a real one. */
const TEST_HEADER = 'x-svc-test';

/**
 * The subscription routes under the integration key (issue 21, decision 0175): the admin API's subscriptions, scoped
 * to the key's company, with its URL, header and destination rules; another company's subscription is a 404.
 */
export function subscriptionApiRoutes(
  ctx: ServiceContext,
  subs: SubscriptionService,
  onRequeue: () => void,
  destinations: DestinationPolicy,
): ApiRouter {
  const em = () => ctx.orm.em.fork();
  const companyOf = (req: ApiRequest) => integrationOf(req).companyId;
  /** An IP literal is refused here already; a host name is checked on its resolved addresses when sending. */
  const allowedDestination = <T extends { url?: string | undefined }>(body: T): T => {
    const refused = body.url === undefined ? null : refusedLiteral(body.url, destinations);
    if (refused) throw invalidField('url', `${DESTINATION_NOT_ALLOWED} (${refused})`);
    return body;
  };
  const attemptsOf = async (e: EntityManager, deliveries: Delivery[]) => {
    const all = deliveries.length
      ? await e.find(DeliveryAttempt, { deliveryId: { $in: deliveries.map((d) => d.id) } }, { orderBy: { at: 'asc', id: 'asc' } })
      : [];
    return (d: Delivery) => all.filter((a) => a.deliveryId === d.id);
  };
  const viewOf = async (e: EntityManager, d: Delivery) => deliveryView(d, (await attemptsOf(e, [d]))(d));
  /** A page ordered by (created_at, id), descending for the log; `cursor` continues after the previous page's last. */
  const after = (cursor: string | undefined, desc: boolean) => {
    if (!cursor) return {};
    const c = decodeCursor(cursor);
    const op = desc ? '$lt' : '$gt';
    return { $or: [{ createdAt: { [op]: c.createdAt } }, { createdAt: c.createdAt, id: { [op]: c.id } }] };
  };

  /**
   * Queues again, now and with a fresh retry budget, the deliveries of a subscription that `condition` picks: ended
   * ones, and pending ones waiting for a retry. One statement: a delivery a sender holds (leased) is left alone, so
   * nothing is sent twice at once. Each keeps its event id and body.
   */
  const requeue = async (condition: string, values: unknown[]) => {
    const pool = await nativePool(ctx.orm);
    return pool.query(
      `update deliveries
          set status = 'pending', attempt_count = 0, next_attempt_at = now(), lease_until = null, completed_at = null, updated_at = now()
        where subscription_id = $1 and company_id = $2 and ${condition}
          and (status <> 'pending' or lease_until is null or lease_until < now())`,
      values,
    );
  };

  return apiRouter()
    .route(createWebhook, async (req, res, { body }) => {
      const sub = await subs.create(em(), companyOf(req), allowedDestination(body));
      res.status(201).json(withSecret(sub));
    })
    .route(listWebhooks, async (req, res, { query }) => {
      const e = em();
      const where = { companyId: companyOf(req), deletedAt: null };
      const [records, total] = await Promise.all([
        e.find(SubscriptionEntity, { ...where, ...after(query.cursor, false) } as never, {
          orderBy: { createdAt: 'asc', id: 'asc' },
          offset: query.cursor ? 0 : query.skip,
          limit: query.take,
        }),
        e.count(SubscriptionEntity, where),
      ]);
      const last = records[records.length - 1];
      res.json({
        total,
        records: records.map(integrationView),
        next_cursor: last && records.length === query.take ? encodeCursor(last) : null,
      });
    })
    .route(getWebhook, async (req, res, { params }) => {
      res.json(integrationView(await subs.require(em(), companyOf(req), params.id)));
    })
    .route(updateWebhook, async (req, res, { params, body }) => {
      res.json(integrationView(await subs.update(em(), companyOf(req), params.id, allowedDestination(body))));
    })
    .route(deleteWebhook, async (req, res, { params }) => {
      const sub = await subs.remove(em(), companyOf(req), params.id);
      res.json({ id: sub.id });
    })
    .route(rotateWebhookSecret, async (req, res, { params, body }) => {
      const sub = await subs.update(em(), companyOf(req), params.id, {
        rotate_secret: true,
        secret_rotation_grace_seconds: body.secret_rotation_grace_seconds,
      });
      res.json(withSecret(sub));
    })
    .route(testWebhook, async (req, res, { params, body }) => {
      const e = em();
      const sub = await subs.require(e, companyOf(req), params.id);
      const key = body.event_key ?? 'webhook.test';
      const eventId = uuidv7();
      let payload: unknown;
      if (key === 'webhook.test')
        payload = {
          test: true,
          webhook_id: sub.id,
          message: 'A test event: this endpoint is subscribed and reachable.',
          sent_at: new Date().toISOString(),
        };
      else if (!sub.events.includes(key)) throw invalidField('event_key', 'must be webhook.test or one of the subscription’s event keys');
      else {
        // The sample is the payload of the company's latest event of that key: the shape a real one has, record and all.
        // Looked up through the company's subscriptions, whose deliveries are indexed by subscription and time.
        const companySubs = await e.find(SubscriptionEntity, { companyId: sub.companyId }, { fields: ['id'] });
        const [latest] = await e.find(
          Delivery,
          { subscriptionId: { $in: companySubs.map((s) => s.id) }, companyId: sub.companyId, eventKey: key },
          { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 1, fields: ['body'] },
        );
        if (!latest) throw invalidField('event_key', `no ${key} event was issued to this company yet to take a sample from`);
        payload = (JSON.parse(latest.body) as { payload: unknown }).payload;
      }
      const config: CapturedConfig = {
        secret: sub.secret,
        previousSecret: sub.previousSecret ?? null,
        previousSecretExpiresAt: iso(sub.previousSecretExpiresAt),
        headers: { ...sub.headers, [TEST_HEADER]: 'true' },
        auth: sub.auth ?? null,
      };
      const now = new Date();
      const delivery = e.create(Delivery, {
        id: deliveryId(),
        companyId: sub.companyId,
        subscriptionId: sub.id,
        eventId,
        eventKey: key,
        url: sub.url,
        config,
        body: JSON.stringify({ event_id: eventId, event_key: key, payload }),
        status: 'pending',
        attemptCount: 0,
        maxRetries: sub.maxRetries,
        nextAttemptAt: now,
        leaseUntil: null,
        createdAt: now,
        updatedAt: now,
        completedAt: null,
      });
      await e.flush();
      onRequeue();
      res.status(202).json(deliveryView(delivery, []));
    })
    .route(listWebhookDeliveries, async (req, res, { params, query }) => {
      const e = em();
      const sub = await subs.require(e, companyOf(req), params.id);
      if (query.since && query.until && Date.parse(query.until) <= Date.parse(query.since))
        throw invalidField('until', 'must be after since');
      const where = {
        subscriptionId: sub.id,
        companyId: sub.companyId,
        ...(query.status ? { status: query.status } : {}),
        ...(query.event_key ? { eventKey: query.event_key } : {}),
        ...(query.since || query.until
          ? {
              createdAt: {
                ...(query.since ? { $gte: new Date(query.since) } : {}),
                ...(query.until ? { $lt: new Date(query.until) } : {}),
              },
            }
          : {}),
      };
      const cursor = after(query.cursor, true);
      const [records, total] = await Promise.all([
        e.find(Delivery, (query.cursor ? { $and: [where, cursor] } : where) as never, {
          orderBy: { createdAt: 'desc', id: 'desc' },
          offset: query.cursor ? 0 : query.skip,
          limit: query.take,
        }),
        e.count(Delivery, where),
      ]);
      const of = await attemptsOf(e, records);
      const last = records[records.length - 1];
      res.json({
        total,
        records: records.map((d) => deliveryView(d, of(d))),
        next_cursor: last && records.length === query.take ? encodeCursor(last) : null,
      });
    })
    .route(redeliverWebhookDelivery, async (req, res, { params }) => {
      const e = em();
      const sub = await subs.require(e, companyOf(req), params.id);
      const id = requireUuid(params.delivery_id, 'Delivery');
      const { rowCount } = await requeue(`id = $3`, [sub.id, sub.companyId, id]);
      if (rowCount) onRequeue();
      const delivery = await e.findOne(Delivery, { id, subscriptionId: sub.id, companyId: sub.companyId });
      if (!delivery) throw notFound('Delivery');
      res.status(202).json(await viewOf(e, delivery));
    })
    .route(replayWebhook, async (req, res, { params, body }) => {
      const sub = await subs.require(em(), companyOf(req), params.id);
      const until = body.until ? new Date(body.until) : new Date();
      if (until.getTime() <= Date.parse(body.since)) throw invalidField('since', 'must be before until (now when until is not sent)');
      const { rowCount } = await requeue(`created_at >= $3 and created_at < $4 and ($5::text is null or status = $5)`, [
        sub.id,
        sub.companyId,
        new Date(body.since),
        until,
        body.status ?? null,
      ]);
      if (rowCount) onRequeue();
      res.status(202).json({ queued: rowCount ?? 0 });
    });
}
