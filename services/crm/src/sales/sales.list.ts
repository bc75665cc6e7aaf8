import { skipParam, takeParam } from '@svc/platform/http/parse';
import { z } from 'zod';

const uuid = z.uuid('must be a UUID');
export const dateTimeParam = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).or(z.iso.date());
export const numberParam = z
  .string()
  .regex(/^-?\d{1,15}(\.\d{1,6})?$/, 'must be a decimal number')
  .transform(Number);

/** strictObject: unknown parameters are a 400. */
export const salesListQueryShape = {
  stage_id: uuid.optional(),
  tag_id: uuid.optional(),
  person_id: uuid.optional(),
  pipeline_id: uuid.optional(),
  responsible_id: uuid.optional(),
  status: z.enum(['1', '2', '3'], { message: 'must be 1, 2 or 3' }).transform(Number).optional(),
  created_from: dateTimeParam.optional(),
  created_to: dateTimeParam.optional(),
  updated_from: dateTimeParam.optional(),
  updated_to: dateTimeParam.optional(),
  search: z.string().trim().min(1, 'must not be empty').max(200).optional(),
  skip: skipParam().optional(),
  take: takeParam(100).optional(),
  cursor: z.string().max(200).optional(),
};
const salesListQuery = z.object(salesListQueryShape);
export type SalesListQuery = z.infer<typeof salesListQuery>;
