import { MESSAGE_JSON, type Queryable } from '../chats/chat.store.js';
import type { ListMessagesQuery } from './message.schema.js';
import type { MessageJson } from './message.view.js';

export interface MessagePage {
  total: number;
  messages: MessageJson[];
  /** Quoted messages of the page, with the page (same take and order, no search) where each sits. */
  quoted: Map<string, { message: MessageJson; page: number }>;
}

/** A page of a chat's messages in chronological order (created_at, id), ascending or descending. */
export async function listMessages(db: Queryable, companyId: string, chatId: string, q: ListMessagesQuery): Promise<MessagePage> {
  const take = q.take ?? 20;
  const desc = (q.order ?? 'desc') === 'desc';
  const values: unknown[] = [companyId, chatId];
  let where = 'm.company_id = $1 and m.chat_id = $2';
  if (q.search) {
    values.push(`%${q.search.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`);
    where += ` and (m.body_text ilike $3 or m.transcription ilike $3)`;
  }
  const dir = desc ? 'desc' : 'asc';
  const [page, count] = await Promise.all([
    db.query<{ m: MessageJson }>(
      `select ${MESSAGE_JSON('m')} as m from messages m where ${where} order by m.created_at ${dir}, m.id ${dir} limit $${values.length + 1} offset $${values.length + 2}`,
      [...values, take, q.skip ?? 0],
    ),
    db.query<{ total: number }>(`select count(*)::int as total from messages m where ${where}`, values),
  ]);
  const messages = page.rows.map((r) => r.m);
  const quotedIds = [...new Set(messages.map((m) => m.quoted_message_id).filter((id): id is string => id !== null))];
  const quoted = new Map<string, { message: MessageJson; page: number }>();
  if (quotedIds.length) {
    // Messages before the quoted one in the list's order, counted without the search: its page at this take.
    const cmp = desc ? '>' : '<';
    const { rows } = await db.query<{ m: MessageJson; before: number }>(
      `select ${MESSAGE_JSON('q')} as m,
         (select count(*)::int from messages o where o.chat_id = q.chat_id and (o.created_at, o.id) ${cmp} (q.created_at, q.id)) as before
       from messages q where q.company_id = $1 and q.chat_id = $2 and q.id = any($3::uuid[])`,
      [companyId, chatId, quotedIds],
    );
    for (const r of rows) quoted.set(r.m.id, { message: r.m, page: Math.floor(r.before / take) + 1 });
  }
  return { total: count.rows[0]!.total, messages, quoted };
}
