import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import { hasPermission } from '@svc/platform/identity';
import type { Router } from 'express';
import { runBatch, updateOfItem } from '../sales/sales.batch.js';
import { adminRouter, companyParam, salesActionRoutes } from '../sales/sales.http.js';
import { createDeal, createDealsBatch, getDeal, updateDeal } from './deal.contract.js';
import { createDealBody, dealWinBody, leadWinBody, updateDealBody } from './deal.schema.js';
import type { Deals } from './deal.service.js';

/** Served without Express (decision 0014). */
export function dealRoutes(deals: Deals): ApiRouter {
  return apiRouter()
    .route(createDeal, async (req, res, { body, headers }) => {
      res.status(201).json(await deals.create(integrationOf(req), body, headers['x-idempotency-key']));
    })
    .route(createDealsBatch, async (req, res, { body }) => {
      res.json(
        await runBatch(deals, integrationOf(req), body, {
          create: createDealBody,
          update: updateDealBody,
          toUpdate: (item) => updateOfItem(item, true, 'deal'),
        }),
      );
    })
    .route(getDeal, async (req, res, { params }) => {
      const identity = integrationOf(req);
      res.json(await deals.detail(identity, params.ref, hasPermission(identity, 'crm/chats.read')));
    })
    .route(updateDeal, async (req, res, { params, body }) => {
      res.json(await deals.update(integrationOf(req), params.ref, body));
    });
}

export function dealAdminRoutes(deals: Deals): Router {
  const r = adminRouter();
  r.post('/companies/:cid/deals/:id/win', async (req, res) => {
    const body = parse(dealWinBody, req.body);
    const cid = companyParam(req.params.cid);
    res.json(deals.snapshotOf(await deals.win(cid, req.params.id, body.user_id, body.gain_reason_ids ?? [], body.description ?? null)));
  });
  // A lead's win lives with deals because a win with `deal` creates one (decision 0057); leads know nothing of deals.
  r.post('/companies/:cid/leads/:id/win', async (req, res) => {
    const body = parse(leadWinBody, req.body);
    const won = await deals.winLead(companyParam(req.params.cid), req.params.id, body.user_id, body.deal);
    res.json(deals.leads.snapshotOf(won));
  });
  salesActionRoutes(r, deals);
  return r;
}
