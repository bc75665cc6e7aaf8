import type { EventKey, SalesEntity, SalesVerb } from './catalog.js';

/**
 * The payload of each event key (spec, Events), so a writer is typed by its key: `EventPayloads['deal.won']` names
 * the fields a deal.won carries. The snapshots and summaries inside are the owning service's types (crm's
 * LeadSnapshot, tasks' task resource); here they are objects, since the platform does not know their fields. Keys
 * whose payload the spec leaves "not shown" are open records until their service writes them down here.
 */
type Snapshot = object;
type Summary = object | null;

/** The fields of a sales event besides its record's snapshot (`lead` or `deal`). */
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

/** A sales event's payload: the record's snapshot under its kind, plus the verb's fields; `<kind>.updated` is the snapshot itself. */
export type SalesPayload<E extends SalesEntity, V extends SalesVerb> = V extends 'updated'
  ? Snapshot
  : { [K in E]: Snapshot } & SalesEventFields<E>[V];

type SalesPayloads = {
  [K in `${SalesEntity}.${SalesVerb}`]: K extends `${infer E extends SalesEntity}.${infer V extends SalesVerb}`
    ? SalesPayload<E, V>
    : never;
};

/** Keys whose payload the spec does not show: their owning service's shape, narrowed here once written down. */
type Open = Record<string, unknown>;

export type EventPayloads = SalesPayloads & {
  /** Decision 0022: the task as GET /tasks/{id} shows it (less the caller-dependent fields), who completed it and when. */
  'task.completed': { task: Snapshot; completed_by: unknown; completed_at: unknown };
  'chat.message_sent': Open;
  'chat.message_received': Open;
  /** Decision 0179: a status callback of a message the company sent; statuses only move forward. */
  'chat.message_status_updated': {
    message_id: string;
    chat_id: string;
    status: 'sent' | 'delivered' | 'read' | 'failed';
    previous_status: string;
    at: string;
    error?: { code: number; title: string };
  };
  /** Decision 0080, docs/webhooks/delivery-events.md: crm's DeliverySnapshot and who acted. */
  'delivery.created': { delivery: Snapshot; created_by: Summary };
  'delivery.updated': Snapshot;
  'delivery.stage_changed': { previous_stage: Summary; current_stage: Summary; delivery: Snapshot; moved_by: Summary };
  'delivery.completed': { delivery: Snapshot; completed_by: Summary; delivered_at: string | null };
  /** Decision 0081, docs/webhooks/contract-events.md: crm's ContractSnapshot and who acted. */
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
  /** Decision 0082, docs/webhooks/satisfaction-events.md. */
  'satisfaction.public_submission_created': {
    submission: Snapshot;
    link: Snapshot;
    form: Snapshot;
    record_type: string;
    crm_lead: Summary;
    crm_deal: Summary;
    crm_delivery: Summary;
  };
  /** Decision 0175: sent to one subscription on request, never issued by a change. */
  'webhook.test': { test: true; webhook_id: string; message: string; sent_at: string };
  /** Decision 0175: a subscription was disabled; sent to the company's other active subscriptions that asked for it. */
  'webhook.disabled': {
    webhook: { id: string; url: string; description: string | null };
    reason: 'gone' | 'failing';
    disabled_reason: string;
    disabled_at: string;
  };
};

/** One event to write: its key and the payload that key carries. A union over the keys, so key and payload agree. */
export type NewEvent<K extends EventKey = EventKey> = { [Key in K]: { eventKey: Key; payload: EventPayloads[Key] } }[K];

/** An event of a company to write to the outbox. */
export type EventToRecord<K extends EventKey = EventKey> = NewEvent<K> & { companyId: string };

/**
 * A sales event, built where the kind is a value (code shared by leads and deals): the snapshot goes under the
 * kind and the key is `<kind>.<verb>`. Typed per verb; `SalesEventFields` says which fields each verb carries.
 */
export function salesEvent<E extends SalesEntity, V extends Exclude<SalesVerb, 'updated'>>(
  kind: E,
  verb: V,
  snapshot: Snapshot,
  fields: SalesEventFields<E>[V],
): NewEvent {
  return { eventKey: `${kind}.${verb}`, payload: { [kind]: snapshot, ...fields } } as NewEvent;
}
