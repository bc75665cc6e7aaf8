import { page, route } from '@svc/platform/http/contract';
import { z } from 'zod';
import { batchAnswer, batchBody } from '../sales/sales.batch.js';
import { creationAnswer, leadDetailSchema, leadListRecordSchema, updateAnswer } from '../sales/sales.responses.js';
import { idempotencyKey } from '../sales/sales.schema.js';
import { createLeadBody, listLeadsQuery, updateLeadBody } from './lead.schema.js';

/** The external lead routes' contracts (decision 0100): what lead.http.ts serves and the OpenAPI document shows. */
const tags = ['Leads'];
const ref = z.object({
  ref: z.string().meta({ description: 'The lead’s UUID, its numeric per-company code, or `ext:` and its external_id.' }),
});
export const idempotencyHeader = z.object({
  'x-idempotency-key': idempotencyKey()
    .optional()
    .meta({ description: 'Makes the creation idempotent (up to 255 characters); wins over the body’s idempotency_key.' }),
});

export const createLead = route({
  method: 'post',
  path: '/leads',
  operationId: 'createLead',
  summary: 'Create a lead',
  description: 'Creates a lead in the key’s company with the key’s creator as the default actor.',
  tags,
  permission: 'crm/lead.create',
  headers: idempotencyHeader,
  body: createLeadBody,
  responses: {
    201: { description: 'The lead created (or the one an earlier call with the same idempotency key created).', schema: creationAnswer },
  },
  errors: [409],
});

export const listLeads = route({
  method: 'get',
  path: '/leads',
  operationId: 'listLeads',
  summary: 'List leads',
  description: 'The leads visible to the key’s creator, newest first, with `skip`/`take` or `cursor` paging.',
  tags,
  permission: 'crm/lead.read',
  query: listLeadsQuery,
  responses: { 200: { description: 'A page of LeadSnapshots without the chat fields.', schema: page(leadListRecordSchema, 'LeadPage') } },
});

export const getLead = route({
  method: 'get',
  path: '/leads/{ref}',
  operationId: 'getLead',
  summary: 'Get a lead',
  description: 'Records a view for the key’s creator (views_count grows; the lead leaves only_new listings).',
  tags,
  permission: 'crm/lead.read',
  params: ref,
  responses: { 200: { description: 'The lead detail.', schema: leadDetailSchema } },
});

export const updateLead = route({
  method: 'put',
  path: '/leads/{ref}',
  operationId: 'updateLead',
  summary: 'Update a lead',
  tags,
  permission: 'crm/lead.update',
  params: ref,
  body: updateLeadBody,
  responses: { 200: { description: 'The lead after the update.', schema: updateAnswer } },
  errors: [409],
});

export const createLeadsBatch = route({
  method: 'post',
  path: '/leads/batch',
  operationId: 'createLeadsBatch',
  summary: 'Create or upsert up to 100 leads',
  description:
    'Each item is the body of POST /leads, checked and written on its own, in order, with every rule and event of POST /leads (or, in upsert mode, of PUT /leads/{ref} when its external_id names a live lead). mode create needs crm/lead.create; in upsert mode an item that creates needs crm/lead.create and one that updates crm/lead.update (an item without it fails with 403). The rate limit counts each item.',
  tags,
  body: batchBody('lead'),
  errors: [403],
  responses: { 200: { description: 'One result per item, in the items’ order.', schema: batchAnswer } },
});
