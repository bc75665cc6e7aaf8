import { iso } from '@svc/platform/http/json';
import type { NamedItem, Tag } from '../catalog/catalog.entity.js';
import type { User } from '../companies/company.entity.js';
import type { Organization } from '../contacts/contact.entity.js';
import type { MeasurementConsent } from '../marketing/acquisition.entity.js';
import type { LeadMarketing } from '../marketing/acquisition.service.js';
import { effectiveLeadSourceId, leadSourceSummary, marketingLeadSourceView } from '../marketing/acquisition.view.js';
import type { Pipeline, Stage } from '../pipelines/pipeline.entity.js';
import { CHAT_FIELD_KEYS, type ChatFieldKey, eventChatFields, type LinkedChat } from './sales.chats.js';
import type { SalesRecord } from './sales.entity.js';
import {
  type CustomFieldRelation,
  customFieldsWithAnswers,
  type DealOfLead,
  dealSummary,
  type FollowerRelation,
  followerSummary,
  namedSummary,
  organizationSummary,
  type ParticipantRelation,
  participantSummary,
  stageDuration,
  stageSummary,
  tagSummary,
  userSummary,
} from './sales.summaries.js';

/** Read in one statement by SalesSelect.relationsSelect. */
export interface SalesRelations {
  stage?: Stage;
  pipeline?: Pipeline;
  pipelineStages: Stage[];
  users: Map<string, User>;
  marketing: LeadMarketing;
  tags: Tag[];
  participants: ParticipantRelation[];
  organization: Organization | null;
  customFields: CustomFieldRelation[];
  followers: FollowerRelation[];
  lossReasons: NamedItem[];
  deals: DealOfLead[];
  /** The live proposals' summaries (spec "Proposal summary"), newest first; read where the snapshot is shown or sent. */
  proposals: Record<string, unknown>[];
  /** Decision 0130; empty where chat is not asked. */
  chats: LinkedChat[];
}

/** A stage's time is its closed periods plus, at the database's time of the read, its open one. */
export interface SalesDetailExtras {
  stagePeriods: { stage: Stage; closedUs: number; openFromUs: number[] }[];
  notesCount: number;
  filesCount: number;
  itemsCount: number;
  nowUs: number;
}

/** `nowUs`: the database's time of the read, microseconds. */
export const stageDurationsAt = (periods: SalesDetailExtras['stagePeriods'], nowUs: number) =>
  periods.map((p) => stageDuration(p.stage, (p.closedUs + p.openFromUs.reduce((sum, from) => sum + (nowUs - from), 0)) / 1e6));

export const noRelations = (): Omit<SalesRelations, 'users' | 'marketing' | 'pipelineStages'> => ({
  tags: [],
  participants: [],
  organization: null,
  customFields: [],
  followers: [],
  lossReasons: [],
  deals: [],
  proposals: [],
  chats: [],
});

/** Canonical consent, else the latest acquisition decision, else UNSPECIFIED; nothing is written back. */
export const effectiveConsent = (
  lead: Pick<SalesRecord, 'measurementConsent'>,
  marketing: Pick<LeadMarketing, 'latestDecision'>,
): MeasurementConsent => (lead.measurementConsent as MeasurementConsent | null) ?? marketing.latestDecision ?? 'UNSPECIFIED';

const leadSourceOf = (lead: SalesRecord, m: LeadMarketing) => {
  const id = effectiveLeadSourceId(lead.leadSourceId, m.latest);
  return id ? m.leadSources.get(id) : null;
};

export type SalesSnapshot = ReturnType<typeof salesSnapshot>;

/** crm has no recurring values: every lead is valued by its current value and nothing is projected. */
const valuationOf = (lead: Pick<SalesRecord, 'value'>) => ({
  mode: 'CURRENT',
  source: 'LEGACY_CURRENT_VALUE',
  current_value: lead.value ?? null,
  projected_value: null,
  display_value: lead.value ?? null,
  has_recurring_value: false,
  has_indefinite_recurring_value: false,
  has_rolling_projection: false,
  indefinite_horizon_months: null,
  calculation_version: 1,
});

/** Fields without a source yet are null or empty, never invented; details and lists replace the chat fields. */
export function salesSnapshot(lead: SalesRecord, rel: SalesRelations) {
  return {
    id: lead.id,
    code: lead.code,
    title: lead.title,
    created_at: lead.createdAt.toISOString(),
    updated_at: lead.updatedAt.toISOString(),
    status: lead.status,
    value: lead.value ?? null,
    measurement_consent: effectiveConsent(lead, rel.marketing),
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
    valuation: valuationOf(lead),
    projection_context: { indefinite_horizon_months: 12, display_mode: 'CURRENT' },
    archived_at: iso(lead.archivedAt),
    won_date: iso(lead.wonDate),
    lost_date: iso(lead.lostDate),
    lost_reason_description: lead.lostReasonDescription ?? null,
    external_id: lead.externalId ?? null,
    crm_loss_reason: rel.lossReasons[0] ? namedSummary(rel.lossReasons[0]) : null,
    crm_loss_reasons: rel.lossReasons.map(namedSummary),
    last_activity_at: iso(lead.lastActivityAt),
    responsible: userSummary(rel.users.get(lead.responsibleId)),
    created_by: userSummary(rel.users.get(lead.createdById)),
    stage: stageSummary(rel.stage, rel.pipeline),
    lead_source: leadSourceSummary(leadSourceOf(lead, rel.marketing)),
    marketing_lead_source: marketingLeadSourceView(rel.marketing.latest, rel.marketing.leadSources),
    participants: rel.participants.map(participantSummary),
    partners: [],
    organization: organizationSummary(rel.organization),
    custom_fields: customFieldsWithAnswers(rel.customFields),
    tags: rel.tags.map(tagSummary),
    proposals: rel.proposals,
    deals: rel.deals.map(dealSummary),
    followers: rel.followers.map(followerSummary),
    ...eventChatFields(
      rel.chats,
      rel.participants.map((p) => p.person),
    ),
  };
}

/** Lists ask chat nothing (decision 0130). */
export function withoutChatFields<S extends object>(snapshot: S): Omit<S, ChatFieldKey> {
  const record = { ...snapshot } as Record<string, unknown>;
  for (const key of CHAT_FIELD_KEYS) delete record[key];
  return record as Omit<S, ChatFieldKey>;
}
