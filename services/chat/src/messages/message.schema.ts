import { skipParam, takeParam } from '@svc/platform/http/parse';
import { z } from 'zod';

/** GET /chats/{id}/messages: take defaults to 20 and is capped at 100 rather than refused. */
export const listMessagesQuery = z.object({
  search: z.string().trim().max(200, 'must be at most 200 characters').optional(),
  skip: skipParam().optional(),
  take: takeParam(100).optional(),
  order: z.enum(['asc', 'desc'], { message: 'must be asc or desc' }).optional(),
});
export type ListMessagesQuery = z.infer<typeof listMessagesQuery>;
