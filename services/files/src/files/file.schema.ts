import { skipParam, takeParam } from '@svc/platform/http/parse';
import { z } from 'zod';

const uuid = z.uuid({ message: 'must be a UUID' });

/** Sent before the file part. */
export const uploadFields = z
  .object({
    crm_lead_id: uuid.optional(),
    crm_deal_id: uuid.optional(),
    batch_id: uuid.optional(),
  })
  .refine((f) => (f.crm_lead_id ? 1 : 0) + (f.crm_deal_id ? 1 : 0) === 1, {
    message: 'send exactly one of crm_lead_id and crm_deal_id',
    path: ['crm_lead_id'],
  });
export type UploadFields = z.infer<typeof uploadFields>;

export const LIST_TAKE_DEFAULT = 20;
export const LIST_TAKE_MAX = 100;

export const listFilesQuery = z
  .object({
    crm_lead_id: uuid.optional(),
    crm_deal_id: uuid.optional(),
    skip: skipParam().default(0),
    take: takeParam(LIST_TAKE_MAX).default(LIST_TAKE_DEFAULT),
    cursor: z.string().max(200).optional(),
  })
  .refine((q) => (q.crm_lead_id ? 1 : 0) + (q.crm_deal_id ? 1 : 0) === 1, {
    message: 'send exactly one of crm_lead_id and crm_deal_id',
    path: ['crm_lead_id'],
  });
export type ListFilesQuery = z.infer<typeof listFilesQuery>;
