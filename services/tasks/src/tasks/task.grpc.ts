import { invalidField, isUuid } from '@svc/platform/errors';
import { type GrpcServiceRegistration, unary } from '@svc/platform/grpc/server';
import type { Logger } from '@svc/platform/logging';
import { TaskCountServiceService } from '@svc/proto/tasks/v1/tasks';
import type { Pool } from 'pg';

const COLUMN = { lead: 'crm_lead_id', deal: 'crm_deal_id' } as const;

/** tasks.v1.TaskCountService: the number of tasks linked to a crm record, for `associations_count.tasks` of its detail. */
export function taskCountGrpc(pool: () => Promise<Pool>, logger: Logger): GrpcServiceRegistration {
  return {
    definition: TaskCountServiceService,
    implementation: {
      countRecordTasks: unary(logger, async (req) => {
        const column = COLUMN[req.record_kind as keyof typeof COLUMN];
        if (!column) throw invalidField('record_kind', 'must be lead or deal');
        if (!isUuid(req.company_id) || !isUuid(req.record_id)) return { tasks: 0 };
        const { rows } = await (await pool()).query<{ n: number }>({
          name: `tasks_count_${req.record_kind}`,
          text: `select count(*)::int as n from tasks where company_id = $1 and ${column} = $2`,
          values: [req.company_id, req.record_id],
        });
        return { tasks: rows[0]?.n ?? 0 };
      }),
    },
  };
}
