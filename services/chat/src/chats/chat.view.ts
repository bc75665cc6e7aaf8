import type { PersonDetail } from '@svc/proto/crm/v1/persons';
import type { UserSummary } from '@svc/proto/crm/v1/records';
import { iso, type MessageJson, messageView } from '../messages/message.view.js';
import { userView } from '../people/crm-people.js';
import type { AgentRef, ChatRead } from './chat.store.js';

/** The customer service window: a non-template message may be sent until 24 h after the contact's last message. */
export const SESSION_WINDOW_MS = 24 * 3600 * 1000;

export function sessionExpiresAt(c: Pick<ChatRead, 'last_customer_msg_at'>): Date | null {
  return c.last_customer_msg_at ? new Date(new Date(c.last_customer_msg_at).getTime() + SESSION_WINDOW_MS) : null;
}

export interface ChatLookups {
  persons: Map<string, PersonDetail>;
  users: Map<string, UserSummary>;
}

/** The users and persons a chat's view shows, for one crm call of each kind per answer. */
export function refsOfChat(c: ChatRead, users: Set<string>, persons: Set<string>, assignable: AgentRef[] = []): void {
  if (c.person_id) persons.add(c.person_id);
  if (c.assigned_agent) users.add(c.assigned_agent.user_id);
  for (const p of c.participants) users.add(p.user_id);
  for (const a of assignable) users.add(a.user_id);
  const m = c.last_message as MessageJson | null;
  if (m?.user_id) users.add(m.user_id);
  if (m?.agent_user_id) users.add(m.agent_user_id);
}

const agentOf = (a: AgentRef, users: ChatLookups['users']) => ({ agent_id: a.agent_id, user: userView(users.get(a.user_id), a.user_id) });
export const assignableView = (a: AgentRef, users: ChatLookups['users']) => ({
  agent_id: a.agent_id,
  status: a.status,
  user: userView(users.get(a.user_id), a.user_id),
});

/** crm_person: crm's person with its contacts; crm keeps no documents or address for persons, so those are empty. */
function personView(p: PersonDetail | undefined) {
  if (!p) return null;
  return {
    id: p.id,
    name: p.name,
    birth_date: p.birth_date ?? null,
    gender: p.gender ?? null,
    notes: p.notes ?? null,
    contacts: p.contacts.map((c) => ({ id: c.id, type: c.type, value: c.value, primary: c.primary })),
    documents: [],
    address: null,
  };
}

/**
 * The fields every chat view has (list records and details), for both channels. WhatsApp adds its number and
 * contact fields and `ai_attendance`; Instagram its account and the contact's handle and avatar (decision 0061).
 */
export function chatSummaryView(c: ChatRead, l: ChatLookups, now = new Date()) {
  const expires = sessionExpiresAt(c);
  const whatsapp = c.channel_type === 'WHATSAPP';
  const common = {
    id: c.id,
    status: c.status,
    priority: c.priority,
    channel_type: c.channel_type,
    chat_type: c.chat_type,
    crm_person: personView(c.person_id ? l.persons.get(c.person_id) : undefined),
    unread_count: c.unread_count,
    is_manually_unread: c.is_manually_unread,
    archived_at: iso(c.archived_at),
    last_customer_msg_at: iso(c.last_customer_msg_at),
    session_expires_at: iso(expires),
    can_send_open_message: expires !== null && expires.getTime() > now.getTime(),
    last_activity_at: iso(c.last_activity_at),
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
    participants: c.participants.map((a) => agentOf(a, l.users)),
    assigned_agent: c.assigned_agent ? agentOf(c.assigned_agent, l.users) : null,
    has_pending_copilot_actions: c.pending_copilot_actions_count > 0,
    pending_copilot_actions_count: c.pending_copilot_actions_count,
    channel_account_id: c.channel_account_id,
    last_message: c.last_message ? messageView(c.last_message as unknown as MessageJson, l.users) : null,
    crm_marketing_lead_source: [],
  };
  if (whatsapp) {
    const n = c.number!;
    return {
      ...common,
      phone_number: { id: n.id, display_number: n.display_number, raw_number: n.raw_number, phone_number_id: n.phone_number_id },
      wa_contact_id: c.wa_contact_id,
      contact_name: c.contact_name,
      contact_number: c.contact_number,
      remote_profile_name: c.remote_profile_name,
      channel_account: {
        id: n.id,
        type: 'WHATSAPP',
        display_name: n.verified_name ?? n.display_number,
        provider_status: n.provider_status,
      },
      external_contact: {
        id: c.wa_contact_id,
        handle: c.contact_number,
        display_name: c.remote_profile_name ?? c.contact_name,
        avatar_url: null,
      },
      legacy: { whatsapp_chat_id: c.id, whatsapp_phone_id: n.id, wa_contact_id: c.wa_contact_id },
      ai_attendance: {
        is_active: c.ai_agent_id !== null,
        whatsapp_ai_agent_id: c.ai_agent_id,
        ai_messages_count: c.ai_message_count,
      },
    };
  }
  const i = c.instagram!;
  return {
    ...common,
    instagram_account: { id: i.id, handle: i.handle, display_name: i.display_name, external_account_id: i.external_account_id },
    channel_account: { id: i.id, type: 'INSTAGRAM', display_name: i.display_name, provider_status: i.provider_status },
    external_contact: {
      id: c.external_contact_id,
      handle: c.external_contact_handle,
      display_name: c.external_contact_display_name,
      avatar_url: c.external_contact_avatar_url,
    },
  };
}

export interface DetailExtras {
  assignable: AgentRef[];
  flowSessions: Record<string, unknown>[];
  copilotActions: Record<string, unknown>[];
}

const flowView = (f: Record<string, unknown>) => {
  const status = String(f.status);
  return {
    session_id: f.id,
    flow_id: f.flow_id,
    flow_name: f.flow_name,
    status,
    status_label: status.charAt(0) + status.slice(1).toLowerCase(),
    is_active: status === 'ACTIVE',
    started_at: iso(f.started_at as string),
    last_activity_at: iso(f.last_activity_at as string),
    finished_at: iso(f.finished_at as string | null),
    current_step: f.current_step ?? null,
  };
};

const copilotView = (a: Record<string, unknown>) => ({
  id: a.id,
  company_id: a.company_id,
  execution_id: a.execution_id,
  agent_id: a.agent_id,
  agent_name: a.agent_name,
  chat_id: a.chat_id,
  action_key: a.action_key,
  status: a.status,
  confidence: a.confidence,
  requires_review: a.requires_review,
  input_payload: a.input_payload,
  output_payload: a.output_payload,
  failure_reason: a.failure_reason,
  created_at: iso(a.created_at as string),
  updated_at: iso(a.updated_at as string),
  executed_at: iso(a.executed_at as string | null),
});

/** GET /chats/{id}: the summary plus flow sessions, pending copilot actions and the assignable agents. */
export function chatDetailView(c: ChatRead, l: ChatLookups, x: DetailExtras, now = new Date()) {
  const base = chatSummaryView(c, l, now);
  const whatsappOnly = c.channel_type === 'WHATSAPP' ? { whatsapp_flow_sessions: x.flowSessions.map(flowView) } : {};
  return {
    ...base,
    ...whatsappOnly,
    pending_copilot_actions: x.copilotActions.map(copilotView),
    assignable_agents: x.assignable.map((a) => assignableView(a, l.users)),
  };
}
