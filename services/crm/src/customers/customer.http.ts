import { parse, parseQuery } from '@svc/platform/http/parse';
import type { Router } from 'express';
import { adminRouter, companyParam } from '../sales/sales.http.js';
import { createCustomerBody, listCustomersQuery } from './customer.schema.js';
import type { Customers } from './customer.service.js';

/** Decision 0165. */
export function customerAdminRoutes(customers: Customers): Router {
  const r = adminRouter();
  const cid = (v: string | undefined) => companyParam(String(v));
  r.get('/companies/:cid/customers', async (req, res) => {
    res.json(await customers.list(cid(req.params.cid), parseQuery(listCustomersQuery, req.query)));
  });
  r.get('/companies/:cid/customers/:id', async (req, res) => {
    res.json(await customers.get(cid(req.params.cid), req.params.id));
  });
  // 201 when the customer is made, 200 with the one the person or organization already is.
  r.post('/companies/:cid/customers', async (req, res) => {
    const { created, customer } = await customers.create(cid(req.params.cid), parse(createCustomerBody, req.body));
    res.status(created ? 201 : 200).json(customer);
  });
  return r;
}
