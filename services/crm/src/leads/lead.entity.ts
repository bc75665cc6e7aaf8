import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

export const MEASUREMENT_CONSENTS = ['GRANTED', 'DENIED', 'UNSPECIFIED'] as const;
export type MeasurementConsent = (typeof MEASUREMENT_CONSENTS)[number];

export const LeadStatus = { open: 1, won: 2, lost: 3 } as const;

/**
 * The columns a lead and a deal share (a deal adds its own, deal.entity.ts): one definition, so both tables and
 * the snapshots built from them cannot drift. A function, so each entity gets its own property builders.
 */
export const salesRecordProperties = () => ({
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
  lostReasonDescription: p.text().nullable(),
});

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

/** The tags of a lead. No foreign keys: the rows are written before the lead in a creation's transaction. */
export const LeadTag = defineEntity({
  name: 'LeadTag',
  tableName: 'lead_tags',
  properties: {
    leadId: p.uuid().primary(),
    tagId: p.uuid().primary(),
    companyId: p.uuid(),
    createdAt: p.datetime(),
  },
  indexes: [{ name: 'lead_tags_company_tag_idx', properties: ['companyId', 'tagId'] }],
});
export type LeadTag = InferEntity<typeof LeadTag>;

/** The persons of a lead (`participants`); `main` is the lead's main contact. */
export const LeadParticipant = defineEntity({
  name: 'LeadParticipant',
  tableName: 'lead_participants',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    leadId: p.uuid(),
    personId: p.uuid(),
    main: p.boolean(),
    role: p.string().length(200).nullable(),
    notes: p.text().nullable(),
    createdAt: p.datetime(),
  },
  uniques: [{ name: 'lead_participants_lead_person_unique', properties: ['leadId', 'personId'] }],
  indexes: [{ name: 'lead_participants_company_person_idx', properties: ['companyId', 'personId'] }],
});
export type LeadParticipant = InferEntity<typeof LeadParticipant>;

/** Users following a lead, each at most once, with an optional follower role (named_items kind follower_role). */
export const LeadFollower = defineEntity({
  name: 'LeadFollower',
  tableName: 'lead_followers',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    leadId: p.uuid(),
    userId: p.uuid(),
    roleId: p.uuid().nullable(),
    notes: p.text().nullable(),
    createdAt: p.datetime(),
  },
  uniques: [{ name: 'lead_followers_lead_user_unique', properties: ['leadId', 'userId'] }],
});
export type LeadFollower = InferEntity<typeof LeadFollower>;

/** Notes of a lead: the creation's `note` and the automatic ones (a responsible handed over to the master user). */
export const LeadNote = defineEntity({
  name: 'LeadNote',
  tableName: 'lead_notes',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    leadId: p.uuid().index(),
    content: p.text(),
    isPinned: p.boolean(),
    automatic: p.boolean(),
    createdById: p.uuid().nullable(),
    createdAt: p.datetime(),
  },
});
export type LeadNote = InferEntity<typeof LeadNote>;

/** The loss reasons of a lost lead, in the order given (the first is `crm_loss_reason`). */
export const LeadLossReason = defineEntity({
  name: 'LeadLossReason',
  tableName: 'lead_loss_reasons',
  properties: {
    leadId: p.uuid().primary(),
    reasonId: p.uuid().primary(),
    companyId: p.uuid(),
    position: p.integer(),
  },
});
export type LeadLossReason = InferEntity<typeof LeadLossReason>;

/** The time a lead spent in each stage: one period per stay, open (left_at null) in its current stage. */
export const LeadStagePeriod = defineEntity({
  name: 'LeadStagePeriod',
  tableName: 'lead_stage_periods',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    leadId: p.uuid().index(),
    stageId: p.uuid(),
    enteredAt: p.datetime(),
    leftAt: p.datetime().nullable(),
  },
});
export type LeadStagePeriod = InferEntity<typeof LeadStagePeriod>;

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
