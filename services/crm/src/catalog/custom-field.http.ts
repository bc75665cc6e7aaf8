import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import type { PoolOf } from '../db.js';
import { listCustomFields } from './catalog.service.js';
import { listCustomFieldsRoute } from './custom-field.contract.js';

/** GET /custom-fields of the external API: the fields available to integrations (decision 0046). */
export function customFieldRoutes(pool: PoolOf): ApiRouter {
  return apiRouter().route(listCustomFieldsRoute, async (req, res, { query }) => {
    res.json(await listCustomFields(await pool(), integrationOf(req).companyId, query));
  });
}
