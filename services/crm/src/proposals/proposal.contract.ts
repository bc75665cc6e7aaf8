import { route } from '@svc/platform/http/contract';
import { z } from 'zod';
import { proposalAttachmentSchema, proposalPageSchema, proposalSchema } from './proposal.responses.js';
import { attachDocumentBody, createProposalBody, listProposalsQuery, updateProposalBody } from './proposal.schema.js';

/** The external proposal routes' contracts (decision 0100): what proposal.http.ts serves and the OpenAPI document shows. */
const tags = ['Proposals'];
const read = 'crm/proposals.read';
const write = 'crm/proposals.write';
const id = z.object({ id: z.string().meta({ description: 'The proposal’s UUID.' }) });

export const listProposals = route({
  method: 'get',
  path: '/proposals',
  operationId: 'listProposals',
  summary: 'List proposals',
  description:
    'The company’s proposals the key creator may see (those of visible leads and deals), newest first; `crm_lead_id` and `crm_deal_id` narrow it to one record. Archived ones only with include_archived=true. `skip`/`take` or `cursor` paging; a `take` above 100 is capped.',
  tags,
  permission: read,
  query: listProposalsQuery,
  responses: { 200: { description: 'A page of proposals.', schema: proposalPageSchema } },
});

export const createProposal = route({
  method: 'post',
  path: '/proposals',
  operationId: 'createProposal',
  summary: 'Create a proposal',
  description: 'subtotal and total are computed from the items and the discount; the first proposal of a record is its primary.',
  tags,
  permission: write,
  body: createProposalBody,
  responses: { 201: { description: 'The proposal.', schema: proposalSchema } },
});

export const getProposal = route({
  method: 'get',
  path: '/proposals/{id}',
  operationId: 'getProposal',
  summary: 'Get a proposal',
  tags,
  permission: read,
  params: id,
  responses: { 200: { description: 'The proposal with its items and attachments.', schema: proposalSchema } },
});

export const updateProposal = route({
  method: 'put',
  path: '/proposals/{id}',
  operationId: 'updateProposal',
  summary: 'Update a proposal',
  description: 'Fields sent change; items replace all items. status 3 approves, 4 rejects; archived archives. version grows by one.',
  tags,
  permission: write,
  params: id,
  body: updateProposalBody,
  responses: { 200: { description: 'The proposal.', schema: proposalSchema } },
});

export const deleteProposal = route({
  method: 'delete',
  path: '/proposals/{id}',
  operationId: 'deleteProposal',
  summary: 'Delete a proposal (logical)',
  tags,
  permission: write,
  params: id,
  responses: { 200: { description: 'The id of the deleted proposal.', schema: z.object({ id: z.string() }) } },
});

export const listProposalAttachments = route({
  method: 'get',
  path: '/proposals/{id}/attachments',
  operationId: 'listProposalAttachments',
  summary: 'List the attachments of a proposal',
  tags,
  permission: read,
  params: id,
  responses: {
    200: { description: 'Files and library documents attached.', schema: z.object({ records: z.array(proposalAttachmentSchema) }) },
  },
});

export const attachProposalDocument = route({
  method: 'post',
  path: '/proposals/{id}/documents',
  operationId: 'attachProposalDocument',
  summary: 'Attach a document of the company library',
  tags,
  permission: write,
  params: id,
  body: attachDocumentBody,
  responses: { 201: { description: 'The proposal.', schema: proposalSchema } },
});

export const removeProposalAttachment = route({
  method: 'delete',
  path: '/proposals/{id}/attachments/{attachmentId}',
  operationId: 'removeProposalAttachment',
  summary: 'Remove an attachment of a proposal',
  description: 'A file attachment’s file is no longer served for the proposal.',
  tags,
  permission: write,
  params: z.object({ id: z.string(), attachmentId: z.string() }),
  responses: { 200: { description: 'The proposal.', schema: proposalSchema } },
});
