import { z } from 'zod';
import { MEASUREMENT_CONSENTS } from '../marketing/acquisition.entity.js';

/** Response and event schemas (decision 0100); the contract test fails when they drift from the builders. */
const uuid = z.string().meta({ format: 'uuid' });

// The proposal summary keeps the proposal routes' own field descriptions (their schemas extend it).
const summaryId = z.string();
const summaryAt = z.string().meta({ description: 'ISO 8601 date-time (UTC)' });

export const proposalSummarySchema = z
  .object({
    id: summaryId,
    code: z.number().int(),
    version: z.number().int(),
    title: z.string(),
    status: z.number().int().meta({ description: '1 draft, 2 sent, 3 approved, 4 rejected' }),
    is_primary: z.boolean(),
    discount_type: z.enum(['percentage', 'amount']).nullable(),
    discount_value: z.number().nullable(),
    subtotal: z.number(),
    total: z.number(),
    valid_until: summaryAt.nullable(),
    created_at: summaryAt,
    updated_at: summaryAt,
    approved_at: summaryAt.nullable(),
    archived_at: summaryAt.nullable(),
    rejected_at: summaryAt.nullable(),
    created_by: z.object({ id: summaryId, name: z.string(), avatar: z.string().nullable() }).nullable(),
    approved_by: z.object({ id: summaryId, name: z.string() }).nullable(),
  })
  .meta({ id: 'ProposalSummary' });

const dateTime = z.string().meta({ format: 'date-time' });
const nullableDate = dateTime.nullable();
const consent = z.enum(MEASUREMENT_CONSENTS);

export const userSummary = z.object({ id: uuid, name: z.string(), avatar: z.string().nullable() }).meta({ id: 'UserSummary' });
export const namedSummary = z.object({ id: uuid, name: z.string() }).meta({ id: 'NamedSummary' });
export const stageSummary = z
  .object({ id: uuid, name: z.string(), pipeline: z.object({ id: uuid, name: z.string() }).nullable() })
  .meta({ id: 'StageSummary' });
export const tagSummary = z
  .object({ id: uuid, name: z.string(), color: z.object({ background: z.string().nullable(), foreground: z.string().nullable() }) })
  .meta({ id: 'TagSummary' });
const leadSourceSummary = z.object({ id: uuid, name: z.string(), logo: z.string().nullable() }).meta({ id: 'LeadSourceSummary' });
const answer = z
  .object({ id: uuid, option_id: uuid.nullable(), option_value: z.string().nullable(), value: z.string().nullable() })
  .meta({ id: 'CustomFieldAnswer' });
export const customFieldWithAnswers = z
  .object({ field_id: uuid, field_name: z.string(), field_type: z.number().int(), answers: z.array(answer) })
  .meta({ id: 'CustomFieldWithAnswers' });
export const customFieldChange = z
  .object({ ...customFieldWithAnswers.shape, previous_answers: z.array(answer) })
  .meta({ id: 'CustomFieldChange' });
export const removedCustomField = z
  .object({ field_id: uuid, field_name: z.string(), field_type: z.number().int(), previous_answers: z.array(answer) })
  .meta({ id: 'RemovedCustomField' });
const participant = z
  .object({
    id: uuid,
    main: z.boolean(),
    role: z.string().nullable(),
    notes: z.string().nullable(),
    person: z.object({
      id: uuid,
      name: z.string().nullable(),
      contacts: z.array(z.object({ id: uuid, type: z.number().int(), value: z.string(), primary: z.boolean() })),
    }),
  })
  .meta({ id: 'Participant' });
const follower = z
  .object({ role: namedSummary.nullable(), user: userSummary.nullable(), notes: z.string().nullable() })
  .meta({ id: 'FollowerSummary' });
const dealSummary = z
  .object({
    id: uuid,
    code: z.number().int(),
    title: z.string(),
    status: z.number().int(),
    archived_at: nullableDate,
    won_date: nullableDate,
    lost_date: nullableDate,
    created_at: dateTime,
    updated_at: dateTime,
    stage: stageSummary.nullable(),
    value: z.number().nullable(),
    responsible: userSummary.nullable(),
  })
  .meta({ id: 'DealSummary' });
const marketingLeadSource = z
  .object({
    id: uuid,
    utm_search_term: z.string().nullable(),
    utm_medium: z.string().nullable(),
    lead_source: leadSourceSummary.nullable(),
    url_conversion: z.string().nullable(),
    campaing_name: z.string().nullable(),
    ad_set_name: z.string().nullable(),
    content_name: z.string().nullable(),
    displayed_on_name: z.string().nullable(),
    conversion_tool_name: z.string().nullable(),
    creative: z.object({ id: z.string().nullable(), value: z.string(), creative_uri: z.string().nullable() }).nullable(),
    source_url: z.string().nullable(),
    headline: z.string().nullable(),
    ad_body: z.string().nullable(),
    media_type: z.string().nullable(),
    ads_clid_id: z.string().nullable(),
    gclid: z.string().nullable(),
    fbclid: z.string().nullable(),
    fbc: z.string().nullable(),
    fbp: z.string().nullable(),
    conversion_url_full: z.string().nullable(),
    measurement_consent: consent.nullable(),
  })
  .meta({ id: 'MarketingLeadSource' });
const valuation = z
  .object({
    mode: z.string(),
    source: z.string(),
    current_value: z.number().nullable(),
    projected_value: z.number().nullable(),
    display_value: z.number().nullable(),
    has_recurring_value: z.boolean(),
    has_indefinite_recurring_value: z.boolean(),
    has_rolling_projection: z.boolean(),
    indefinite_horizon_months: z.number().int().nullable(),
    calculation_version: z.number().int(),
  })
  .meta({ id: 'OpportunityValuation' });

const sharedSnapshot = {
  id: uuid,
  code: z.number().int(),
  title: z.string(),
  created_at: dateTime,
  updated_at: dateTime,
  status: z.number().int().meta({ description: '1 open, 2 won, 3 lost' }),
  value: z.number().nullable(),
  measurement_consent: consent,
  visibility: z.number().int(),
  negotiation_mode: z.number().int().nullable(),
  quality_rating: z.number().int().nullable(),
  quality_reason: z.string().nullable(),
  qualification_metric: z.string(),
  score: z.number().int().nullable(),
  score_criteria_count: z.number().int().nullable(),
  score_updated_at: nullableDate,
  icp: z.looseObject({}).nullable(),
  icps: z.array(z.looseObject({})),
  valuation,
  projection_context: z.object({ indefinite_horizon_months: z.number().int(), display_mode: z.string() }),
  archived_at: nullableDate,
  won_date: nullableDate,
  lost_date: nullableDate,
  lost_reason_description: z.string().nullable(),
  external_id: z.string().nullable().meta({ description: 'The integrator’s own id of the record, or null.' }),
  crm_loss_reason: namedSummary.nullable(),
  crm_loss_reasons: z.array(namedSummary),
  last_activity_at: nullableDate,
  responsible: userSummary.nullable(),
  created_by: userSummary.nullable(),
  stage: stageSummary.nullable(),
  marketing_lead_source: marketingLeadSource.nullable(),
  participants: z.array(participant),
  partners: z.array(z.looseObject({})),
  organization: z.object({ id: uuid, name: z.string(), logo: z.string().nullable() }).nullable(),
  custom_fields: z.array(customFieldWithAnswers),
  tags: z.array(tagSummary),
  proposals: z.array(proposalSummarySchema),
  followers: z.array(follower),
};

const channelChatSummary = z
  .object({
    chat_id: uuid,
    title: z.string(),
    person_id: uuid,
    person_name: z.string().nullable(),
    channel_account_id: uuid,
    type: z.string().meta({ description: 'INDIVIDUAL or GROUP' }),
    channel_type: z.string().meta({ description: 'WHATSAPP or INSTAGRAM' }),
    unread_count: z.number().int(),
    channel_account_name: z.string(),
    whatsapp_number_verified_name: z.string().nullable(),
    external_contact_id: z.string().nullable(),
    external_contact_handle: z.string().nullable(),
    chat_responsible: userSummary.nullable(),
  })
  .meta({ id: 'ChannelChatSummary' });

const webhookWhatsappChat = z
  .object({
    chat_id: uuid,
    status: z.string().meta({ description: 'OPEN or SNOOZED (a RESOLVED or archived chat is not listed)' }),
    chat_type: z.string().meta({ description: 'INDIVIDUAL or GROUP' }),
    person_id: uuid,
    person_name: z.string().nullable(),
    wa_contact_id: z.string().nullable(),
    contact_name: z.string().nullable(),
    contact_number: z.string().nullable(),
    remote_profile_name: z.string().nullable(),
    unread_count: z.number().int(),
    phone_number: z
      .object({ id: uuid, display_number: z.string(), raw_number: z.string(), phone_number_id: z.string() })
      .meta({ description: 'The company’s WhatsApp number the chat is on' }),
  })
  .meta({ id: 'WebhookWhatsappChat' });

const eventChats = {
  has_channel_chat: z.boolean(),
  channel_chats: z.array(channelChatSummary),
  has_whatsapp_chat: z.boolean(),
  whatsapp_chats: z.array(webhookWhatsappChat),
};
const detailChats = { ...eventChats, whatsapp_chats: z.array(channelChatSummary) };

const leadOwn = { lead_source: leadSourceSummary.nullable(), deals: z.array(dealSummary) };
const dealOwn = {
  deal_source: leadSourceSummary.nullable(),
  lead: z.object({ id: uuid, code: z.number().int(), title: z.string() }).nullable(),
  crm_gain_reason: namedSummary.nullable(),
  crm_gain_reasons: z.array(namedSummary),
  won_reason_description: z.string().nullable(),
  expected_close_date: nullableDate,
  temperature: z.number().int().nullable(),
};

export const leadSnapshotSchema = z.object({ ...sharedSnapshot, ...eventChats, ...leadOwn }).meta({ id: 'LeadSnapshot' });
export const dealSnapshotSchema = z.object({ ...sharedSnapshot, ...eventChats, ...dealOwn }).meta({ id: 'DealSnapshot' });

/** Lists do not ask chat (decision 0130). */
export const leadListRecordSchema = z.object({ ...sharedSnapshot, ...leadOwn }).meta({ id: 'LeadListRecord' });
export const dealListRecordSchema = z.object({ ...sharedSnapshot, ...dealOwn }).meta({ id: 'DealListRecord' });

const detailExtras = {
  pipeline_stages: z.array(z.object({ id: uuid, name: z.string(), position: z.number().int() })),
  stage_durations: z.array(
    z.object({ stage_id: uuid, stage_name: z.string(), total_seconds: z.number().int(), human_readable: z.string() }),
  ),
  associations_count: z.object({
    items: z.number().int(),
    tasks: z.number().int(),
    qualifications: z.number().int(),
    notes: z.number().int(),
    files: z.number().int(),
    activities: z.number().int(),
    proposals: z.number().int(),
    deals: z.number().int(),
  }),
};

export const leadDetailSchema = z
  .object({ ...sharedSnapshot, ...detailChats, ...leadOwn, ...detailExtras, views_count: z.number().int() })
  .meta({ id: 'LeadDetail' });
export const dealDetailSchema = z.object({ ...sharedSnapshot, ...detailChats, ...dealOwn, ...detailExtras }).meta({ id: 'DealDetail' });

export const personReceipt = z
  .object({
    id: uuid,
    match: z.enum(['created', 'email', 'phone', 'website', 'other', 'id']).meta({
      description:
        'created: a new person; email, phone (website, other): an existing person found by a contact of that type (avoid_duplicate); id: named by persons_id.',
    }),
  })
  .meta({ id: 'PersonReceipt' });

export const creationAnswer = z
  .object({
    id: uuid,
    code: z.number().int(),
    title: z.string(),
    measurement_consent: consent,
    person: personReceipt
      .optional()
      .meta({ description: 'The main person, when the creation linked one (a replay answers the first call’s).' }),
    persons: z
      .array(personReceipt)
      .optional()
      .meta({ description: 'Every person the creation linked, in order, when it linked more than one.' }),
  })
  .meta({ id: 'CreationResponse' });

export const updateAnswer = z
  .object({
    id: uuid,
    code: z.number().int(),
    title: z.string(),
    status: z.number().int(),
    quality_rating: z.number().int().nullable(),
    quality_reason: z.string().nullable(),
    lost_reason_description: z.string().nullable(),
  })
  .meta({ id: 'UpdateResponse' });
