import { invalidField, isUuid } from '@svc/platform/errors';
import { type GrpcServiceRegistration, unary } from '@svc/platform/grpc/server';
import type { Logger } from '@svc/platform/logging';
import {
  FileCountServiceService,
  FileRecordKind,
  type SetRecordFileCountRequest,
  type SetRecordFileCountResponse,
} from '@svc/proto/crm/v1/files';
import type { PoolOf } from '../db.js';
import { setFileCount } from './file-count.store.js';

const KIND: Partial<Record<FileRecordKind, 'lead' | 'deal'>> = {
  [FileRecordKind.FILE_RECORD_KIND_LEAD]: 'lead',
  [FileRecordKind.FILE_RECORD_KIND_DEAL]: 'deal',
};

export class FileCounts {
  constructor(private readonly pool: PoolOf) {}

  async set(req: SetRecordFileCountRequest): Promise<SetRecordFileCountResponse> {
    if (!isUuid(req.company_id)) throw invalidField('company_id', 'must be a UUID');
    if (!isUuid(req.record_id)) throw invalidField('record_id', 'must be a UUID');
    const kind = KIND[req.kind];
    if (!kind) throw invalidField('kind', 'must be lead or deal');
    if (!Number.isInteger(req.files_count) || req.files_count < 0) throw invalidField('files_count', 'must be a non-negative integer');
    const applied = await setFileCount(await this.pool(), {
      companyId: req.company_id,
      recordId: req.record_id,
      kind,
      filesCount: req.files_count,
      version: req.version,
      updatedAt: new Date(),
    });
    return { applied };
  }
}

export function fileCountGrpc(logger: Logger, pool: PoolOf): GrpcServiceRegistration {
  const counts = new FileCounts(pool);
  return {
    definition: FileCountServiceService,
    implementation: {
      setRecordFileCount: unary<SetRecordFileCountRequest, SetRecordFileCountResponse>(logger, (req) => counts.set(req)),
    },
  };
}
