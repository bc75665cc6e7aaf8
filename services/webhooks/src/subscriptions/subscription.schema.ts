import { EVENT_KEYS } from '@svc/platform/events/catalog';
import { z } from 'zod';

/** They belong to the transport or to the signature. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer']);
export const headerName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'must be an HTTP header name')
  .refine((n) => !RESERVED_HEADERS.has(n.toLowerCase()), 'is reserved for the transport');
export const headerValue = z
  .string()
  .max(4000)
  .regex(/^[^\r\n\0]*$/, 'must not contain line breaks');

export const url = z.url({ protocol: /^https?$/, message: 'must be an http or https URL' }).max(2000, 'must be at most 2000 characters');
export const events = z
  .array(z.enum(EVENT_KEYS, { message: 'is not an event key of the catalog' }))
  .min(1, 'must name at least one event key');
const auth = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('basic'),
    username: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^:]*$/, 'must not contain ":"'),
    password: z.string().max(500),
  }),
  z.strictObject({
    type: z.literal('bearer'),
    token: z
      .string()
      .min(1)
      .max(4000)
      .regex(/^[^\r\n\0]*$/),
  }),
  z.strictObject({ type: z.literal('api_key'), header: headerName, value: headerValue.min(1) }),
]);

/** With the capped waits, more than a day of resends (decision 0121). */
export const DEFAULT_MAX_RETRIES = 35;
export const MAX_RETRIES_LIMIT = 100;

export const description = z.string().max(1000, 'must be at most 1000 characters');

export const createSubscriptionBody = z.strictObject({
  url,
  events,
  description: description.nullable().optional(),
  secret: z.string().min(16, 'must be at least 16 characters').max(200).optional(),
  max_retries: z
    .number()
    .int()
    .min(0, `must be 0 to ${MAX_RETRIES_LIMIT}`)
    .max(MAX_RETRIES_LIMIT, `must be 0 to ${MAX_RETRIES_LIMIT}`)
    .optional(),
  headers: z.record(headerName, headerValue).optional(),
  auth: auth.nullable().optional(),
  active: z.boolean().optional(),
});

export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 60 * 60;

/** A new or generated secret starts a rotation: the old one keeps signing for the grace, so no verification is missed. */
export const updateSubscriptionBody = createSubscriptionBody
  .partial()
  .extend({
    rotate_secret: z.literal(true).optional(),
    secret_rotation_grace_seconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 24 * 60 * 60, 'must be at most 7 days')
      .optional(),
  })
  .refine((b) => !(b.rotate_secret && b.secret), { path: ['rotate_secret'], message: 'send either secret or rotate_secret, not both' });

export const listDeliveriesQuery = z.object({
  status: z.enum(['pending', 'succeeded', 'failed']).optional(),
  event_key: z.string().max(100).optional(),
  skip: z.coerce
    .number()
    .int()
    .catch(0)
    .transform((n) => Math.max(0, n)),
  take: z.coerce
    .number()
    .int()
    .min(1)
    .catch(20)
    .transform((n) => Math.min(n, 100)),
});
