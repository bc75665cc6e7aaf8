import { route } from '@svc/platform/http/contract';
import { z } from 'zod';
import { listFilesQuery } from './file.schema.js';

/** Decision 0100. */
const tags = ['Files'];
const at = z.string().meta({ description: 'ISO 8601 date-time (UTC)' });
const id = z.object({ id: z.string().meta({ description: 'The file’s UUID.' }) });

export const fileSchema = z
  .object({
    id: z.string(),
    file_name: z.string().meta({ description: 'Sanitized: no path, no control characters, at most 255 bytes.' }),
    mime_type: z.string().meta({ description: 'Sniffed from the bytes, never the client’s.' }),
    file_size: z.number().int(),
    crm_lead_id: z.string().nullable(),
    crm_deal_id: z.string().nullable(),
    crm_proposal_id: z.string().nullable(),
    batch: z.object({ id: z.string(), files_count: z.number().int(), total_size: z.number().int() }),
    url: z.string().meta({ description: 'A signed download URL, valid until url_expires_at (24 hours).' }),
    url_expires_at: at,
    created_by: z.object({ id: z.string() }),
    created_at: at,
  })
  .meta({ id: 'File' });

const fileUpload = z
  .object({
    crm_lead_id: z.string().optional().meta({ description: 'The lead (send it or crm_deal_id), before the file part.' }),
    crm_deal_id: z.string().optional().meta({ description: 'The deal (send it or crm_lead_id), before the file part.' }),
    batch_id: z.string().optional().meta({ description: 'A batch of the company to join; a new batch otherwise.' }),
    file: z
      .string()
      .meta({ description: 'The file, last part; its size limit is FILES_MAX_BYTES (100 MiB by default).', format: 'binary' }),
  })
  .meta({ id: 'FileUpload' });

export const uploadFile = route({
  method: 'post',
  path: '/files',
  operationId: 'uploadFile',
  summary: 'Upload a file of a lead or deal',
  description: 'Streamed to the storage; one byte over the limit ends it with 413. The fields come before the file part.',
  tags,
  permission: 'crm/files.write',
  streamedBody: { contentType: 'multipart/form-data', schema: fileUpload },
  responses: { 201: { description: 'The file.', schema: fileSchema } },
  errors: [404, 413],
});

export const listFiles = route({
  method: 'get',
  path: '/files',
  operationId: 'listFiles',
  summary: 'List the files of a lead or deal',
  description: 'Newest first, with skip/take or cursor paging.',
  tags,
  permission: 'crm/files.read',
  query: listFilesQuery,
  responses: {
    200: {
      description: 'A page of files.',
      schema: z
        .object({ total: z.number().int(), records: z.array(fileSchema), next_cursor: z.string().nullable() })
        .meta({ id: 'FilePage' }),
    },
  },
  errors: [404],
});

export const getFile = route({
  method: 'get',
  path: '/files/{id}',
  operationId: 'getFile',
  summary: 'Get a file',
  tags,
  permission: 'crm/files.read',
  params: id,
  responses: { 200: { description: 'The file, with a fresh signed URL.', schema: fileSchema } },
});

export const deleteFile = route({
  method: 'delete',
  path: '/files/{id}',
  operationId: 'deleteFile',
  summary: 'Remove a file (logical)',
  description: 'Adjusts the totals of its batch; a proposal’s file leaves the proposal’s attachments.',
  tags,
  permission: 'crm/files.write',
  params: id,
  responses: { 200: { description: 'Removed.', schema: z.object({ success: z.literal(true) }) } },
});

export const uploadProposalAttachment = route({
  method: 'post',
  path: '/proposals/{id}/attachments',
  operationId: 'uploadProposalAttachment',
  summary: 'Upload a file to a proposal',
  description: 'Served by the files service, which registers the file as an attachment of the proposal in crm.',
  tags: ['Proposals'],
  permission: 'crm/proposals.write',
  params: z.object({ id: z.string().meta({ description: 'The proposal’s UUID.' }) }),
  streamedBody: {
    contentType: 'multipart/form-data',
    schema: z
      .object({ file: z.string().meta({ format: 'binary', description: 'The file (FILES_MAX_BYTES at most).' }) })
      .meta({ id: 'ProposalFileUpload' }),
  },
  responses: {
    201: {
      description: 'The attachment, with a signed URL of the file.',
      schema: z
        .object({
          id: z.string(),
          kind: z.literal('file'),
          file_id: z.string(),
          document_id: z.null(),
          file_name: z.string(),
          mime_type: z.string(),
          file_size: z.number().int(),
          created_at: at,
          url: z.string(),
          url_expires_at: at,
        })
        .meta({ id: 'ProposalFileAttachment' }),
    },
  },
  errors: [413],
});
