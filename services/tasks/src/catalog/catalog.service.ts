import { requireUuid } from '@svc/platform/errors';
import type { CrmPeer } from '@svc/platform/peers/crm';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import type { TaskStage, TaskType } from './catalog.entity.js';
import { insertTaskStage, insertTaskType } from './catalog.store.js';

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
  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly crm: CrmPeer,
  ) {}

  async createType(companyId: string, body: z.infer<typeof createTaskTypeBody>) {
    await this.crm.getCompany(requireUuid(companyId, 'Company'));
    const type: TaskType = {
      id: uuidv7(),
      companyId,
      name: body.name,
      icon: body.icon ?? null,
      isMeeting: body.is_meeting ?? false,
      defaultDurationMinutes: body.default_duration_minutes ?? null,
      createdAt: new Date(),
    };
    await insertTaskType(await this.pool(), type);
    return taskTypeView(type);
  }

  /** Without a position the stage goes last. */
  async createStage(companyId: string, body: z.infer<typeof createTaskStageBody>) {
    await this.crm.getCompany(requireUuid(companyId, 'Company'));
    const stage = await insertTaskStage(await this.pool(), {
      id: uuidv7(),
      companyId,
      name: body.name,
      color: body.color ?? null,
      isCompletion: body.is_completion ?? false,
      position: body.position ?? null,
      active: body.active ?? true,
      createdAt: new Date(),
    });
    return taskStageView(stage);
  }
}
