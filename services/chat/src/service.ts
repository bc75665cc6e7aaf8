import { env, serviceConfigSchema } from '@svc/platform/config';
import { askPlan } from '@svc/platform/events/plan';
import { apiRouter } from '@svc/platform/http/api';
import { requireAdmin } from '@svc/platform/http/app';
import { CrmPeer } from '@svc/platform/peers/crm';
import type { ServiceDefinition } from '@svc/platform/service';
import { Router } from 'express';
import { z } from 'zod';
import { accountAdminRoutes } from './accounts/account.http.js';
import { AccountService } from './accounts/account.service.js';
import { ChatActions } from './chats/chat.actions.js';
import { chatAdminRoutes } from './chats/chat.admin.http.js';
import { ChatAdmin } from './chats/chat.admin.js';
import { chatLinkGrpc } from './chats/chat.grpc.js';
import { chatRoutes } from './chats/chat.http.js';
import { ChatService } from './chats/chat.service.js';
import { dbDefinition, poolOf } from './db.js';
import { chatEvents } from './events/chat.events.contract.js';
import { IdempotentWrites } from './idempotency/idempotency.js';
import { inboundAdminRoutes } from './inbound/inbound.admin.js';
import { ChatInbound } from './inbound/inbound.sink.js';
import { MessageService } from './messages/message.service.js';
import { ChatCreation } from './outbound/outbound.create.js';
import { outboundRoutes } from './outbound/outbound.http.js';
import { MessageSender } from './outbound/outbound.sender.js';
import { CrmPeople } from './people/crm-people.js';
import { providerConfigShape } from './providers/config.js';
import { createProviderRegistry } from './providers/registry.js';
import { providerWebhooks } from './providers/webhook.js';
import { DirFileStore } from './scheduled/scheduled.files.js';
import { scheduledRoutes } from './scheduled/scheduled.http.js';
import { ScheduledService } from './scheduled/scheduled.service.js';
import { Scheduler } from './scheduled/scheduler.js';

const chatConfig = serviceConfigSchema.extend({
  CRM_GRPC_URL: env.hostPort,
  ...providerConfigShape,
  /** How often each replica looks for due scheduled messages. */
  SCHEDULER_INTERVAL_MS: z.coerce.number().int().min(50).default(1000),
  /** A scheduled message left PROCESSING this long is closed as FAILED (its replica died mid-send). */
  SCHEDULER_STALE_MS: z.coerce.number().int().min(1000).default(300_000),
  /** Where the files of scheduled messages wait until sent (decision 0067); every replica must see the same folder. */
  SCHEDULED_FILES_DIR: z.string().min(1).default('.data/chat-scheduled'),
  /** How often stored files no live scheduled message names are swept, and how old they must be (longer than an upload). */
  SCHEDULED_FILES_SWEEP_MS: z.coerce.number().int().min(100).default(600_000),
  SCHEDULED_FILES_GRACE_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(6 * 3_600_000),
});

interface Components {
  crm: CrmPeer;
  people: CrmPeople;
  accounts: AccountService;
  admin: ChatAdmin;
  chats: ChatService;
  messages: MessageService;
  sender: MessageSender;
  inbound: ChatInbound;
  scheduled: ScheduledService;
  scheduler: Scheduler;
  actions: ChatActions;
  creation: ChatCreation;
  idempotent: IdempotentWrites;
  pool: ReturnType<typeof poolOf>;
}

export const chatService: ServiceDefinition<typeof chatConfig, Components> = {
  name: 'chat',
  configSchema: chatConfig,
  defaults: { HTTP_PORT: '8083', GRPC_PORT: '9083', METRICS_PORT: '9183' },
  db: dbDefinition,
  setup: (ctx) => {
    const crm = new CrmPeer(ctx.config.CRM_GRPC_URL);
    const people = new CrmPeople(ctx.config.CRM_GRPC_URL);
    const pool = poolOf(ctx.orm);
    const chats = new ChatService(pool, people);
    const providers = createProviderRegistry(ctx.config);
    const sender = new MessageSender({ pool, people, outbox: ctx.outbox, providers });
    const files = new DirFileStore(ctx.config.SCHEDULED_FILES_DIR);
    return {
      actions: new ChatActions(pool, chats, people, providers, ctx.logger),
      creation: new ChatCreation(pool, chats, people, sender),
      scheduled: new ScheduledService(pool, chats, sender, files),
      scheduler: new Scheduler(pool, sender, {
        files,
        sweepMs: ctx.config.SCHEDULED_FILES_SWEEP_MS,
        graceMs: ctx.config.SCHEDULED_FILES_GRACE_MS,
        intervalMs: ctx.config.SCHEDULER_INTERVAL_MS,
        staleMs: ctx.config.SCHEDULER_STALE_MS,
        batch: 20,
        logger: ctx.logger,
      }),
      inbound: new ChatInbound({ pool, people, outbox: ctx.outbox, logger: ctx.logger, files }),
      sender,
      pool,
      crm,
      people,
      accounts: new AccountService(pool, crm),
      admin: new ChatAdmin(pool, crm),
      chats,
      messages: new MessageService(pool, people),
      idempotent: new IdempotentWrites(pool),
    };
  },
  http:
    (_ctx, { accounts, admin, chats, inbound, pool }) =>
    (app) => {
      // The management API (shared/design/admin-api.md): each folder adds its rows behind the one admin check.
      const r = Router();
      r.use((req, _res, next) => {
        requireAdmin(req);
        next();
      });
      accountAdminRoutes(r, accounts);
      chatAdminRoutes(r, admin, chats);
      inboundAdminRoutes(r, { chats, inbound, pool });
      app.use('/admin/v1', r);
    },
  // The providers' webhook callbacks carry no identity token: Meta signs them instead (X-Hub-Signature-256).
  events: chatEvents,
  unauthenticated: (ctx, { inbound }) => providerWebhooks({ config: ctx.config, sink: inbound, logger: ctx.logger }),
  // Each folder serves the routes whose contracts it declares (decision 0208).
  api: (_ctx, { chats, messages, scheduled, actions, creation, sender, idempotent }) => {
    const r = apiRouter();
    chatRoutes(r, { chats, messages, actions });
    outboundRoutes(r, { sender, creation, idempotent });
    scheduledRoutes(r, scheduled, idempotent);
    return [{ prefix: '/integrations/external', router: r }];
  },
  grpc: (ctx) => [chatLinkGrpc(poolOf(ctx.orm), ctx.logger)],
  // crm owns the plan: events of a company outside plan_valid_until are never written.
  plan: (_ctx, { crm }) => askPlan((companyId) => crm.getCompany(companyId)),
  workers: async (_ctx, { crm, people, scheduler }) => {
    scheduler.start();
    return async () => {
      await scheduler.stop();
      crm.close();
      people.close();
    };
  },
};
