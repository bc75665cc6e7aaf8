import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationWith } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import type { Router } from 'express';
import { adminRouter, headerKey, salesActionRoutes } from '../sales/sales.http.js';
import { createLeadBody, listLeadsQuery, updateLeadBody } from './lead.schema.js';
import type { Leads } from './lead.service.js';

/** The external lead routes (served without Express, decision 0014). */
export function leadRoutes(leads: Leads): ApiRouter {
  const r = apiRouter();
  r.post('/leads', async (req, res) => {
    const identity = integrationWith(req, 'crm/lead.create');
    const body = parse(createLeadBody, req.body);
    const key = parse(headerKey, { 'x-idempotency-key': req.header('x-idempotency-key') })['x-idempotency-key'];
    res.status(201).json(await leads.create(identity, body, key));
  });
  r.get('/leads', async (req, res) => {
    const identity = integrationWith(req, 'crm/lead.read');
    res.json(await leads.list(identity, parse(listLeadsQuery, req.query)));
  });
  r.get('/leads/:ref', async (req, res) => {
    const identity = integrationWith(req, 'crm/lead.read');
    res.jsonText(await leads.detailJson(identity, req.params.ref ?? ''));
  });
  r.put('/leads/:ref', async (req, res) => {
    const identity = integrationWith(req, 'crm/lead.update');
    res.json(await leads.update(identity, req.params.ref ?? '', parse(updateLeadBody, req.body)));
  });
  return r;
}

/** The CRM's dedicated lead actions of the management API (admin-api.md); each answers the LeadSnapshot. `win` is deals' (deal.http.ts). */
export function leadAdminRoutes(leads: Leads): Router {
  const r = adminRouter();
  salesActionRoutes(r, leads);
  return r;
}
