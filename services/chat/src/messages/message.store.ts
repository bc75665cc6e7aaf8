import { type Stored, tableOf } from '@svc/platform/db/entity-table';
import { definedColumns, type Queryable } from '@svc/platform/db/native';
import { Message, MessageReaction } from './message.entity.js';
import type { ListMessagesQuery } from './message.schema.js';

const MESSAGE = tableOf(Message);
const REACTION_SHOWN = ['id', 'emoji', 'actor', 'reactorWaId', 'reactorUserId', 'createdAt'] as const;
const REACTION = tableOf(MessageReaction);
const CONTACT_REACTION = REACTION.columnList(['id', 'companyId', 'messageId', 'emoji', 'actor', 'reactorWaId', 'createdAt']);

/** A message as its views read it: its columns, its reactions and its agent's user. */
export type MessageRead = Stored<Message> & {
  agentUserId: string | null;
  reactions: Pick<Stored<MessageReaction>, (typeof REACTION_SHOWN)[number]>[];
};

/**
 * The JSON of a message row `m` as MessageRead (the chat's last message is read with the chat). jsonb, as chats and
 * messages have always answered: its key order and spacing are what clients receive.
 */
export const messageJson = (m: string) => `(${MESSAGE.json(m, undefined, { jsonb: true })} || jsonb_build_object(
  'agentUserId', (select ag.user_id from agents ag where ag.id = ${m}.agent_id),
  'reactions', coalesce((
    select jsonb_agg(${REACTION.json('r', REACTION_SHOWN, { jsonb: true })} order by r.created_at, r.id)
    from message_reactions r where r.message_id = ${m}.id), '[]'::jsonb)))`;

export type NewMessage = Pick<
  Stored<Message>,
  | 'id'
  | 'companyId'
  | 'chatId'
  | 'wamid'
  | 'refWamid'
  | 'type'
  | 'fromMe'
  | 'status'
  | 'bodyText'
  | 'contentPayload'
  | 'media'
  | 'quotedMessageId'
  | 'agentId'
  | 'userId'
  | 'isHistory'
  | 'isForwarded'
> & {
  origin: 'INBOUND' | 'API_OUTBOUND' | 'MOBILE_APP_ECHO' | 'SYSTEM';
  sentVia: 'CONTACT' | 'API' | 'MOBILE_DEVICE' | 'SYSTEM';
  metaTimestamp: Date | null;
  createdAt: Date;
};

const NEW_MESSAGE = [
  'id',
  'companyId',
  'chatId',
  'wamid',
  'refWamid',
  'type',
  'origin',
  'fromMe',
  'sentVia',
  'status',
  'bodyText',
  'contentPayload',
  'media',
  'quotedMessageId',
  'agentId',
  'userId',
  'isHistory',
  'isForwarded',
  'metaTimestamp',
  'createdAt',
] as const satisfies readonly (keyof NewMessage)[];

const INSERT_SQL = MESSAGE.insertSome([...NEW_MESSAGE, 'updatedAt'], 'on conflict (chat_id, wamid) do nothing');

const bound = (v: unknown) => (v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v);
type NewMessageProperty = (typeof NEW_MESSAGE)[number];

/**
 * A new message's insert as `insert … select … from <from>` with parameters from `$first`, where `given` columns are
 * SQL written over `from` (and the other parameters) instead (decision 0272). `values` binds the message in the same order.
 */
export function insertMessageFrom(
  from: string,
  first: number,
  given: Partial<Record<NewMessageProperty, (param: (p: NewMessageProperty) => string) => string>>,
) {
  const types = new Map(definedColumns(Message).map((c) => [c.property, c.pgType]));
  const parameters = NEW_MESSAGE.filter((p) => given[p] === undefined);
  const param = (p: NewMessageProperty) => `$${first + parameters.indexOf(p)}::${types.get(p)}`;
  const select = [...NEW_MESSAGE.map((p) => given[p]?.(param) ?? param(p)), param('createdAt')];
  return {
    text: `insert into messages (${MESSAGE.columnList([...NEW_MESSAGE, 'updatedAt'])}) select ${select.join(', ')} from ${from}`,
    values: (m: NewMessage) => parameters.map((p) => bound(m[p])),
  };
}

/** False when the wamid is already stored in the chat (a repeated provider callback). */
export async function insertMessage(db: Queryable, m: NewMessage): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'messages_insert',
    text: INSERT_SQL,
    values: [
      ...NEW_MESSAGE.map((p) => bound(m[p])),
      m.createdAt, // updated_at starts as created_at
    ],
  });
  return rowCount === 1;
}

/** A `processing` message whose send stopped before its provider call (decision 0272). */
export async function discardMessage(db: Queryable, id: string): Promise<void> {
  await db.query({ name: 'messages_discard', text: `delete from messages where id = $1 and status = 'processing'`, values: [id] });
}

/** The provider's answer to a send: its id and the status it gives, or the failure. */
export type Settlement = Pick<Stored<Message>, 'wamid' | 'status' | 'errorCode' | 'errorMessage'> & {
  media?: Record<string, unknown> | null;
};

export async function readMessage(db: Queryable, companyId: string, id: string): Promise<MessageRead | null> {
  const { rows } = await db.query<{ m: MessageRead }>({
    name: 'messages_read_one',
    text: `select ${messageJson('m')} as m from messages m where m.company_id = $1 and m.id = $2`,
    values: [companyId, id],
  });
  return rows[0]?.m ?? null;
}

/** A message of the chat by the provider's id (for quotes and reactions). */
export async function messageIdByWamid(db: Queryable, chatId: string, wamid: string): Promise<string | null> {
  const { rows } = await db.query<Pick<Message, 'id'>>({
    name: 'messages_by_wamid',
    text: 'select id from messages where chat_id = $1 and wamid = $2',
    values: [chatId, wamid],
  });
  return rows[0]?.id ?? null;
}

/** The provider's id of the contact's last message in the chat (what read receipts and typing answer). */
export async function lastInboundWamid(db: Queryable, chatId: string): Promise<string | undefined> {
  const { rows } = await db.query<Pick<Stored<Message>, 'wamid'>>(
    `select wamid from messages where chat_id = $1 and not from_me and wamid is not null order by created_at desc, id desc limit 1`,
    [chatId],
  );
  return rows[0]?.wamid ?? undefined;
}

export async function markDeleted(db: Queryable, id: string): Promise<void> {
  await db.query(`update messages set status = 'deleted', deleted_at = now(), updated_at = now() where id = $1`, [id]);
}

/** A contact's reaction replaces the contact's earlier one on that message; no emoji removes it. */
export async function replaceContactReaction(
  db: Queryable,
  r: Pick<Stored<MessageReaction>, 'id' | 'companyId' | 'messageId' | 'reactorWaId'> & { emoji: string | undefined; createdAt: Date },
): Promise<void> {
  await db.query({
    name: 'reactions_replace',
    text: `delete from message_reactions where message_id = $1 and actor = 'CONTACT' and reactor_wa_id = $2`,
    values: [r.messageId, r.reactorWaId],
  });
  if (r.emoji)
    await db.query({
      name: 'reactions_insert',
      text: `insert into message_reactions (${CONTACT_REACTION}) values ($1, $2, $3, $4, 'CONTACT', $5, $6)`,
      values: [r.id, r.companyId, r.messageId, r.emoji, r.reactorWaId, r.createdAt],
    });
}

/** A status callback's change, and the status it replaced. */
export type StatusMoved = Pick<Stored<Message>, 'id' | 'chatId' | 'companyId'> & { previousStatus: string };

/** Applied only over a status ranked below `rankBelow`; the row is locked first so racing callbacks move it one step each. */
export async function moveStatus(
  db: Queryable,
  ranks: Record<string, number>,
  s: { accountId: string; wamid: string; status: string; errorCode: number | null; errorMessage: string | null; rankBelow: number },
): Promise<StatusMoved | null> {
  const { rows } = await db.query<StatusMoved>({
    name: 'inparametersstatus_update',
    text: `with current as (
        select m.id, m.status from messages m join chats c on c.id = m.chat_id
        where c.channel_account_id = $1 and m.wamid = $2 and m.from_me and m.status <> 'deleted'
        for update of m)
      update messages m set status = $3, error_code = coalesce($4, m.error_code), error_message = coalesce($5, m.error_message), updated_at = now()
      from current where m.id = current.id and (case current.status ${Object.entries(ranks)
        .map(([k, v]) => `when '${k}' then ${v}`)
        .join(' ')} else 0 end) < $6
      returning m.id, m.chat_id as "chatId", m.company_id as "companyId", current.status as "previousStatus"`,
    values: [s.accountId, s.wamid, s.status, s.errorCode, s.errorMessage, s.rankBelow],
  });
  return rows[0] ?? null;
}

export interface MessagePage {
  total: number;
  messages: MessageRead[];
  /** Quoted messages of the page, with the page (same take and order, no search) where each sits. */
  quoted: Map<string, { message: MessageRead; page: number }>;
}

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
    db.query<{ m: MessageRead }>(
      `select ${messageJson('m')} as m from messages m where ${where} order by m.created_at ${dir}, m.id ${dir} limit $${values.length + 1} offset $${values.length + 2}`,
      [...values, take, q.skip ?? 0],
    ),
    db.query<{ total: number }>(`select count(*)::int as total from messages m where ${where}`, values),
  ]);
  const messages = page.rows.map((r) => r.m);
  const quotedIds = [...new Set(messages.map((m) => m.quotedMessageId).filter((id): id is string => id !== null))];
  const quoted = new Map<string, { message: MessageRead; page: number }>();
  if (quotedIds.length) {
    // Messages before the quoted one in the list's order, counted without the search: its page at this take.
    const cmp = desc ? '>' : '<';
    const { rows } = await db.query<{ m: MessageRead; before: number }>(
      `select ${messageJson('q')} as m,
         (select count(*)::int from messages o where o.chat_id = q.chat_id and (o.created_at, o.id) ${cmp} (q.created_at, q.id)) as before
       from messages q where q.company_id = $1 and q.chat_id = $2 and q.id = any($3::uuid[])`,
      [companyId, chatId, quotedIds],
    );
    for (const r of rows) quoted.set(r.m.id, { message: r.m, page: Math.floor(r.before / take) + 1 });
  }
  return { total: count.rows[0]!.total, messages, quoted };
}
