import { type DefinedColumn, definedColumns, run, statement } from '@svc/platform/db/native';
import type { Pool, PoolClient } from 'pg';
import type { RecordRef } from '../links/crm-records.js';
import { FileBatch, StoredFile } from './file.entity.js';

/** Decision 0201. */

type Db = Pool | PoolClient;
type FileProperty = Exclude<keyof StoredFile, symbol>;

const FILE_COLUMNS = definedColumns(StoredFile) as (DefinedColumn & { property: FileProperty })[];
const BATCH_COLUMNS = definedColumns(FileBatch);
const fileColumn = (property: FileProperty) => FILE_COLUMNS.find((c) => c.property === property)?.column as string;

export type FileRead = Pick<
  StoredFile,
  | 'id'
  | 'companyId'
  | 'crmLeadId'
  | 'crmDealId'
  | 'crmProposalId'
  | 'batchId'
  | 'fileName'
  | 'mimeType'
  | 'fileSize'
  | 'storageKey'
  | 'createdById'
  | 'createdAt'
> & {
  batch: Pick<FileBatch, 'filesCount' | 'totalSize'>;
  /** ISO 8601 in UTC at full precision (list cursors carry it; a Date keeps milliseconds). */
  createdAtMicros: string;
};

const SHOWN: FileProperty[] = ['id', 'companyId', 'crmLeadId', 'crmDealId', 'crmProposalId', 'batchId', 'fileName', 'mimeType', 'fileSize'];
// Bigints as float8, so pg returns numbers.
const expr = (alias: string, c: DefinedColumn) => (c.pgType === 'int8' ? `${alias}.${c.column}::float8` : `${alias}.${c.column}`);
const selectAs = (alias: string, columns: DefinedColumn[], prefix = '') =>
  columns.map((c) => `${expr(alias, c)} as "${prefix}${c.property}"`).join(', ');

const READ_COLUMNS = `${selectAs(
  'f',
  FILE_COLUMNS.filter((c) => [...SHOWN, 'storageKey', 'createdById'].includes(c.property)),
)}, to_char(f.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "createdAtMicros",
  ${selectAs(
    'b',
    BATCH_COLUMNS.filter((c) => c.property === 'filesCount' || c.property === 'totalSize'),
    'batch.',
  )}`;
const FROM = 'from files f join file_batches b on b.company_id = f.company_id and b.id = f.batch_id';

function fileRead(r: Record<string, unknown>): FileRead {
  const { 'batch.filesCount': filesCount, 'batch.totalSize': totalSize, total: _total, ...file } = r;
  const createdAtMicros = r.createdAtMicros as string;
  return {
    ...(file as Omit<FileRead, 'batch' | 'createdAt'>),
    createdAt: new Date(createdAtMicros),
    batch: { filesCount: filesCount as number, totalSize: totalSize as number },
  };
}

const recordProperty = (kind: 'lead' | 'deal' | 'proposal'): FileProperty =>
  kind === 'lead' ? 'crmLeadId' : kind === 'deal' ? 'crmDealId' : 'crmProposalId';
const recordColumn = (kind: 'lead' | 'deal' | 'proposal') => fileColumn(recordProperty(kind));

/** The timestamps named take the transaction's time. */
function insertText(table: string, columns: DefinedColumn[], atNow: string[]): string {
  const bound = columns.filter((c) => !atNow.includes(c.property));
  const names = [...bound, ...columns.filter((c) => atNow.includes(c.property))].map((c) => c.column);
  const values = [...bound.map((c, i) => `$${i + 1}::${c.pgType}`), ...atNow.map(() => 'now()')];
  return `insert into ${table} (${names.join(', ')}) values (${values.join(', ')})`;
}

const lockRecord = statement('files_lock_record', `select pg_advisory_xact_lock(hashtextextended($1::text || '/' || $2::text, 7))`);

/** Serialises a record's file changes, so counts and versions reach crm in the order of the changes. */
export async function lockRecordFiles(client: PoolClient, companyId: string, recordId: string): Promise<void> {
  await run(client, lockRecord, [companyId, recordId]);
}

const BATCH_BOUND = BATCH_COLUMNS.filter((c) => c.property !== 'createdAt' && c.property !== 'updatedAt');
const insertBatch = statement('files_batch_insert', insertText('file_batches', BATCH_COLUMNS, ['createdAt', 'updatedAt']));
const addToBatchSt = statement(
  'files_batch_add',
  `update file_batches set files_count = files_count + 1, total_size = total_size + $3, updated_at = now()
    where company_id = $1 and id = $2`,
);

/** False when `batchId` names another company's or no batch. */
export async function addToBatch(client: PoolClient, companyId: string, batchId: string, size: number, isNew: boolean): Promise<boolean> {
  if (isNew) {
    const batch: Omit<FileBatch, 'createdAt' | 'updatedAt'> = { id: batchId, companyId, filesCount: 1, totalSize: size };
    await run(
      client,
      insertBatch,
      BATCH_BOUND.map((c) => batch[c.property as keyof typeof batch]),
    );
    return true;
  }
  const r = await client.query({ name: addToBatchSt.name, text: addToBatchSt.text, values: [companyId, batchId, size] });
  return r.rowCount === 1;
}

const batchExistsSt = statement('files_batch_exists', 'select 1 from file_batches where company_id = $1 and id = $2');

export async function batchExists(db: Db, companyId: string, batchId: string): Promise<boolean> {
  return (await run(db, batchExistsSt, [companyId, batchId])).length > 0;
}

export type NewFile = Omit<StoredFile, 'createdAt' | 'deletedAt' | 'deletedById' | 'purgedAt'>;
const FILE_BOUND = FILE_COLUMNS.filter((c) => !['createdAt', 'deletedAt', 'deletedById', 'purgedAt'].includes(c.property));
const insertFileSt = statement(
  'files_insert',
  insertText(
    'files',
    FILE_COLUMNS.filter((c) => !['deletedAt', 'deletedById', 'purgedAt'].includes(c.property)),
    ['createdAt'],
  ),
);

export function newFile(
  f: Omit<NewFile, 'crmLeadId' | 'crmDealId' | 'crmProposalId'>,
  owner: RecordRef | { kind: 'proposal'; id: string },
): NewFile {
  return { ...f, crmLeadId: null, crmDealId: null, crmProposalId: null, [recordProperty(owner.kind)]: owner.id };
}

export async function insertFile(client: PoolClient, f: NewFile): Promise<void> {
  await run(
    client,
    insertFileSt,
    FILE_BOUND.map((c) => f[c.property as keyof NewFile]),
  );
}

const countStatements = new Map(
  (['lead', 'deal'] as const).map((kind) => [
    kind,
    statement(
      `files_count_${recordColumn(kind)}`,
      `select (select count(*)::int from files where company_id = $1 and ${recordColumn(kind)} = $2 and deleted_at is null) as count,
        nextval('file_count_versions') as version`,
    ),
  ]),
);

/** The version is a sequence value: never reused. */
export async function countOf(client: PoolClient, companyId: string, ref: RecordRef): Promise<{ count: number; version: number }> {
  const [row] = await run<{ count: number; version: string }>(client, countStatements.get(ref.kind)!, [companyId, ref.id]);
  return { count: row!.count, version: Number(row!.version) };
}

const readWhere = 'where f.company_id = $1 and f.id = $2 and f.deleted_at is null';
const read = statement('files_read', `select ${READ_COLUMNS} ${FROM} ${readWhere}`);
const readForUpdate = statement('files_read_for_update', `select ${READ_COLUMNS} ${FROM} ${readWhere} for update of f`);

export async function readFile(db: Db, companyId: string, id: string, forUpdate = false): Promise<FileRead | null> {
  const [row] = await run(db, forUpdate ? readForUpdate : read, [companyId, id]);
  return row ? fileRead(row) : null;
}

const remove = statement('files_remove', 'update files set deleted_at = now(), deleted_by_id = $3 where company_id = $1 and id = $2');
const removeFromBatch = statement(
  'files_batch_remove',
  `update file_batches set files_count = files_count - 1, total_size = total_size - $3, updated_at = now()
    where company_id = $1 and id = $2`,
);

export async function removeFile(client: PoolClient, file: FileRead, userId: string): Promise<void> {
  await run(client, remove, [file.companyId, file.id, userId]);
  await run(client, removeFromBatch, [file.companyId, file.batchId, file.fileSize]);
}

export interface ListPage {
  companyId: string;
  kind: 'lead' | 'deal' | 'proposal';
  recordId: string;
  skip: number;
  take: number;
  /** Keyset position, newest first. */
  after?: { createdAt: string; id: string };
}

export async function listFiles(pool: Pool, page: ListPage): Promise<{ total: number; rows: FileRead[] }> {
  const column = recordColumn(page.kind);
  const where = `f.company_id = $1 and f.${column} = $2 and f.deleted_at is null`;
  const after = page.after ? ` and (f.created_at, f.id) < ($5::timestamptz, $6::uuid)` : '';
  const values: unknown[] = [page.companyId, page.recordId, page.take, page.after ? 0 : page.skip];
  if (page.after) values.push(page.after.createdAt, page.after.id);
  const rows = await run<Record<string, unknown> & { total: number }>(
    pool,
    statement(
      `files_list_${column}${page.after ? '_after' : ''}`,
      `select ${READ_COLUMNS}, (select count(*)::int from files f where ${where}) as total
        ${FROM} where ${where}${after} order by f.created_at desc, f.id desc limit $3 offset $4`,
    ),
    values,
  );
  if (rows.length > 0) return { total: rows[0]!.total, rows: rows.map(fileRead) };
  const [count] = await run<{ total: number }>(
    pool,
    statement(`files_total_${column}`, `select count(*)::int as total from files f where ${where}`),
    [page.companyId, page.recordId],
  );
  return { total: count!.total, rows: [] };
}

const DOWNLOAD: FileProperty[] = ['fileName', 'mimeType', 'fileSize', 'storageKey'];
const readDownload = statement(
  'files_read_download',
  `select ${selectAs(
    'f',
    FILE_COLUMNS.filter((c) => DOWNLOAD.includes(c.property)),
  )} from files f where f.id = $1 and f.deleted_at is null`,
);

/** Any company: signed downloads carry only the id. */
export async function readFileForDownload(
  pool: Pool,
  id: string,
): Promise<Pick<StoredFile, 'fileName' | 'mimeType' | 'fileSize' | 'storageKey'> | null> {
  const [row] = await run<Pick<StoredFile, 'fileName' | 'mimeType' | 'fileSize' | 'storageKey'>>(pool, readDownload, [id]);
  return row ?? null;
}

const claimPurge = statement(
  'files_purge_claim',
  `select ${selectAs(
    'f',
    FILE_COLUMNS.filter((c) => c.property === 'id' || c.property === 'storageKey'),
  )} from files f
    where f.deleted_at is not null and f.purged_at is null and f.deleted_at < now() - make_interval(days => $1::int)
    order by f.deleted_at limit $2 for update skip locked`,
);

/** Locked for the transaction; replicas skip the rows another holds. */
export async function claimPurgeBatch(
  client: PoolClient,
  retentionDays: number,
  limit: number,
): Promise<Pick<StoredFile, 'id' | 'storageKey'>[]> {
  return run(client, claimPurge, [retentionDays, limit]);
}

const markPurged = statement('files_purge_mark', 'update files set purged_at = now() where id = any($1::uuid[])');

export async function markFilesPurged(client: PoolClient, ids: string[]): Promise<void> {
  await run(client, markPurged, [ids]);
}
