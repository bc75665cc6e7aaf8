import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import type { Db } from '../db.js';
import { RecordFileCount } from './file-count.entity.js';

const COUNTS = tableOf(RecordFileCount);

// Keeps the highest version: a repeated or late call changes nothing, so bumps no detail version.
const SET_COUNT = statement(
  'crm_set_record_file_count',
  `${COUNTS.insert()}
   on conflict (company_id, record_id) do update set files_count = excluded.files_count, version = excluded.version,
     updated_at = excluded.updated_at
   where ${COUNTS.name}.version < excluded.version
   returning 1`,
);

export async function setFileCount(db: Db, count: RecordFileCount): Promise<boolean> {
  return (await run(db, SET_COUNT, COUNTS.values(count))).length > 0;
}
