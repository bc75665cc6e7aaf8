import type { EventKey, SalesEntity, SalesVerb } from './catalog.js';

/**
 * Typed per key (spec, Events). Snapshots are the owning service's types, objects here; keys the spec leaves
 * "not shown" are open records until written down.
 */
type Snapshot = object;
type Summary = object | null;

export interface SalesEventFields<E extends SalesEntity> {
  created: {
    custom_fields_changed?: readonly object[];
    previous_quality?: number | null;
    previous_quality_reason?: string | null;
    new_quality?: number | null;
    new_quality_reason?: string | null;
  };
  updated: never;
  stage_changed: { previous_stage: Summary; current_stage: Summary };
  won: E extends 'lead'
    ? { won_date: string; won_by: Summary; deal: Snapshot | null }
    : {
        won_date: string;
        won_by: Summary;
        customer_id: string | null;
        gain_reason: Summary;
        gain_reasons: readonly object[];
        won_reason_description: string | null;
      };
  lost: {
    lost_date: string;
    lost_by: Summary;
    loss_reason: Summary;
    loss_reasons: readonly object[];
    loss_reason_description: string | null;
  };
  tag_added: { added_tags: readonly object[] };
  tag_removed: { removed_tags: readonly object[] };
  custom_field_updated: { custom_fields_changed: readonly object[] };
  custom_field_removed: { removed_fields: readonly object[] };
  quality_updated: {
    previous_quality: number | null;
    previous_quality_reason: string | null;
    new_quality: number | null;
    new_quality_reason: string | null;
  };
}

/** `<kind>.updated` is the snapshot itself. */
export type SalesPayload<E extends SalesEntity, V extends SalesVerb> = V extends 'updated'
  ? Snapshot
  : { [K in E]: Snapshot } & SalesEventFields<E>[V];

type SalesPayloads = {
  [K in `${SalesEntity}.${SalesVerb}`]: K extends `${infer E extends SalesEntity}.${infer V extends SalesVerb}`
    ? SalesPayload<E, V>
    : never;
};

type Open = Record<string, unknown>;

export type EventPayloads = SalesPayloads & {
  /** Decision 0022. */
  'task.completed': { task: Snapshot; completed_by: unknown; completed_at: unknown };
  'chat.message_sent': Open;
  'chat.message_received': Open;
  /** Decision 0179: statuses only move forward. */
  'chat.message_status_updated': {
    message_id: string;
    chat_id: string;
    status: 'sent' | 'delivered' | 'read' | 'failed';
    previous_status: string;
    at: string;
    error?: { code: number; title: string };
  };
  /** Decision 0080. */
  'delivery.created': { delivery: Snapshot; created_by: Summary };
  'delivery.updated': Snapshot;
  'delivery.stage_changed': { previous_stage: Summary; current_stage: Summary; delivery: Snapshot; moved_by: Summary };
  'delivery.completed': { delivery: Snapshot; completed_by: Summary; delivered_at: string | null };
  /** Decision 0081. */
  'contract.created': { contract: Snapshot; created_by: Summary };
  'contract.updated': { contract: Snapshot; updated_by: Summary; changed_fields: readonly string[] };
  'contract.canceled': { contract: Snapshot; canceled_by: Summary; canceled_at: string | null; cancellation_reason: string | null };
  'contract.renewed': {
    contract: Snapshot;
    renewed_by: Summary;
    renewed_at: string | null;
    previous_end_date: string | null;
    new_end_date: string | null;
    previous_value: number | null;
    new_value: number | null;
    renewal_count: number;
  };
  'contract.completed': { contract: Snapshot; completed_by: Summary; completed_at: string | null };
  /** Decision 0082. */
  'satisfaction.public_submission_created': {
    submission: Snapshot;
    link: Snapshot;
    form: Snapshot;
    record_type: string;
    crm_lead: Summary;
    crm_deal: Summary;
    crm_delivery: Summary;
  };
  /** Decision 0175: sent on request, never issued by a change. */
  'webhook.test': { test: true; webhook_id: string; message: string; sent_at: string };
  /** Decision 0175. */
  'webhook.disabled': {
    webhook: { id: string; url: string; description: string | null };
    reason: 'gone' | 'failing';
    disabled_reason: string;
    disabled_at: string;
  };
};

/** A union over the keys, so key and payload agree. */
export type NewEvent<K extends EventKey = EventKey> = { [Key in K]: { eventKey: Key; payload: EventPayloads[Key] } }[K];

export type EventToRecord<K extends EventKey = EventKey> = NewEvent<K> & { companyId: string };

/** For code shared by leads and deals, where the kind is a value. */
export function salesEvent<E extends SalesEntity, V extends Exclude<SalesVerb, 'updated'>>(
  kind: E,
  verb: V,
  snapshot: Snapshot,
  fields: SalesEventFields<E>[V],
): NewEvent {
  return { eventKey: `${kind}.${verb}`, payload: { [kind]: snapshot, ...fields } } as NewEvent;
}
