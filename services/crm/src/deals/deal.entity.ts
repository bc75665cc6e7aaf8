import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { externalIdIndex, reasonProperties, salesRecordProperties, salesRelationEntities } from '../sales/sales.entity.js';

export const Deal = defineEntity({
  name: 'Deal',
  tableName: 'deals',
  properties: {
    ...salesRecordProperties(),
    expectedCloseDate: p.datetime().nullable(),
    /** An integer; the contract states no range. */
    temperature: p.integer().nullable(),
    wonReasonDescription: p.text().nullable(),
    leadId: p.uuid().nullable(),
  },
  uniques: [{ name: 'deals_company_code_unique', properties: ['companyId', 'code'] }],
  indexes: [
    externalIdIndex('deal'),
    { name: 'deals_company_stage_idx', properties: ['companyId', 'stageId'] },
    { name: 'deals_company_created_idx', properties: ['companyId', 'createdAt', 'id'] },
    { name: 'deals_company_lead_idx', properties: ['companyId', 'leadId'] },
  ],
});
export type Deal = InferEntity<typeof Deal>;

/** Same rules as the lead's (decision 0042). */
export const DealIdempotencyKey = defineEntity({
  name: 'DealIdempotencyKey',
  tableName: 'deal_idempotency_keys',
  properties: {
    companyId: p.uuid().primary(),
    key: p.string().length(255).primary(),
    status: p.string().length(20),
    dealId: p.uuid().nullable(),
    title: p.string().length(150).nullable(),
    createdAt: p.datetime(),
    finishedAt: p.datetime().nullable(),
    /** Decision 0111. */
    attemptOwner: p.integer().nullable(),
    /** Decision 0182: a replay answers them too. */
    persons: p.json<unknown>().nullable(),
  },
});
export type DealIdempotencyKey = InferEntity<typeof DealIdempotencyKey>;

/** Decision 0051. */
export const DealRelationEntities = salesRelationEntities('deal');

/** In the order given; the first is `crm_gain_reason`. */
export const DealGainReason = defineEntity({
  name: 'DealGainReason',
  tableName: 'deal_gain_reasons',
  properties: reasonProperties('deal'),
});
