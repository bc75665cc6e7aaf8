import { event, route } from '@svc/platform/http/contract';
import { skipParam, takeParam } from '@svc/platform/http/parse';
import { z } from 'zod';
import { DEFAULT_ROTATION_GRACE_SECONDS, description, events, headerName, headerValue, url } from './subscription.schema.js';

/** Decision 0175. */
const tags = ['Webhooks'];
const read = 'crm/webhooks.read';
const write = 'crm/webhooks.write';
const at = z.string().meta({ description: 'ISO 8601 date-time (UTC)' });
const idParams = z.object({ id: z.string().meta({ description: 'The subscription’s UUID.' }) });
const dateTime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' });

export const LIST_TAKE_DEFAULT = 20;
export const LIST_TAKE_MAX = 100;
const paging = {
  skip: skipParam().default(0),
  take: takeParam(LIST_TAKE_MAX).default(LIST_TAKE_DEFAULT),
  cursor: z.string().max(200).optional().meta({ description: 'The previous page’s next_cursor; replaces skip.' }),
};

const headers = z.record(headerName, headerValue);

export const integrationCreateBody = z
  .strictObject({ url, events, description: description.optional(), headers: headers.optional() })
  .meta({ id: 'WebhookSubscriptionCreate' });

export const integrationUpdateBody = z
  .strictObject({
    url: url.optional(),
    events: events.optional(),
    description: description.nullable().optional(),
    headers: headers.optional(),
    active: z.boolean().optional().meta({ description: 'true re-enables a disabled subscription with a clean record.' }),
  })
  .meta({ id: 'WebhookSubscriptionUpdate' });

export const rotateSecretBody = z.strictObject({
  secret_rotation_grace_seconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 60 * 60, 'must be at most 7 days')
    .optional()
    .meta({ description: `How long the old secret keeps signing beside the new one (default ${DEFAULT_ROTATION_GRACE_SECONDS}).` }),
});

export const testBody = z.strictObject({
  event_key: z.string().max(100).optional().meta({ description: '`webhook.test` (the default) or one of the subscription’s event keys.' }),
});

export const deliveriesQuery = z.object({
  status: z.enum(['pending', 'succeeded', 'failed'], { message: 'must be pending, succeeded or failed' }).optional(),
  event_key: z.string().max(100).optional(),
  since: dateTime.optional().meta({ description: 'Deliveries issued at or after this time.' }),
  until: dateTime.optional().meta({ description: 'Deliveries issued before this time.' }),
  ...paging,
});

export const replayBody = z
  .strictObject({
    since: dateTime.meta({ description: 'Deliveries issued at or after this time.' }),
    until: dateTime.optional().meta({ description: 'Deliveries issued before this time (default: now).' }),
    status: z.literal('failed', { message: 'must be failed' }).optional().meta({ description: 'Only the deliveries that failed.' }),
  })
  .refine((b) => b.until === undefined || Date.parse(b.until) > Date.parse(b.since), { path: ['until'], message: 'must be after since' });

const subscriptionFields = {
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(z.string()),
  headers: z.record(z.string(), z.string()),
  active: z.boolean(),
  disabled_at: at.nullable().meta({ description: 'When it was disabled (a 410 Gone, or failing too long); null while enabled.' }),
  disabled_reason: z.string().nullable().meta({ description: 'Why it was disabled.' }),
  previous_secret_expires_at: at.nullable().meta({ description: 'During a secret rotation, when the old secret stops signing.' }),
  created_at: at,
  updated_at: at,
};

export const subscriptionSchema = z.object(subscriptionFields).meta({ id: 'WebhookSubscription' });
export const subscriptionWithSecretSchema = z
  .object({
    ...subscriptionFields,
    secret: z.string().meta({ description: 'The signing secret, shown only when created or rotated.' }),
    standard_webhooks_secret: z.string().meta({ description: 'The same secret in its Standard Webhooks form (`whsec_…`).' }),
  })
  .meta({ id: 'WebhookSubscriptionWithSecret' });

const attemptSchema = z
  .object({
    at,
    status_code: z.number().int().nullable().meta({ description: 'The receiver’s status; null when no answer came.' }),
    duration_ms: z.number().int(),
    error: z.string().nullable(),
    response_body: z.string().nullable().meta({ description: 'The first 1 KB of the receiver’s answer.' }),
  })
  .meta({ id: 'WebhookDeliveryAttempt' });

export const deliverySchema = z
  .object({
    id: z.string(),
    event_id: z.string(),
    event_key: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempts: z.array(attemptSchema),
    next_attempt_at: at.nullable(),
    created_at: at,
  })
  .meta({ id: 'WebhookDelivery' });

const page = <T extends z.ZodType>(records: T, id: string) =>
  z.object({ total: z.number().int(), records: z.array(records), next_cursor: z.string().nullable() }).meta({ id });

export const createWebhook = route({
  method: 'post',
  path: '/webhooks',
  operationId: 'createWebhook',
  summary: 'Subscribe an endpoint to events',
  description: 'The answer holds the signing secret, which no later answer shows (rotate it to get a new one).',
  tags,
  permission: write,
  body: integrationCreateBody,
  responses: { 201: { description: 'The subscription and its secret.', schema: subscriptionWithSecretSchema } },
});

export const listWebhooks = route({
  method: 'get',
  path: '/webhooks',
  operationId: 'listWebhooks',
  summary: 'List the company’s subscriptions',
  description: 'Oldest first, with skip/take or cursor paging.',
  tags,
  permission: read,
  query: z.object(paging),
  responses: { 200: { description: 'A page of subscriptions.', schema: page(subscriptionSchema, 'WebhookSubscriptionPage') } },
});

export const getWebhook = route({
  method: 'get',
  path: '/webhooks/{id}',
  operationId: 'getWebhook',
  summary: 'Get a subscription',
  tags,
  permission: read,
  params: idParams,
  responses: { 200: { description: 'The subscription.', schema: subscriptionSchema } },
});

export const updateWebhook = route({
  method: 'patch',
  path: '/webhooks/{id}',
  operationId: 'updateWebhook',
  summary: 'Change a subscription',
  tags,
  permission: write,
  params: idParams,
  body: integrationUpdateBody,
  responses: { 200: { description: 'The subscription.', schema: subscriptionSchema } },
});

export const deleteWebhook = route({
  method: 'delete',
  path: '/webhooks/{id}',
  operationId: 'deleteWebhook',
  summary: 'Remove a subscription',
  description: 'Nothing more is issued to it; deliveries already issued keep their course.',
  tags,
  permission: write,
  params: idParams,
  responses: { 200: { description: 'Removed.', schema: z.object({ id: z.string() }) } },
});

export const rotateWebhookSecret = route({
  method: 'post',
  path: '/webhooks/{id}/rotate-secret',
  operationId: 'rotateWebhookSecret',
  summary: 'Give a subscription a new signing secret',
  description:
    'The old secret keeps signing beside the new one until previous_secret_expires_at (a second value in each signature header).',
  tags,
  permission: write,
  params: idParams,
  body: rotateSecretBody,
  responses: { 200: { description: 'The subscription and its new secret.', schema: subscriptionWithSecretSchema } },
});

export const testWebhook = route({
  method: 'post',
  path: '/webhooks/{id}/test',
  operationId: 'testWebhook',
  summary: 'Send a test event',
  description:
    '`webhook.test` by default, or a sample of one of the subscription’s event keys (the payload of the company’s latest event ' +
    'of that key); sent, signed and logged like any delivery, with the header `x-svc-test: true`.',
  tags,
  permission: write,
  params: idParams,
  body: testBody,
  responses: { 202: { description: 'The delivery, queued.', schema: deliverySchema } },
});

export const listWebhookDeliveries = route({
  method: 'get',
  path: '/webhooks/{id}/deliveries',
  operationId: 'listWebhookDeliveries',
  summary: 'The delivery log of a subscription',
  description: 'Newest first, each delivery with its attempts.',
  tags,
  permission: read,
  params: idParams,
  query: deliveriesQuery,
  responses: { 200: { description: 'A page of deliveries.', schema: page(deliverySchema, 'WebhookDeliveryPage') } },
});

export const redeliverWebhookDelivery = route({
  method: 'post',
  path: '/webhooks/{id}/deliveries/{delivery_id}/redeliver',
  operationId: 'redeliverWebhookDelivery',
  summary: 'Send a delivery again',
  description: 'Now, with the same event id and body and a fresh retry budget; an attempt in flight is left to finish.',
  tags,
  permission: write,
  params: z.object({
    id: z.string().meta({ description: 'The subscription’s UUID.' }),
    delivery_id: z.string().meta({ description: 'The delivery’s UUID.' }),
  }),
  responses: { 202: { description: 'The delivery, queued again.', schema: deliverySchema } },
});

export const replayWebhook = route({
  method: 'post',
  path: '/webhooks/{id}/replay',
  operationId: 'replayWebhook',
  summary: 'Send again every delivery of a time range',
  description:
    'Every delivery issued in the range (or only the failed ones), ended or waiting for a retry, is sent again now with its ' +
    'event id and a fresh retry budget; attempts in flight are left to finish.',
  tags,
  permission: write,
  params: idParams,
  body: replayBody,
  responses: { 202: { description: 'How many deliveries were queued again.', schema: z.object({ queued: z.number().int() }) } },
});

export const subscriptionApiContracts = [
  createWebhook,
  listWebhooks,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  testWebhook,
  listWebhookDeliveries,
  redeliverWebhookDelivery,
  replayWebhook,
];

export const webhookEvents = [
  event({
    key: 'webhook.test',
    summary: 'A test event a subscriber asked for (`POST /webhooks/{id}/test`); only that subscription gets it',
    payload: z
      .object({
        test: z.literal(true),
        webhook_id: z.string(),
        message: z.string(),
        sent_at: at,
      })
      .meta({ id: 'WebhookTestPayload' }),
  }),
  event({
    key: 'webhook.disabled',
    summary: 'Another subscription of the company was disabled (its receiver answered 410 Gone, or kept failing)',
    payload: z
      .object({
        webhook: z.object({ id: z.string(), url: z.string(), description: z.string().nullable() }),
        reason: z.enum(['gone', 'failing']),
        disabled_reason: z.string(),
        disabled_at: at,
      })
      .meta({ id: 'WebhookDisabledPayload' }),
  }),
];
