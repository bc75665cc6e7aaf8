import { type ApiRequest, type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationWith } from '@svc/platform/http/app';
import { hasPermission } from '@svc/platform/identity';
import { createTask, deleteTask, getTask, listTasks, updateTask } from './task.contract.js';
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

/** Decisions 0014 and 0100. */
export function taskRoutes(tasks: TaskService): ApiRouter {
  return apiRouter()
    .route(createTask, async (req, res, { body }) => {
      res.status(201).json(await tasks.create(actorFor(req, TASK_PERMISSIONS.create), body));
    })
    .route(listTasks, async (req, res, { query }) => {
      res.json(await tasks.list(actorFor(req, TASK_PERMISSIONS.read), query));
    })
    .route(getTask, async (req, res, { params }) => {
      res.json(await tasks.get(actorFor(req, TASK_PERMISSIONS.read), params.id));
    })
    .route(updateTask, async (req, res, { params, body }) => {
      res.json(await tasks.update(actorFor(req, TASK_PERMISSIONS.update), params.id, body));
    })
    .route(deleteTask, async (req, res, { params, query }) => {
      res.json(await tasks.delete(actorFor(req, TASK_PERMISSIONS.delete), params.id, query.scope ?? 'this'));
    });
}
