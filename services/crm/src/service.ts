import { env, serviceConfigSchema } from '@svc/platform/config';
import type { ServiceDefinition } from '@svc/platform/service';
import { z } from 'zod';
import { customFieldRoutes } from './catalog/custom-field.http.js';
import { referenceAdminRoutes } from './catalog/reference.http.js';
import { ChatLinks } from './chats/chat-links.js';
import { crmGrpc } from './companies/company.grpc.js';
import { companyAdminRoutes } from './companies/company.http.js';
import { KeyLookups } from './companies/key-lookups.js';
import { crmPlan } from './companies/plan.js';
import { contractEvents } from './contracts/contract.events.js';
import { contractAdminRoutes } from './contracts/contract.http.js';
import { Contracts } from './contracts/contract.service.js';
import { customerAdminRoutes } from './customers/customer.http.js';
import { Customers } from './customers/customer.service.js';
import { dbDefinition, type PoolOf, poolOf } from './db.js';
import { dealAdminRoutes, dealRoutes } from './deals/deal.http.js';
import { DealList, dealListRoutes } from './deals/deal.list.js';
import { Deals } from './deals/deal.service.js';
import { deliveryEvents } from './deliveries/delivery.events.js';
import { deliveryAdminRoutes } from './deliveries/delivery.http.js';
import { Deliveries } from './deliveries/delivery.service.js';
import { fileCountGrpc } from './files/file-count.grpc.js';
import { leadAdminRoutes, leadRoutes } from './leads/lead.http.js';
import { Leads } from './leads/lead.service.js';
import { findOrCreateConversionTool, findOrCreateLeadSource, resolveOrigin } from './marketing/origin.js';
import { personGrpc } from './persons/person.grpc.js';
import { proposalGrpc } from './proposals/proposal.grpc.js';
import { proposalAdminRoutes, proposalRoutes } from './proposals/proposal.http.js';
import { Proposals } from './proposals/proposal.service.js';
import { attemptOwnerOf } from './sales/sales.attempts.store.js';
import { crmEvents } from './sales/sales.events.js';
import type { OriginSource } from './sales/sales.origins.js';
import { CoalescedTasks } from './sales/sales.tasks.js';
import { satisfactionEvents } from './satisfaction/satisfaction.contract.js';
import { satisfactionPublicRoutes, satisfactionRoutes } from './satisfaction/satisfaction.http.js';
import { PUBLIC_PATH, Satisfaction } from './satisfaction/satisfaction.service.js';
import { recordGrpc } from './summaries/summary.grpc.js';
import { TaskCounts } from './tasks/task-counts.js';

const crmConfig = serviceConfigSchema.extend({
  /** The gateway's public address, for the URLs of satisfaction links; unset, the address the integration called. */
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
  /** Unset: chat fields are empty. */
  CHAT_GRPC_URL: env.hostPort.optional(),
  /** Unset: associations_count.tasks is 0. */
  TASKS_GRPC_URL: env.hostPort.optional(),
});

interface Components {
  pool: PoolOf;
  chatLinks: ChatLinks;
  taskCounts: TaskCounts;
  keys: KeyLookups;
  leads: Leads;
  deals: Deals;
  dealList: DealList;
  proposals: Proposals;
  deliveries: Deliveries;
  contracts: Contracts;
  satisfaction: Satisfaction;
  customers: Customers;
}

export function marketingOrigins(pool: PoolOf): OriginSource {
  return {
    resolve: async (companyId, request) => resolveOrigin(await pool(), companyId, request),
    leadSource: async (companyId, name) => findOrCreateLeadSource(await pool(), companyId, name),
    conversionTool: async (companyId, name) => findOrCreateConversionTool(await pool(), companyId, name),
  };
}

export const crmService: ServiceDefinition<typeof crmConfig, Components> = {
  name: 'crm',
  configSchema: crmConfig,
  defaults: { HTTP_PORT: '8081', GRPC_PORT: '9081', METRICS_PORT: '9181' },
  db: dbDefinition,
  setup: (ctx) => {
    const chatLinks = new ChatLinks(ctx.config.CHAT_GRPC_URL, ctx.logger);
    const taskCounts = new TaskCounts(ctx.config.TASKS_GRPC_URL, ctx.logger);
    const pool = poolOf(ctx.orm);
    const sales = { origins: marketingOrigins(pool), sources: { chats: chatLinks, tasks: new CoalescedTasks(taskCounts) } };
    const leads = new Leads(ctx, sales);
    const deals = new Deals(ctx, leads, sales);
    return {
      pool,
      chatLinks,
      taskCounts,
      keys: new KeyLookups(ctx.config.DATABASE_URL, ctx.schema, ctx.logger),
      leads,
      deals,
      dealList: new DealList(deals.store),
      deliveries: new Deliveries(pool, ctx.outbox),
      contracts: new Contracts(pool, ctx.outbox),
      satisfaction: new Satisfaction(pool, ctx.outbox),
      proposals: new Proposals(pool),
      customers: new Customers(pool),
    };
  },
  http:
    (_ctx, { pool, leads, deals, deliveries, contracts, proposals, customers }) =>
    (app) => {
      app.use('/admin/v1', companyAdminRoutes(pool), referenceAdminRoutes(pool), leadAdminRoutes(leads), dealAdminRoutes(deals));
      app.use('/admin/v1', deliveryAdminRoutes(deliveries), contractAdminRoutes(contracts), proposalAdminRoutes(proposals));
      app.use('/admin/v1', customerAdminRoutes(customers));
    },
  // The satisfaction form posts urlencoded as well as JSON (decision 0110).
  httpOwnBody:
    (ctx, { satisfaction }) =>
    (app) => {
      app.use(PUBLIC_PATH, satisfactionPublicRoutes(satisfaction, ctx.logger));
    },
  api: (ctx, { pool, leads, deals, dealList, satisfaction, proposals }) => [
    { prefix: '/integrations/external', router: proposalRoutes(proposals) },
    { prefix: '/integrations/external', router: leadRoutes(leads) },
    { prefix: '/integrations/external', router: dealRoutes(deals) },
    { prefix: '/integrations/external', router: dealListRoutes(dealList) },
    { prefix: '/integrations/external', router: customFieldRoutes(pool) },
    { prefix: '/integrations/external', router: satisfactionRoutes(satisfaction, ctx.config.PUBLIC_BASE_URL) },
  ],
  events: [...crmEvents, ...deliveryEvents, ...contractEvents, ...satisfactionEvents],
  grpc: (ctx, { pool, keys, leads, deals, proposals }) => [
    crmGrpc(ctx.logger, pool, keys),
    recordGrpc(ctx.logger, pool),
    personGrpc(ctx.logger, pool, { leads, deals }),
    fileCountGrpc(ctx.logger, pool),
    proposalGrpc(ctx, proposals),
  ],
  workers: async (ctx, { leads, chatLinks, taskCounts, keys }) => {
    leads.views.start();
    const owner = attemptOwnerOf(ctx);
    return async () => {
      await leads.views.stop();
      await owner.stop();
      chatLinks.close();
      taskCounts.close();
      await keys.close();
    };
  },
  plan: crmPlan,
};
