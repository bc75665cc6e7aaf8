import { z } from 'zod';

/** Response schemas of the proposal routes (decision 0100), written after the SQL that shapes the JSON. */
const uuid = z.string();
const at = z.string().meta({ description: 'ISO 8601 date-time (UTC)' });

/** The spec's "Proposal summary": what the lead and deal details list. */
export const proposalSummarySchema = z
  .object({
    id: uuid,
    code: z.number().int(),
    version: z.number().int(),
    title: z.string(),
    status: z.number().int().meta({ description: '1 draft, 2 sent, 3 approved, 4 rejected' }),
    is_primary: z.boolean(),
    discount_type: z.enum(['percentage', 'amount']).nullable(),
    discount_value: z.number().nullable(),
    subtotal: z.number(),
    total: z.number(),
    valid_until: at.nullable(),
    created_at: at,
    updated_at: at,
    approved_at: at.nullable(),
    archived_at: at.nullable(),
    rejected_at: at.nullable(),
    created_by: z.object({ id: uuid, name: z.string(), avatar: z.string().nullable() }).nullable(),
    approved_by: z.object({ id: uuid, name: z.string() }).nullable(),
  })
  .meta({ id: 'ProposalSummary' });

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
  .object({ total: z.number().int(), records: z.array(proposalSchema), next_cursor: z.null() })
  .meta({ id: 'ProposalPage' });
