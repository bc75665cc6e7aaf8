import type { Pool, PoolClient } from 'pg';
import type { RecordRef } from '../links/crm-records.js';

/** A file's row with its batch's totals, as the API shows them. */
export interface FileRow {
  id: string;
  company_id: string;
  crm_lead_id: string | null;
  crm_deal_id: string | null;
  crm_proposal_id: string | null;
  batch_id: string;
  file_name: string;
  mime_type: string;
  file_size: string;
  storage_key: string;
  created_by_id: string;
  /** The creation time to the microsecond, ISO 8601 in UTC (what list cursors carry). */
  created_at: string;
  batch_files_count: number;
  batch_total_size: string;
}

const FILE_COLUMNS = `f.id, f.company_id, f.crm_lead_id, f.crm_deal_id, f.crm_proposal_id, f.batch_id, f.file_name, f.mime_type,
  f.file_size, f.storage_key, f.created_by_id, to_char(f.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at, b.files_count as batch_files_count, b.total_size as batch_total_size`;

export interface NewFile {
  id: string;
  companyId: string;
  record: RecordRef | { kind: 'proposal'; id: string };
  batchId: string;
  fileName: string;
  mimeType: string;
  size: number;
  storageKey: string;
  createdById: string;
}

const recordColumn = (kind: 'lead' | 'deal' | 'proposal') =>
  kind === 'lead' ? 'crm_lead_id' : kind === 'deal' ? 'crm_deal_id' : 'crm_proposal_id';

/**
 * Serialises the changes of one record's files (uploads and removals) until the transaction ends, so the live count
 * read after a change and the version taken with it go to crm in the order of the changes.
 */
export async function lockRecordFiles(client: PoolClient, companyId: string, recordId: string): Promise<void> {
  await client.query({
    name: 'files_lock_record',
    text: `select pg_advisory_xact_lock(hashtextextended($1::text || '/' || $2::text, 7))`,
    values: [companyId, recordId],
  });
}

/** Adds a file to a batch of the company (or a new batch): false when `batchId` names another company's or no batch. */
export async function addToBatch(client: PoolClient, companyId: string, batchId: string, size: number, isNew: boolean): Promise<boolean> {
  if (isNew) {
    await client.query({
      name: 'files_batch_insert',
      text: `insert into file_batches (id, company_id, files_count, total_size, created_at, updated_at) values ($1, $2, 1, $3, now(), now())`,
      values: [batchId, companyId, size],
    });
    return true;
  }
  const r = await client.query({
    name: 'files_batch_add',
    text: `update file_batches set files_count = files_count + 1, total_size = total_size + $3, updated_at = now()
      where company_id = $1 and id = $2`,
    values: [companyId, batchId, size],
  });
  return r.rowCount === 1;
}

export async function batchExists(db: Pool | PoolClient, companyId: string, batchId: string): Promise<boolean> {
  const r = await db.query({
    name: 'files_batch_exists',
    text: 'select 1 from file_batches where company_id = $1 and id = $2',
    values: [companyId, batchId],
  });
  return (r.rowCount ?? 0) > 0;
}

export async function insertFile(client: PoolClient, f: NewFile): Promise<void> {
  const column = recordColumn(f.record.kind);
  await client.query({
    name: `files_insert_${column}`,
    text: `insert into files (id, company_id, ${column}, batch_id, file_name, mime_type, file_size, storage_key, created_by_id, created_at)
      values ($1, $2, $3, $4, $5, $6, $7, $8, $9, now())`,
    values: [f.id, f.companyId, f.record.id, f.batchId, f.fileName, f.mimeType, f.size, f.storageKey, f.createdById],
  });
}

/** The live files of a lead or deal, and a fresh version for the count (a sequence value: never reused). */
export async function countOf(client: PoolClient, companyId: string, ref: RecordRef): Promise<{ count: number; version: number }> {
  const column = recordColumn(ref.kind);
  const r = await client.query<{ count: number; version: string }>({
    name: `files_count_${column}`,
    text: `select (select count(*)::int from files where company_id = $1 and ${column} = $2 and deleted_at is null) as count,
      nextval('file_count_versions') as version`,
    values: [companyId, ref.id],
  });
  const row = r.rows[0]!;
  return { count: row.count, version: Number(row.version) };
}

export async function readFile(db: Pool | PoolClient, companyId: string, id: string, forUpdate = false): Promise<FileRow | null> {
  const r = await db.query<FileRow>({
    name: forUpdate ? 'files_read_for_update' : 'files_read',
    text: `select ${FILE_COLUMNS} from files f join file_batches b on b.company_id = f.company_id and b.id = f.batch_id
      where f.company_id = $1 and f.id = $2 and f.deleted_at is null${forUpdate ? ' for update of f' : ''}`,
    values: [companyId, id],
  });
  return r.rows[0] ?? null;
}

/** Marks a live file removed and takes it out of its batch's totals. */
export async function removeFile(client: PoolClient, file: FileRow, userId: string): Promise<void> {
  await client.query({
    name: 'files_remove',
    text: `update files set deleted_at = now(), deleted_by_id = $3 where company_id = $1 and id = $2`,
    values: [file.company_id, file.id, userId],
  });
  await client.query({
    name: 'files_batch_remove',
    text: `update file_batches set files_count = files_count - 1, total_size = total_size - $3, updated_at = now()
      where company_id = $1 and id = $2`,
    values: [file.company_id, file.batch_id, file.file_size],
  });
}

export interface ListPage {
  companyId: string;
  kind: 'lead' | 'deal' | 'proposal';
  recordId: string;
  skip: number;
  take: number;
  /** Keyset position: files after this (created_at, id) in the list's order (newest first). */
  after?: { createdAt: string; id: string };
}

export async function listFiles(pool: Pool, page: ListPage): Promise<{ total: number; rows: FileRow[] }> {
  const column = recordColumn(page.kind);
  const where = `f.company_id = $1 and f.${column} = $2 and f.deleted_at is null`;
  const after = page.after ? ` and (f.created_at, f.id) < ($5::timestamptz, $6::uuid)` : '';
  const values: unknown[] = [page.companyId, page.recordId, page.take, page.after ? 0 : page.skip];
  if (page.after) values.push(page.after.createdAt, page.after.id);
  const r = await pool.query<FileRow & { total: number }>({
    name: `files_list_${column}${page.after ? '_after' : ''}`,
    text: `select ${FILE_COLUMNS}, (select count(*)::int from files f where ${where}) as total
      from files f join file_batches b on b.company_id = f.company_id and b.id = f.batch_id
      where ${where}${after} order by f.created_at desc, f.id desc limit $3 offset $4`,
    values,
  });
  if (r.rows.length > 0) return { total: r.rows[0]!.total, rows: r.rows };
  const c = await pool.query<{ total: number }>({
    name: `files_total_${column}`,
    text: `select count(*)::int as total from files f where ${where}`,
    values: [page.companyId, page.recordId],
  });
  return { total: c.rows[0]!.total, rows: [] };
}

/** A live file by id in any company (signed downloads carry only the id). */
export async function readFileForDownload(
  pool: Pool,
  id: string,
): Promise<Pick<FileRow, 'file_name' | 'mime_type' | 'file_size' | 'storage_key'> | null> {
  const r = await pool.query({
    name: 'files_read_download',
    text: `select file_name, mime_type, file_size, storage_key from files where id = $1 and deleted_at is null`,
    values: [id],
  });
  return r.rows[0] ?? null;
}
