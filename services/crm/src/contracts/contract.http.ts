import { parse } from '@svc/platform/http/parse';
import type { Router } from 'express';
import { adminRouter, companyParam } from '../sales/sales.http.js';
import { cancelContractBody, completeContractBody, createContractBody, renewContractBody, updateContractBody } from './contract.schema.js';
import type { Contracts } from './contract.service.js';

/** The contract routes of the management API (admin-api.md); each answers the ContractSnapshot. */
export function contractAdminRoutes(contracts: Contracts): Router {
  const r = adminRouter();
  const cid = (v: string | undefined) => companyParam(String(v));
  r.post('/companies/:cid/contracts', async (req, res) => {
    res.status(201).json(await contracts.create(cid(req.params.cid), parse(createContractBody, req.body)));
  });
  r.get('/companies/:cid/contracts/:id', async (req, res) => {
    res.json(await contracts.get(cid(req.params.cid), req.params.id));
  });
  r.patch('/companies/:cid/contracts/:id', async (req, res) => {
    res.json(await contracts.update(cid(req.params.cid), req.params.id, parse(updateContractBody, req.body)));
  });
  r.post('/companies/:cid/contracts/:id/cancel', async (req, res) => {
    res.json(await contracts.cancel(cid(req.params.cid), req.params.id, parse(cancelContractBody, req.body)));
  });
  r.post('/companies/:cid/contracts/:id/renew', async (req, res) => {
    res.json(await contracts.renew(cid(req.params.cid), req.params.id, parse(renewContractBody, req.body)));
  });
  r.post('/companies/:cid/contracts/:id/complete', async (req, res) => {
    res.json(await contracts.complete(cid(req.params.cid), req.params.id, parse(completeContractBody, req.body)));
  });
  return r;
}
