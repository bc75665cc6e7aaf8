import { parse, skipParam, takeParam } from '@svc/platform/http/parse';
import type { Router } from 'express';
import { z } from 'zod';
import { adminRouter, companyParam } from '../sales/sales.http.js';
import {
  completeDeliveryBody,
  createDeliveryBody,
  createDeliveryPipelineBody,
  moveDeliveryBody,
  updateDeliveryBody,
} from './delivery.schema.js';
import type { Deliveries } from './delivery.service.js';

const listQuery = z.strictObject({ skip: skipParam().default(0), take: takeParam(100).default(20) });

/** The delivery routes of the management API (admin-api.md); each change answers the DeliverySnapshot. */
export function deliveryAdminRoutes(deliveries: Deliveries): Router {
  const r = adminRouter();
  const cid = (v: string | undefined) => companyParam(String(v));
  r.post('/companies/:cid/delivery-pipelines', async (req, res) => {
    res.status(201).json(await deliveries.createPipeline(cid(req.params.cid), parse(createDeliveryPipelineBody, req.body)));
  });
  r.get('/companies/:cid/delivery-pipelines', async (req, res) => {
    res.json(await deliveries.listPipelines(cid(req.params.cid)));
  });
  r.post('/companies/:cid/deliveries', async (req, res) => {
    res.status(201).json(await deliveries.create(cid(req.params.cid), parse(createDeliveryBody, req.body)));
  });
  r.get('/companies/:cid/deliveries', async (req, res) => {
    const q = parse(listQuery, req.query);
    res.json(await deliveries.list(cid(req.params.cid), q.skip, q.take));
  });
  r.get('/companies/:cid/deliveries/:id', async (req, res) => {
    res.json(await deliveries.get(cid(req.params.cid), req.params.id));
  });
  r.patch('/companies/:cid/deliveries/:id', async (req, res) => {
    res.json(await deliveries.update(cid(req.params.cid), req.params.id, parse(updateDeliveryBody, req.body)));
  });
  r.post('/companies/:cid/deliveries/:id/move', async (req, res) => {
    res.json(await deliveries.move(cid(req.params.cid), req.params.id, parse(moveDeliveryBody, req.body)));
  });
  r.post('/companies/:cid/deliveries/:id/complete', async (req, res) => {
    res.json(await deliveries.complete(cid(req.params.cid), req.params.id, parse(completeDeliveryBody, req.body)));
  });
  return r;
}
