import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** Kept so details show `associations_count.files` without a call to files (decision 0076). */
export const RecordFileCount = defineEntity({
  name: 'RecordFileCount',
  tableName: 'record_file_counts',
  properties: {
    companyId: p.uuid().primary(),
    /** UUIDs v7, unique across leads and deals. */
    recordId: p.uuid().primary(),
    kind: p.string().length(10),
    filesCount: p.integer(),
    /** A count of a lower version is never kept. */
    version: p.bigint('number'),
    updatedAt: p.datetime(),
  },
});
export type RecordFileCount = InferEntity<typeof RecordFileCount>;
