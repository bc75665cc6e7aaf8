import { z } from 'zod';
import { proposalSummarySchema } from '../sales/sales.responses.js';

/** Response schemas of the proposal routes (decision 0100), written after the SQL that shapes the JSON. */
const uuid = z.string();
const at = z.string().meta({ description: 'ISO 8601 date-time (UTC)' });

export const proposalAttachmentSchema = z
  .object({
    id: uuid,
    kind: z.enum(['file', 'document']),
    file_id: uuid.nullable(),
    document_id: uuid.nullable(),
    file_name: z.string(),
    mime_type: z.string(),
    file_size: z.number().int(),
    created_at: at,
  })
  .meta({ id: 'ProposalAttachment' });

export const proposalSchema = z
  .object({
    ...proposalSummarySchema.shape,
    crm_lead_id: uuid.nullable(),
    crm_deal_id: uuid.nullable(),
    notes: z.string().nullable(),
    rejected_by: z.object({ id: uuid, name: z.string() }).nullable(),
    items: z.array(
      z.object({
        id: uuid,
        name: z.string(),
        description: z.string().nullable(),
        quantity: z.number(),
        unit_price: z.number(),
        total: z.number(),
      }),
    ),
    attachments: z.array(proposalAttachmentSchema),
  })
  .meta({ id: 'Proposal' });

export const proposalPageSchema = z
  .object({ total: z.number().int(), records: z.array(proposalSchema), next_cursor: z.string().nullable() })
  .meta({ id: 'ProposalPage' });
