import { credentials } from '@grpc/grpc-js';
import { callUnary } from '@svc/platform/grpc/server';
import type { Logger } from '@svc/platform/logging';
import { TaskCountServiceClient } from '@svc/proto/tasks/v1/tasks';
import type { TaskSource } from '../sales/sales.tasks.js';

/** Milliseconds; past it `associations_count.tasks` is 0. */
const DEADLINE_MS = 500;

/** Unset, failing or late tasks answers 0 rather than failing a read (decision 0164). */
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
