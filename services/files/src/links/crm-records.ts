import { credentials } from '@grpc/grpc-js';
import { callUnary } from '@svc/platform/grpc/server';
import { FileCountServiceClient, FileRecordKind } from '@svc/proto/crm/v1/files';
import { RecordServiceClient, RecordType } from '@svc/proto/crm/v1/records';

/** The crm record a file belongs to. */
export type RecordKind = 'lead' | 'deal';
export interface RecordRef {
  kind: RecordKind;
  id: string;
}

/** crm over gRPC: whether the acting user may see a lead or deal, and the live file counts crm keeps. */
export class CrmRecords {
  private readonly records: RecordServiceClient;
  private readonly counts: FileCountServiceClient;

  constructor(address: string) {
    this.records = new RecordServiceClient(address, credentials.createInsecure());
    this.counts = new FileCountServiceClient(address, credentials.createInsecure());
  }

  /** Whether the record exists in the company and the viewer may see it (crm answers the three cases alike). */
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
  }
}
