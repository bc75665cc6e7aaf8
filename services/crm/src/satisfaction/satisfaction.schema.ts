import { z } from 'zod';

const id = z.uuid('must be a UUID');

/** POST /integrations/external/satisfaction/links. */
export const createLinkBody = z
  .strictObject({
    crm_lead_id: id.optional(),
    crm_deal_id: id.optional(),
    crm_delivery_id: id.optional(),
    form: z
      .strictObject({
        title: z
          .string({ message: 'must be 1 to 150 characters' })
          .trim()
          .min(1, 'must be 1 to 150 characters')
          .max(150, 'must be 1 to 150 characters')
          .optional(),
        question: z
          .string({ message: 'must be 1 to 500 characters' })
          .trim()
          .min(1, 'must be 1 to 500 characters')
          .max(500, 'must be 1 to 500 characters')
          .optional(),
        max_score: z.union([z.literal(5), z.literal(10)], { message: 'must be 5 or 10' }).optional(),
      })
      .optional(),
    expires_in_hours: z
      .number({ message: 'must be an integer from 1 to 720' })
      .int('must be an integer from 1 to 720')
      .min(1, 'must be an integer from 1 to 720')
      .max(720, 'must be an integer from 1 to 720')
      .optional(),
  })
  .superRefine((body, ctx) => {
    const sent = [body.crm_lead_id, body.crm_deal_id, body.crm_delivery_id].filter((x) => x !== undefined).length;
    if (sent !== 1)
      ctx.addIssue({ code: 'custom', path: ['crm_lead_id'], message: 'send exactly one of crm_lead_id, crm_deal_id and crm_delivery_id' });
  });
export type CreateLinkBody = z.infer<typeof createLinkBody>;

/**
 * The public form's answer, as JSON or as the HTML form's urlencoded post (where every value is a string: `score`
 * is read as an integer, an empty comment is none). Its range is checked against the link's `max_score`.
 */
export const submissionBody = z.strictObject({
  score: z.coerce.number({ message: 'must be an integer' }).int('must be an integer'),
  comment: z
    .string({ message: 'must be a string' })
    .trim()
    .max(2000, 'must be at most 2000 characters')
    .transform((v) => v || null)
    .nullable()
    .optional(),
});
export type SubmissionBody = z.infer<typeof submissionBody>;
