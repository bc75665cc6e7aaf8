import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** Totals are computed by crm on every write, never taken from the client; removal is logical. */
export const Proposal = defineEntity({
  name: 'Proposal',
  tableName: 'proposals',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    code: p.integer(),
    leadId: p.uuid().nullable(),
    dealId: p.uuid().nullable(),
    title: p.string().length(150),
    /** 1 on creation, +1 on every update. */
    version: p.integer(),
    /** 1 draft, 2 sent, 3 approved, 4 rejected (README, Codes). */
    status: p.smallint(),
    isPrimary: p.boolean(),
    discountType: p.string().length(20).nullable(),
    discountValue: p.decimal('number').precision(14).scale(2).nullable(),
    subtotal: p.decimal('number').precision(16).scale(2),
    total: p.decimal('number').precision(16).scale(2),
    validUntil: p.datetime().nullable(),
    notes: p.text().nullable(),
    createdById: p.uuid(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    approvedAt: p.datetime().nullable(),
    approvedById: p.uuid().nullable(),
    rejectedAt: p.datetime().nullable(),
    rejectedById: p.uuid().nullable(),
    archivedAt: p.datetime().nullable(),
    deletedAt: p.datetime().nullable(),
  },
  uniques: [{ name: 'proposals_company_code_unique', properties: ['companyId', 'code'] }],
  indexes: [
    { name: 'proposals_company_lead_idx', properties: ['companyId', 'leadId', 'createdAt'] },
    { name: 'proposals_company_deal_idx', properties: ['companyId', 'dealId', 'createdAt'] },
  ],
});
export type Proposal = InferEntity<typeof Proposal>;

/** A line of a proposal, in `position` order; its line total is quantity × unit price. */
export const ProposalItem = defineEntity({
  name: 'ProposalItem',
  tableName: 'proposal_items',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    proposalId: p.uuid(),
    position: p.integer(),
    name: p.string().length(200),
    description: p.text().nullable(),
    quantity: p.decimal('number').precision(14).scale(4),
    unitPrice: p.decimal('number').precision(14).scale(2),
    total: p.decimal('number').precision(16).scale(2),
  },
  indexes: [{ name: 'proposal_items_proposal_idx', properties: ['companyId', 'proposalId', 'position'] }],
});
export type ProposalItem = InferEntity<typeof ProposalItem>;

/** A document of the company's library, attachable to any of its proposals (created through the admin API). */
export const ProposalDocument = defineEntity({
  name: 'ProposalDocument',
  tableName: 'proposal_documents',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    name: p.string().length(200),
    fileName: p.string().length(255),
    mimeType: p.string().length(255),
    fileSize: p.bigint('number'),
    /** Where the document is served from (the library's own storage; crm does not hold its bytes). */
    url: p.string().length(2000),
    createdAt: p.datetime(),
  },
});
export type ProposalDocument = InferEntity<typeof ProposalDocument>;

/**
 * An attachment of a proposal: a file uploaded to it (held by the files service, `fileId`) or a library document
 * (`documentId`), with the name, type and size shown in the proposal.
 */
export const ProposalAttachment = defineEntity({
  name: 'ProposalAttachment',
  tableName: 'proposal_attachments',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    proposalId: p.uuid(),
    kind: p.string().length(10),
    fileId: p.uuid().nullable(),
    documentId: p.uuid().nullable(),
    fileName: p.string().length(255),
    mimeType: p.string().length(255),
    fileSize: p.bigint('number'),
    createdById: p.uuid(),
    createdAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
  indexes: [{ name: 'proposal_attachments_proposal_idx', properties: ['companyId', 'proposalId', 'createdAt'] }],
});
export type ProposalAttachment = InferEntity<typeof ProposalAttachment>;
