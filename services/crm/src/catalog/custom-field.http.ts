import { forbidden } from '@svc/platform/errors';
import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { parseQuery } from '@svc/platform/http/parse';
import { hasPermission } from '@svc/platform/identity';
import type { ServiceContext } from '@svc/platform/service';
import { listCustomFields, listCustomFieldsQuery } from './catalog.service.js';

/** GET /custom-fields of the external API: the fields available to integrations (decision 0046). */
export function customFieldRoutes(ctx: ServiceContext): ApiRouter {
  const r = apiRouter();
  r.get('/custom-fields', async (req, res) => {
    const identity = integrationOf(req);
    if (!hasPermission(identity, 'crm/custom-fields.read')) throw forbidden('The key lacks the permission crm/custom-fields.read');
    res.json(await listCustomFields(ctx.orm.em.fork(), identity.companyId, parseQuery(listCustomFieldsQuery, req.query)));
  });
  return r;
}
