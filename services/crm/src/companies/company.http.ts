import { requireAdmin } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import { type Express, Router } from 'express';
import type { PoolOf } from '../db.js';
import * as schema from './company.schema.js';
import * as companies from './company.service.js';
import { companyView, keyView, userView } from './company.views.js';

/** Tenancy and access rows of the management API. */
export function companyAdminRoutes(pool: PoolOf): Router {
  const r = Router();
  r.use((req, _res, next) => {
    requireAdmin(req);
    next();
  });

  r.post('/companies', async (req, res) => {
    const { company, master } = await companies.createCompany(await pool(), parse(schema.createCompanyBody, req.body));
    res.status(201).json(companyView(company, master));
  });
  r.get('/companies/:cid', async (req, res) => {
    const { company, master } = await companies.getCompany(await pool(), req.params.cid);
    res.json(companyView(company, master));
  });
  r.patch('/companies/:cid', async (req, res) => {
    const { company, master } = await companies.updateCompany(await pool(), req.params.cid, parse(schema.updateCompanyBody, req.body));
    res.json(companyView(company, master));
  });
  r.post('/companies/:cid/users', async (req, res) => {
    const user = await companies.createUser(await pool(), req.params.cid, parse(schema.createUserBody, req.body));
    res.status(201).json(userView(user));
  });
  r.patch('/companies/:cid/users/:id', async (req, res) => {
    const user = await companies.updateUser(await pool(), req.params.cid, req.params.id, parse(schema.updateUserBody, req.body));
    res.json(userView(user));
  });
  r.post('/companies/:cid/keys', async (req, res) => {
    const { key, plain } = await companies.createKey(await pool(), req.params.cid, parse(schema.createKeyBody, req.body));
    res.status(201).json({ ...keyView(key), key: plain });
  });
  r.patch('/companies/:cid/keys/:id', async (req, res) => {
    const key = await companies.updateKey(await pool(), req.params.cid, req.params.id, parse(schema.updateKeyBody, req.body));
    res.json(keyView(key));
  });
  r.delete('/companies/:cid/keys/:id', async (req, res) => {
    const key = await companies.deleteKey(await pool(), req.params.cid, req.params.id);
    res.json({ id: key.id });
  });
  return r;
}

export const mountAdmin = (app: Express, router: Router) => app.use('/admin/v1', router);
