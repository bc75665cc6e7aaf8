import { credentials } from '@grpc/grpc-js';
import { callUnary } from '@svc/platform/grpc/server';
import type { Logger } from '@svc/platform/logging';
import { TaskCountServiceClient } from '@svc/proto/tasks/v1/tasks';
import type { TaskSource } from '../sales/sales.tasks.js';

/** crm waits at most this long for tasks (ms); past it `associations_count.tasks` is 0 and the detail goes on. */
const DEADLINE_MS = 500;

/**
 * The tasks of a lead or deal, asked of the tasks service over gRPC (tasks.v1.TaskCountService). When tasks is not
 * configured (TASKS_GRPC_URL unset), fails or does not answer in time, the count is 0 rather than a failed read,
 * as the chat fields degrade (decision 0164).
 */
export class TaskCounts implements TaskSource {
  private readonly client: TaskCountServiceClient | null;

  constructor(
    address: string | undefined,
    private readonly logger: Logger,
  ) {
    this.client = address ? new TaskCountServiceClient(address, credentials.createInsecure()) : null;
  }

  async recordTasks(companyId: string, kind: 'lead' | 'deal', id: string): Promise<number> {
    if (!this.client) return 0;
    try {
      const { tasks } = await callUnary(
        this.client,
        this.client.countRecordTasks,
        { company_id: companyId, record_kind: kind, record_id: id },
        DEADLINE_MS,
      );
      return tasks;
    } catch (err) {
      this.logger.warn({ err }, 'associations_count.tasks left 0: tasks did not answer');
      return 0;
    }
  }

  close(): void {
    this.client?.close();
  }
}
