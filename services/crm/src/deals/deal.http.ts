import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationWith } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import type { Router } from 'express';
import { adminRouter, companyParam, headerKey, salesActionRoutes } from '../sales/sales.http.js';
import { createDealBody, dealWinBody, leadWinBody, updateDealBody } from './deal.schema.js';
import type { Deals } from './deal.service.js';

/** The external deal routes (served without Express, decision 0014). */
export function dealRoutes(deals: Deals): ApiRouter {
  const r = apiRouter();
  r.post('/deals', async (req, res) => {
    const identity = integrationWith(req, 'crm/deal.create');
    const body = parse(createDealBody, req.body);
    const key = parse(headerKey, { 'x-idempotency-key': req.header('x-idempotency-key') })['x-idempotency-key'];
    res.status(201).json(await deals.create(identity, body, key));
  });
  r.get('/deals/:ref', async (req, res) => {
    const identity = integrationWith(req, 'crm/deal.read');
    res.json(await deals.detail(identity, req.params.ref ?? ''));
  });
  r.put('/deals/:ref', async (req, res) => {
    const identity = integrationWith(req, 'crm/deal.update');
    res.json(await deals.update(identity, req.params.ref ?? '', parse(updateDealBody, req.body)));
  });
  return r;
}

/** The CRM's dedicated deal actions of the management API (admin-api.md); each answers the DealSnapshot. */
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
