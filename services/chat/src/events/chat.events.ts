import type { EventPayloads } from '@svc/platform/events/payloads';
import type { MessageView } from '../messages/message.view.js';
import type { CrmPeople } from '../people/crm-people.js';

/** Asked of crm before the transaction; a failed call omits both fields (spec, Chat payloads). */
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
export function messageSentPayload(m: MessageView, associated: Record<string, unknown>): EventPayloads['chat.message_sent'] {
  return { ...m, ...associated };
}

/** chat.message_received: the same base fields plus the callback's ids and the reply-capture fields. */
export function messageReceivedPayload(
  m: MessageView,
  extra: { wamid: string | null; ref_wamid: string | null; agent_id: string | null },
  associated: Record<string, unknown>,
): EventPayloads['chat.message_received'] {
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
