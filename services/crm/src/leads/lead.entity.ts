import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { externalIdIndex, salesRecordProperties, salesRelationEntities } from '../sales/sales.entity.js';

export const Lead = defineEntity({
  name: 'Lead',
  tableName: 'leads',
  properties: {
    ...salesRecordProperties(),
    /** Views still in lead_view_queue are added when read (decision 0012), so concurrent GETs never queue on this row. */
    viewsCount: p.integer().default(0),
    /** Bumped only by Postgres triggers when anything the detail shows changes (decision 0015). */
    detailVersion: p.integer().default(0),
  },
  uniques: [{ name: 'leads_company_code_unique', properties: ['companyId', 'code'] }],
  indexes: [
    externalIdIndex('lead'),
    { name: 'leads_company_stage_idx', properties: ['companyId', 'stageId'] },
    { name: 'leads_company_created_idx', properties: ['companyId', 'createdAt', 'id'] },
  ],
});
export type Lead = InferEntity<typeof Lead>;

export const LeadView = defineEntity({
  name: 'LeadView',
  tableName: 'lead_views',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    leadId: p.uuid().index(),
    userId: p.uuid(),
    viewedAt: p.datetime(),
  },
  indexes: [{ name: 'lead_views_user_lead_idx', properties: ['userId', 'leadId'] }],
});

export const LeadRelationEntities = salesRelationEntities('lead');

/** An idempotency key of POST /leads per company; a `failed` key stays consumed (409). */
export const LeadIdempotencyKey = defineEntity({
  name: 'LeadIdempotencyKey',
  tableName: 'lead_idempotency_keys',
  properties: {
    companyId: p.uuid().primary(),
    key: p.string().length(255).primary(),
    status: p.string().length(20),
    leadId: p.uuid().nullable(),
    title: p.string().length(150).nullable(),
    createdAt: p.datetime(),
    finishedAt: p.datetime().nullable(),
    /** The AttemptOwner.id of the crm process whose attempt reserved the key (decision 0111). */
    attemptOwner: p.integer().nullable(),
    /** The person receipts of the creation (decision 0182), so a replay answers them too. */
    persons: p.json<unknown>().nullable(),
  },
});
export type LeadIdempotencyKey = InferEntity<typeof LeadIdempotencyKey>;

/** Views not yet counted in views_count, folded into lead_views in one statement (decision 0012). */
export const LeadViewQueued = defineEntity({
  name: 'LeadViewQueued',
  tableName: 'lead_view_queue',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    leadId: p.uuid().index(),
    userId: p.uuid(),
    viewedAt: p.datetime(),
  },
});

/** Per company, bumped by triggers when shared catalog rows shown in lead details change (decision 0015). */
export const DetailCatalogVersion = defineEntity({
  name: 'DetailCatalogVersion',
  tableName: 'detail_catalog_versions',
  properties: {
    companyId: p.uuid().primary(),
    version: p.bigint('number'),
  },
});
