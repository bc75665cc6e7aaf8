import type { Pool } from 'pg';
import type { ChatActor, ChatService } from '../chats/chat.service.js';
import type { CrmPeople } from '../people/crm-people.js';
import { listMessages } from './message.list.js';
import type { ListMessagesQuery } from './message.schema.js';
import { messageView, usersOf } from './message.view.js';

export class MessageService {
  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly chats: ChatService,
    private readonly people: CrmPeople,
  ) {}

  async list(actor: ChatActor, chatId: string, q: ListMessagesQuery) {
    await this.chats.read(actor.companyId, chatId);
    const page = await listMessages(await this.pool(), actor.companyId, chatId, q);
    const ids = new Set<string>();
    for (const m of page.messages) usersOf(m, ids);
    for (const { message } of page.quoted.values()) usersOf(message, ids);
    const users = await this.people.users(actor.companyId, ids);
    return {
      total: page.total,
      records: page.messages.map((m) => {
        const q = m.quoted_message_id ? page.quoted.get(m.quoted_message_id) : undefined;
        return messageView(m, users, q ? { ...messageView(q.message, users), page: q.page } : null);
      }),
    };
  }
}
