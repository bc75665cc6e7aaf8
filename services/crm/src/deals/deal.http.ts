import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import type { Router } from 'express';
import { headerKey, need } from '../leads/lead.http.js';
import { adminRouter, companyParam, dealWinBody, salesRecordActionRoutes } from '../leads/sales-record.http.js';
import { createDealBody } from './deal.schema.js';
import type { Deals, LoadedDeal } from './deal.service.js';
import { dealSnapshot } from './deal.snapshot.js';

/** The external deal routes (served without Express, decision 0014). */
export function dealRoutes(deals: Deals): ApiRouter {
  const r = apiRouter();
  r.post('/deals', async (req, res) => {
    const identity = integrationOf(req);
    need(identity, 'crm/deal.create');
    const body = parse(createDealBody, req.body);
    const key = parse(headerKey, { 'x-idempotency-key': req.header('x-idempotency-key') })['x-idempotency-key'];
    res.status(201).json(await deals.create(identity, body, key));
  });
  r.get('/deals/:ref', async (req, res) => {
    const identity = integrationOf(req);
    need(identity, 'crm/deal.read');
    res.json(await deals.detail(identity, req.params.ref ?? ''));
  });
  return r;
}

/** The CRM's dedicated deal actions of the management API (admin-api.md); each answers the DealSnapshot. */
export function dealAdminRoutes(deals: Deals): Router {
  const r = adminRouter();
  const answer = (loaded: LoadedDeal) => dealSnapshot(loaded.deal, loaded.rel);
  r.post('/companies/:cid/deals/:id/win', async (req, res) => {
    const body = parse(dealWinBody, req.body);
    const cid = companyParam(req.params.cid);
    res.json(answer(await deals.win(cid, req.params.id, body.user_id, body.gain_reason_ids ?? [], body.description ?? null)));
  });
  salesRecordActionRoutes(r, 'deals', deals.actions, answer);
  return r;
}
