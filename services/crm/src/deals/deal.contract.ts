import { page, route } from '@svc/platform/http/contract';
import { z } from 'zod';
import { idempotencyHeader } from '../leads/lead.contract.js';
import { creationAnswer, dealDetailSchema, dealListRecordSchema, updateAnswer } from '../sales/sales.responses.js';
import { createDealBody, listDealsQuery, updateDealBody } from './deal.schema.js';

/** The external deal routes' contracts (decision 0100). */
const tags = ['Deals'];
const ref = z.object({ ref: z.string().meta({ description: 'The deal’s UUID or its numeric per-company code.' }) });

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
});
