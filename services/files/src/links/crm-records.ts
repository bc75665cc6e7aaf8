import { credentials } from '@grpc/grpc-js';
import { callUnary } from '@svc/platform/grpc/server';
import { FileCountServiceClient, FileRecordKind } from '@svc/proto/crm/v1/files';
import { ProposalFileServiceClient } from '@svc/proto/crm/v1/proposals';
import { RecordServiceClient, RecordType } from '@svc/proto/crm/v1/records';

export type RecordKind = 'lead' | 'deal';
export interface RecordRef {
  kind: RecordKind;
  id: string;
}

export class CrmRecords {
  private readonly records: RecordServiceClient;
  private readonly counts: FileCountServiceClient;
  private readonly proposals: ProposalFileServiceClient;

  constructor(address: string) {
    this.records = new RecordServiceClient(address, credentials.createInsecure());
    this.counts = new FileCountServiceClient(address, credentials.createInsecure());
    this.proposals = new ProposalFileServiceClient(address, credentials.createInsecure());
  }

  /** With `fileId`, also whether that file is attached to it. */
  async proposalAccess(companyId: string, viewerUserId: string, proposalId: string, fileId?: string): Promise<boolean> {
    const r = await callUnary(this.proposals, this.proposals.getProposalAccess, {
      company_id: companyId,
      viewer_user_id: viewerUserId,
      proposal_id: proposalId,
      file_id: fileId,
    });
    return r.visible;
  }

  async attachProposalFile(
    companyId: string,
    viewerUserId: string,
    proposalId: string,
    file: { id: string; fileName: string; mimeType: string; size: number },
  ): Promise<{ attachmentId: string; createdAt: string }> {
    const r = await callUnary(this.proposals, this.proposals.attachProposalFile, {
      company_id: companyId,
      viewer_user_id: viewerUserId,
      proposal_id: proposalId,
      file_id: file.id,
      file_name: file.fileName,
      mime_type: file.mimeType,
      file_size: file.size,
    });
    return { attachmentId: r.attachment_id, createdAt: r.created_at };
  }

  async detachProposalFile(companyId: string, proposalId: string, fileId: string): Promise<void> {
    await callUnary(this.proposals, this.proposals.detachProposalFile, { company_id: companyId, proposal_id: proposalId, file_id: fileId });
  }

  /** crm answers the three cases alike. */
  async visible(companyId: string, viewerUserId: string, ref: RecordRef): Promise<boolean> {
    const type = ref.kind === 'lead' ? RecordType.RECORD_TYPE_LEAD : RecordType.RECORD_TYPE_DEAL;
    const r = await callUnary(this.records, this.records.getRecordSummaries, {
      company_id: companyId,
      viewer_user_id: viewerUserId,
      refs: [{ type, id: ref.id }],
    });
    const found = ref.kind === 'lead' ? r.leads : r.deals;
    return found.some((x) => x.id === ref.id.toLowerCase());
  }

  async setFileCount(companyId: string, ref: RecordRef, count: number, version: number): Promise<void> {
    await callUnary(this.counts, this.counts.setRecordFileCount, {
      company_id: companyId,
      kind: ref.kind === 'lead' ? FileRecordKind.FILE_RECORD_KIND_LEAD : FileRecordKind.FILE_RECORD_KIND_DEAL,
      record_id: ref.id,
      files_count: count,
      version,
    });
  }

  close(): void {
    this.records.close();
    this.counts.close();
    this.proposals.close();
  }
}
