import { eventsRecorded } from '@svc/platform/events/outbox';
import { type CrmPeer, planValidAt } from '@svc/platform/peers/crm';
import { v7 as uuidv7 } from 'uuid';
import type { Queryable } from '../chats/chat.store.js';
import type { MessageView } from '../messages/message.view.js';
import type { CrmPeople } from '../people/crm-people.js';

export type ChatEventKey = 'chat.message_sent' | 'chat.message_received';

export interface ChatEvent {
  companyId: string;
  eventKey: ChatEventKey;
  payload: Record<string, unknown>;
}

/**
 * associated_leads and associated_deals of a chat's person ({id, title, status}), asked of crm before the
 * transaction that records the event: a chat without a person has none (empty arrays), and a failed call to crm
 * omits both fields (spec, Chat payloads).
 */
export async function associatedRecords(people: CrmPeople, companyId: string, personId: string | null) {
  if (!personId) return { associated_leads: [], associated_deals: [] };
  try {
    const r = await people.personRecords(companyId, personId);
    const view = (x: { id: string; title: string; status: number }) => ({ id: x.id, title: x.title, status: x.status });
    return { associated_leads: r.leads.map(view), associated_deals: r.deals.map(view) };
  } catch {
    return {};
  }
}

/** chat.message_sent: the message's fields (spec, Chat payloads) with its chat id and the person's leads and deals. */
export function messageSentPayload(m: MessageView, associated: Record<string, unknown>): Record<string, unknown> {
  return { ...m, ...associated };
}

/** chat.message_received: the same base fields plus the callback's ids and the reply-capture fields. */
export function messageReceivedPayload(
  m: MessageView,
  extra: { wamid: string | null; ref_wamid: string | null; agent_id: string | null },
  associated: Record<string, unknown>,
): Record<string, unknown> {
  return {
    ...m,
    chat_id: m.chat_id,
    agent_id: extra.agent_id,
    wamid: extra.wamid,
    ref_wamid: extra.ref_wamid,
    call_id: null,
    deleted_at: null,
    business_reply_actor_user_id: null,
    business_reply_capture_status: null,
    ...associated,
  };
}

/**
 * Writes events to the chat outbox on the caller's transaction client (one bound-parameter insert); the relay of
 * this process is woken once the transaction commits. Events are issued only while the company's plan is valid
 * (asked of crm, which owns it; cached 2 s).
 */
export async function recordChatEvents(db: Queryable, crm: CrmPeer, schema: string, events: ChatEvent[]): Promise<void> {
  const now = new Date();
  const open = new Map<string, boolean>();
  for (const companyId of new Set(events.map((e) => e.companyId))) open.set(companyId, planValidAt(await crm.getCompany(companyId), now));
  const issued = events.filter((e) => open.get(e.companyId));
  if (!issued.length) return;
  await db.query({
    name: 'chat_outbox_insert',
    text: `insert into outbox (id, company_id, event_key, payload, occurred_at, published_at)
      select id, company_id, event_key, payload, $5, null from unnest($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[]) as e(id, company_id, event_key, payload)`,
    values: [
      issued.map(() => uuidv7()),
      issued.map((e) => e.companyId),
      issued.map((e) => e.eventKey),
      issued.map((e) => JSON.stringify(e.payload)),
      now,
    ],
  });
  eventsRecorded(db, schema);
}
