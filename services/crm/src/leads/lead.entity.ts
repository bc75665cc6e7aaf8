import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { externalIdIndex, salesRecordProperties, salesRelationEntities } from '../sales/sales.entity.js';

export const Lead = defineEntity({
  name: 'Lead',
  tableName: 'leads',
  properties: {
    ...salesRecordProperties(),
    /**
     * GET lead calls counted so far; the views still in lead_view_queue are added when read (decision 0012), so
     * concurrent GETs of one lead never queue on this row.
     */
    viewsCount: p.integer().default(0),
    /**
     * Bumped by Postgres triggers whenever anything the lead's detail shows changes (its own columns other than
     * views_count, and every lead-specific table the detail reads; decision 0015), so a cached detail is checked
     * against it. Never written by crm's code.
     */
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

/** One row per view of a lead by a user (GET lead records a view; rows arrive here through lead_view_queue). */
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

/** The lead's relation tables (lead_tags, lead_participants, ...), defined once for leads and deals. */
export const LeadRelationEntities = salesRelationEntities('lead');

/**
 * An idempotency key of POST /leads, per company. `processing` from the reservation until the creation (lead,
 * followers, note) ends; then `done` (replays answer the same lead) or `failed` (the key stays consumed: 409).
 */
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

/**
 * Views recorded by GET lead and not yet counted in leads.views_count: insert-only for GETs; the view folder
 * moves them to lead_views and adds them to the counter in one statement (decision 0012).
 */
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

/**
 * Per company, bumped by Postgres triggers whenever a row of the shared catalog that lead details show changes
 * (pipelines, stages, users, tags, custom fields and options, named items, lead sources, organizations; decision
 * 0015). A cached detail is current only while both its lead's detail_version and this version are unchanged.
 */
export const DetailCatalogVersion = defineEntity({
  name: 'DetailCatalogVersion',
  tableName: 'detail_catalog_versions',
  properties: {
    companyId: p.uuid().primary(),
    version: p.bigint('number'),
  },
});
