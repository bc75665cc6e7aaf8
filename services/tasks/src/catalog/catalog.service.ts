import type { EntityManager } from '@svc/platform/db/orm';
import { requireUuid } from '@svc/platform/errors';
import type { CrmPeer } from '@svc/platform/peers/crm';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { TaskStage, TaskType } from './catalog.entity.js';

const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

export const createTaskTypeBody = z.strictObject({
  name,
  icon: z.string().trim().min(1).max(100).nullable().optional(),
  is_meeting: z.boolean().optional(),
  default_duration_minutes: z
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(60 * 24 * 31)
    .nullable()
    .optional(),
});

export const createTaskStageBody = z.strictObject({
  name,
  color: z.string().trim().min(1).max(32).nullable().optional(),
  is_completion: z.boolean().optional(),
  position: z.number().int().min(1).max(10_000).optional(),
  active: z.boolean().optional(),
});

export const taskTypeView = (t: TaskType) => ({
  id: t.id,
  name: t.name,
  icon: t.icon,
  is_meeting: t.isMeeting,
  default_duration_minutes: t.defaultDurationMinutes,
});

export const taskStageView = (s: TaskStage) => ({
  id: s.id,
  name: s.name,
  color: s.color,
  is_completion: s.isCompletion,
  position: s.position,
  active: s.active,
});

export class TaskCatalog {
  constructor(private readonly crm: CrmPeer) {}

  async createType(em: EntityManager, companyId: string, body: z.infer<typeof createTaskTypeBody>) {
    await this.crm.getCompany(requireUuid(companyId, 'Company'));
    const type = em.create(TaskType, {
      id: uuidv7(),
      companyId,
      name: body.name,
      icon: body.icon ?? null,
      isMeeting: body.is_meeting ?? false,
      defaultDurationMinutes: body.default_duration_minutes ?? null,
      createdAt: new Date(),
    });
    await em.flush();
    return taskTypeView(type);
  }

  /** Without a position the stage goes last. */
  async createStage(em: EntityManager, companyId: string, body: z.infer<typeof createTaskStageBody>) {
    await this.crm.getCompany(requireUuid(companyId, 'Company'));
    return em.transactional(async (tx) => {
      await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`task-stages:${companyId}`]);
      const [row] = await tx.execute<{ max: number | null }[]>('select max(position) as max from task_stages where company_id = ?', [
        companyId,
      ]);
      const stage = tx.create(TaskStage, {
        id: uuidv7(),
        companyId,
        name: body.name,
        color: body.color ?? null,
        isCompletion: body.is_completion ?? false,
        position: body.position ?? (row?.max ?? 0) + 1,
        active: body.active ?? true,
        createdAt: new Date(),
      });
      await tx.flush();
      return taskStageView(stage);
    });
  }
}
