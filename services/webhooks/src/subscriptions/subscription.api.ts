import { invalidField, notFound, requireUuid } from '@svc/platform/errors';
import { type ApiRequest, type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { iso } from '@svc/platform/http/json';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { CapturedConfig, Delivery, DeliveryAttempt } from '../deliveries/delivery.entity.js';
import {
  attemptsOf,
  type DeliveryFilter,
  deliveryLog,
  findDelivery,
  insertDelivery,
  latestBody,
  requeueDelivery,
  requeueIssuedBetween,
} from '../deliveries/delivery.store.js';
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
import type { SubscriptionService } from './subscription.service.js';
import { subscriptionIdsOf, subscriptionList } from './subscription.store.js';

/** No secret (shown only when made or rotated), no operator settings. */
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

/** Lists order by creation time and id. */
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

/** So a receiver can tell a test event from a real one. */
const TEST_HEADER = 'x-svc-test';

/** Scoped to the key's company: another company's subscription is a 404 (decision 0175). */
export function subscriptionApiRoutes(
  pool: () => Promise<Pool>,
  subs: SubscriptionService,
  onRequeue: () => void,
  destinations: DestinationPolicy,
): ApiRouter {
  const companyOf = (req: ApiRequest) => integrationOf(req).companyId;
  /** IP literals are refused here; host names on their resolved addresses when sending. */
  const allowedDestination = <T extends { url?: string | undefined }>(body: T): T => {
    const refused = body.url === undefined ? null : refusedLiteral(body.url, destinations);
    if (refused) throw invalidField('url', `${DESTINATION_NOT_ALLOWED} (${refused})`);
    return body;
  };

  return apiRouter()
    .route(createWebhook, async (req, res, { body }) => {
      const sub = await subs.create(companyOf(req), allowedDestination(body));
      res.status(201).json(withSecret(sub));
    })
    .route(listWebhooks, async (req, res, { query }) => {
      const db = await pool();
      const companyId = companyOf(req);
      const { records, total } = await subscriptionList(db, companyId, {
        after: query.cursor ? decodeCursor(query.cursor) : undefined,
        skip: query.cursor ? 0 : query.skip,
        take: query.take,
      });
      const last = records[records.length - 1];
      res.json({
        total,
        records: records.map(integrationView),
        next_cursor: last && records.length === query.take ? encodeCursor(last) : null,
      });
    })
    .route(getWebhook, async (req, res, { params }) => {
      res.json(integrationView(await subs.require(companyOf(req), params.id)));
    })
    .route(updateWebhook, async (req, res, { params, body }) => {
      res.json(integrationView(await subs.update(companyOf(req), params.id, allowedDestination(body))));
    })
    .route(deleteWebhook, async (req, res, { params }) => {
      const sub = await subs.remove(companyOf(req), params.id);
      res.json({ id: sub.id });
    })
    .route(rotateWebhookSecret, async (req, res, { params, body }) => {
      const sub = await subs.update(companyOf(req), params.id, {
        rotate_secret: true,
        secret_rotation_grace_seconds: body.secret_rotation_grace_seconds,
      });
      res.json(withSecret(sub));
    })
    .route(testWebhook, async (req, res, { params, body }) => {
      const sub = await subs.require(companyOf(req), params.id);
      const db = await pool();
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
        // The latest real payload of that key: the shape a real one has.
        const latest = await latestBody(db, sub.companyId, await subscriptionIdsOf(db, sub.companyId), key);
        if (latest === null) throw invalidField('event_key', `no ${key} event was issued to this company yet to take a sample from`);
        payload = (JSON.parse(latest) as { payload: unknown }).payload;
      }
      const config: CapturedConfig = {
        secret: sub.secret,
        previousSecret: sub.previousSecret ?? null,
        previousSecretExpiresAt: iso(sub.previousSecretExpiresAt),
        headers: { ...sub.headers, [TEST_HEADER]: 'true' },
        auth: sub.auth ?? null,
      };
      const now = new Date();
      const delivery: Delivery = {
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
        leaseOwner: null,
        createdAt: now,
        updatedAt: now,
        completedAt: null,
        traceparent: null,
      };
      await insertDelivery(db, delivery);
      onRequeue();
      res.status(202).json(deliveryView(delivery, []));
    })
    .route(listWebhookDeliveries, async (req, res, { params, query }) => {
      const sub = await subs.require(companyOf(req), params.id);
      if (query.since && query.until && Date.parse(query.until) <= Date.parse(query.since))
        throw invalidField('until', 'must be after since');
      const db = await pool();
      const filter: DeliveryFilter = {
        status: query.status,
        eventKey: query.event_key,
        since: query.since ? new Date(query.since) : undefined,
        until: query.until ? new Date(query.until) : undefined,
      };
      const {
        records,
        total,
        attempts: of,
      } = await deliveryLog(db, sub.companyId, sub.id, filter, {
        before: query.cursor ? decodeCursor(query.cursor) : undefined,
        skip: query.cursor ? 0 : query.skip,
        take: query.take,
      });
      const last = records[records.length - 1];
      res.json({
        total,
        records: records.map((d) => deliveryView(d, of(d))),
        next_cursor: last && records.length === query.take ? encodeCursor(last) : null,
      });
    })
    .route(redeliverWebhookDelivery, async (req, res, { params }) => {
      const sub = await subs.require(companyOf(req), params.id);
      const id = requireUuid(params.delivery_id, 'Delivery');
      const db = await pool();
      if (await requeueDelivery(db, sub.companyId, sub.id, id)) onRequeue();
      const delivery = await findDelivery(db, sub.companyId, sub.id, id);
      if (!delivery) throw notFound('Delivery');
      res.status(202).json(deliveryView(delivery, await attemptsOf(db, [delivery.id])));
    })
    .route(replayWebhook, async (req, res, { params, body }) => {
      const sub = await subs.require(companyOf(req), params.id);
      const until = body.until ? new Date(body.until) : new Date();
      if (until.getTime() <= Date.parse(body.since)) throw invalidField('since', 'must be before until (now when until is not sent)');
      const queued = await requeueIssuedBetween(await pool(), sub.companyId, sub.id, new Date(body.since), until, body.status ?? null);
      if (queued) onRequeue();
      res.status(202).json({ queued });
    });
}
