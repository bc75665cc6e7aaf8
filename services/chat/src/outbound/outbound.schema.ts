import { z } from 'zod';

/** A template's variable as the send and create routes take it. */
export const templateField = z.strictObject({
  component: z.string().min(1).max(20),
  type: z.string().min(1).max(20).optional(),
  value: z.string().max(4096),
  index: z.number().int().min(0).max(100).optional(),
  button_index: z.number().int().min(0).max(10).optional(),
  card_index: z.number().int().min(0).max(10).optional(),
});

/** Types the send route takes; interactive and location have routes of their own (spec, rule 4). */
const OWN_ROUTE = ['interactive', 'location'];

/** POST /chats/{id}/messages as JSON, or the fields of a multipart body (template and template_fields as JSON text). */
export const sendMessageBody = z.strictObject({
  type: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      if (v === undefined || v === 'text' || v === 'template') return;
      ctx.addIssue({
        code: 'custom',
        message: OWN_ROUTE.includes(v) ? `${v} messages are sent through their own route` : 'must be text or template',
      });
    })
    .transform((v) => (v ?? 'text') as 'text' | 'template'),
  body: z.string().max(4096, 'must be at most 4096 characters').optional(),
  template: z.strictObject({ name: z.string().min(1).max(512), language: z.string().min(2).max(20) }).optional(),
  template_fields: z.array(templateField).max(100).optional(),
  reference_wamid: z.string().max(200, 'must be at most 200 characters').optional(),
});
export type SendMessageBody = z.infer<typeof sendMessageBody>;

/** The multipart form of POST /chats/{id}/messages, as documented: the fields as text, then the files. */
export const sendMultipart = z.object({
  type: z.string().optional(),
  body: z.string().optional(),
  template: z.string().optional().describe('JSON text of {name, language}'),
  template_fields: z.string().optional().describe('JSON text of the template fields'),
  reference_wamid: z.string().optional(),
  // Any number of file parts, each named `file` (the server takes every file part, whatever its name).
  file: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('a file part (binary); repeat the part for several files'),
});

export const FILE_LIMIT_BYTES = 100 * 1024 * 1024;
export const AUDIO_LIMIT_BYTES = 16 * 1024 * 1024;
