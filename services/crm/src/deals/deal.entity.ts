import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { externalIdIndex, reasonProperties, salesRecordProperties, salesRelationEntities } from '../sales/sales.entity.js';

/** A deal (opportunity): the columns it shares with a lead, plus its own (spec "Deal payloads"). */
export const Deal = defineEntity({
  name: 'Deal',
  tableName: 'deals',
  properties: {
    ...salesRecordProperties(),
    expectedCloseDate: p.datetime().nullable(),
    /** An integer; the contract states no range. */
    temperature: p.integer().nullable(),
    wonReasonDescription: p.text().nullable(),
    /** The lead this deal came from (a lead won with a deal), else null. */
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

/** An idempotency key of POST /deals, per company (the lead's rules, decision 0042). */
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
    /** The AttemptOwner.id of the crm process whose attempt reserved the key (decision 0111). */
    attemptOwner: p.integer().nullable(),
    /** The person receipts of the creation (decision 0182), so a replay answers them too. */
    persons: p.json<unknown>().nullable(),
  },
});
export type DealIdempotencyKey = InferEntity<typeof DealIdempotencyKey>;

/** The deal's relation tables (deal_tags, deal_participants, ...): the lead's, keyed by deal_id (decision 0051). */
export const DealRelationEntities = salesRelationEntities('deal');

/** The gain reasons of a won deal, in the order given (the first is `crm_gain_reason`). */
export const DealGainReason = defineEntity({
  name: 'DealGainReason',
  tableName: 'deal_gain_reasons',
  properties: reasonProperties('deal'),
});
