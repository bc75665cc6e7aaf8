import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/**
 * Metadata here, bytes in the storage. Owned by one crm lead, deal or proposal, by id (no foreign keys across
 * services). Removal is logical; the purge deletes the bytes after the retention and keeps the row (decision 0136).
 */
export const StoredFile = defineEntity({
  name: 'StoredFile',
  tableName: 'files',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    crmLeadId: p.uuid().nullable(),
    crmDealId: p.uuid().nullable(),
    crmProposalId: p.uuid().nullable(),
    batchId: p.uuid(),
    /** Sanitized (file.name.ts): no path, no control characters, at most 255 bytes of UTF-8. */
    fileName: p.string().length(255),
    /** Sniffed from the bytes (file.sniff.ts), never the client's. */
    mimeType: p.string().length(255),
    fileSize: p.bigint('number'),
    storageKey: p.string().length(300),
    createdById: p.uuid(),
    createdAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
    deletedById: p.uuid().nullable(),
    /** The row stays for history (decision 0136). */
    purgedAt: p.datetime().nullable(),
  },
  indexes: [
    { name: 'files_company_lead_idx', properties: ['companyId', 'crmLeadId', 'createdAt', 'id'] },
    { name: 'files_company_deal_idx', properties: ['companyId', 'crmDealId', 'createdAt', 'id'] },
    { name: 'files_company_proposal_idx', properties: ['companyId', 'crmProposalId', 'createdAt', 'id'] },
    // The purge's queue, oldest removal first (decision 0136).
    {
      name: 'files_purge_idx',
      expression: (_columns, table, name) =>
        `create index "${name}" on ${table.qualifiedName} ("deleted_at") where "deleted_at" is not null and "purged_at" is null`,
    },
  ],
});
export type StoredFile = InferEntity<typeof StoredFile>;

/** The live files' count and bytes, adjusted by every upload and removal. */
export const FileBatch = defineEntity({
  name: 'FileBatch',
  tableName: 'file_batches',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    filesCount: p.integer(),
    totalSize: p.bigint('number'),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type FileBatch = InferEntity<typeof FileBatch>;
