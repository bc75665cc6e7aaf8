import { invalidField, notFound, requireUuid } from '@svc/platform/errors';
import { requireAdmin } from '@svc/platform/http/app';
import { iso } from '@svc/platform/http/json';
import { parse, parseQuery } from '@svc/platform/http/parse';
import type { ServiceContext } from '@svc/platform/service';
import { Router } from 'express';
import { Delivery, DeliveryAttempt } from '../deliveries/delivery.entity.js';
import { DESTINATION_NOT_ALLOWED, type DestinationPolicy, refusedLiteral } from '../deliveries/destination.js';
import { createSubscriptionBody, listDeliveriesQuery, updateSubscriptionBody } from './subscription.schema.js';
import { type SubscriptionService, subscriptionView } from './subscription.service.js';

export function webhookAdminRoutes(
  ctx: ServiceContext,
  subs: SubscriptionService,
  onRequeue: () => void,
  destinations: DestinationPolicy = { allowPrivateNetworks: false },
): Router {
  const r = Router();
  const em = () => ctx.orm.em.fork();
  /** An IP literal is refused here already; a host name is checked on its resolved addresses when sending. */
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
    const sub = await subs.create(em(), req.params.cid, allowedDestination(parse(createSubscriptionBody, req.body)));
    res.status(201).json(subscriptionView(sub));
  });
  r.get('/companies/:cid/webhooks/:id', async (req, res) => {
    res.json(subscriptionView(await subs.require(em(), req.params.cid, req.params.id)));
  });
  r.patch('/companies/:cid/webhooks/:id', async (req, res) => {
    const sub = await subs.update(em(), req.params.cid, req.params.id, allowedDestination(parse(updateSubscriptionBody, req.body)));
    res.json(subscriptionView(sub));
  });
  r.delete('/companies/:cid/webhooks/:id', async (req, res) => {
    const sub = await subs.remove(em(), req.params.cid, req.params.id);
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
  const attemptsOf = async (e: ReturnType<typeof em>, deliveries: Delivery[]) => {
    const all = deliveries.length
      ? await e.find(DeliveryAttempt, { deliveryId: { $in: deliveries.map((d) => d.id) } }, { orderBy: { at: 'asc', id: 'asc' } })
      : [];
    return (d: Delivery) => all.filter((a) => a.deliveryId === d.id);
  };

  r.get('/companies/:cid/webhooks/:id/deliveries', async (req, res) => {
    const e = em();
    const sub = await subs.require(e, req.params.cid, req.params.id);
    const q = parseQuery(listDeliveriesQuery, req.query);
    const where = {
      subscriptionId: sub.id,
      companyId: sub.companyId,
      ...(q.status ? { status: q.status } : {}),
      ...(q.event_key ? { eventKey: q.event_key } : {}),
    };
    const [records, total] = await e.findAndCount(Delivery, where, {
      orderBy: { createdAt: 'desc', id: 'desc' },
      offset: q.skip,
      limit: q.take,
    });
    const of = await attemptsOf(e, records);
    res.json({ total, records: records.map((d) => deliveryView(d, of(d))) });
  });

  r.post('/companies/:cid/webhooks/:id/deliveries/:deliveryId/redeliver', async (req, res) => {
    const e = em();
    const sub = await subs.require(e, req.params.cid, req.params.id);
    const delivery = await e.findOne(Delivery, {
      id: requireUuid(req.params.deliveryId, 'Delivery'),
      subscriptionId: sub.id,
      companyId: sub.companyId,
    });
    if (!delivery) throw notFound('Delivery');
    Object.assign(delivery, {
      status: 'pending',
      attemptCount: 0,
      nextAttemptAt: new Date(),
      leaseUntil: null,
      completedAt: null,
      updatedAt: new Date(),
    });
    await e.flush();
    onRequeue();
    res.json(deliveryView(delivery, (await attemptsOf(e, [delivery]))(delivery)));
  });
  return r;
}
