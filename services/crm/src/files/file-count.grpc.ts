import { nativePool } from '@svc/platform/db/native';
import { invalidField, isUuid } from '@svc/platform/errors';
import { type GrpcServiceRegistration, unary } from '@svc/platform/grpc/server';
import type { ServiceContext } from '@svc/platform/service';
import {
  FileCountServiceService,
  FileRecordKind,
  type SetRecordFileCountRequest,
  type SetRecordFileCountResponse,
} from '@svc/proto/crm/v1/files';
import type { Pool } from 'pg';

const KIND: Partial<Record<FileRecordKind, 'lead' | 'deal'>> = {
  [FileRecordKind.FILE_RECORD_KIND_LEAD]: 'lead',
  [FileRecordKind.FILE_RECORD_KIND_DEAL]: 'deal',
};

// An upsert that keeps the count of the highest version: a repeated or late call changes nothing (so it bumps no
// lead detail version either).
const SET_COUNT_SQL = `
insert into record_file_counts as c (company_id, record_id, kind, files_count, version, updated_at)
values ($1::uuid, $2::uuid, $3, $4::int, $5::int8, now())
on conflict (company_id, record_id) do update set files_count = excluded.files_count, version = excluded.version, updated_at = now()
  where c.version < excluded.version
returning 1`;

export class FileCounts {
  constructor(private readonly pool: () => Promise<Pool>) {}

  async set(req: SetRecordFileCountRequest): Promise<SetRecordFileCountResponse> {
    if (!isUuid(req.company_id)) throw invalidField('company_id', 'must be a UUID');
    if (!isUuid(req.record_id)) throw invalidField('record_id', 'must be a UUID');
    const kind = KIND[req.kind];
    if (!kind) throw invalidField('kind', 'must be lead or deal');
    if (!Number.isInteger(req.files_count) || req.files_count < 0) throw invalidField('files_count', 'must be a non-negative integer');
    const pool = await this.pool();
    const { rowCount } = await pool.query({
      name: 'crm_set_record_file_count',
      text: SET_COUNT_SQL,
      values: [req.company_id, req.record_id, kind, req.files_count, req.version],
    });
    return { applied: (rowCount ?? 0) > 0 };
  }
}

export function fileCountGrpc(ctx: ServiceContext): GrpcServiceRegistration {
  const counts = new FileCounts(() => nativePool(ctx.orm));
  return {
    definition: FileCountServiceService,
    implementation: {
      setRecordFileCount: unary<SetRecordFileCountRequest, SetRecordFileCountResponse>(ctx.logger, (req) => counts.set(req)),
    },
  };
}
