import type { PoolClient } from 'pg';

export type Queryable = Pick<PoolClient, 'query'>;

/** A row of `chats` (pg returns timestamps as text on MikroORM's pool, hence the union). */
export interface ChatRow {
  id: string;
  company_id: string;
  channel_type: 'WHATSAPP' | 'INSTAGRAM';
  chat_type: string;
  channel_account_id: string;
  wa_contact_id: string | null;
  contact_name: string | null;
  contact_number: string | null;
  remote_profile_name: string | null;
  external_contact_id: string | null;
  external_contact_handle: string | null;
  external_contact_display_name: string | null;
  external_contact_avatar_url: string | null;
  person_id: string | null;
  status: string;
  priority: number;
  unread_count: number;
  is_manually_unread: boolean;
  archived_at: Date | string | null;
  last_customer_msg_at: Date | string | null;
  last_message_id: string | null;
  last_activity_at: Date | string;
  assigned_agent_id: string | null;
  started_by: string | null;
  trailing_outbound_count: number;
  ai_agent_id: string | null;
  ai_message_count: number;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface AgentRef {
  agent_id: string;
  user_id: string;
  status: string;
}

/** A chat with what its views show from this service's own tables, read in one statement. */
export interface ChatRead extends ChatRow {
  /** The text of last_activity_at as Postgres prints it (full precision), for cursors. */
  activity_key: string;
  number: {
    id: string;
    display_number: string;
    raw_number: string;
    phone_number_id: string;
    verified_name: string | null;
    provider_status: string;
    provider: string;
    business_account_id: string | null;
  } | null;
  instagram: {
    id: string;
    handle: string;
    display_name: string;
    external_account_id: string;
    provider_status: string;
    provider: string;
  } | null;
  last_message: Record<string, unknown> | null;
  assigned_agent: AgentRef | null;
  participants: AgentRef[];
  pending_copilot_actions_count: number;
}

/** A message row as JSON, with its reactions (the view of messages.view.ts reads this shape). */
export const MESSAGE_JSON = (m: string) => `(to_jsonb(${m}) || jsonb_build_object(
  'agent_user_id', (select ag.user_id from agents ag where ag.id = ${m}.agent_id),
  'reactions', coalesce((
    select jsonb_agg(jsonb_build_object('id', r.id, 'emoji', r.emoji, 'actor', r.actor, 'reactor_wa_id', r.reactor_wa_id,
      'reactor_user_id', r.reactor_user_id, 'created_at', r.created_at) order by r.created_at, r.id)
    from message_reactions r where r.message_id = ${m}.id), '[]'::jsonb)))`;

/** The joined read of chats: `where`/`order` are appended (the chat is `c`). */
export const CHAT_SELECT = `
select c.*, c.last_activity_at::text as activity_key,
  (select json_build_object('id', n.id, 'display_number', n.display_number, 'raw_number', n.raw_number,
      'phone_number_id', n.phone_number_id, 'verified_name', n.verified_name, 'provider_status', n.provider_status,
      'provider', n.provider, 'business_account_id', n.business_account_id)
     from whatsapp_numbers n where c.channel_type = 'WHATSAPP' and n.id = c.channel_account_id) as number,
  (select json_build_object('id', i.id, 'handle', i.handle, 'display_name', i.display_name,
      'external_account_id', i.external_account_id, 'provider_status', i.provider_status, 'provider', i.provider)
     from instagram_accounts i where c.channel_type = 'INSTAGRAM' and i.id = c.channel_account_id) as instagram,
  (select ${MESSAGE_JSON('m')} from messages m where m.id = c.last_message_id) as last_message,
  (select json_build_object('agent_id', a.id, 'user_id', a.user_id, 'status', a.status)
     from agents a where a.id = c.assigned_agent_id) as assigned_agent,
  coalesce((select json_agg(json_build_object('agent_id', a.id, 'user_id', a.user_id, 'status', a.status) order by p.created_at, a.id)
     from chat_participants p join agents a on a.id = p.agent_id where p.chat_id = c.id), '[]'::json) as participants,
  (select count(*)::int from copilot_actions ca where ca.chat_id = c.id and ca.status = 'PENDING') as pending_copilot_actions_count
from chats c`;

export async function readChat(db: Queryable, companyId: string, id: string): Promise<ChatRead | null> {
  const { rows } = await db.query<ChatRead>({
    name: 'chats_read_one',
    text: `${CHAT_SELECT} where c.company_id = $1 and c.id = $2`,
    values: [companyId, id],
  });
  return rows[0] ?? null;
}

/** Locks a chat row for the rest of the transaction; false when the company has no such chat. */
export async function lockChat(db: Queryable, companyId: string, id: string): Promise<ChatRow | null> {
  const { rows } = await db.query<ChatRow>({
    name: 'chats_lock',
    text: 'select * from chats where company_id = $1 and id = $2 for update',
    values: [companyId, id],
  });
  return rows[0] ?? null;
}

/** The agents that may act on a channel account (a number or an Instagram account), active ones first. */
export async function agentsOfAccount(db: Queryable, companyId: string, channelType: string, accountId: string): Promise<AgentRef[]> {
  const column = channelType === 'INSTAGRAM' ? 'instagram_account_ids' : 'whatsapp_number_ids';
  const { rows } = await db.query<AgentRef>({
    name: `agents_of_${column}`,
    text: `select id as agent_id, user_id, status from agents where company_id = $1 and $2::uuid = any(${column})
      order by (status = 'ACTIVE') desc, created_at, id`,
    values: [companyId, accountId],
  });
  return rows;
}
