import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import type { Db } from '../db.js';
import { RecordFileCount } from './file-count.entity.js';

const COUNTS = tableOf(RecordFileCount);

// An upsert that keeps the count of the highest version: a repeated or late call changes nothing (so it bumps no
// lead detail version either).
const SET_COUNT = statement(
  'crm_set_record_file_count',
  `${COUNTS.insert()}
   on conflict (company_id, record_id) do update set files_count = excluded.files_count, version = excluded.version,
     updated_at = excluded.updated_at
   where ${COUNTS.name}.version < excluded.version
   returning 1`,
);

/** Stores a record's file count unless a count of a higher version is stored; whether it was stored. */
export async function setFileCount(db: Db, count: RecordFileCount): Promise<boolean> {
  return (await run(db, SET_COUNT, COUNTS.values(count))).length > 0;
}
