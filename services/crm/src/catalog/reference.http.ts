import { requireAdmin } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import { Router } from 'express';
import * as contacts from '../contacts/contact.service.js';
import type { PoolOf } from '../db.js';
import * as pipelines from '../pipelines/pipeline.service.js';
import * as catalog from './catalog.service.js';

/** Reference data rows of the management API owned by crm. */
export function referenceAdminRoutes(pool: PoolOf): Router {
  const r = Router();
  r.use((req, _res, next) => {
    requireAdmin(req);
    next();
  });
  r.post('/companies/:cid/pipelines', async (req, res) => {
    res.status(201).json(await pipelines.createPipeline(await pool(), req.params.cid, parse(pipelines.createPipelineBody, req.body)));
  });
  r.post('/companies/:cid/tags', async (req, res) => {
    res.status(201).json(await catalog.createTag(await pool(), req.params.cid, parse(catalog.createTagBody, req.body)));
  });
  r.post('/companies/:cid/custom-fields', async (req, res) => {
    res.status(201).json(await catalog.createCustomField(await pool(), req.params.cid, parse(catalog.createCustomFieldBody, req.body)));
  });
  r.post('/companies/:cid/lead-sources', async (req, res) => {
    res.status(201).json(await catalog.createLeadSource(await pool(), req.params.cid, parse(catalog.createLeadSourceBody, req.body)));
  });
  r.post('/companies/:cid/trackers', async (req, res) => {
    res.status(201).json(await catalog.createTracker(await pool(), req.params.cid, parse(catalog.createTrackerBody, req.body)));
  });
  for (const [path, kind] of Object.entries(catalog.NAMED_KINDS)) {
    r.post(`/companies/:cid/${path}`, async (req, res) => {
      res.status(201).json(await catalog.createNamedItem(await pool(), req.params.cid, kind, parse(catalog.createNamedItemBody, req.body)));
    });
    r.get(`/companies/:cid/${path}`, async (req, res) => {
      res.json(await catalog.listNamedItems(await pool(), req.params.cid, kind));
    });
  }
  r.post('/companies/:cid/persons', async (req, res) => {
    res.status(201).json(await contacts.createPerson(await pool(), req.params.cid, parse(contacts.createPersonBody, req.body)));
  });
  r.post('/companies/:cid/organizations', async (req, res) => {
    res.status(201).json(await contacts.createOrganization(await pool(), req.params.cid, parse(contacts.createOrganizationBody, req.body)));
  });
  return r;
}
