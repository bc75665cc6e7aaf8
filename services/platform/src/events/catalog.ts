/** The spec's catalog: the 33 event keys a subscription may name. No proposal.* events exist. */
const crmEntityEvents = (entity: 'lead' | 'deal') =>
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

export const EVENT_KEYS = [
  ...crmEntityEvents('lead'),
  ...crmEntityEvents('deal'),
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

export type EventKey = (typeof EVENT_KEYS)[number];
export const isEventKey = (key: string): key is EventKey => (EVENT_KEYS as readonly string[]).includes(key);
