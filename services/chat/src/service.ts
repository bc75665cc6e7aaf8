import { env, serviceConfigSchema } from '@svc/platform/config';
import { nativePool } from '@svc/platform/db/native';
import { askPlan } from '@svc/platform/events/plan';
import { CrmPeer } from '@svc/platform/peers/crm';
import type { ServiceDefinition } from '@svc/platform/service';
import { z } from 'zod';
import { chatAdminRoutes } from './accounts/account.http.js';
import { AccountService } from './accounts/account.service.js';
import { ChatActions } from './chats/chat.actions.js';
import { ChatAdmin } from './chats/chat.admin.js';
import { chatEvents } from './chats/chat.contract.js';
import { ChatCreation } from './chats/chat.create.js';
import { chatLinkGrpc } from './chats/chat.grpc.js';
import { chatRoutes } from './chats/chat.http.js';
import { ChatService } from './chats/chat.service.js';
import { chatEntities } from './entities.js';
import { IdempotentWrites } from './idempotency/idempotency.js';
import { ChatInbound } from './inbound/inbound.sink.js';
import { MessageSender } from './messages/message.send.js';
import { MessageService } from './messages/message.service.js';
import { migrations } from './migrations/index.js';
import { CrmPeople } from './people/crm-people.js';
import { providerConfigShape } from './providers/config.js';
import { createProviderRegistry } from './providers/registry.js';
import { providerWebhooks } from './providers/webhook.js';
import { DirFileStore } from './scheduled/scheduled.files.js';
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
}

/** The chat bounded context: numbers, accounts, agents, templates, chats, messages and scheduled messages. */
export const chatService: ServiceDefinition<typeof chatConfig, Components> = {
  name: 'chat',
  configSchema: chatConfig,
  defaults: { HTTP_PORT: '8083', GRPC_PORT: '9083' },
  db: { schema: 'chat', entities: chatEntities, migrations },
  setup: (ctx) => {
    const crm = new CrmPeer(ctx.config.CRM_GRPC_URL);
    const people = new CrmPeople(ctx.config.CRM_GRPC_URL);
    const pool = () => nativePool(ctx.orm);
    const chats = new ChatService(pool, people);
    const providers = createProviderRegistry(ctx.config);
    const sender = new MessageSender({ pool, chats, people, outbox: ctx.outbox, providers });
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
      crm,
      people,
      accounts: new AccountService(pool, crm),
      admin: new ChatAdmin(pool, crm),
      chats,
      messages: new MessageService(pool, chats, people),
      idempotent: new IdempotentWrites(pool),
    };
  },
  http:
    (_ctx, { accounts, admin, chats, inbound }) =>
    (app) => {
      app.use('/admin/v1', chatAdminRoutes(accounts, admin, chats, inbound));
    },
  // The providers' webhook callbacks carry no identity token: Meta signs them instead (X-Hub-Signature-256).
  events: chatEvents,
  unauthenticated: (ctx, { inbound }) => providerWebhooks({ config: ctx.config, sink: inbound, logger: ctx.logger }),
  api: (_ctx, { chats, messages, scheduled, actions, creation, sender, idempotent }) => [
    { prefix: '/integrations/external', router: chatRoutes({ chats, messages, scheduled, actions, creation, sender, idempotent }) },
  ],
  grpc: (ctx) => [chatLinkGrpc(() => nativePool(ctx.orm), ctx.logger)],
  // crm owns the plan: events of a company outside plan_valid_until are never written (asked over gRPC, cached 2 s).
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
