import type { EntityManager } from '@svc/platform/db/orm';
import { User } from '../companies/company.entity.js';
import { iso } from '../companies/company.views.js';
import { Pipeline, Stage } from '../pipelines/pipeline.entity.js';
import type { Lead, MeasurementConsent } from './lead.entity.js';

/** UserSummary: the element shape of created_by, responsible, won_by, ... in responses and events. */
export const userSummary = (u: User | undefined) => (u ? { id: u.id, name: u.name, avatar: u.avatar } : null);

/** StageSummary: `{id, name, pipeline: {id, name}}`. */
export const stageSummary = (s: Stage | undefined, p: Pipeline | undefined) =>
  s ? { id: s.id, name: s.name, pipeline: p ? { id: p.id, name: p.name } : null } : null;

export interface LeadRelations {
  stage?: Stage;
  pipeline?: Pipeline;
  pipelineStages: Stage[];
  users: Map<string, User>;
}

export async function loadLeadRelations(em: EntityManager, lead: Lead): Promise<LeadRelations> {
  const stages = await em.find(Stage, { companyId: lead.companyId, pipelineId: lead.pipelineId }, { orderBy: { position: 'asc' } });
  const pipeline = await em.findOne(Pipeline, { id: lead.pipelineId, companyId: lead.companyId });
  const users = await em.find(User, { companyId: lead.companyId, id: { $in: [...new Set([lead.responsibleId, lead.createdById])] } });
  return {
    stage: stages.find((s) => s.id === lead.stageId),
    pipeline: pipeline ?? undefined,
    pipelineStages: stages,
    users: new Map(users.map((u) => [u.id, u])),
  };
}

/**
 * The consent shown for a lead: its canonical value, else the decision of the latest active acquisition
 * snapshot (marketing acquisitions arrive with the leads issue), else UNSPECIFIED.
 */
export const effectiveConsent = (lead: Lead): MeasurementConsent => (lead.measurementConsent as MeasurementConsent | null) ?? 'UNSPECIFIED';

/**
 * LeadSnapshot of the spec's Lead payloads: what events carry and the base of the GET detail. Fields
 * whose sources do not exist yet are present as null or empty, never invented.
 */
export function leadSnapshot(lead: Lead, rel: LeadRelations) {
  return {
    id: lead.id,
    code: lead.code,
    title: lead.title,
    created_at: lead.createdAt.toISOString(),
    updated_at: lead.updatedAt.toISOString(),
    status: lead.status,
    value: lead.value ?? null,
    measurement_consent: effectiveConsent(lead),
    visibility: lead.visibility,
    negotiation_mode: null,
    quality_rating: lead.qualityRating,
    quality_reason: lead.qualityReason,
    qualification_metric: 'quality_rating',
    score: null,
    score_criteria_count: null,
    score_updated_at: null,
    icp: null,
    icps: [],
    valuation: null,
    projection_context: null,
    archived_at: iso(lead.archivedAt),
    won_date: iso(lead.wonDate),
    lost_date: iso(lead.lostDate),
    lost_reason_description: null,
    crm_loss_reason: null,
    crm_loss_reasons: [],
    last_activity_at: iso(lead.lastActivityAt),
    responsible: userSummary(rel.users.get(lead.responsibleId)),
    created_by: userSummary(rel.users.get(lead.createdById)),
    stage: stageSummary(rel.stage, rel.pipeline),
    lead_source: null,
    marketing_lead_source: null,
    participants: [],
    partners: [],
    organization: null,
    custom_fields: [],
    tags: [],
    proposals: [],
    deals: [],
    followers: [],
    has_channel_chat: false,
    channel_chats: [],
    has_whatsapp_chat: false,
    whatsapp_chats: [],
  };
}
