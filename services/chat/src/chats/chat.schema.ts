import { skipParam, takeParam } from '@svc/platform/http/parse';
import { z } from 'zod';

export const CHANNEL_TYPES = ['WHATSAPP', 'INSTAGRAM'] as const;
export const CHAT_STATUSES = ['OPEN', 'RESOLVED', 'SNOOZED'] as const;
export const CUSTOMER_REPLY_STATUSES = ['initial_replied', 'initial_not_replied', 'not_replied_last_messages'] as const;

const bool = z.enum(['true', 'false'], { message: 'must be true or false' }).transform((v) => v === 'true');
const uuid = z.uuid('must be a UUID');

/** GET /chats (spec, Chats): every parameter of the table; `take` is capped at 50 rather than refused. */
export const listChatsQuery = z.object({
  search: z.string().trim().max(200, 'must be at most 200 characters').optional(),
  skip: skipParam().optional(),
  take: takeParam(50).optional(),
  cursor: z.string().max(500).optional(),
  channel_type: z.enum(CHANNEL_TYPES, { message: 'must be WHATSAPP or INSTAGRAM' }).optional(),
  channel_account_id: uuid.optional(),
  phone_id: uuid.optional(),
  status: z.enum(CHAT_STATUSES, { message: `must be one of ${CHAT_STATUSES.join(', ')}` }).optional(),
  archived: z.enum(['include', 'only'], { message: 'must be include or only' }).optional(),
  priority: z.coerce
    .number({ message: 'must be 0 to 3' })
    .int('must be 0 to 3')
    .min(0, 'must be 0 to 3')
    .max(3, 'must be 0 to 3')
    .optional(),
  responsible_user_id: uuid.optional(),
  person_id: uuid.optional(),
  unread_only: bool.optional(),
  has_scheduled_messages: bool.optional(),
  has_pending_copilot_actions: bool.optional(),
  customer_reply_status: z.enum(CUSTOMER_REPLY_STATUSES, { message: `must be one of ${CUSTOMER_REPLY_STATUSES.join(', ')}` }).optional(),
  customer_reply_message_count: z.coerce
    .number({ message: 'must be an integer from 1 to 50' })
    .int('must be an integer from 1 to 50')
    .min(1, 'must be an integer from 1 to 50')
    .max(50, 'must be an integer from 1 to 50')
    .optional(),
});
export type ListChatsQuery = z.infer<typeof listChatsQuery>;
