import { eventually } from '@svc/platform/testing';
import type { ReceivedRequest } from './receiver.js';

/** The LeadSnapshot fields the spec lists (Lead payloads). */
export const LEAD_SNAPSHOT_FIELDS = [
  'id',
  'code',
  'title',
  'created_at',
  'status',
  'value',
  'valuation',
  'projection_context',
  'measurement_consent',
  'qualification_metric',
  'score',
  'score_criteria_count',
  'score_updated_at',
  'icp',
  'icps',
  'visibility',
  'negotiation_mode',
  'quality_rating',
  'quality_reason',
  'updated_at',
  'archived_at',
  'won_date',
  'lost_date',
  'lost_reason_description',
  'crm_loss_reason',
  'crm_loss_reasons',
  'last_activity_at',
  'responsible',
  'created_by',
  'stage',
  'lead_source',
  'marketing_lead_source',
  'participants',
  'partners',
  'organization',
  'custom_fields',
  'tags',
  'proposals',
  'deals',
  'followers',
  'has_channel_chat',
  'channel_chats',
  'has_whatsapp_chat',
  'whatsapp_chats',
];

/** DealSnapshot (spec "Deal payloads"): the LeadSnapshot fields with deal_source and lead, plus the deal's own. */
export const DEAL_SNAPSHOT_FIELDS = [
  ...LEAD_SNAPSHOT_FIELDS.filter((f) => f !== 'lead_source' && f !== 'deals'),
  'deal_source',
  'lead',
  'crm_gain_reason',
  'crm_gain_reasons',
  'won_reason_description',
  'expected_close_date',
  'temperature',
];

/** Every key of the catalog's Lead and Deal groups. */
export const salesRecordEvents = (entity: 'lead' | 'deal') =>
  [
    'created',
    'updated',
    'stage_changed',
    'won',
    'lost',
    'tag_added',
    'tag_removed',
    'custom_field_updated',
    'custom_field_removed',
    'quality_updated',
  ].map((verb) => `${entity}.${verb}`);

/**
 * The lead.* and deal.* events a receiver got on `path`, by record: `<entity>.updated` carries the snapshot itself,
 * the others carry it under `lead` / `deal`. `one` waits for the `count`-th event of a key and gives its payload.
 */
export function salesEventsOn(received: ReceivedRequest[], path: string) {
  const recordIdOf = (key: string, payload: any) => {
    const [entity, verb] = key.split('.') as [string, string];
    return verb === 'updated' ? payload.id : payload[entity]?.id;
  };
  const of = (recordId: string, key: string) =>
    received.filter((r) => r.path === path && r.body.event_key === key && recordIdOf(key, r.body.payload) === recordId);
  const one = async (recordId: string, key: string, count = 1) => {
    const got = await eventually(() => {
      const list = of(recordId, key);
      return list.length >= count ? list : undefined;
    }, 15_000);
    return got[count - 1]!.body.payload;
  };
  /** The keys received for the record so far, in arrival order. */
  const keys = (recordId: string) =>
    received.filter((r) => r.path === path && recordIdOf(r.body.event_key, r.body.payload) === recordId).map((r) => r.body.event_key);
  return { of, one, keys };
}
