import { z } from 'zod';
import { createLeadFields, organizationConflict } from '../leads/lead.schema.js';

/** POST /deals: the body of POST /leads plus `value`, `expected_close_date` and `temperature` (spec). */
export const createDealBody = createLeadFields
  .extend({
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
  })
  .superRefine(organizationConflict);
export type CreateDealBody = z.infer<typeof createDealBody>;
