import { page, route } from '@svc/platform/http/contract';
import { z } from 'zod';
import { idempotencyHeader } from '../leads/lead.contract.js';
import { batchAnswer, batchBody } from '../sales/sales.batch.js';
import { creationAnswer, dealDetailSchema, dealListRecordSchema, updateAnswer } from '../sales/sales.responses.js';
import { createDealBody, listDealsQuery, updateDealBody } from './deal.schema.js';

/** Decision 0100. */
const tags = ['Deals'];
const ref = z.object({
  ref: z.string().meta({ description: 'The deal’s UUID, its numeric per-company code, or `ext:` and its external_id.' }),
});

export const createDeal = route({
  method: 'post',
  path: '/deals',
  operationId: 'createDeal',
  summary: 'Create a deal',
  description: 'The lead creation’s rules, plus value, expected_close_date and temperature.',
  tags,
  permission: 'crm/deal.create',
  headers: idempotencyHeader,
  body: createDealBody,
  responses: {
    201: { description: 'The deal created (or the one an earlier call with the same idempotency key created).', schema: creationAnswer },
  },
  errors: [409],
});

export const listDeals = route({
  method: 'get',
  path: '/deals',
  operationId: 'listDeals',
  summary: 'List deals',
  tags,
  permission: 'crm/deal.read',
  query: listDealsQuery,
  responses: { 200: { description: 'A page of DealSnapshots without the chat fields.', schema: page(dealListRecordSchema, 'DealPage') } },
});

export const getDeal = route({
  method: 'get',
  path: '/deals/{ref}',
  operationId: 'getDeal',
  summary: 'Get a deal',
  tags,
  permission: 'crm/deal.read',
  params: ref,
  responses: { 200: { description: 'The deal detail.', schema: dealDetailSchema } },
});

export const updateDeal = route({
  method: 'put',
  path: '/deals/{ref}',
  operationId: 'updateDeal',
  summary: 'Update a deal',
  description: 'A status change emits only deal.updated.',
  tags,
  permission: 'crm/deal.update',
  params: ref,
  body: updateDealBody,
  responses: { 200: { description: 'The deal after the update.', schema: updateAnswer } },
  errors: [409],
});

export const createDealsBatch = route({
  method: 'post',
  path: '/deals/batch',
  operationId: 'createDealsBatch',
  summary: 'Create or upsert up to 100 deals',
  description:
    'Each item is the body of POST /deals, checked and written on its own, in order, with every rule and event of POST /deals (or, in upsert mode, of PUT /deals/{ref} when its external_id names a live deal). mode create needs crm/deal.create; in upsert mode an item that creates needs crm/deal.create and one that updates crm/deal.update (an item without it fails with 403). The rate limit counts each item.',
  tags,
  body: batchBody('deal'),
  errors: [403],
  responses: { 200: { description: 'One result per item, in the items’ order.', schema: batchAnswer } },
});
