import { z } from 'zod';
import { salesListQueryShape } from '../sales/sales.list.js';
import { createSalesFields, organizationConflict, updateConflicts, updateSalesFields } from '../sales/sales.schema.js';

export const createLeadBody = createSalesFields.superRefine(organizationConflict);
export type CreateLeadBody = z.infer<typeof createLeadBody>;

export const updateLeadBody = updateSalesFields.superRefine(updateConflicts);
export type UpdateLeadBody = z.infer<typeof updateLeadBody>;

/** GET /leads query (decision 0045); unknown parameters are a 400. */
export const listLeadsQuery = z.strictObject({
  ...salesListQueryShape,
  lead_source_id: z.uuid('must be a UUID').optional(),
  only_new: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .transform((v) => v === 'true')
    .optional(),
});
export type ListLeadsQuery = z.infer<typeof listLeadsQuery>;
