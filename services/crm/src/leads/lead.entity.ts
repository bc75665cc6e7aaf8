import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

export const MEASUREMENT_CONSENTS = ['GRANTED', 'DENIED', 'UNSPECIFIED'] as const;
export type MeasurementConsent = (typeof MEASUREMENT_CONSENTS)[number];

export const LeadStatus = { open: 1, won: 2, lost: 3 } as const;

export const Lead = defineEntity({
  name: 'Lead',
  tableName: 'leads',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    code: p.integer(),
    title: p.string().length(150),
    pipelineId: p.uuid(),
    stageId: p.uuid(),
    responsibleId: p.uuid(),
    createdById: p.uuid(),
    status: p.smallint(),
    visibility: p.smallint(),
    measurementConsent: p.string().length(20).nullable(),
    qualityRating: p.smallint().nullable(),
    qualityReason: p.text().nullable(),
    value: p.decimal('number').precision(14).scale(2).nullable(),
    leadSourceId: p.uuid().nullable(),
    organizationId: p.uuid().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    archivedAt: p.datetime().nullable(),
    wonDate: p.datetime().nullable(),
    lostDate: p.datetime().nullable(),
    lastActivityAt: p.datetime().nullable(),
    /**
     * GET lead calls counted so far; the views still in lead_view_queue are added when read (decision 0012), so
     * concurrent GETs of one lead never queue on this row.
     */
    viewsCount: p.integer().default(0),
  },
  uniques: [{ name: 'leads_company_code_unique', properties: ['companyId', 'code'] }],
  indexes: [{ name: 'leads_company_stage_idx', properties: ['companyId', 'stageId'] }],
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
});

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
