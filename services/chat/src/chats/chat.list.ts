import { invalidField } from '@svc/platform/errors';
import type { ListChatsQuery } from './chat.schema.js';
import type { Cursor, ListPlan } from './chat.store.js';

const PG_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;

export const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

export function decodeCursor(value: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Cursor;
    if (typeof c.t === 'string' && typeof c.i === 'string' && /^[0-9a-f-]{36}$/i.test(c.i) && PG_TIMESTAMP.test(c.t)) return c;
  } catch {
    // falls through to the 400
  }
  throw invalidField('cursor', 'not a cursor this API returned');
}

/** Brazilian mobiles are written with or without their ninth digit: both spellings are searched as the number's end. */
export function phoneVariants(term: string): string[] {
  if (!/^[\d\s()+.-]+$/.test(term)) return [];
  const d = term.replace(/\D/g, '');
  if (d.length < 8) return [];
  const out = new Set([d]);
  const local = d.startsWith('55') && d.length >= 12 ? d.slice(2) : d;
  if (local.length === 11 && local[2] === '9') out.add(local.slice(0, 2) + local.slice(3));
  if (local.length === 10) out.add(`${local.slice(0, 2)}9${local.slice(2)}`);
  if (local !== d) out.add(local);
  return [...out];
}

/** Positive WhatsApp-only filters keep Instagram chats out. */
export function planList(companyId: string, q: ListChatsQuery, personIdsByName: string[] | null): ListPlan {
  const values: unknown[] = [companyId];
  const p = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  const and: string[] = ['c.company_id = $1'];
  if (q.channel_type) and.push(`c.channel_type = ${p(q.channel_type)}`);
  if (q.channel_account_id) {
    if (!q.channel_type) and.push(`c.channel_type = 'INSTAGRAM'`);
    and.push(`c.channel_account_id = ${p(q.channel_account_id)}`);
  }
  if (q.phone_id) and.push(`c.channel_type = 'WHATSAPP' and c.channel_account_id = ${p(q.phone_id)}`);
  if (q.status) and.push(`c.status = ${p(q.status)}`);
  if (q.archived === undefined) and.push('c.archived_at is null');
  else if (q.archived === 'only') and.push('c.archived_at is not null');
  if (q.priority !== undefined) and.push(`c.priority = ${p(q.priority)}`);
  if (q.responsible_user_id) {
    and.push(
      `c.channel_type = 'WHATSAPP' and c.assigned_agent_id in (select a.id from agents a where a.company_id = $1 and a.user_id = ${p(q.responsible_user_id)})`,
    );
  }
  if (q.person_id) and.push(`c.person_id = ${p(q.person_id)}`);
  if (q.unread_only === true) and.push('(c.unread_count > 0 or c.is_manually_unread)');
  const scheduled = `exists (select 1 from scheduled_messages s where s.chat_id = c.id and s.status in ('PENDING', 'PROCESSING'))`;
  if (q.has_scheduled_messages === true) and.push(`c.channel_type = 'WHATSAPP' and ${scheduled}`);
  if (q.has_scheduled_messages === false) and.push(`not ${scheduled}`);
  const copilot = `exists (select 1 from copilot_actions ca where ca.chat_id = c.id and ca.status = 'PENDING')`;
  if (q.has_pending_copilot_actions === true) and.push(`c.channel_type = 'WHATSAPP' and ${copilot}`);
  if (q.has_pending_copilot_actions === false) and.push(`not ${copilot}`);
  switch (q.customer_reply_status) {
    case 'initial_replied':
      and.push(`c.channel_type = 'WHATSAPP' and c.started_by = 'COMPANY' and c.last_customer_msg_at is not null`);
      break;
    case 'initial_not_replied':
      and.push(`c.channel_type = 'WHATSAPP' and c.started_by = 'COMPANY' and c.last_customer_msg_at is null`);
      break;
    case 'not_replied_last_messages':
      and.push(`c.channel_type = 'WHATSAPP' and c.trailing_outbound_count >= ${p(q.customer_reply_message_count ?? 1)}`);
      break;
  }
  if (q.search) {
    const like = p(`%${q.search.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`);
    const any: string[] = [
      `c.remote_profile_name ilike ${like}`,
      `c.contact_name ilike ${like}`,
      `c.external_contact_handle ilike ${like}`,
      `c.external_contact_display_name ilike ${like}`,
    ];
    if (personIdsByName?.length) any.push(`c.person_id = any(${p(personIdsByName)}::uuid[])`);
    const phones = phoneVariants(q.search);
    if (phones.length) any.push(`c.wa_contact_id like any(${p(phones.map((v) => `%${v}`))}::text[])`);
    and.push(`(${any.join(' or ')})`);
  }
  return { where: and.join(' and '), values };
}
