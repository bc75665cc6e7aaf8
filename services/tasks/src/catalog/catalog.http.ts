import { requireAdmin } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import { Router } from 'express';
import { createTaskStageBody, createTaskTypeBody, type TaskCatalog } from './catalog.service.js';

export function taskCatalogAdminRoutes(catalog: TaskCatalog): Router {
  const r = Router();
  r.use((req, _res, next) => {
    requireAdmin(req);
    next();
  });
  r.post('/companies/:cid/task-types', async (req, res) => {
    res.status(201).json(await catalog.createType(req.params.cid, parse(createTaskTypeBody, req.body)));
  });
  r.post('/companies/:cid/task-stages', async (req, res) => {
    res.status(201).json(await catalog.createStage(req.params.cid, parse(createTaskStageBody, req.body)));
  });
  return r;
}
