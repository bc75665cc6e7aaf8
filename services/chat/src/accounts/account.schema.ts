import { z } from 'zod';

const text = (max: number) => z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

export const createWhatsappNumberBody = z.strictObject({
  display_number: text(50),
  raw_number: z.string().regex(/^\d{8,15}$/, 'must be 8 to 15 digits'),
  phone_number_id: text(100),
  verified_name: text(200).nullable().optional(),
  provider: z.enum(['sandbox', 'whatsapp_cloud']).optional(),
  business_account_id: text(100).optional(),
  provider_status: text(30).optional(),
});

export const createInstagramAccountBody = z.strictObject({
  handle: text(100),
  display_name: text(200),
  external_account_id: text(100),
  provider: z.enum(['sandbox', 'instagram_messaging']).optional(),
  provider_status: text(30).optional(),
});

export const AGENT_STATUSES = ['ACTIVE', 'INACTIVE'] as const;

export const createAgentBody = z.strictObject({
  user_id: z.uuid('must be a UUID'),
  whatsapp_number_ids: z.array(z.uuid('must be UUIDs')).max(100).optional(),
  instagram_account_ids: z.array(z.uuid('must be UUIDs')).max(100).optional(),
  status: z.enum(AGENT_STATUSES).optional(),
});

export const TEMPLATE_CATEGORIES = ['AUTHENTICATION', 'MARKETING', 'UTILITY', 'SERVICE'] as const;

export const createTemplateBody = z.strictObject({
  whatsapp_number_id: z.uuid('must be a UUID'),
  name: z.string().regex(/^[a-z0-9_]{1,200}$/, 'must be 1 to 200 lowercase letters, digits or underscores'),
  language: z.string().regex(/^[a-z]{2,3}(_[A-Z]{2})?$/, 'must be a language code like en or pt_BR'),
  category: z.enum(TEMPLATE_CATEGORIES),
  status: z.enum(['APPROVED', 'PENDING', 'REJECTED', 'PAUSED', 'DISABLED']).optional(),
  components: z.array(z.record(z.string(), z.unknown())).max(20),
});

export type CreateWhatsappNumberBody = z.infer<typeof createWhatsappNumberBody>;
export type CreateInstagramAccountBody = z.infer<typeof createInstagramAccountBody>;
export type CreateAgentBody = z.infer<typeof createAgentBody>;
export type CreateTemplateBody = z.infer<typeof createTemplateBody>;
