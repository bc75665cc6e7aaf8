import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationWith } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import type { ServiceContext } from '@svc/platform/service';
import { listCustomFields, listCustomFieldsQuery } from './catalog.service.js';

/** GET /custom-fields of the external API: the fields available to integrations (decision 0046). */
export function customFieldRoutes(ctx: ServiceContext): ApiRouter {
  const r = apiRouter();
  r.get('/custom-fields', async (req, res) => {
    const identity = integrationWith(req, 'crm/custom-fields.read');
    res.json(await listCustomFields(ctx.orm.em.fork(), identity.companyId, parse(listCustomFieldsQuery, req.query)));
  });
  return r;
}
