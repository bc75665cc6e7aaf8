import { type Stored, tableOf } from '@svc/platform/db/entity-table';
import type { Queryable } from '@svc/platform/db/native';
import { ScheduledMessage } from './scheduled.entity.js';
import { attachmentIds } from './scheduled.files.js';

export type StoredScheduled = Stored<ScheduledMessage>;

const SCHEDULED = tableOf(ScheduledMessage);
const RETURNING = `returning ${SCHEDULED.select('scheduled_messages')}`;

const NEW_SCHEDULED = [
  'id',
  'companyId',
  'chatId',
  'status',
  'messageKind',
  'cancelOnInbound',
  'scheduledAt',
  'createdByUserId',
  'senderAgentId',
  'payload',
  'attachments',
  'sentMessageIds',
  'createdAt',
  'updatedAt',
] as const;

export type NewScheduled = Pick<StoredScheduled, Exclude<(typeof NEW_SCHEDULED)[number], 'scheduledAt' | 'createdAt' | 'updatedAt'>> & {
  scheduledAt: Date;
  createdAt: Date;
};

export async function insertScheduled(db: Queryable, s: NewScheduled): Promise<StoredScheduled> {
  const { rows } = await db.query<StoredScheduled>(SCHEDULED.insertSome(NEW_SCHEDULED, RETURNING), [
    ...NEW_SCHEDULED.map((p) => {
      if (p === 'updatedAt') return s.createdAt;
      const v = s[p];
      // JSON arrays would otherwise travel as Postgres arrays.
      return p === 'payload' || p === 'attachments' ? JSON.stringify(v) : v;
    }),
  ]);
  return rows[0]!;
}

/** Cancels a PENDING scheduled message of the chat at its user's request; null when there is none such. */
export async function cancelByUser(
  db: Queryable,
  c: { companyId: string; chatId: string; id: string; reason: string | null; userId: string },
): Promise<StoredScheduled | null> {
  const { rows } = await db.query<StoredScheduled>(
    `update scheduled_messages set status = 'CANCELED', cancel_reason = 'USER_REQUEST', cancel_reason_description = $4,
       canceled_at = now(), canceled_by_user_id = $5, updated_at = now()
     where company_id = $1 and chat_id = $2 and id = $3 and status = 'PENDING' ${RETURNING}`,
    [c.companyId, c.chatId, c.id, c.reason, c.userId],
  );
  return rows[0] ?? null;
}

export async function statusOf(db: Queryable, companyId: string, chatId: string, id: string): Promise<string | null> {
  const { rows } = await db.query<Pick<StoredScheduled, 'status'>>(
    'select status from scheduled_messages where company_id = $1 and chat_id = $2 and id = $3',
    [companyId, chatId, id],
  );
  return rows[0]?.status ?? null;
}

/** A page of the chat's scheduled messages in scheduled order, and how many the whole list has. */
export async function scheduledOfChat(
  db: Queryable,
  companyId: string,
  chatId: string,
  q: { status: string | null; take: number; skip: number },
): Promise<{ total: number; rows: StoredScheduled[] }> {
  const { rows } = await db.query<StoredScheduled & { total: string }>(
    `select ${SCHEDULED.select('s')}, count(*) over () as total from scheduled_messages s
     where s.company_id = $1 and s.chat_id = $2 and ($3::text is null or s.status = $3)
     order by s.scheduled_at, s.id limit $4 offset $5`,
    [companyId, chatId, q.status, q.take, q.skip],
  );
  if (rows[0] || q.skip === 0) return { total: Number(rows[0]?.total ?? 0), rows: rows.map(({ total: _total, ...row }) => row) };
  // A page past the end has no row to carry the count: count on its own then.
  const count = await db.query<{ n: string }>(
    'select count(*) as n from scheduled_messages where company_id = $1 and chat_id = $2 and ($3::text is null or status = $3)',
    [companyId, chatId, q.status],
  );
  return { total: Number(count.rows[0]!.n), rows: [] };
}

/** cancel_reason CHAT_INTERACTION: the spec leaves the value open (decision 0063). */
export async function cancelOnInbound(db: Queryable, chatId: string, at: Date): Promise<string[]> {
  const { rows } = await db.query<Pick<StoredScheduled, 'attachments'>>({
    name: 'scheduled_cancel_on_inbound',
    text: `update scheduled_messages set status = 'CANCELED', cancel_reason = 'CHAT_INTERACTION', canceled_at = $2, updated_at = $2,
      cancel_reason_description = 'the contact wrote before the scheduled time'
      where chat_id = $1 and status = 'PENDING' and cancel_on_inbound returning attachments`,
    values: [chatId, at],
  });
  // The caller removes these files once its transaction commits.
  return rows.flatMap(attachmentIds);
}

/** Claims left PROCESSING since before `before` (their replica died mid-send) are closed as FAILED; their files come back. */
export async function closeStale(db: Queryable, before: Date): Promise<string[]> {
  const { rows } = await db.query<Pick<StoredScheduled, 'attachments'>>({
    name: 'scheduled_close_stale',
    text: `update scheduled_messages set status = 'FAILED', failure_reason = 'interrupted while sending; not sent again', updated_at = now()
      where status = 'PROCESSING' and processed_at < $1 returning attachments`,
    values: [before],
  });
  return rows.flatMap(attachmentIds);
}

/** `skip locked`: two replicas never claim the same row nor wait on each other. */
export async function claimDue(db: Queryable, now: Date, batch: number): Promise<StoredScheduled[]> {
  const { rows } = await db.query<StoredScheduled>({
    name: 'scheduled_claim',
    text: `update scheduled_messages set status = 'PROCESSING', processed_at = now(), updated_at = now()
      where id in (select id from scheduled_messages where status = 'PENDING' and scheduled_at <= $1 order by scheduled_at, id limit $2 for update skip locked)
      ${RETURNING}`,
    values: [now, batch],
  });
  return rows;
}

export async function liveFileIds(db: Queryable): Promise<Set<string>> {
  const { rows } = await db.query<Pick<StoredScheduled, 'id'>>({
    name: 'scheduled_live_files',
    text: `select a->>'id' as id from scheduled_messages, jsonb_array_elements(attachments) a
      where status in ('PENDING', 'PROCESSING') and attachments <> '[]'::jsonb`,
  });
  return new Set(rows.map((r) => r.id));
}

/** What came of a claimed row's send. */
export interface Settled {
  status: 'SENT' | 'FAILED' | 'CANCELED';
  ids: string[];
  reason: string | null;
  cancel: string | null;
}

export async function settleClaimed(db: Queryable, id: string, o: Settled): Promise<void> {
  await db.query({
    name: 'scheduled_settle',
    text: `update scheduled_messages set status = $2::text, sent_message_ids = $3::uuid[], failure_reason = $4,
        sent_at = case when $2::text = 'SENT' then now() end,
        canceled_at = case when $2::text = 'CANCELED' then now() end,
        cancel_reason = case when $2::text = 'CANCELED' then 'TEMPLATE_INVALID_OR_UNAVAILABLE' end,
        cancel_reason_description = $5, updated_at = now()
      where id = $1 and status = 'PROCESSING'`,
    values: [id, o.status, o.ids, o.reason, o.cancel],
  });
}
