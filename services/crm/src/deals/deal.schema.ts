import { z } from 'zod';
import { description, userId, uuids } from '../sales/sales.http.js';
import { dateTimeParam, numberParam, salesListQueryShape } from '../sales/sales.list.js';
import { createSalesFields, organizationConflict, updateConflicts, updateSalesFields } from '../sales/sales.schema.js';

export const dealFields = {
  value: z.number({ message: 'must be a number' }).nonnegative('must not be negative').max(999_999_999_999.99).nullable().optional(),
  expected_close_date: z.iso
    .datetime({ offset: true, message: 'must be an ISO 8601 date-time' })
    .or(z.iso.date({ message: 'must be an ISO 8601 date-time' }))
    .nullable()
    .optional(),
  temperature: z
    .number({ message: 'must be an integer' })
    .int('must be an integer')
    .min(-2147483648, 'must be a 32-bit integer')
    .max(2147483647, 'must be a 32-bit integer')
    .nullable()
    .optional(),
};

export const createDealBody = createSalesFields.extend(dealFields).superRefine(organizationConflict);
export type CreateDealBody = z.infer<typeof createDealBody>;

/** Decision 0052. */
export const updateDealBody = updateSalesFields
  .extend({
    ...dealFields,
    tags: z.array(z.uuid('must be a UUID')).max(100).optional(),
    status: z.union([z.literal(1), z.literal(2), z.literal(3)], { message: 'must be 1 (open), 2 (won) or 3 (lost)' }).optional(),
  })
  .superRefine(updateConflicts);
export type UpdateDealBody = z.infer<typeof updateDealBody>;

/** Decision 0057: with `deal`, a deal is created from the lead. */
export const leadWinBody = z.strictObject({
  user_id: userId,
  deal: z.strictObject({ title: createSalesFields.shape.title, value: dealFields.value }).optional(),
});
export type WonLeadDeal = NonNullable<z.infer<typeof leadWinBody>['deal']>;

/** Decision 0056: gain reasons keep the order sent. */
export const dealWinBody = z.strictObject({ user_id: userId, gain_reason_ids: uuids.optional(), description });

/** Unknown parameters (only_new, lead_source_id among them) are a 400. */
export const listDealsQuery = z.strictObject({
  ...salesListQueryShape,
  deal_source_id: z.uuid('must be a UUID').optional(),
  value_min: numberParam.optional(),
  value_max: numberParam.optional(),
  expected_close_from: dateTimeParam.optional(),
  expected_close_to: dateTimeParam.optional(),
});
export type ListDealsQuery = z.infer<typeof listDealsQuery>;
