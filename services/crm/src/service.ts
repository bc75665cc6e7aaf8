import type { ServiceDefinition } from '@svc/platform/service';
import { referenceAdminRoutes } from './catalog/reference.http.js';
import { Company } from './companies/company.entity.js';
import { crmGrpc } from './companies/company.grpc.js';
import { companyAdminRoutes } from './companies/company.http.js';
import { dbDefinition } from './db.js';
import { leadRoutes } from './leads/lead.http.js';
import { recordGrpc } from './records/record.grpc.js';

export const crmService: ServiceDefinition = {
  name: 'crm',
  defaults: { HTTP_PORT: '8081', GRPC_PORT: '9081' },
  db: dbDefinition,
  http: (ctx) => (app) => {
    app.use('/admin/v1', companyAdminRoutes(ctx), referenceAdminRoutes(ctx));
    app.use('/integrations/external', leadRoutes(ctx));
  },
  grpc: (ctx) => [crmGrpc(ctx), recordGrpc(ctx)],
  // crm owns the plan: events of a company outside plan_valid_until are never written.
  eventGate: async (em, companyId, at) => {
    const company = await em.findOne(Company, { id: companyId });
    return company !== null && (!company.planValidUntil || company.planValidUntil > at);
  },
};
