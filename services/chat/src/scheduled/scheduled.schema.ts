import { skipParam, takeParam } from '@svc/platform/http/parse';
import { z } from 'zod';
import { templateField as sendTemplateField } from '../outbound/outbound.schema.js';

// A scheduled template may leave out a field's component.
const templateField = sendTemplateField.extend({ component: sendTemplateField.shape.component.optional() });

/** POST /chats/{id}/scheduled-messages. `scheduled_at` needs its zone (Z or an offset). */
export const scheduleBody = z
  .strictObject({
    scheduled_at: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with a zone' }),
    type: z.enum(['text', 'template'], { message: 'must be text or template' }).optional(),
    body: z.string().min(1, 'must not be empty').max(4096, 'must be at most 4096 characters').optional(),
    template: z.strictObject({ name: z.string().min(1).max(512), language: z.string().min(2).max(20) }).optional(),
    template_fields: z.array(templateField).max(100).optional(),
    reference_wamid: z.string().max(200, 'must be at most 200 characters').optional(),
    cancel_on_inbound: z.boolean().optional(),
  })
  .transform((b) => ({ ...b, type: b.type ?? (b.template ? 'template' : 'text') }));
export type ScheduleBody = z.infer<typeof scheduleBody>;

/** The multipart form of POST /chats/{id}/scheduled-messages, as documented: the fields as text, then the files. */
export const scheduleMultipart = z.object({
  scheduled_at: z.string(),
  type: z.string().optional(),
  body: z.string().optional(),
  template: z.string().optional().describe('JSON text of {name, language}'),
  template_fields: z.string().optional().describe('JSON text of the template fields'),
  reference_wamid: z.string().optional(),
  cancel_on_inbound: z.string().optional().describe('true or false'),
  // Any number of file parts, each named `file` (the server takes every file part, whatever its name).
  file: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('a file part (binary); repeat the part for several files'),
});

export const cancelBody = z.strictObject({
  reason: z.string().max(500, 'must be at most 500 characters').optional(),
});

/** GET /chats/{id}/scheduled-messages: paged as the other lists (`total` counts the whole query). */
export const listScheduledQuery = z.object({
  skip: skipParam().default(0),
  take: takeParam(100).default(20),
  status: z
    .enum(['PENDING', 'PROCESSING', 'SENT', 'CANCELED', 'FAILED'], { message: 'must be PENDING, PROCESSING, SENT, CANCELED or FAILED' })
    .optional(),
});
export type ListScheduledQuery = z.infer<typeof listScheduledQuery>;
