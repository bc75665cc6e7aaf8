import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/**
 * The live file count of a lead or deal, as the files service last reported it (decision 0076). The files service
 * owns the files; crm keeps this number so the lead and deal details show `associations_count.files` without a call
 * to another service, and a change bumps the lead detail's version through this table's triggers.
 */
export const RecordFileCount = defineEntity({
  name: 'RecordFileCount',
  tableName: 'record_file_counts',
  properties: {
    companyId: p.uuid().primary(),
    /** The lead's or deal's id (ids are UUIDs v7, unique across both). */
    recordId: p.uuid().primary(),
    /** 'lead' or 'deal'. */
    kind: p.string().length(10),
    filesCount: p.integer(),
    /** The files service's change counter for this record: a count of a lower version is never kept. */
    version: p.bigint('number'),
    updatedAt: p.datetime(),
  },
});
export type RecordFileCount = InferEntity<typeof RecordFileCount>;
