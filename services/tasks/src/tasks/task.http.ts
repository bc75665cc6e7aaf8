import { type ApiRequest, type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationWith } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import { hasPermission } from '@svc/platform/identity';
import { createTaskBody, deleteTaskQuery, listTasksQuery, updateTaskBody } from './task.schema.js';
import type { TaskActor, TaskService } from './task.service.js';

/** The task routes' permissions, named after the spec's pattern (README, Permissions). */
export const TASK_PERMISSIONS = {
  read: 'crm/task.read',
  create: 'crm/task.create',
  update: 'crm/task.update',
  delete: 'crm/task.delete',
} as const;

function actorFor(req: ApiRequest, permission: string): TaskActor {
  const identity = integrationWith(req, permission);
  return { companyId: identity.companyId, userId: identity.userId, canUpdate: hasPermission(identity, TASK_PERMISSIONS.update) };
}

export function taskRoutes(tasks: TaskService): ApiRouter {
  const r = apiRouter();
  r.post('/tasks', async (req, res) => {
    const actor = actorFor(req, TASK_PERMISSIONS.create);
    res.status(201).json(await tasks.create(actor, parse(createTaskBody, req.body)));
  });
  r.get('/tasks', async (req, res) => {
    const actor = actorFor(req, TASK_PERMISSIONS.read);
    res.json(await tasks.list(actor, parse(listTasksQuery, req.query)));
  });
  r.get('/tasks/:id', async (req, res) => {
    const actor = actorFor(req, TASK_PERMISSIONS.read);
    res.json(await tasks.get(actor, req.params.id ?? ''));
  });
  r.put('/tasks/:id', async (req, res) => {
    const actor = actorFor(req, TASK_PERMISSIONS.update);
    res.json(await tasks.update(actor, req.params.id ?? '', parse(updateTaskBody, req.body)));
  });
  r.delete('/tasks/:id', async (req, res) => {
    const actor = actorFor(req, TASK_PERMISSIONS.delete);
    const { scope } = parse(deleteTaskQuery, req.query);
    res.json(await tasks.delete(actor, req.params.id ?? '', scope ?? 'this'));
  });
  return r;
}
