import { nativePool } from '@svc/platform/db/native';
import { type GrpcServiceRegistration, unary } from '@svc/platform/grpc/server';
import type { ServiceContext } from '@svc/platform/service';
import { type GetRecordSummariesRequest, type GetRecordSummariesResponse, RecordServiceService } from '@svc/proto/crm/v1/records';
import { RecordSummaries } from './record.service.js';

export function recordGrpc(ctx: ServiceContext): GrpcServiceRegistration {
  const summaries = new RecordSummaries(() => nativePool(ctx.orm));
  return {
    definition: RecordServiceService,
    implementation: {
      getRecordSummaries: unary<GetRecordSummariesRequest, GetRecordSummariesResponse>(ctx.logger, (req) => summaries.get(req)),
    },
  };
}
