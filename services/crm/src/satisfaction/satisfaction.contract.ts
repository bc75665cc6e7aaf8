import { type EventContract, event, route } from '@svc/platform/http/contract';
import { z } from 'zod';
import { userSummary } from '../sales/sales.responses.js';
import { createLinkBody } from './satisfaction.schema.js';

/** The satisfaction link route's contract and the submission event's payload (decisions 0082, 0100). */
const uuid = z.string().meta({ format: 'uuid' });
const dateTime = z.string().meta({ format: 'date-time' });
const form = z.object({ title: z.string(), question: z.string(), max_score: z.number().int() }).meta({ id: 'SatisfactionForm' });
const summary = z.object({ id: uuid, title: z.string(), code: z.number().int() });

export const satisfactionLinkSchema = z
  .object({
    id: uuid,
    token: z.string().meta({ description: 'Shown only here; only its SHA-256 is stored.' }),
    url: z.string().meta({ format: 'uri', description: 'The public form: GET is an HTML page, POST records the answer.' }),
    expires_at: dateTime,
    crm_lead_id: uuid.nullable(),
    crm_deal_id: uuid.nullable(),
    crm_delivery_id: uuid.nullable(),
    form,
    created_at: dateTime,
  })
  .meta({ id: 'SatisfactionLink' });

export const createSatisfactionLink = route({
  method: 'post',
  path: '/satisfaction/links',
  operationId: 'createSatisfactionLink',
  summary: 'Generate a satisfaction form link',
  description:
    'A single-use, expiring public link to a satisfaction form about one lead, deal or delivery the key’s creator may see. Answered without a key at /public/satisfaction/{token}.',
  tags: ['Satisfaction'],
  permission: 'crm/satisfaction.write',
  body: createLinkBody,
  responses: { 201: { description: 'The link, with its token (shown once).', schema: satisfactionLinkSchema } },
});

export const satisfactionEvents: readonly EventContract[] = [
  event({
    key: 'satisfaction.public_submission_created',
    summary: 'A satisfaction form was answered through its public link',
    payload: z
      .object({
        submission: z.object({
          id: uuid,
          score: z.number().int(),
          max_score: z.number().int(),
          comment: z.string().nullable(),
          submitted_at: dateTime,
        }),
        link: z.object({ id: uuid, created_at: dateTime, expires_at: dateTime, created_by: userSummary.nullable() }),
        form,
        record_type: z.enum(['lead', 'deal', 'delivery']),
        crm_lead: summary.nullable(),
        crm_deal: summary.nullable(),
        crm_delivery: summary.extend({ status: z.number().int() }).nullable(),
      })
      .meta({ id: 'SatisfactionSubmissionCreatedPayload' }),
  }),
];
