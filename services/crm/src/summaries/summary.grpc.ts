import { type GrpcServiceRegistration, unary } from '@svc/platform/grpc/server';
import type { Logger } from '@svc/platform/logging';
import { type GetRecordSummariesRequest, type GetRecordSummariesResponse, RecordServiceService } from '@svc/proto/crm/v1/records';
import type { PoolOf } from '../db.js';
import { RecordSummaries } from './summary.service.js';

export function recordGrpc(logger: Logger, pool: PoolOf): GrpcServiceRegistration {
  const summaries = new RecordSummaries(pool);
  return {
    definition: RecordServiceService,
    implementation: {
      getRecordSummaries: unary<GetRecordSummariesRequest, GetRecordSummariesResponse>(logger, (req) => summaries.get(req)),
    },
  };
}
