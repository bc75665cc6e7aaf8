import { MAX_KEY_PERMISSIONS, MAX_PERMISSION_LENGTH } from '@svc/platform/identity';
import { z } from 'zod';

const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const email = z.email('must be an e-mail address').max(320);
const dateTime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' });
const hostname = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/, 'must be a host name');
const permission = z
  .string()
  .max(MAX_PERMISSION_LENGTH, `must be at most ${MAX_PERMISSION_LENGTH} characters`)
  .regex(/^(\*|[a-z][a-z0-9_-]*\/[a-z][a-z0-9_.-]*)$/, 'must be "*" or a permission such as crm/lead.read');
/** Bounded so the key's identity always fits what the services accept in a request's headers (decision 0153). */
const permissions = z
  .array(permission)
  .min(1, 'must list at least one permission (["*"] for all)')
  .max(MAX_KEY_PERMISSIONS, `must list at most ${MAX_KEY_PERMISSIONS} permissions`);

export const createCompanyBody = z.strictObject({
  name,
  plan_valid_until: dateTime.nullable().optional(),
  master_user: z.strictObject({ name, email }),
});

export const updateCompanyBody = z.strictObject({
  name: name.optional(),
  plan_valid_until: dateTime.nullable().optional(),
});

export const createUserBody = z.strictObject({ name, email, avatar: z.url().max(2000).nullable().optional() });

export const updateUserBody = z.strictObject({
  active: z.boolean().optional(),
  archived: z.boolean().optional(),
  name: name.optional(),
});

export const createKeyBody = z
  .strictObject({
    created_by_user_id: z.uuid('must be a UUID'),
    permissions,
    allowed_domain: hostname.nullable().optional(),
    valid_from: dateTime.nullable().optional(),
    valid_until: dateTime.nullable().optional(),
    rate_limit_per_minute: z.number().int().min(1).max(1_000_000).nullable().optional(),
  })
  .refine((b) => !b.valid_from || !b.valid_until || Date.parse(b.valid_until) > Date.parse(b.valid_from), {
    path: ['valid_until'],
    message: 'must be after valid_from',
  });

export const updateKeyBody = z.strictObject({
  active: z.boolean().optional(),
  valid_until: dateTime.nullable().optional(),
  permissions: permissions.optional(),
  rate_limit_per_minute: z.number().int().min(1).max(1_000_000).nullable().optional(),
});
