import { forbidden } from '@svc/platform/errors';
import { apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import { hasPermission, type Identity } from '@svc/platform/identity';
import { createLeadBody } from './lead.schema.js';
import type { Leads } from './lead.service.js';

const need = (identity: Identity, permission: string) => {
  if (!hasPermission(identity, permission)) throw forbidden(`The key lacks the permission ${permission}`);
};

export function leadRoutes(leads: Leads) {
  const r = apiRouter();
  r.post('/leads', async (req, res) => {
    const identity = integrationOf(req);
    need(identity, 'crm/lead.create');
    const body = parse(createLeadBody, req.body);
    res.status(201).json(await leads.create(identity, body));
  });
  r.get('/leads/:ref', async (req, res) => {
    const identity = integrationOf(req);
    need(identity, 'crm/lead.read');
    res.json(await leads.detail(identity, req.params.ref ?? ''));
  });
  return r;
}
