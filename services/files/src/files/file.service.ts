import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { inTransaction } from '@svc/platform/db/native';
import { invalidField, notFound, requireUuid } from '@svc/platform/errors';
import { PRIVATE_FILE_URL_TTL_MS, signFileUrl, verifyFileUrl } from '@svc/platform/files/signed-url';
import { parse } from '@svc/platform/http/parse';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { CrmRecords, RecordRef } from '../links/crm-records.js';
import type { FileStorage } from '../storage/storage.js';
import { type ListFilesQuery, uploadFields } from './file.schema.js';
import {
  addToBatch,
  batchExists,
  countOf,
  type FileRead,
  insertFile,
  listFiles,
  lockRecordFiles,
  newFile,
  readFile,
  readFileForDownload,
  removeFile,
} from './file.store.js';
import { receiveUpload } from './upload.js';

/** The key's creator, in the key's company. */
export interface FileActor {
  companyId: string;
  userId: string;
}

export interface FileServiceOptions {
  pool: () => Promise<Pool>;
  storage: FileStorage;
  crm: CrmRecords;
  maxBytes: number;
  /** The gateway's public download route, and the signing key. */
  signing: { baseUrl: string; secret: string };
}

export interface FileView {
  id: string;
  file_name: string;
  mime_type: string;
  file_size: number;
  crm_lead_id: string | null;
  crm_deal_id: string | null;
  crm_proposal_id: string | null;
  batch: { id: string; files_count: number; total_size: number };
  /** Valid until `url_expires_at`. */
  url: string;
  url_expires_at: string;
  created_by: { id: string };
  created_at: string;
}

export interface ProposalAttachmentView {
  id: string;
  kind: 'file';
  file_id: string;
  document_id: null;
  file_name: string;
  mime_type: string;
  file_size: number;
  created_at: string;
  url: string;
  url_expires_at: string;
}

export interface Download {
  body: Readable;
  fileName: string;
  mimeType: string;
  size: number;
}

type Owner = RecordRef | { kind: 'proposal'; id: string };
const ownerOf = (f: FileRead): Owner | null =>
  f.crmLeadId
    ? { kind: 'lead', id: f.crmLeadId }
    : f.crmDealId
      ? { kind: 'deal', id: f.crmDealId }
      : f.crmProposalId
        ? { kind: 'proposal', id: f.crmProposalId }
        : null;

const encodeCursor = (f: FileRead) => Buffer.from(JSON.stringify([f.createdAtMicros, f.id])).toString('base64url');
function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    if (typeof createdAt === 'string' && !Number.isNaN(Date.parse(createdAt)) && typeof id === 'string')
      return { createdAt, id: requireUuid(id, 'x') };
  } catch {
    // falls through to the 400
  }
  throw invalidField('cursor', 'not a cursor of this list');
}

/**
 * Every file belongs to a lead, deal or proposal the key's creator may see (asked of crm); anything else is not found.
 * crm's live file count is set within every change's transaction (decision 0076).
 */
export class FileService {
  constructor(private readonly o: FileServiceOptions) {}

  private async requireVisible(actor: FileActor, ref: RecordRef): Promise<void> {
    if (!(await this.o.crm.visible(actor.companyId, actor.userId, ref))) throw notFound(ref.kind === 'lead' ? 'Lead' : 'Deal');
  }

  /** For a proposal, also whether the file is still attached to it. */
  private ownerVisible(actor: FileActor, owner: Owner, fileId: string): Promise<boolean> {
    if (owner.kind === 'proposal') return this.o.crm.proposalAccess(actor.companyId, actor.userId, owner.id, fileId);
    return this.o.crm.visible(actor.companyId, actor.userId, owner);
  }

  /** Called from the transaction that changed the files, which holds its lock. */
  private async syncCount(client: PoolClient, companyId: string, ref: RecordRef): Promise<void> {
    const { count, version } = await countOf(client, companyId, ref);
    await this.o.crm.setFileCount(companyId, ref, count, version);
  }

  async upload(actor: FileActor, req: IncomingMessage): Promise<FileView> {
    const id = uuidv7();
    const storageKey = `${actor.companyId}/${id}`;
    const received = await receiveUpload(req, {
      storage: this.o.storage,
      maxBytes: this.o.maxBytes,
      key: storageKey,
      accept: async (fields) => {
        const f = parse(uploadFields, fields);
        const ref: RecordRef = f.crm_lead_id ? { kind: 'lead', id: f.crm_lead_id } : { kind: 'deal', id: f.crm_deal_id as string };
        await this.requireVisible(actor, ref);
        if (f.batch_id && !(await batchExists(await this.o.pool(), actor.companyId, f.batch_id)))
          throw invalidField('batch_id', 'batch not found');
        return { ref, batchId: f.batch_id };
      },
    });
    const { ref, batchId } = received.accepted;
    try {
      const pool = await this.o.pool();
      await inTransaction(pool, async (client) => {
        await lockRecordFiles(client, actor.companyId, ref.id);
        const batch = batchId ?? uuidv7();
        if (!(await addToBatch(client, actor.companyId, batch, received.size, batchId === undefined)))
          throw invalidField('batch_id', 'batch not found');
        await insertFile(
          client,
          newFile(
            {
              id,
              companyId: actor.companyId,
              batchId: batch,
              fileName: received.fileName,
              mimeType: received.mimeType,
              fileSize: received.size,
              storageKey,
              createdById: actor.userId,
            },
            ref,
          ),
        );
        await this.syncCount(client, actor.companyId, ref);
      });
    } catch (err) {
      await this.o.storage.delete(storageKey).catch(() => undefined);
      throw err;
    }
    return this.get(actor, id);
  }

  /** Registered with crm as an attachment in the same transaction (decision 0078). */
  async uploadToProposal(actor: FileActor, proposalId: string, req: IncomingMessage): Promise<ProposalAttachmentView> {
    requireUuid(proposalId, 'Proposal');
    const id = uuidv7();
    const storageKey = `${actor.companyId}/${id}`;
    const received = await receiveUpload(req, {
      storage: this.o.storage,
      maxBytes: this.o.maxBytes,
      key: storageKey,
      accept: async () => {
        if (!(await this.o.crm.proposalAccess(actor.companyId, actor.userId, proposalId))) throw notFound('Proposal');
      },
    });
    let attachment: { attachmentId: string; createdAt: string };
    try {
      attachment = await inTransaction(await this.o.pool(), async (client) => {
        const batch = uuidv7();
        await addToBatch(client, actor.companyId, batch, received.size, true);
        const file = { id, fileName: received.fileName, mimeType: received.mimeType, size: received.size };
        await insertFile(
          client,
          newFile(
            {
              id,
              fileName: file.fileName,
              mimeType: file.mimeType,
              fileSize: file.size,
              companyId: actor.companyId,
              batchId: batch,
              storageKey,
              createdById: actor.userId,
            },
            { kind: 'proposal', id: proposalId },
          ),
        );
        return this.o.crm.attachProposalFile(actor.companyId, actor.userId, proposalId, file);
      });
    } catch (err) {
      await this.o.storage.delete(storageKey).catch(() => undefined);
      throw err;
    }
    const { url, url_expires_at } = this.view((await readFile(await this.o.pool(), actor.companyId, id))!);
    return {
      id: attachment.attachmentId,
      kind: 'file',
      file_id: id,
      document_id: null,
      file_name: received.fileName,
      mime_type: received.mimeType,
      file_size: received.size,
      created_at: attachment.createdAt,
      url,
      url_expires_at,
    };
  }

  async get(actor: FileActor, id: string): Promise<FileView> {
    const row = await readFile(await this.o.pool(), actor.companyId, requireUuid(id, 'File'));
    const owner = row && ownerOf(row);
    if (!row || !owner || !(await this.ownerVisible(actor, owner, row.id))) throw notFound('File');
    return this.view(row);
  }

  async list(actor: FileActor, q: ListFilesQuery): Promise<{ total: number; records: FileView[]; next_cursor: string | null }> {
    const ref: RecordRef = q.crm_lead_id ? { kind: 'lead', id: q.crm_lead_id } : { kind: 'deal', id: q.crm_deal_id as string };
    await this.requireVisible(actor, ref);
    const { total, rows } = await listFiles(await this.o.pool(), {
      companyId: actor.companyId,
      kind: ref.kind,
      recordId: ref.id,
      skip: q.skip,
      take: q.take,
      after: q.cursor ? decodeCursor(q.cursor) : undefined,
    });
    const last = rows.at(-1);
    return { total, records: rows.map((r) => this.view(r)), next_cursor: last && rows.length === q.take ? encodeCursor(last) : null };
  }

  async remove(actor: FileActor, id: string): Promise<{ success: true }> {
    requireUuid(id, 'File');
    const pool = await this.o.pool();
    const found = await readFile(pool, actor.companyId, id);
    const owner = found && ownerOf(found);
    if (!found || !owner || !(await this.ownerVisible(actor, owner, found.id))) throw notFound('File');
    await inTransaction(pool, async (client) => {
      await lockRecordFiles(client, actor.companyId, owner.id);
      const row = await readFile(client, actor.companyId, id, true);
      if (!row) throw notFound('File');
      await removeFile(client, row, actor.userId);
      if (owner.kind === 'proposal') await this.o.crm.detachProposalFile(actor.companyId, owner.id, row.id);
      else await this.syncCount(client, actor.companyId, owner);
    });
    return { success: true };
  }

  /** A wrong, expired or forged signature is not found. */
  async download(id: string, expires: string | null, signature: string | null): Promise<Download> {
    if (!verifyFileUrl(this.o.signing.secret, id, expires, signature)) throw notFound('File');
    const row = await readFileForDownload(await this.o.pool(), requireUuid(id, 'File'));
    const body = row && (await this.o.storage.get(row.storageKey));
    if (!row || !body) throw notFound('File');
    return { body, fileName: row.fileName, mimeType: row.mimeType, size: row.fileSize };
  }

  private view(f: FileRead): FileView {
    const expiresAt = new Date(Math.floor((Date.now() + PRIVATE_FILE_URL_TTL_MS) / 1000) * 1000);
    return {
      id: f.id,
      file_name: f.fileName,
      mime_type: f.mimeType,
      file_size: f.fileSize,
      crm_lead_id: f.crmLeadId ?? null,
      crm_deal_id: f.crmDealId ?? null,
      crm_proposal_id: f.crmProposalId ?? null,
      batch: { id: f.batchId, files_count: f.batch.filesCount, total_size: f.batch.totalSize },
      url: signFileUrl(this.o.signing.baseUrl, this.o.signing.secret, f.id, expiresAt),
      url_expires_at: expiresAt.toISOString(),
      created_by: { id: f.createdById },
      created_at: f.createdAt.toISOString(),
    };
  }
}
