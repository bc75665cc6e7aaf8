import { MESSAGE_JSON, type Queryable } from '../chats/chat.store.js';
import type { MessageJson } from './message.view.js';

export interface NewMessage {
  id: string;
  company_id: string;
  chat_id: string;
  wamid: string | null;
  ref_wamid: string | null;
  type: string;
  origin: 'INBOUND' | 'API_OUTBOUND' | 'MOBILE_APP_ECHO' | 'SYSTEM';
  from_me: boolean;
  sent_via: 'CONTACT' | 'API' | 'MOBILE_DEVICE' | 'SYSTEM';
  status: string;
  body_text: string | null;
  content_payload: Record<string, unknown> | null;
  media: Record<string, unknown> | null;
  quoted_message_id: string | null;
  agent_id: string | null;
  user_id: string | null;
  is_history: boolean;
  is_forwarded: boolean;
  meta_timestamp: Date | null;
  created_at: Date;
}

const COLUMNS = [
  'id',
  'company_id',
  'chat_id',
  'wamid',
  'ref_wamid',
  'type',
  'origin',
  'from_me',
  'sent_via',
  'status',
  'body_text',
  'content_payload',
  'media',
  'quoted_message_id',
  'agent_id',
  'user_id',
  'is_history',
  'is_forwarded',
  'meta_timestamp',
  'created_at',
] as const satisfies readonly (keyof NewMessage)[];

const INSERT_SQL = `insert into messages (${COLUMNS.join(', ')}, updated_at)`;

/**
 * Inserts a message; with a wamid already stored in the chat (a repeated provider callback) nothing is written and
 * false comes back.
 */
export async function insertMessage(db: Queryable, m: NewMessage): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'messages_insert',
    text: `${INSERT_SQL} values (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}, $${COLUMNS.length}) on conflict (chat_id, wamid) do nothing`,
    values: COLUMNS.map((c) => {
      const v = m[c];
      return v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v;
    }),
  });
  return rowCount === 1;
}

/** The provider's answer to a send: its id and the status it gives, or the failure. */
export async function settleMessage(
  db: Queryable,
  id: string,
  r: {
    wamid: string | null;
    status: string;
    error_code: number | null;
    error_message: string | null;
    media?: Record<string, unknown> | null;
  },
): Promise<void> {
  await db.query({
    name: 'messages_settle',
    text: `update messages set wamid = $2, status = $3, error_code = $4, error_message = $5, media = coalesce($6, media), updated_at = now()
      where id = $1`,
    values: [id, r.wamid, r.status, r.error_code, r.error_message, r.media ? JSON.stringify(r.media) : null],
  });
}

export async function readMessage(db: Queryable, companyId: string, id: string): Promise<MessageJson | null> {
  const { rows } = await db.query<{ m: MessageJson }>({
    name: 'messages_read_one',
    text: `select ${MESSAGE_JSON('m')} as m from messages m where m.company_id = $1 and m.id = $2`,
    values: [companyId, id],
  });
  return rows[0]?.m ?? null;
}

/** A message of the chat by the provider's id (for quotes and reactions). */
export async function messageIdByWamid(db: Queryable, chatId: string, wamid: string): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>({
    name: 'messages_by_wamid',
    text: 'select id from messages where chat_id = $1 and wamid = $2',
    values: [chatId, wamid],
  });
  return rows[0]?.id ?? null;
}

/** The chat after a company message: its last message and activity, one more message without the contact's reply. */
export async function chatAfterOutbound(db: Queryable, chatId: string, messageId: string, at: Date): Promise<void> {
  await db.query({
    name: 'chats_after_outbound',
    text: `update chats set last_message_id = $2, last_activity_at = greatest(last_activity_at, $3), trailing_outbound_count = trailing_outbound_count + 1,
      started_by = coalesce(started_by, 'COMPANY'), updated_at = now() where id = $1`,
    values: [chatId, messageId, at],
  });
}

/** The chat after a contact's message: unread, its window reopened, replies counted again from zero. */
export async function chatAfterInbound(
  db: Queryable,
  chatId: string,
  messageId: string,
  at: Date,
  profileName: string | null,
): Promise<void> {
  await db.query({
    name: 'chats_after_inbound',
    text: `update chats set last_message_id = $2, last_activity_at = greatest(last_activity_at, $3), unread_count = unread_count + 1,
      last_customer_msg_at = greatest(coalesce(last_customer_msg_at, $3), $3), trailing_outbound_count = 0,
      started_by = coalesce(started_by, 'CONTACT'), remote_profile_name = coalesce($4, remote_profile_name), updated_at = now() where id = $1`,
    values: [chatId, messageId, at, profileName],
  });
}
