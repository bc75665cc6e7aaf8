import { requireAdmin } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import type { ServiceContext } from '@svc/platform/service';
import { Router } from 'express';
import * as contacts from '../contacts/contact.service.js';
import * as pipelines from '../pipelines/pipeline.service.js';
import * as catalog from './catalog.service.js';

/** Reference data rows of the management API owned by crm. */
export function referenceAdminRoutes(ctx: ServiceContext): Router {
  const r = Router();
  const em = () => ctx.orm.em.fork();
  r.use((req, _res, next) => {
    requireAdmin(req);
    next();
  });
  r.post('/companies/:cid/pipelines', async (req, res) => {
    res.status(201).json(await pipelines.createPipeline(em(), req.params.cid, parse(pipelines.createPipelineBody, req.body)));
  });
  r.post('/companies/:cid/tags', async (req, res) => {
    res.status(201).json(await catalog.createTag(em(), req.params.cid, parse(catalog.createTagBody, req.body)));
  });
  r.post('/companies/:cid/custom-fields', async (req, res) => {
    res.status(201).json(await catalog.createCustomField(em(), req.params.cid, parse(catalog.createCustomFieldBody, req.body)));
  });
  r.post('/companies/:cid/lead-sources', async (req, res) => {
    res.status(201).json(await catalog.createLeadSource(em(), req.params.cid, parse(catalog.createLeadSourceBody, req.body)));
  });
  r.post('/companies/:cid/trackers', async (req, res) => {
    res.status(201).json(await catalog.createTracker(em(), req.params.cid, parse(catalog.createTrackerBody, req.body)));
  });
  for (const [path, kind] of Object.entries(catalog.NAMED_KINDS)) {
    r.post(`/companies/:cid/${path}`, async (req, res) => {
      res.status(201).json(await catalog.createNamedItem(em(), req.params.cid, kind, parse(catalog.createNamedItemBody, req.body)));
    });
    r.get(`/companies/:cid/${path}`, async (req, res) => {
      res.json(await catalog.listNamedItems(em(), req.params.cid, kind));
    });
  }
  r.post('/companies/:cid/persons', async (req, res) => {
    res.status(201).json(await contacts.createPerson(em(), req.params.cid, parse(contacts.createPersonBody, req.body)));
  });
  r.post('/companies/:cid/organizations', async (req, res) => {
    res.status(201).json(await contacts.createOrganization(em(), req.params.cid, parse(contacts.createOrganizationBody, req.body)));
  });
  return r;
}
