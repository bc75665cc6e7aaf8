export const SALES_VERBS = [
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
] as const;
export type SalesVerb = (typeof SALES_VERBS)[number];
export type SalesEntity = 'lead' | 'deal';

const salesKeys = <E extends SalesEntity>(entity: E) => SALES_VERBS.map((verb) => `${entity}.${verb}` as const);

/** Payloads keep the spec's shape. No proposal.* events exist. */
export const SPEC_EVENT_KEYS = [
  ...salesKeys('lead'),
  ...salesKeys('deal'),
  'chat.message_sent',
  'chat.message_received',
  'delivery.created',
  'delivery.updated',
  'delivery.stage_changed',
  'delivery.completed',
  'task.completed',
  'contract.created',
  'contract.updated',
  'contract.canceled',
  'contract.renewed',
  'contract.completed',
  'satisfaction.public_submission_created',
] as const;

/** About the subscriber's own endpoint, issued by the webhooks service (decision 0175). */
export const WEBHOOK_EVENT_KEYS = ['webhook.test', 'webhook.disabled'] as const;

export const EXTENSION_EVENT_KEYS = ['chat.message_status_updated', ...WEBHOOK_EVENT_KEYS] as const;

/** Literal types, so a misspelt key does not compile. */
export const EVENT_KEYS = [...SPEC_EVENT_KEYS, ...EXTENSION_EVENT_KEYS] as const;

export type EventKey = (typeof EVENT_KEYS)[number];
export const isEventKey = (key: string): key is EventKey => (EVENT_KEYS as readonly string[]).includes(key);

export const salesKey = <E extends SalesEntity, V extends SalesVerb>(entity: E, verb: V) => `${entity}.${verb}` as `${E}.${V}`;
