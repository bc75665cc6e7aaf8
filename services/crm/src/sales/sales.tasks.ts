import { KeyedBatcher } from './sales.batcher.js';

/**
 * The number of tasks linked to a lead or deal (`associations_count.tasks` of its detail): tasks live in the tasks
 * service, asked at each read.
 */
export interface TaskSource {
  /**
   * The tasks of record `id` of the company. Never rejects: when tasks fails or misses its deadline the answer is 0
   * (and a warning is logged), so a detail never waits on tasks' health, as its chat fields do not on chat's.
   */
  recordTasks(companyId: string, kind: 'lead' | 'deal', id: string): Promise<number>;
}

/**
 * Concurrent reads of one record share one call to tasks (decision 0224). A read arriving while a call for its record
 * is out waits for the next call, which starts after the read arrived: its count includes every task committed
 * before the read, as one call per read would.
 */
export class CoalescedTasks implements TaskSource {
  private readonly calls: KeyedBatcher<null, number>;

  constructor(private readonly source: TaskSource) {
    this.calls = new KeyedBatcher(async (key, items) => {
      const [companyId, kind, id] = key.split(':') as [string, 'lead' | 'deal', string];
      const n = await this.source.recordTasks(companyId, kind, id);
      return items.map(() => n);
    }, Number.MAX_SAFE_INTEGER);
  }

  async recordTasks(companyId: string, kind: 'lead' | 'deal', id: string): Promise<number> {
    return (await this.calls.add(`${companyId}:${kind}:${id}`, null)) ?? 0;
  }
}
