import { z } from 'zod';
import { marketingBody } from '../marketing/marketing.schema.js';
import { MEASUREMENT_CONSENTS } from './lead.entity.js';

/**
 * POST /leads. Strict: a field the contract forbids (top-level phone, email, lead_source) or does not
 * know is a 400 naming it, never silently dropped.
 */
export const createLeadBody = z.strictObject({
  title: z.string().trim().min(1, 'must be 1 to 150 characters').max(150, 'must be 1 to 150 characters'),
  stage_id: z.uuid('must be a UUID').optional(),
  responsible_id: z.uuid('must be a UUID').optional(),
  quality_rating: z.number().int().min(1, 'must be an integer from 1 to 5').max(5, 'must be an integer from 1 to 5').optional(),
  visibility: z.union([z.literal(0), z.literal(1)], { message: 'must be 0 or 1' }).optional(),
  measurement_consent: z.enum(MEASUREMENT_CONSENTS, { message: 'must be GRANTED, DENIED or UNSPECIFIED' }).optional(),
  /** The marketing tracking object; null is the same as not sending it. */
  marketing: marketingBody.nullable().optional(),
  /** The only manual origin: a lead source of the company (else 400). */
  crm_lead_source_id: z.uuid('must be a UUID').nullable().optional(),
});
export type CreateLeadBody = z.infer<typeof createLeadBody>;

/** A lead is addressed by its UUID or by its numeric per-company code. */
export const leadRef = z.union([z.uuid(), z.string().regex(/^[1-9]\d{0,9}$/)]);
