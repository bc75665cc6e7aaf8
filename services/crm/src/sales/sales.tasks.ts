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
