import { requireAdmin } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import type { ServiceContext } from '@svc/platform/service';
import { type Express, Router } from 'express';
import * as schema from './company.schema.js';
import * as companies from './company.service.js';
import { companyView, keyView, userView } from './company.views.js';

/** Tenancy and access rows of the management API. */
export function companyAdminRoutes(ctx: ServiceContext): Router {
  const r = Router();
  const em = () => ctx.orm.em.fork();
  r.use((req, _res, next) => {
    requireAdmin(req);
    next();
  });

  r.post('/companies', async (req, res) => {
    const { company, master } = await companies.createCompany(em(), parse(schema.createCompanyBody, req.body));
    res.status(201).json(companyView(company, master));
  });
  r.get('/companies/:cid', async (req, res) => {
    const e = em();
    const company = await companies.requireCompany(e, req.params.cid);
    res.json(companyView(company, await companies.requireUser(e, company.id, company.masterUserId)));
  });
  r.patch('/companies/:cid', async (req, res) => {
    const { company, master } = await companies.updateCompany(em(), req.params.cid, parse(schema.updateCompanyBody, req.body));
    res.json(companyView(company, master));
  });
  r.post('/companies/:cid/users', async (req, res) => {
    const user = await companies.createUser(em(), req.params.cid, parse(schema.createUserBody, req.body));
    res.status(201).json(userView(user));
  });
  r.patch('/companies/:cid/users/:id', async (req, res) => {
    const user = await companies.updateUser(em(), req.params.cid, req.params.id, parse(schema.updateUserBody, req.body));
    res.json(userView(user));
  });
  r.post('/companies/:cid/keys', async (req, res) => {
    const { key, plain } = await companies.createKey(em(), req.params.cid, parse(schema.createKeyBody, req.body));
    res.status(201).json({ ...keyView(key), key: plain });
  });
  r.patch('/companies/:cid/keys/:id', async (req, res) => {
    const key = await companies.updateKey(em(), req.params.cid, req.params.id, parse(schema.updateKeyBody, req.body));
    res.json(keyView(key));
  });
  r.delete('/companies/:cid/keys/:id', async (req, res) => {
    const key = await companies.deleteKey(em(), req.params.cid, req.params.id);
    res.json({ id: key.id });
  });
  return r;
}

export const mountAdmin = (app: Express, router: Router) => app.use('/admin/v1', router);
