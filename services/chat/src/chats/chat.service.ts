import { notFound, requireUuid } from '@svc/platform/errors';
import type { Pool } from 'pg';
import { agentsOfAccount } from '../accounts/account.store.js';
import type { CrmPeople } from '../people/crm-people.js';
import { decodeCursor, encodeCursor, planList } from './chat.list.js';
import type { ListChatsQuery } from './chat.schema.js';
import { type ChatRead, listChats, readChat } from './chat.store.js';
import { assignableView, type ChatLookups, chatDetailView, chatSummaryView, refsOfChat } from './chat.view.js';
import { pendingActionsOfChat } from './copilot-action.store.js';
import { flowSessionsOfChat } from './flow-session.store.js';

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

  /** The persons and users of these chats, one crm call each. */
  async lookups(companyId: string, chats: ChatRead[], extraUsers: string[] = []): Promise<ChatLookups> {
    const users = new Set(extraUsers);
    const persons = new Set<string>();
    for (const c of chats) refsOfChat(c, users, persons);
    const [p, u] = await Promise.all([this.people.personsById(companyId, persons), this.people.users(companyId, users)]);
    return { persons: p, users: u };
  }

  async list(actor: ChatActor, q: ListChatsQuery) {
    const after = q.cursor ? decodeCursor(q.cursor) : undefined;
    const byName = q.search ? await this.people.personIdsByName(actor.companyId, q.search) : null;
    const take = q.take ?? 10;
    const page = await listChats(await this.pool(), planList(actor.companyId, q, byName), { take, after, skip: q.skip ?? 0 });
    const rows = page.rows.slice(0, take);
    const last = rows[rows.length - 1];
    const nextCursor = page.rows.length > take && last ? encodeCursor({ t: last.activityKey, i: last.id }) : null;
    const l = await this.lookups(actor.companyId, rows);
    return { total: page.total, records: rows.map((c) => chatSummaryView(c, l)), next_cursor: nextCursor };
  }

  /** Another company's chat is a 404 too. */
  async read(companyId: string, id: string): Promise<ChatRead> {
    requireUuid(id, 'Chat');
    const chat = await readChat(await this.pool(), companyId, id);
    if (!chat) throw notFound('Chat');
    return chat;
  }

  async detail(companyId: string, id: string) {
    const chat = await this.read(companyId, id);
    const pool = await this.pool();
    const [assignable, flowSessions, copilotActions] = await Promise.all([
      agentsOfAccount(pool, companyId, chat.channelType, chat.channelAccountId),
      flowSessionsOfChat(pool, companyId, id),
      pendingActionsOfChat(pool, companyId, id),
    ]);
    const l = await this.lookups(
      companyId,
      [chat],
      assignable.map((a) => a.userId),
    );
    return chatDetailView(chat, l, { assignable, flowSessions, copilotActions });
  }

  async assignableAgents(companyId: string, id: string) {
    const chat = await this.read(companyId, id);
    const agents = await agentsOfAccount(await this.pool(), companyId, chat.channelType, chat.channelAccountId);
    const users = await this.people.users(
      companyId,
      agents.map((a) => a.userId),
    );
    return { total: agents.length, records: agents.map((a) => assignableView(a, users)) };
  }
}
