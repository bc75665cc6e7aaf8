import type { Pool } from 'pg';
import type { CrmPeople } from '../people/crm-people.js';
import type { ListMessagesQuery } from './message.schema.js';
import { listMessages } from './message.store.js';
import { messageView, usersOf } from './message.view.js';

/** Called once the chat's route has found the chat in the company. */
export class MessageService {
  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly people: CrmPeople,
  ) {}

  async list(companyId: string, chatId: string, q: ListMessagesQuery) {
    const page = await listMessages(await this.pool(), companyId, chatId, q);
    const ids = new Set<string>();
    for (const m of page.messages) usersOf(m, ids);
    for (const { message } of page.quoted.values()) usersOf(message, ids);
    const users = await this.people.users(companyId, ids);
    return {
      total: page.total,
      records: page.messages.map((m) => {
        const q = m.quotedMessageId ? page.quoted.get(m.quotedMessageId) : undefined;
        return messageView(m, users, q ? { ...messageView(q.message, users), page: q.page } : null);
      }),
    };
  }
}
