import { page, route } from '@svc/platform/http/contract';
import { z } from 'zod';
import { listCustomFieldsQuery } from './catalog.service.js';

const customField = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    entity: z.enum(['lead', 'deal']),
    name: z.string(),
    type: z.string(),
    field_type: z.number().int(),
    required: z.boolean(),
    options: z.array(z.object({ id: z.string().meta({ format: 'uuid' }), value: z.string() })),
  })
  .meta({ id: 'CustomField' });

/** GET /custom-fields (decision 0046), described for the OpenAPI document (decision 0100). */
export const listCustomFieldsRoute = route({
  method: 'get',
  path: '/custom-fields',
  operationId: 'listCustomFields',
  summary: 'List custom fields',
  description:
    'The company’s custom fields for leads and deals, in creation order, with their options; `skip`/`take` or `cursor` paging, a `take` above 500 is capped.',
  tags: ['Custom fields'],
  permission: 'crm/custom-fields.read',
  query: listCustomFieldsQuery,
  responses: {
    200: { description: 'A page of custom fields.', schema: page(customField, 'CustomFieldPage') },
  },
});
