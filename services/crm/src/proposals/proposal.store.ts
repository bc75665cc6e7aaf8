import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import type { Pool, PoolClient } from 'pg';
import { nextCodeSql } from '../companies/plan.js';
import { proposalSummaryJson } from '../sales/sales.proposals.js';
import { dealVisibleSql, leadVisibleSql } from '../sales/sales.visibility.js';
import { Proposal, ProposalAttachment, ProposalDocument, ProposalItem } from './proposal.entity.js';
import type { PricedItem } from './proposal.rules.js';

const PROPOSALS = tableOf(Proposal);
const ITEMS = tableOf(ProposalItem);
const DOCUMENTS = tableOf(ProposalDocument);
const ATTACHMENTS = tableOf(ProposalAttachment);

export type ProposalRecordKind = 'lead' | 'deal';
export interface ProposalRecord {
  kind: ProposalRecordKind;
  id: string;
}
type Db = Pool | PoolClient;

const recordProperty = (kind: ProposalRecordKind) => (kind === 'lead' ? 'leadId' : 'dealId');
const fk = (kind: ProposalRecordKind) => PROPOSALS.column(recordProperty(kind));

/**
 * SQL truth value: proposal row `alias` belongs to a lead or deal that user `userParam` may see (decision 0041's rule,
 * the same the lead and deal routes apply).
 */
export const proposalVisibleSql = (alias: string, userParam: string) => `(
  exists (select 1 from leads l where l.company_id = ${alias}.company_id and l.id = ${alias}.lead_id and ${leadVisibleSql('l', userParam)})
  or exists (select 1 from deals d where d.company_id = ${alias}.company_id and d.id = ${alias}.deal_id and ${dealVisibleSql('d', userParam)}))`;

/** A whole proposal as JSON: the summary, its record, notes, items and live attachments. */
const PROPOSAL_JSON = `${proposalSummaryJson('p')}::jsonb || jsonb_build_object('crm_lead_id', p.lead_id, 'crm_deal_id', p.deal_id,
  'notes', p.notes, 'rejected_by', (select json_build_object('id', u.id, 'name', u.name) from users u
    where u.company_id = p.company_id and u.id = p.rejected_by_id),
  'items', coalesce((select json_agg(json_build_object('id', i.id, 'name', i.name, 'description', i.description,
      'quantity', i.quantity, 'unit_price', i.unit_price, 'total', i.total) order by i.position)
    from proposal_items i where i.company_id = p.company_id and i.proposal_id = p.id), '[]'),
  'attachments', coalesce((select json_agg(json_build_object('id', a.id, 'kind', a.kind, 'file_id', a.file_id,
      'document_id', a.document_id, 'file_name', a.file_name, 'mime_type', a.mime_type, 'file_size', a.file_size,
      'created_at', a.created_at) order by a.created_at, a.id)
    from proposal_attachments a where a.company_id = p.company_id and a.proposal_id = p.id and a.deleted_at is null), '[]'))`;

export type ProposalJson = Record<string, unknown> & { id: string; crm_lead_id: string | null; crm_deal_id: string | null };

/** Serialises the changes of one record's proposals (which one is primary) until the transaction ends. */
export async function lockRecordProposals(client: PoolClient, companyId: string, recordId: string): Promise<void> {
  await client.query({
    name: 'crm_proposals_lock_record',
    text: `select pg_advisory_xact_lock(hashtextextended($1::text || '/' || $2::text, 11))`,
    values: [companyId, recordId],
  });
}

export async function recordVisible(db: Db, companyId: string, userId: string, ref: ProposalRecord): Promise<boolean> {
  const table = ref.kind === 'lead' ? 'leads' : 'deals';
  const visible = ref.kind === 'lead' ? leadVisibleSql('r', '$3') : dealVisibleSql('r', '$3');
  const r = await db.query({
    name: `crm_proposal_${ref.kind}_visible`,
    text: `select 1 from ${table} r where r.company_id = $1 and r.id = $2 and ${visible}`,
    values: [companyId, ref.id, userId],
  });
  return (r.rowCount ?? 0) > 0;
}

/** The proposal as the user may see it (its lead or deal visible to them), or null. */
export async function readProposal(db: Db, companyId: string, userId: string, id: string): Promise<ProposalJson | null> {
  const r = await db.query<{ p: ProposalJson }>({
    name: 'crm_proposal_read',
    text: `select ${PROPOSAL_JSON} as p from proposals p
      where p.company_id = $1 and p.id = $2 and p.deleted_at is null and ${proposalVisibleSql('p', '$3')}`,
    values: [companyId, id, userId],
  });
  return r.rows[0]?.p ?? null;
}

const STATE = ['id', 'leadId', 'dealId', 'status', 'isPrimary', 'discountType', 'discountValue', 'archivedAt'] as const;
/** The columns an update starts from. */
export type ProposalState = Pick<Proposal, (typeof STATE)[number]>;
const LOCK = statement(
  'crm_proposal_lock',
  `select ${PROPOSALS.select('p', STATE)} from proposals p where p.company_id = $1 and p.id = $2 and p.deleted_at is null for update`,
);

/** The proposal's state, locked until the transaction ends. */
export async function lockProposal(client: PoolClient, companyId: string, id: string): Promise<ProposalState | null> {
  const [row] = await run(client, LOCK, [companyId, id]);
  return row ? PROPOSALS.hydrate<ProposalState>(row) : null;
}

const ITEMS_OF = statement(
  'crm_proposal_items_of',
  `select ${ITEMS.select('i', ['name', 'description', 'quantity', 'unitPrice'])} from proposal_items i
    where i.company_id = $1 and i.proposal_id = $2 order by i.position`,
);

/** The proposal's items as the API's item input (`unit_price`), so they can be priced again. */
export async function itemsOf(
  client: PoolClient,
  companyId: string,
  id: string,
): Promise<{ name: string; description: string | null; quantity: number; unit_price: number }[]> {
  const rows = await run<Pick<ProposalItem, 'name' | 'description' | 'quantity' | 'unitPrice'>>(client, ITEMS_OF, [companyId, id]);
  return rows.map((i) => ({ name: i.name, description: i.description ?? null, quantity: i.quantity, unit_price: i.unitPrice }));
}

export async function hasPrimary(client: PoolClient, companyId: string, ref: ProposalRecord): Promise<boolean> {
  const r = await client.query({
    name: `crm_proposal_has_primary_${ref.kind}`,
    text: `select 1 from proposals where company_id = $1 and ${fk(ref.kind)} = $2 and is_primary and deleted_at is null`,
    values: [companyId, ref.id],
  });
  return (r.rowCount ?? 0) > 0;
}

export async function unsetPrimary(client: PoolClient, companyId: string, ref: ProposalRecord): Promise<void> {
  await client.query({
    name: `crm_proposal_unset_primary_${ref.kind}`,
    text: `update proposals set is_primary = false, updated_at = now()
      where company_id = $1 and ${fk(ref.kind)} = $2 and is_primary and deleted_at is null`,
    values: [companyId, ref.id],
  });
}

export interface NewProposal {
  id: string;
  companyId: string;
  record: ProposalRecord;
  title: string;
  isPrimary: boolean;
  discountType: string | null;
  discountValue: number | null;
  subtotal: number;
  total: number;
  validUntil: string | null;
  notes: string | null;
  createdById: string;
}

/** A new proposal: its code is the company's next, version 1, status 1 (draft). */
const insertProposalSql = (kind: ProposalRecordKind) => `with code as (${nextCodeSql('$2::uuid', 'proposal')})
  insert into proposals (${PROPOSALS.columnList([
    'id',
    'companyId',
    'code',
    recordProperty(kind),
    'title',
    'version',
    'status',
    'isPrimary',
    'discountType',
    'discountValue',
    'subtotal',
    'total',
    'validUntil',
    'notes',
    'createdById',
    'createdAt',
    'updatedAt',
  ])})
  select $1, $2, code.value, $3, $4, 1, 1, $5, $6, $7, $8, $9, $10, $11, $12, now(), now() from code`;
const INSERT_PROPOSAL = { lead: insertProposalSql('lead'), deal: insertProposalSql('deal') };

export async function insertProposal(client: PoolClient, p: NewProposal): Promise<void> {
  await client.query({
    name: `crm_proposal_insert_${p.record.kind}`,
    text: INSERT_PROPOSAL[p.record.kind],
    values: [
      p.id,
      p.companyId,
      p.record.id,
      p.title,
      p.isPrimary,
      p.discountType,
      p.discountValue,
      p.subtotal,
      p.total,
      p.validUntil,
      p.notes,
      p.createdById,
    ],
  });
}

export async function replaceItems(
  client: PoolClient,
  companyId: string,
  proposalId: string,
  items: PricedItem[],
  ids: string[],
): Promise<void> {
  await client.query({
    name: 'crm_proposal_items_delete',
    text: 'delete from proposal_items where company_id = $1 and proposal_id = $2',
    values: [companyId, proposalId],
  });
  if (items.length === 0) return;
  await client.query({
    name: 'crm_proposal_items_insert',
    text: `insert into proposal_items (${ITEMS.columnList(['id', 'companyId', 'proposalId', 'position', 'name', 'description', 'quantity', 'unitPrice', 'total'])})
      select id, $1, $2, position, name, description, quantity, unit_price, total
      from unnest($3::uuid[], $4::int[], $5::text[], $6::text[], $7::numeric[], $8::numeric[], $9::numeric[])
        as i(id, position, name, description, quantity, unit_price, total)`,
    values: [
      companyId,
      proposalId,
      ids,
      items.map((_, i) => i + 1),
      items.map((i) => i.name),
      items.map((i) => i.description ?? null),
      items.map((i) => i.quantity),
      items.map((i) => i.unit_price),
      items.map((i) => i.total),
    ],
  });
}

/** The properties an update sets (`version` and `updatedAt` always); a stamp is set to the transaction's time. */
export type ProposalChanges = Partial<{
  title: string;
  isPrimary: boolean;
  discountType: string | null;
  discountValue: number | null;
  subtotal: number;
  total: number;
  validUntil: string | null;
  notes: string | null;
  status: number;
  approvedAt: 'now' | null;
  approvedById: string | null;
  rejectedAt: 'now' | null;
  rejectedById: string | null;
  archivedAt: 'now' | null;
}>;

export async function updateProposal(client: PoolClient, companyId: string, id: string, changes: ProposalChanges): Promise<void> {
  const sets: string[] = ['version = version + 1', 'updated_at = now()'];
  const values: unknown[] = [companyId, id];
  for (const [property, value] of Object.entries(changes)) {
    const column = PROPOSALS.column(property as keyof ProposalChanges);
    if (value === 'now') sets.push(`${column} = now()`);
    else {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    }
  }
  await client.query(`update proposals set ${sets.join(', ')} where company_id = $1 and id = $2`, values);
}

export async function deleteProposal(client: PoolClient, companyId: string, id: string): Promise<void> {
  await client.query({
    name: 'crm_proposal_delete',
    text: `update proposals set deleted_at = now(), is_primary = false, updated_at = now() where company_id = $1 and id = $2`,
    values: [companyId, id],
  });
}

/**
 * A page of the proposals the user may see, newest first, of the company or of one lead and/or deal; `after` is
 * the cursor's `(created_at, id)`. One more than `take` is read to tell whether a next page exists.
 */
export async function listProposals(
  pool: Pool,
  q: {
    companyId: string;
    userId: string;
    leadId: string | null;
    dealId: string | null;
    includeArchived: boolean;
    skip: number;
    take: number;
    after: { at: string; id: string } | null;
  },
): Promise<{ total: number; records: ProposalJson[]; last: { at: string; id: string } | null; more: boolean }> {
  const where = `p.company_id = $1 and p.deleted_at is null${q.includeArchived ? '' : ' and p.archived_at is null'}
    and ($2::uuid is null or p.lead_id = $2) and ($3::uuid is null or p.deal_id = $3) and ${proposalVisibleSql('p', '$4')}`;
  const r = await pool.query<{ total: number; records: { p: ProposalJson; at: string; id: string }[] }>({
    name: `crm_proposals_list_${q.includeArchived}`,
    text: `select (select count(*)::int from proposals p where ${where}) as total,
      coalesce((select json_agg(json_build_object('p', x.p, 'at', x.at, 'id', x.id) order by x.created_at desc, x.id desc) from (
        select ${PROPOSAL_JSON} as p, to_char(p.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, p.created_at, p.id
        from proposals p where ${where}
          and ($7::timestamptz is null or (p.created_at, p.id) < ($7::timestamptz, $8::uuid))
        order by p.created_at desc, p.id desc limit $5::int + 1 offset $6) x), '[]') as records`,
    values: [q.companyId, q.leadId, q.dealId, q.userId, q.take, q.skip, q.after?.at ?? null, q.after?.id ?? null],
  });
  const { total, records } = r.rows[0]!;
  const page = records.slice(0, q.take);
  const last = page.at(-1);
  return { total, records: page.map((x) => x.p), last: last ? { at: last.at, id: last.id } : null, more: records.length > q.take };
}

export interface NewAttachment {
  id: string;
  companyId: string;
  proposalId: string;
  kind: 'file' | 'document';
  fileId: string | null;
  documentId: string | null;
  fileName: string;
  mimeType: string;
  fileSize: number;
  createdById: string;
}

const NEW_ATTACHMENT = [
  'id',
  'companyId',
  'proposalId',
  'kind',
  'fileId',
  'documentId',
  'fileName',
  'mimeType',
  'fileSize',
  'createdById',
  'createdAt',
] as const;

export async function insertAttachment(db: Db, a: NewAttachment): Promise<Date | string> {
  const r = await db.query<{ created_at: Date | string }>({
    name: 'crm_proposal_attachment_insert',
    text: `insert into proposal_attachments (${ATTACHMENTS.columnList(NEW_ATTACHMENT)})
      values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now()) returning ${ATTACHMENTS.column('createdAt')}`,
    values: [a.id, a.companyId, a.proposalId, a.kind, a.fileId, a.documentId, a.fileName, a.mimeType, a.fileSize, a.createdById],
  });
  return r.rows[0]!.created_at;
}

/** Whether `fileId` is a live attachment of the proposal. */
export async function fileAttached(db: Db, companyId: string, proposalId: string, fileId: string): Promise<boolean> {
  const r = await db.query({
    name: 'crm_proposal_file_attached',
    text: `select 1 from proposal_attachments where company_id = $1 and proposal_id = $2 and file_id = $3 and deleted_at is null`,
    values: [companyId, proposalId, fileId],
  });
  return (r.rowCount ?? 0) > 0;
}

/** Removes the live attachment of a file; whether there was one. */
export async function removeFileAttachment(db: Db, companyId: string, proposalId: string, fileId: string): Promise<boolean> {
  const r = await db.query({
    name: 'crm_proposal_file_detach',
    text: `update proposal_attachments set deleted_at = now() where company_id = $1 and proposal_id = $2 and file_id = $3 and deleted_at is null`,
    values: [companyId, proposalId, fileId],
  });
  return (r.rowCount ?? 0) > 0;
}

/** Removes a live attachment of the proposal; its file id (a file attachment), or undefined when there was none. */
export async function removeAttachment(
  db: Db,
  companyId: string,
  proposalId: string,
  id: string,
): Promise<{ file_id: string | null } | undefined> {
  const r = await db.query<{ file_id: string | null }>({
    name: 'crm_proposal_attachment_remove',
    text: `update proposal_attachments set deleted_at = now() where company_id = $1 and proposal_id = $2 and id = $3 and deleted_at is null
      returning file_id`,
    values: [companyId, proposalId, id],
  });
  return r.rows[0];
}

const READ_DOCUMENT = statement(
  'crm_proposal_document_read',
  `select ${DOCUMENTS.select('d')} from proposal_documents d where d.company_id = $1 and d.id = $2`,
);
const INSERT_DOCUMENT = statement('crm_proposal_document_insert', DOCUMENTS.insert());

export async function readDocument(db: Db, companyId: string, id: string): Promise<ProposalDocument | null> {
  const [row] = await run(db, READ_DOCUMENT, [companyId, id]);
  return row ? DOCUMENTS.hydrate(row) : null;
}

export async function insertDocument(db: Db, document: ProposalDocument): Promise<void> {
  await run(db, INSERT_DOCUMENT, DOCUMENTS.values(document));
}
