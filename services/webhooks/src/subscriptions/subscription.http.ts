import { invalidField, notFound, requireUuid } from '@svc/platform/errors';
import { requireAdmin } from '@svc/platform/http/app';
import { iso } from '@svc/platform/http/json';
import { parse, parseQuery } from '@svc/platform/http/parse';
import { Router } from 'express';
import type { Pool } from 'pg';
import type { Delivery, DeliveryAttempt } from '../deliveries/delivery.entity.js';
import { attemptsOf, deliveryLog, redeliverNow } from '../deliveries/delivery.store.js';
import { DESTINATION_NOT_ALLOWED, type DestinationPolicy, refusedLiteral } from '../deliveries/destination.js';
import { createSubscriptionBody, listDeliveriesQuery, updateSubscriptionBody } from './subscription.schema.js';
import { type SubscriptionService, subscriptionView } from './subscription.service.js';

export function webhookAdminRoutes(
  pool: () => Promise<Pool>,
  subs: SubscriptionService,
  onRequeue: () => void,
  destinations: DestinationPolicy = { allowPrivateNetworks: false },
): Router {
  const r = Router();
  /** IP literals are refused here; host names on their resolved addresses when sending. */
  const allowedDestination = <T extends { url?: string | undefined }>(body: T): T => {
    const refused = body.url === undefined ? null : refusedLiteral(body.url, destinations);
    if (refused) throw invalidField('url', `${DESTINATION_NOT_ALLOWED} (${refused})`);
    return body;
  };
  r.use((req, _res, next) => {
    requireAdmin(req);
    next();
  });

  r.post('/companies/:cid/webhooks', async (req, res) => {
    const sub = await subs.create(req.params.cid, allowedDestination(parse(createSubscriptionBody, req.body)));
    res.status(201).json(subscriptionView(sub));
  });
  r.get('/companies/:cid/webhooks/:id', async (req, res) => {
    res.json(subscriptionView(await subs.require(req.params.cid, req.params.id)));
  });
  r.patch('/companies/:cid/webhooks/:id', async (req, res) => {
    const sub = await subs.update(req.params.cid, req.params.id, allowedDestination(parse(updateSubscriptionBody, req.body)));
    res.json(subscriptionView(sub));
  });
  r.delete('/companies/:cid/webhooks/:id', async (req, res) => {
    const sub = await subs.remove(req.params.cid, req.params.id);
    res.json({ id: sub.id });
  });

  const deliveryView = (d: Delivery, attempts: DeliveryAttempt[]) => ({
    id: d.id,
    event_id: d.eventId,
    event_key: d.eventKey,
    status: d.status,
    attempts: attempts.map((a) => ({ at: a.at.toISOString(), status_code: a.statusCode, error: a.error, duration_ms: a.durationMs })),
    next_attempt_at: iso(d.nextAttemptAt),
    created_at: d.createdAt.toISOString(),
  });

  r.get('/companies/:cid/webhooks/:id/deliveries', async (req, res) => {
    const sub = await subs.require(req.params.cid, req.params.id);
    const q = parseQuery(listDeliveriesQuery, req.query);
    const db = await pool();
    const filter = { status: q.status, eventKey: q.event_key };
    const { records, total, attempts: of } = await deliveryLog(db, sub.companyId, sub.id, filter, { skip: q.skip, take: q.take });
    res.json({ total, records: records.map((d) => deliveryView(d, of(d))) });
  });

  r.post('/companies/:cid/webhooks/:id/deliveries/:deliveryId/redeliver', async (req, res) => {
    const sub = await subs.require(req.params.cid, req.params.id);
    const db = await pool();
    const delivery = await redeliverNow(db, sub.companyId, sub.id, requireUuid(req.params.deliveryId, 'Delivery'));
    if (!delivery) throw notFound('Delivery');
    onRequeue();
    res.json(deliveryView(delivery, await attemptsOf(db, [delivery.id])));
  });
  return r;
}
