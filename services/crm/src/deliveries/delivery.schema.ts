import { z } from 'zod';
import { dateTime, description, optionalUuid, reason, title, userId } from '../records/record.schema.js';

const name = z
  .string({ message: 'must be 1 to 200 characters' })
  .trim()
  .min(1, 'must be 1 to 200 characters')
  .max(200, 'must be 1 to 200 characters');

/** POST /companies/{cid}/delivery-pipelines. */
export const createDeliveryPipelineBody = z.strictObject({
  name,
  is_default: z.boolean({ message: 'must be a boolean' }).optional(),
  stages: z.array(z.strictObject({ name })).min(1, 'a pipeline needs at least one stage').max(100, 'at most 100 stages'),
});

const links = {
  responsible_id: optionalUuid,
  deal_id: optionalUuid,
  organization_id: optionalUuid,
  person_id: optionalUuid,
  planned_start_date: dateTime.nullable().optional(),
  planned_end_date: dateTime.nullable().optional(),
};

/** POST /companies/{cid}/deliveries. */
export const createDeliveryBody = z.strictObject({
  user_id: userId,
  title,
  description,
  pipeline_id: z.uuid('must be a UUID').optional(),
  stage_id: z.uuid('must be a UUID').optional(),
  ...links,
});
export type CreateDeliveryBody = z.infer<typeof createDeliveryBody>;

/** PATCH /companies/{cid}/deliveries/{id}: the fields sent change, `null` clears; the stage moves only by `move`. */
export const updateDeliveryBody = z.strictObject({
  user_id: userId,
  title: title.optional(),
  description,
  ...links,
  status: z
    .union([z.literal(1), z.literal(2), z.literal(4)], {
      message: 'must be 1 (not started), 2 (in progress) or 4 (cancelled); a delivery is delivered by the complete action',
    })
    .optional(),
  started_at: dateTime.optional(),
  cancellation_reason: reason,
});
export type UpdateDeliveryBody = z.infer<typeof updateDeliveryBody>;

export const moveDeliveryBody = z.strictObject({ user_id: userId, stage_id: z.uuid('must be a UUID') });
export const completeDeliveryBody = z.strictObject({ user_id: userId, delivered_at: dateTime.optional() });
