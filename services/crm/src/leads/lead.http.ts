import { forbidden } from '@svc/platform/errors';
import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { parse, parseQuery } from '@svc/platform/http/parse';
import { hasPermission, type Identity } from '@svc/platform/identity';
import type { Router } from 'express';
import { z } from 'zod';
import type { Deals } from '../deals/deal.service.js';
import { adminRouter, companyParam, leadWinBody, salesActionRoutes } from '../sales/sales.http.js';
import { createLeadBody, idempotencyKey, listLeadsQuery, updateLeadBody } from './lead.schema.js';
import type { Leads } from './lead.service.js';

export const need = (identity: Identity, permission: string) => {
  if (!hasPermission(identity, permission)) throw forbidden(`The key lacks the permission ${permission}`);
};

export const headerKey = z.object({ 'x-idempotency-key': idempotencyKey().optional() });

/** The external lead routes (served without Express, decision 0014). */
export function leadRoutes(leads: Leads): ApiRouter {
  const r = apiRouter();
  r.post('/leads', async (req, res) => {
    const identity = integrationOf(req);
    need(identity, 'crm/lead.create');
    const body = parse(createLeadBody, req.body);
    const key = parse(headerKey, { 'x-idempotency-key': req.header('x-idempotency-key') })['x-idempotency-key'];
    res.status(201).json(await leads.create(identity, body, key));
  });
  r.get('/leads', async (req, res) => {
    const identity = integrationOf(req);
    need(identity, 'crm/lead.read');
    res.json(await leads.list(identity, parseQuery(listLeadsQuery, req.query)));
  });
  r.get('/leads/:ref', async (req, res) => {
    const identity = integrationOf(req);
    need(identity, 'crm/lead.read');
    res.jsonText(await leads.detailJson(identity, req.params.ref ?? ''));
  });
  r.put('/leads/:ref', async (req, res) => {
    const identity = integrationOf(req);
    need(identity, 'crm/lead.update');
    res.json(await leads.update(identity, req.params.ref ?? '', parse(updateLeadBody, req.body)));
  });
  return r;
}

/** The CRM's dedicated lead actions of the management API (admin-api.md); each answers the LeadSnapshot. */
export function leadAdminRoutes(leads: Leads, deals: Deals): Router {
  const r = adminRouter();
  r.post('/companies/:cid/leads/:id/win', async (req, res) => {
    const body = parse(leadWinBody, req.body);
    const cid = companyParam(req.params.cid);
    const won = body.deal
      ? await deals.winLead(cid, req.params.id, body.user_id, body.deal)
      : await leads.win(cid, req.params.id, body.user_id);
    res.json(leads.snapshotOf(won));
  });
  salesActionRoutes(r, leads);
  return r;
}
