import { z } from 'zod';
import { dateOnly, description, optionalUuid, reason, title, userId } from '../records/record.schema.js';

const value = z
  .number({ message: 'must be a number' })
  .nonnegative('must not be negative')
  .max(999_999_999_999.99, 'must be at most 999999999999.99');

const links = {
  responsible_id: optionalUuid,
  deal_id: optionalUuid,
  delivery_id: optionalUuid,
  organization_id: optionalUuid,
  person_id: optionalUuid,
};

/** POST /companies/{cid}/contracts. */
export const createContractBody = z.strictObject({
  user_id: userId,
  title,
  description,
  value: value.nullable().optional(),
  start_date: dateOnly,
  end_date: dateOnly.nullable().optional(),
  ...links,
});
export type CreateContractBody = z.infer<typeof createContractBody>;

/** PATCH /companies/{cid}/contracts/{id}: the fields sent change, `null` clears; status changes by the actions only. */
export const updateContractBody = z.strictObject({
  user_id: userId,
  title: title.optional(),
  description,
  value: value.nullable().optional(),
  start_date: dateOnly.optional(),
  end_date: dateOnly.nullable().optional(),
  ...links,
});
export type UpdateContractBody = z.infer<typeof updateContractBody>;

export const cancelContractBody = z.strictObject({ user_id: userId, reason });
/** A renewal moves the end of the period to `end_date` (after the current end), optionally at a new `value`. */
export const renewContractBody = z.strictObject({ user_id: userId, end_date: dateOnly, value: value.nullable().optional() });
export const completeContractBody = z.strictObject({ user_id: userId });
