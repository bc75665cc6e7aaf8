import { env, serviceConfigSchema } from '@svc/platform/config';
import { nativePool } from '@svc/platform/db/native';
import { CrmPeer, planValidAt } from '@svc/platform/peers/crm';
import type { ServiceDefinition } from '@svc/platform/service';
import { chatAdminRoutes } from './accounts/account.http.js';
import { AccountService } from './accounts/account.service.js';
import { ChatAdmin } from './chats/chat.admin.js';
import { chatRoutes } from './chats/chat.http.js';
import { ChatService } from './chats/chat.service.js';
import { chatEntities } from './entities.js';
import { sendRoutes } from './messages/message.http.js';
import { MessageSender } from './messages/message.send.js';
import { MessageService } from './messages/message.service.js';
import { migrations } from './migrations/index.js';
import { CrmPeople } from './people/crm-people.js';
import { providerConfigShape } from './providers/config.js';
import { createProviderRegistry } from './providers/registry.js';

const chatConfig = serviceConfigSchema.extend({
  CRM_GRPC_URL: env.hostPort,
  ...providerConfigShape,
});

interface Components {
  crm: CrmPeer;
  people: CrmPeople;
  accounts: AccountService;
  admin: ChatAdmin;
  chats: ChatService;
  messages: MessageService;
  sender: MessageSender;
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
    return {
      sender: new MessageSender({ pool, chats, people, crm, providers, schema: ctx.schema }),
      crm,
      people,
      accounts: new AccountService(pool, crm),
      admin: new ChatAdmin(pool, crm),
      chats,
      messages: new MessageService(pool, chats, people),
    };
  },
  http:
    (_ctx, { accounts, admin, chats, sender }) =>
    (app) => {
      app.use('/admin/v1', chatAdminRoutes(accounts, admin, chats));
      app.use('/integrations/external', sendRoutes(sender));
    },
  api: (_ctx, { chats, messages }) => [{ prefix: '/integrations/external', router: chatRoutes(chats, messages) }],
  // crm owns the plan: events of a company outside plan_valid_until are never written (asked over gRPC, cached 2 s).
  eventGate: async (_em, companyId, at, { crm }) => planValidAt(await crm.getCompany(companyId), at),
  workers: async (_ctx, { crm, people }) => {
    return async () => {
      crm.close();
      people.close();
    };
  },
};
