import { skipParam, takeParam } from '@svc/platform/http/parse';
import { numericMax } from '@svc/platform/numbers';
import { z } from 'zod';

/** Proposal statuses (README, Codes): the spec shows an integer without its values. */
export const ProposalStatus = { draft: 1, sent: 2, approved: 3, rejected: 4 } as const;

const uuid = z.uuid({ message: 'must be a UUID' });
/** The largest price its numeric(14,2) columns hold (unit_price, discount_value). */
const MONEY_MAX = numericMax(14, 2);
/** A number with at most `places` decimal places (money in cents, quantities in ten-thousandths). */
const decimal = (places: number, min: number, max: number, minMessage: string) =>
  z
    .number({ message: 'must be a number' })
    .min(min, minMessage)
    .max(max, `must be at most ${max}`)
    .refine((v) => Math.abs(v * 10 ** places - Math.round(v * 10 ** places)) < 1e-6, `at most ${places} decimal places`);

export const proposalItem = z.strictObject({
  name: z.string({ message: 'must be a string' }).trim().min(1, 'must be 1 to 200 characters').max(200, 'must be 1 to 200 characters'),
  description: z.string().max(2000, 'must be at most 2000 characters').nullish(),
  quantity: decimal(4, 0.0001, 1e9, 'must be greater than 0'),
  unit_price: decimal(2, 0, MONEY_MAX, 'must be 0 or more'),
});
export type ProposalItemInput = z.infer<typeof proposalItem>;

const title = z
  .string({ message: 'must be a string' })
  .trim()
  .min(1, 'must be 1 to 150 characters')
  .max(150, 'must be 1 to 150 characters');
const items = z.array(proposalItem, { message: 'must be an array' }).max(200, 'at most 200 items');
const discountType = z.enum(['percentage', 'amount'], { message: 'must be percentage or amount' }).nullable();
const discountValue = decimal(2, 0, MONEY_MAX, 'must be 0 or more').nullable();
const validUntil = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).nullable();
const notes = z.string().max(5000, 'must be at most 5000 characters').nullable();

export const createProposalBody = z
  .strictObject({
    crm_lead_id: uuid.optional(),
    crm_deal_id: uuid.optional(),
    title,
    items: items.default([]),
    discount_type: discountType.optional(),
    discount_value: discountValue.optional(),
    valid_until: validUntil.optional(),
    is_primary: z.boolean({ message: 'must be a boolean' }).optional(),
    notes: notes.optional(),
  })
  .refine((b) => (b.crm_lead_id ? 1 : 0) + (b.crm_deal_id ? 1 : 0) === 1, {
    message: 'send exactly one of crm_lead_id and crm_deal_id',
    path: ['crm_lead_id'],
  });
export type CreateProposalBody = z.infer<typeof createProposalBody>;

export const updateProposalBody = z.strictObject({
  title: title.optional(),
  items: items.optional(),
  discount_type: discountType.optional(),
  discount_value: discountValue.optional(),
  valid_until: validUntil.optional(),
  is_primary: z.boolean({ message: 'must be a boolean' }).optional(),
  notes: notes.optional(),
  status: z
    .number({ message: 'must be 1, 2, 3 or 4' })
    .int('must be 1, 2, 3 or 4')
    .refine((s) => s >= 1 && s <= 4, 'must be 1, 2, 3 or 4')
    .optional(),
  archived: z.boolean({ message: 'must be a boolean' }).optional(),
});
export type UpdateProposalBody = z.infer<typeof updateProposalBody>;

/** GET /proposals: the company's proposals the key creator may see, optionally of one lead or deal. */
export const listProposalsQuery = z.strictObject({
  crm_lead_id: uuid.optional(),
  crm_deal_id: uuid.optional(),
  include_archived: z.enum(['true', 'false'], { message: 'must be true or false' }).optional(),
  skip: skipParam().default(0),
  take: takeParam(100).default(20),
  cursor: z.string().max(200).optional(),
});
export type ListProposalsQuery = z.infer<typeof listProposalsQuery>;

export const attachDocumentBody = z.strictObject({ document_id: uuid });

export const createDocumentBody = z.strictObject({
  name: z.string().trim().min(1, 'must be 1 to 200 characters').max(200, 'must be 1 to 200 characters'),
  file_name: z.string().trim().min(1, 'must be 1 to 255 characters').max(255, 'must be 1 to 255 characters'),
  mime_type: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a media type (type/subtype)'),
  file_size: z.number().int('must be an integer').min(0, 'must be 0 or more'),
  url: z.url({ protocol: /^https?$/, message: 'must be an http or https URL' }).max(2000),
});
