import { skipParam } from '@svc/platform/http/parse';
import { z } from 'zod';

/** GET /chats/{id}/messages: take defaults to 20 and is capped at 100 rather than refused. */
export const listMessagesQuery = z.object({
  search: z.string().trim().max(200, 'must be at most 200 characters').optional(),
  skip: skipParam().optional(),
  take: z.coerce
    .number({ message: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .transform((n) => Math.min(n, 100))
    .optional(),
  order: z.enum(['asc', 'desc'], { message: 'must be asc or desc' }).optional(),
});
export type ListMessagesQuery = z.infer<typeof listMessagesQuery>;
