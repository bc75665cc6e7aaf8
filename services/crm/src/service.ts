import type { serviceConfigSchema } from '@svc/platform/config';
import type { ServiceDefinition } from '@svc/platform/service';
import { customFieldRoutes } from './catalog/custom-field.http.js';
import { referenceAdminRoutes } from './catalog/reference.http.js';
import { crmGrpc } from './companies/company.grpc.js';
import { companyAdminRoutes } from './companies/company.http.js';
import { crmPlan } from './companies/plan.js';
import { dbDefinition } from './db.js';
import { dealAdminRoutes, dealRoutes } from './deals/deal.http.js';
import { DealList, dealListRoutes } from './deals/deal.list.js';
import { Deals } from './deals/deal.service.js';
import { leadAdminRoutes, leadRoutes } from './leads/lead.http.js';
import { Leads } from './leads/lead.service.js';
import { recordGrpc } from './records/record.grpc.js';

interface Components {
  leads: Leads;
  deals: Deals;
  dealList: DealList;
}

export const crmService: ServiceDefinition<typeof serviceConfigSchema, Components> = {
  name: 'crm',
  defaults: { HTTP_PORT: '8081', GRPC_PORT: '9081' },
  db: dbDefinition,
  setup: (ctx) => {
    const leads = new Leads(ctx);
    const deals = new Deals(ctx, leads);
    return { leads, deals, dealList: new DealList(ctx.orm, deals.sql) };
  },
  http:
    (ctx, { leads, deals }) =>
    (app) => {
      app.use('/admin/v1', companyAdminRoutes(ctx), referenceAdminRoutes(ctx), leadAdminRoutes(leads), dealAdminRoutes(deals));
    },
  api: (ctx, { leads, deals, dealList }) => [
    { prefix: '/integrations/external', router: leadRoutes(leads) },
    { prefix: '/integrations/external', router: dealRoutes(deals) },
    { prefix: '/integrations/external', router: dealListRoutes(dealList) },
    { prefix: '/integrations/external', router: customFieldRoutes(ctx) },
  ],
  grpc: (ctx) => [crmGrpc(ctx), recordGrpc(ctx)],
  workers: async (_ctx, { leads }) => {
    leads.views.start();
    return () => leads.views.stop();
  },
  plan: crmPlan,
};
