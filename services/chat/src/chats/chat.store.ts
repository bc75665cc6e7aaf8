import { type Stored, tableOf, type Written } from '@svc/platform/db/entity-table';
import type { Queryable } from '@svc/platform/db/native';
import type { PersonChat } from '@svc/proto/chat/v1/chat';
import { Agent, InstagramAccount, WhatsappNumber } from '../accounts/account.entity.js';
import type { AgentRef, StoredInstagram, StoredNumber } from '../accounts/account.store.js';
import { insertMessageFrom, type MessageRead, messageJson, type NewMessage } from '../messages/message.store.js';
import { Chat } from './chat.entity.js';

export type StoredChat = Stored<Chat>;

const CHAT = tableOf(Chat);
const NUMBER_SHOWN = [
  'id',
  'displayNumber',
  'rawNumber',
  'phoneNumberId',
  'verifiedName',
  'providerStatus',
  'provider',
  'businessAccountId',
] as const;
const INSTAGRAM_SHOWN = ['id', 'handle', 'displayName', 'externalAccountId', 'providerStatus', 'provider'] as const;

/** A chat with what its views show from this service's own tables, read in one statement. */
export interface ChatRead extends StoredChat {
  /** The text of last_activity_at as Postgres prints it (full precision), for cursors. */
  activityKey: string;
  number: Pick<StoredNumber, (typeof NUMBER_SHOWN)[number]> | null;
  instagram: Pick<StoredInstagram, (typeof INSTAGRAM_SHOWN)[number]> | null;
  lastMessage: MessageRead | null;
  assignedAgent: AgentRef | null;
  participants: AgentRef[];
  pendingCopilotActionsCount: number;
}

const agentJson = (a: string) => `json_build_object('agentId', ${a}.id, 'userId', ${a}.user_id, 'status', ${a}.status)`;

const ACCOUNT_COLUMNS = `(select ${tableOf(WhatsappNumber).json('n', NUMBER_SHOWN, { jsonb: true })}
     from whatsapp_numbers n where c.channel_type = 'WHATSAPP' and n.id = c.channel_account_id) as number,
  (select ${tableOf(InstagramAccount).json('i', INSTAGRAM_SHOWN, { jsonb: true })}
     from instagram_accounts i where c.channel_type = 'INSTAGRAM' and i.id = c.channel_account_id) as instagram`;

const CHAT_COLUMNS = `${CHAT.select('c')}, c.last_activity_at::text as "activityKey",
  ${ACCOUNT_COLUMNS},
  (select ${messageJson('m')} from messages m where m.id = c.last_message_id) as "lastMessage",
  (select ${agentJson('a')} from agents a where a.id = c.assigned_agent_id) as "assignedAgent",
  coalesce((select json_agg(${agentJson('a')} order by p.created_at, a.id)
     from chat_participants p join agents a on a.id = p.agent_id where p.chat_id = c.id), '[]'::json) as participants,
  (select count(*)::int from copilot_actions ca where ca.chat_id = c.id and ca.status = 'PENDING') as "pendingCopilotActionsCount"`;

export const CHAT_SELECT = `
select ${CHAT_COLUMNS}
from chats c`;

export async function readChat(db: Queryable, companyId: string, id: string): Promise<ChatRead | null> {
  const { rows } = await db.query<ChatRead>({
    name: 'chats_read_one',
    text: `${CHAT_SELECT} where c.company_id = $1 and c.id = $2`,
    values: [companyId, id],
  });
  return rows[0] ?? null;
}

const TO_SEND = ['id', 'channelType', 'channelAccountId', 'waContactId', 'externalContactId', 'personId', 'lastCustomerMsgAt'] as const;
const AGENT = tableOf(Agent);

/** What a send reads of its chat: the provider's account, the contact, the window; and the sender's agent on the account. */
export type ChatToSend = Pick<ChatRead, (typeof TO_SEND)[number] | 'number' | 'instagram'> & { actorAgentId: string | null };

const TO_SEND_SQL = `select ${CHAT.select('c', TO_SEND)}, ${ACCOUNT_COLUMNS},
    (select a.id from agents a where a.company_id = c.company_id and a.user_id = $3 and c.channel_account_id = any(
       case when c.channel_type = 'INSTAGRAM' then a.${AGENT.column('instagramAccountIds')} else a.${AGENT.column('whatsappNumberIds')} end)
     limit 1) as "actorAgentId"
  from chats c where c.company_id = $1 and c.id = $2`;

/** One statement instead of the chat's whole view and a look-up of the sender's agent (decision 0238). */
export async function chatToSend(db: Queryable, companyId: string, id: string, userId: string): Promise<ChatToSend | null> {
  const { rows } = await db.query<ChatToSend>({ name: 'chats_read_to_send', text: TO_SEND_SQL, values: [companyId, id, userId] });
  return rows[0] ?? null;
}

/** The text message's insert from the chat read with it: its agent is the sender's, its quote found by `ref_wamid`. */
const OPENING = insertMessageFrom('sendable s', 5, {
  agentId: () => 's."actorAgentId"',
  quotedMessageId: (param) => `(select q.id from messages q where q.chat_id = s.id and q.wamid = ${param('refWamid')})`,
});

/**
 * `chatToSend` and, when the chat's window is open at `now` (as `sessionExpiresAt` reads it, to the millisecond), the
 * text message's `processing` insert, in one statement (decision 0272). `opened` is null when nothing was inserted;
 * otherwise the message's agent and quoted message as the insert chose them.
 */
export async function chatToSendOpening(
  db: Queryable,
  m: NewMessage,
  userId: string,
  now: Date,
): Promise<(ChatToSend & { opened: { agentId: string | null; quotedMessageId: string | null } | null }) | null> {
  const { rows } = await db.query<ChatToSend & { opened: { agentId: string | null; quotedMessageId: string | null } | null }>({
    name: 'chats_read_to_send_opening',
    text: `with sendable as (${TO_SEND_SQL}),
      opened as (${OPENING.text}
        where date_trunc('milliseconds', s."lastCustomerMsgAt") + interval '24 hours' > $4::timestamptz
        on conflict (chat_id, wamid) do nothing
        returning agent_id, quoted_message_id)
      select s.*, (select json_build_object('agentId', o.agent_id, 'quotedMessageId', o.quoted_message_id) from opened o) as opened
      from sendable s`,
    values: [m.companyId, m.chatId, userId, now, ...OPENING.values(m)],
  });
  return rows[0] ?? null;
}

/** The list's position after a record: its last_activity_at as Postgres prints it and its id (decision 0060). */
export interface Cursor {
  t: string;
  i: string;
}

export interface ListPlan {
  where: string;
  values: unknown[];
}

/** Few shapes of `where` exist (one per set of filters), so each list statement text is prepared under its own name. */
const listNames = new Map<string, string>();
const LIST_NAMES_MAX = 1000;

/** Named by its text: parsed and planned once per connection, and sent as a name after (decision 0237). */
function named(prefix: string, text: string, values: unknown[]) {
  let name = listNames.get(text);
  if (!name && listNames.size < LIST_NAMES_MAX) {
    name = `${prefix}_${listNames.size}`;
    listNames.set(text, name);
  }
  return name ? { name, text, values } : { text, values };
}

/**
 * The page's statement: its rows (one more than `take`, to tell whether a next page exists), each carrying the
 * count of the whole query as `listTotal`, an uncorrelated subquery Postgres computes once (decision 0237).
 */
export function listStatement(plan: ListPlan, page: { take: number; after?: Cursor; skip: number }) {
  const values = [...plan.values];
  let where = plan.where;
  let offset = page.skip;
  if (page.after) {
    values.push(page.after.t, page.after.i);
    where += ` and (c.last_activity_at, c.id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`;
    offset = 0;
  }
  values.push(page.take + 1, offset);
  const n = values.length;
  const total = `(select count(*)::int from chats c where ${plan.where}) as "listTotal"`;
  const text = `select ${total}, ${CHAT_COLUMNS} from chats c where ${where} order by c.last_activity_at desc, c.id desc limit $${n - 1} offset $${n}`;
  return named('chats_list', text, values);
}

export async function listChats(db: Queryable, plan: ListPlan, page: { take: number; after?: Cursor; skip: number }) {
  const { rows } = await db.query<ChatRead & { listTotal: number }>(listStatement(plan, page));
  if (rows.length) return { rows, total: rows[0]!.listTotal };
  // A page past the end has no row to carry the count.
  const count = await db.query<{ total: number }>(
    named('chats_count', `select count(*)::int as total from chats c where ${plan.where}`, plan.values),
  );
  return { rows, total: count.rows[0]!.total };
}

export async function chatExists(db: Queryable, companyId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('select 1 from chats where company_id = $1 and id = $2', [companyId, id]);
  return rowCount === 1;
}

export type NewChat = Written<Chat>;

/** A new individual chat as it starts: open, read, nobody assigned, no message yet. */
export const newChat = (
  c: Pick<NewChat, 'id' | 'companyId' | 'channelType' | 'channelAccountId'> & Partial<NewChat>,
  now = new Date(),
): NewChat => ({
  chatType: 'INDIVIDUAL',
  waContactId: null,
  contactName: null,
  contactNumber: null,
  remoteProfileName: null,
  externalContactId: null,
  externalContactHandle: null,
  externalContactDisplayName: null,
  externalContactAvatarUrl: null,
  personId: null,
  status: 'OPEN',
  priority: 1,
  unreadCount: 0,
  isManuallyUnread: false,
  archivedAt: null,
  lastCustomerMsgAt: null,
  lastMessageId: null,
  lastActivityAt: now,
  assignedAgentId: null,
  startedBy: null,
  trailingOutboundCount: 0,
  aiAgentId: null,
  aiMessageCount: 0,
  createdAt: now,
  updatedAt: now,
  ...c,
});

const ALL = Object.keys(newChat({ id: '', companyId: '', channelType: '', channelAccountId: '' })) as (keyof NewChat)[];
const INSERT_SQL = CHAT.insertSome(ALL);

/** `ifAbsent` keeps an existing chat of the same account and contact; otherwise that is a unique violation. */
export async function insertChat(db: Queryable, chat: NewChat, ifAbsent: boolean): Promise<void> {
  await db.query({
    name: ifAbsent ? 'chats_insert_if_absent' : 'chats_insert',
    text: ifAbsent ? `${INSERT_SQL} on conflict do nothing` : INSERT_SQL,
    values: ALL.map((p) => chat[p]),
  });
}

export async function chatOfContact(
  db: Queryable,
  channelType: string,
  accountId: string,
  contactId: string,
): Promise<Pick<StoredChat, 'id' | 'personId'> | null> {
  const contact = channelType === 'WHATSAPP' ? 'waContactId' : 'externalContactId';
  const column = CHAT.column(contact);
  const { rows } = await db.query<Pick<StoredChat, 'id' | 'personId'>>({
    name: `inbound_chat_by_${contact}`,
    text: `select id, person_id as "personId" from chats where channel_account_id = $1 and ${column} = $2`,
    values: [accountId, contactId],
  });
  return rows[0] ?? null;
}

export async function assignAgent(db: Queryable, companyId: string, id: string, agentId: string): Promise<void> {
  await db.query('update chats set assigned_agent_id = $3, updated_at = now() where company_id = $1 and id = $2', [companyId, id, agentId]);
}

/** The chat's assigned agent leaves it when it is one of these. */
export async function unassignAgents(db: Queryable, id: string, agentIds: string[]): Promise<void> {
  await db.query('update chats set assigned_agent_id = null, updated_at = now() where id = $1 and assigned_agent_id = any($2::uuid[])', [
    id,
    agentIds,
  ]);
}

export async function markChatRead(db: Queryable, companyId: string, id: string): Promise<void> {
  await db.query('update chats set unread_count = 0, is_manually_unread = false, updated_at = now() where company_id = $1 and id = $2', [
    companyId,
    id,
  ]);
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

export async function unreadByAccount(db: Queryable, companyId: string) {
  const { rows } = await db.query<
    Pick<StoredChat, 'channelAccountId' | 'channelType'> & { displayName: string; unreadChats: number; unreadMessages: number }
  >(
    `select c.channel_account_id as "channelAccountId", c.channel_type as "channelType",
       coalesce((select coalesce(n.verified_name, n.display_number) from whatsapp_numbers n where n.id = c.channel_account_id),
                (select i.display_name from instagram_accounts i where i.id = c.channel_account_id)) as "displayName",
       count(*) filter (where c.unread_count > 0 or c.is_manually_unread)::int as "unreadChats",
       coalesce(sum(c.unread_count), 0)::int as "unreadMessages"
     from chats c where c.company_id = $1 and c.archived_at is null
     group by c.channel_account_id, c.channel_type having count(*) filter (where c.unread_count > 0 or c.is_manually_unread) > 0
     order by c.channel_type, "displayName", c.channel_account_id`,
    [companyId],
  );
  return rows;
}

/** A chat of a person as chat.v1's PersonChat names its fields; absent optional values are null. */
export type PersonChatRow = {
  [K in keyof PersonChat]-?: undefined extends PersonChat[K] ? Exclude<PersonChat[K], undefined> | null : PersonChat[K];
};

const PERSON_CHATS_SQL = `
select c.id as chat_id, c.person_id, c.channel_account_id, c.chat_type, c.channel_type, c.unread_count,
  coalesce(c.remote_profile_name, c.contact_name, c.external_contact_display_name, c.external_contact_handle, c.contact_number, '') as title,
  coalesce(n.verified_name, n.display_number, i.display_name, '') as channel_account_name,
  n.verified_name as whatsapp_number_verified_name,
  coalesce(c.wa_contact_id, c.external_contact_id) as external_contact_id,
  coalesce(c.contact_number, c.external_contact_handle) as external_contact_handle,
  a.user_id as responsible_user_id, c.status,
  case when n.id is null then null else json_build_object('id', n.id, 'display_number', n.display_number, 'raw_number', n.raw_number,
    'phone_number_id', n.phone_number_id) end as whatsapp_number,
  c.wa_contact_id, c.contact_name, c.contact_number, c.remote_profile_name
from chats c
left join whatsapp_numbers n on c.channel_type = 'WHATSAPP' and n.id = c.channel_account_id
left join instagram_accounts i on c.channel_type = 'INSTAGRAM' and i.id = c.channel_account_id
left join agents a on a.id = c.assigned_agent_id
where c.company_id = $1 and c.person_id = any($2::uuid[]) and c.archived_at is null
order by c.last_activity_at desc, c.id desc limit 200`;

export async function personChats(db: Queryable, companyId: string, personIds: string[]): Promise<PersonChatRow[]> {
  const { rows } = await db.query<PersonChatRow>({ name: 'person_chats', text: PERSON_CHATS_SQL, values: [companyId, personIds] });
  return rows;
}
