import { inTransaction } from '@svc/platform/db/native';
import { invalidField, isUuid, notFound, requireUuid } from '@svc/platform/errors';
import { decodeCursor, encodeCursor } from '@svc/platform/http/cursor';
import { v7 as uuidv7 } from 'uuid';
import { requireCompany } from '../companies/company.service.js';
import type { PoolOf } from '../db.js';
import { proposalDates } from '../sales/sales.proposals.js';
import { price } from './proposal.rules.js';
import { type CreateProposalBody, type ListProposalsQuery, ProposalStatus, type UpdateProposalBody } from './proposal.schema.js';
import {
  deleteProposal,
  fileAttached,
  hasPrimary,
  insertAttachment,
  insertDocument,
  insertProposal,
  itemsOf,
  listProposals,
  lockProposal,
  lockRecordProposals,
  type ProposalChanges,
  type ProposalJson,
  type ProposalRecord,
  readDocument,
  readProposal,
  recordVisible,
  removeAttachment,
  removeFileAttachment,
  replaceItems,
  unsetPrimary,
  updateProposal,
} from './proposal.store.js';

/** The acting user of an integration key: the key's creator, in the key's company. */
export interface ProposalActor {
  companyId: string;
  userId: string;
}

const recordOf = (p: {
  crm_lead_id?: string | null;
  crm_deal_id?: string | null;
  lead_id?: string | null;
  deal_id?: string | null;
}): ProposalRecord => {
  const lead = p.crm_lead_id ?? p.lead_id;
  return lead ? { kind: 'lead', id: lead } : { kind: 'deal', id: (p.crm_deal_id ?? p.deal_id) as string };
};

/** A proposal is visible when its lead or deal is (decision 0041); no proposal.* events exist (spec). */
export class Proposals {
  constructor(private readonly pool: PoolOf) {}

  private async requireRecord(actor: ProposalActor, ref: ProposalRecord): Promise<void> {
    if (!(await recordVisible(await this.pool(), actor.companyId, actor.userId, ref)))
      throw notFound(ref.kind === 'lead' ? 'Lead' : 'Deal');
  }

  async get(actor: ProposalActor, id: string): Promise<ProposalJson> {
    const p = await readProposal(await this.pool(), actor.companyId, actor.userId, requireUuid(id, 'Proposal'));
    if (!p) throw notFound('Proposal');
    return proposalDates(p);
  }

  async list(actor: ProposalActor, q: ListProposalsQuery): Promise<{ total: number; records: ProposalJson[]; next_cursor: string | null }> {
    // A record named must be one the key creator may see (404 otherwise); without one, the company's visible proposals.
    if (q.crm_lead_id) await this.requireRecord(actor, { kind: 'lead', id: q.crm_lead_id });
    if (q.crm_deal_id) await this.requireRecord(actor, { kind: 'deal', id: q.crm_deal_id });
    const page = await listProposals(await this.pool(), {
      companyId: actor.companyId,
      userId: actor.userId,
      leadId: q.crm_lead_id ?? null,
      dealId: q.crm_deal_id ?? null,
      includeArchived: q.include_archived === 'true',
      // A cursor replaces skip (the pagination convention).
      skip: q.cursor ? 0 : q.skip,
      take: q.take,
      after: q.cursor ? decodeCursor(q.cursor) : null,
    });
    const next_cursor = page.more && page.last ? encodeCursor(page.last.at, page.last.id) : null;
    return { total: page.total, records: page.records.map(proposalDates), next_cursor };
  }

  async create(actor: ProposalActor, body: CreateProposalBody): Promise<ProposalJson> {
    const record = recordOf(body);
    await this.requireRecord(actor, record);
    const priced = price(body.items, body.discount_type ?? null, body.discount_value ?? null);
    const id = uuidv7();
    await inTransaction(await this.pool(), async (client) => {
      await lockRecordProposals(client, actor.companyId, record.id);
      // The first live proposal of a record is its primary unless the body says otherwise; a new primary replaces the old.
      const isPrimary = body.is_primary ?? !(await hasPrimary(client, actor.companyId, record));
      if (isPrimary) await unsetPrimary(client, actor.companyId, record);
      await insertProposal(client, {
        id,
        companyId: actor.companyId,
        record,
        title: body.title,
        isPrimary,
        discountType: body.discount_type ?? null,
        discountValue: body.discount_value ?? null,
        subtotal: priced.subtotal,
        total: priced.total,
        validUntil: body.valid_until ?? null,
        notes: body.notes ?? null,
        createdById: actor.userId,
      });
      await replaceItems(
        client,
        actor.companyId,
        id,
        priced.items,
        priced.items.map(() => uuidv7()),
      );
    });
    return this.get(actor, id);
  }

  async update(actor: ProposalActor, id: string, body: UpdateProposalBody): Promise<ProposalJson> {
    const visible = await this.get(actor, id);
    const record = recordOf(visible);
    await inTransaction(await this.pool(), async (client) => {
      await lockRecordProposals(client, actor.companyId, record.id);
      const current = await lockProposal(client, actor.companyId, visible.id);
      if (!current) throw notFound('Proposal');
      const changes: ProposalChanges = {};
      if (body.title !== undefined) changes.title = body.title;
      if (body.valid_until !== undefined) changes.validUntil = body.valid_until;
      if (body.notes !== undefined) changes.notes = body.notes;
      if (body.items !== undefined || body.discount_type !== undefined || body.discount_value !== undefined) {
        const discountType = body.discount_type !== undefined ? body.discount_type : storedDiscountType(current.discountType);
        const discountValue = body.discount_value !== undefined ? body.discount_value : (current.discountValue ?? null);
        const items = body.items ?? (await itemsOf(client, actor.companyId, current.id));
        const priced = price(items, discountType, discountValue);
        Object.assign(changes, {
          discountType,
          discountValue,
          subtotal: priced.subtotal,
          total: priced.total,
        });
        if (body.items !== undefined)
          await replaceItems(
            client,
            actor.companyId,
            current.id,
            priced.items,
            priced.items.map(() => uuidv7()),
          );
      }
      if (body.is_primary === true && !current.isPrimary) {
        await unsetPrimary(client, actor.companyId, record);
        changes.isPrimary = true;
      } else if (body.is_primary === false) changes.isPrimary = false;
      if (body.status !== undefined && body.status !== current.status) Object.assign(changes, statusChanges(body.status, actor.userId));
      if (body.archived !== undefined) changes.archivedAt = body.archived ? (current.archivedAt ? undefined : 'now') : null;
      if (changes.archivedAt === undefined) delete changes.archivedAt;
      await updateProposal(client, actor.companyId, current.id, changes);
    });
    return this.get(actor, id);
  }

  async remove(actor: ProposalActor, id: string): Promise<{ id: string }> {
    const visible = await this.get(actor, id);
    await inTransaction(await this.pool(), async (client) => {
      await lockRecordProposals(client, actor.companyId, recordOf(visible).id);
      if (!(await lockProposal(client, actor.companyId, visible.id))) throw notFound('Proposal');
      await deleteProposal(client, actor.companyId, visible.id);
    });
    return { id: visible.id };
  }

  async attachDocument(actor: ProposalActor, id: string, documentId: string): Promise<ProposalJson> {
    const visible = await this.get(actor, id);
    const doc = await readDocument(await this.pool(), actor.companyId, documentId);
    if (!doc) throw invalidField('document_id', 'document not found');
    await insertAttachment(await this.pool(), {
      id: uuidv7(),
      companyId: actor.companyId,
      proposalId: visible.id,
      kind: 'document',
      fileId: null,
      documentId: doc.id,
      fileName: doc.fileName,
      mimeType: doc.mimeType,
      fileSize: doc.fileSize,
      createdById: actor.userId,
    });
    return this.get(actor, id);
  }

  /** Registers a file the files service stored for the proposal (its gRPC call, after checking the proposal is visible). */
  async attachFile(
    actor: ProposalActor,
    id: string,
    file: { fileId: string; fileName: string; mimeType: string; fileSize: number },
  ): Promise<{ attachmentId: string; createdAt: string }> {
    const visible = await this.get(actor, id);
    const attachmentId = uuidv7();
    const createdAt = await insertAttachment(await this.pool(), {
      id: attachmentId,
      companyId: actor.companyId,
      proposalId: visible.id,
      kind: 'file',
      documentId: null,
      ...file,
      createdById: actor.userId,
    });
    return { attachmentId, createdAt: new Date(createdAt).toISOString() };
  }

  /** Whether the actor may see the proposal (and, with `fileId`, whether that file is a live attachment of it). */
  async access(actor: ProposalActor, id: string, fileId?: string): Promise<boolean> {
    if (!isUuid(id) || (fileId !== undefined && !isUuid(fileId))) return false;
    const pool = await this.pool();
    if (!(await readProposal(pool, actor.companyId, actor.userId, id))) return false;
    return fileId === undefined || fileAttached(pool, actor.companyId, id, fileId);
  }

  async detachFile(companyId: string, id: string, fileId: string): Promise<boolean> {
    if (!isUuid(id) || !isUuid(fileId)) return false;
    return removeFileAttachment(await this.pool(), companyId, id, fileId);
  }

  /** Removes an attachment (logically); answers the removed attachment's file id, when it was a file. */
  async detach(actor: ProposalActor, id: string, attachmentId: string): Promise<{ fileId: string | null }> {
    const visible = await this.get(actor, id);
    const removed = await removeAttachment(await this.pool(), actor.companyId, visible.id, requireUuid(attachmentId, 'Attachment'));
    if (!removed) throw notFound('Attachment');
    return { fileId: removed.file_id };
  }

  /** A document of the company's library (404 when the company does not exist). */
  async createDocument(companyId: string, body: { name: string; file_name: string; mime_type: string; file_size: number; url: string }) {
    await requireCompany(await this.pool(), companyId);
    const id = uuidv7();
    const { name, file_name: fileName, mime_type: mimeType, file_size: fileSize, url } = body;
    await insertDocument(await this.pool(), { id, companyId, name, fileName, mimeType, fileSize, url, createdAt: new Date() });
    const doc = await readDocument(await this.pool(), companyId, id);
    if (!doc) throw new Error(`proposal document ${id} was not written`);
    return {
      id: doc.id,
      name: doc.name,
      file_name: doc.fileName,
      mime_type: doc.mimeType,
      file_size: doc.fileSize,
      url: doc.url,
      created_at: doc.createdAt.toISOString(),
    };
  }
}

/** The discount type a proposal holds: only the API's values are ever written. */
const storedDiscountType = (v: string | null | undefined): 'percentage' | 'amount' | null =>
  v === 'percentage' || v === 'amount' ? v : null;

function statusChanges(status: number, userId: string): ProposalChanges {
  if (status === ProposalStatus.approved) return { status, approvedAt: 'now', approvedById: userId, rejectedAt: null, rejectedById: null };
  if (status === ProposalStatus.rejected) return { status, rejectedAt: 'now', rejectedById: userId, approvedAt: null, approvedById: null };
  return { status, approvedAt: null, approvedById: null, rejectedAt: null, rejectedById: null };
}
