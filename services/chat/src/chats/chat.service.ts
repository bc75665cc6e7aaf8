import { notFound, requireUuid } from '@svc/platform/errors';
import type { Pool } from 'pg';
import type { CrmPeople } from '../people/crm-people.js';
import { listChats } from './chat.list.js';
import type { ListChatsQuery } from './chat.schema.js';
import { agentsOfAccount, type ChatRead, readChat } from './chat.store.js';
import { assignableView, type ChatLookups, chatDetailView, chatSummaryView, refsOfChat } from './chat.view.js';

/** The acting user of an integration key: the key's creator, in the key's company. */
export interface ChatActor {
  companyId: string;
  userId: string;
  permissions: (name: string) => boolean;
}

export class ChatService {
  constructor(
    private readonly pool: () => Promise<Pool>,
    readonly people: CrmPeople,
  ) {}

  poolOf(): Promise<Pool> {
    return this.pool();
  }

  /** The persons and users of these chats, one crm call each. */
  async lookups(companyId: string, chats: ChatRead[], extraUsers: string[] = []): Promise<ChatLookups> {
    const users = new Set(extraUsers);
    const persons = new Set<string>();
    for (const c of chats) refsOfChat(c, users, persons);
    const [p, u] = await Promise.all([this.people.personsById(companyId, persons), this.people.users(companyId, users)]);
    return { persons: p, users: u };
  }

  async list(actor: ChatActor, q: ListChatsQuery) {
    const byName = q.search ? await this.people.personIdsByName(actor.companyId, q.search) : null;
    const page = await listChats(await this.pool(), actor.companyId, q, byName);
    const l = await this.lookups(actor.companyId, page.rows);
    return { total: page.total, records: page.rows.map((c) => chatSummaryView(c, l)), next_cursor: page.nextCursor };
  }

  /** The chat of the actor's company, or 404 (another company's chat is not found either). */
  async read(companyId: string, id: string): Promise<ChatRead> {
    requireUuid(id, 'Chat');
    const chat = await readChat(await this.pool(), companyId, id);
    if (!chat) throw notFound('Chat');
    return chat;
  }

  async detail(companyId: string, id: string) {
    const chat = await this.read(companyId, id);
    const pool = await this.pool();
    const [assignable, flows, copilot] = await Promise.all([
      agentsOfAccount(pool, companyId, chat.channel_type, chat.channel_account_id),
      pool.query({
        name: 'flow_sessions_of_chat',
        text: 'select * from flow_sessions where company_id = $1 and chat_id = $2 order by started_at desc, id desc',
        values: [companyId, id],
      }),
      pool.query({
        name: 'copilot_pending_of_chat',
        text: `select * from copilot_actions where company_id = $1 and chat_id = $2 and status = 'PENDING' order by created_at, id`,
        values: [companyId, id],
      }),
    ]);
    const l = await this.lookups(
      companyId,
      [chat],
      assignable.map((a) => a.user_id),
    );
    return chatDetailView(chat, l, { assignable, flowSessions: flows.rows, copilotActions: copilot.rows });
  }

  async assignableAgents(companyId: string, id: string) {
    const chat = await this.read(companyId, id);
    const agents = await agentsOfAccount(await this.pool(), companyId, chat.channel_type, chat.channel_account_id);
    const users = await this.people.users(
      companyId,
      agents.map((a) => a.user_id),
    );
    return { total: agents.length, records: agents.map((a) => assignableView(a, users)) };
  }
}
