import { invalidField, isUuid } from '@svc/platform/errors';
import { type GrpcServiceRegistration, unary } from '@svc/platform/grpc/server';
import type { Logger } from '@svc/platform/logging';
import { TaskCountServiceService } from '@svc/proto/tasks/v1/tasks';
import type { Pool } from 'pg';
import { countRecordTasks } from './task.store.js';

const KINDS = new Set(['lead', 'deal']);

/** For `associations_count.tasks` of a crm record's detail. */
export function taskCountGrpc(pool: () => Promise<Pool>, logger: Logger): GrpcServiceRegistration {
  return {
    definition: TaskCountServiceService,
    implementation: {
      countRecordTasks: unary(logger, async (req) => {
        if (!KINDS.has(req.record_kind)) throw invalidField('record_kind', 'must be lead or deal');
        if (!isUuid(req.company_id) || !isUuid(req.record_id)) return { tasks: 0 };
        return { tasks: await countRecordTasks(await pool(), req.company_id, req.record_kind as 'lead' | 'deal', req.record_id) };
      }),
    },
  };
}
