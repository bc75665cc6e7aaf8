import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { hasPermission } from '@svc/platform/identity';
import type { Router } from 'express';
import { runBatch, updateOfItem } from '../sales/sales.batch.js';
import { adminRouter, salesActionRoutes } from '../sales/sales.http.js';
import { createLead, createLeadsBatch, getLead, listLeads, updateLead } from './lead.contract.js';
import { createLeadBody, updateLeadBody } from './lead.schema.js';
import type { Leads } from './lead.service.js';

/** The external lead routes (served without Express, decision 0014), described by their contracts (decision 0100). */
export function leadRoutes(leads: Leads): ApiRouter {
  return apiRouter()
    .route(createLead, async (req, res, { body, headers }) => {
      res.status(201).json(await leads.create(integrationOf(req), body, headers['x-idempotency-key']));
    })
    .route(createLeadsBatch, async (req, res, { body }) => {
      res.json(
        await runBatch(leads, integrationOf(req), body, {
          create: createLeadBody,
          update: updateLeadBody,
          toUpdate: (item) => updateOfItem(item, false, 'lead'),
        }),
      );
    })
    .route(listLeads, async (req, res, { query }) => {
      res.json(await leads.list(integrationOf(req), query));
    })
    .route(getLead, async (req, res, { params }) => {
      const identity = integrationOf(req);
      res.jsonText(await leads.detailJson(identity, params.ref, hasPermission(identity, 'crm/chats.read')));
    })
    .route(updateLead, async (req, res, { params, body }) => {
      res.json(await leads.update(integrationOf(req), params.ref, body));
    });
}

/** Dedicated lead actions of the management API; each answers the LeadSnapshot. `win` is in deal.http.ts. */
export function leadAdminRoutes(leads: Leads): Router {
  const r = adminRouter();
  salesActionRoutes(r, leads);
  return r;
}
