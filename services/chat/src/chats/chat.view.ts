import type { PersonDetail } from '@svc/proto/crm/v1/persons';
import type { UserSummary } from '@svc/proto/crm/v1/records';
import type { AgentRef } from '../accounts/account.store.js';
import { iso, messageView } from '../messages/message.view.js';
import { userView } from '../people/crm-people.js';
import type { ChatRead } from './chat.store.js';
import type { StoredCopilotAction } from './copilot-action.store.js';
import type { StoredFlowSession } from './flow-session.store.js';

/** The customer service window: a non-template message may be sent until 24 h after the contact's last message. */
export const SESSION_WINDOW_MS = 24 * 3600 * 1000;

export function sessionExpiresAt(c: Pick<ChatRead, 'lastCustomerMsgAt'>): Date | null {
  const last = iso(c.lastCustomerMsgAt);
  return last ? new Date(Date.parse(last) + SESSION_WINDOW_MS) : null;
}

export interface ChatLookups {
  persons: Map<string, PersonDetail>;
  users: Map<string, UserSummary>;
}

/** The users and persons a chat's view shows, for one crm call of each kind per answer. */
export function refsOfChat(c: ChatRead, users: Set<string>, persons: Set<string>, assignable: AgentRef[] = []): void {
  if (c.personId) persons.add(c.personId);
  if (c.assignedAgent) users.add(c.assignedAgent.userId);
  for (const p of c.participants) users.add(p.userId);
  for (const a of assignable) users.add(a.userId);
  const m = c.lastMessage;
  if (m?.userId) users.add(m.userId);
  if (m?.agentUserId) users.add(m.agentUserId);
}

const agentOf = (a: AgentRef, users: ChatLookups['users']) => ({ agent_id: a.agentId, user: userView(users.get(a.userId), a.userId) });
export const assignableView = (a: AgentRef, users: ChatLookups['users']) => ({
  agent_id: a.agentId,
  status: a.status,
  user: userView(users.get(a.userId), a.userId),
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

/** Shared by list records and details; each channel adds its own fields (decision 0061). */
export function chatSummaryView(c: ChatRead, l: ChatLookups, now = new Date()) {
  const expires = sessionExpiresAt(c);
  const whatsapp = c.channelType === 'WHATSAPP';
  const common = {
    id: c.id,
    status: c.status,
    priority: c.priority,
    channel_type: c.channelType,
    chat_type: c.chatType,
    crm_person: personView(c.personId ? l.persons.get(c.personId) : undefined),
    unread_count: c.unreadCount,
    is_manually_unread: c.isManuallyUnread,
    archived_at: iso(c.archivedAt),
    last_customer_msg_at: iso(c.lastCustomerMsgAt),
    session_expires_at: iso(expires),
    can_send_open_message: expires !== null && expires.getTime() > now.getTime(),
    last_activity_at: iso(c.lastActivityAt),
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
    participants: c.participants.map((a) => agentOf(a, l.users)),
    assigned_agent: c.assignedAgent ? agentOf(c.assignedAgent, l.users) : null,
    has_pending_copilot_actions: c.pendingCopilotActionsCount > 0,
    pending_copilot_actions_count: c.pendingCopilotActionsCount,
    channel_account_id: c.channelAccountId,
    last_message: c.lastMessage ? messageView(c.lastMessage, l.users) : null,
    crm_marketing_lead_source: [],
  };
  if (whatsapp) {
    const n = c.number!;
    return {
      ...common,
      phone_number: { id: n.id, display_number: n.displayNumber, raw_number: n.rawNumber, phone_number_id: n.phoneNumberId },
      wa_contact_id: c.waContactId,
      contact_name: c.contactName,
      contact_number: c.contactNumber,
      remote_profile_name: c.remoteProfileName,
      channel_account: {
        id: n.id,
        type: 'WHATSAPP',
        display_name: n.verifiedName ?? n.displayNumber,
        provider_status: n.providerStatus,
      },
      external_contact: {
        id: c.waContactId,
        handle: c.contactNumber,
        display_name: c.remoteProfileName ?? c.contactName,
        avatar_url: null,
      },
      legacy: { whatsapp_chat_id: c.id, whatsapp_phone_id: n.id, wa_contact_id: c.waContactId },
      ai_attendance: {
        is_active: c.aiAgentId !== null,
        whatsapp_ai_agent_id: c.aiAgentId,
        ai_messages_count: c.aiMessageCount,
      },
    };
  }
  const i = c.instagram!;
  return {
    ...common,
    instagram_account: { id: i.id, handle: i.handle, display_name: i.displayName, external_account_id: i.externalAccountId },
    channel_account: { id: i.id, type: 'INSTAGRAM', display_name: i.displayName, provider_status: i.providerStatus },
    external_contact: {
      id: c.externalContactId,
      handle: c.externalContactHandle,
      display_name: c.externalContactDisplayName,
      avatar_url: c.externalContactAvatarUrl,
    },
  };
}

export interface DetailExtras {
  assignable: AgentRef[];
  flowSessions: StoredFlowSession[];
  copilotActions: StoredCopilotAction[];
}

const flowView = (f: StoredFlowSession) => ({
  session_id: f.id,
  flow_id: f.flowId,
  flow_name: f.flowName,
  status: f.status,
  status_label: f.status.charAt(0) + f.status.slice(1).toLowerCase(),
  is_active: f.status === 'ACTIVE',
  started_at: iso(f.startedAt),
  last_activity_at: iso(f.lastActivityAt),
  finished_at: iso(f.finishedAt),
  current_step: f.currentStep ?? null,
});

const copilotView = (a: StoredCopilotAction) => ({
  id: a.id,
  company_id: a.companyId,
  execution_id: a.executionId,
  agent_id: a.agentId,
  agent_name: a.agentName,
  chat_id: a.chatId,
  action_key: a.actionKey,
  status: a.status,
  confidence: a.confidence,
  requires_review: a.requiresReview,
  input_payload: a.inputPayload,
  output_payload: a.outputPayload,
  failure_reason: a.failureReason,
  created_at: iso(a.createdAt),
  updated_at: iso(a.updatedAt),
  executed_at: iso(a.executedAt),
});

export function chatDetailView(c: ChatRead, l: ChatLookups, x: DetailExtras, now = new Date()) {
  const base = chatSummaryView(c, l, now);
  const whatsappOnly = c.channelType === 'WHATSAPP' ? { whatsapp_flow_sessions: x.flowSessions.map(flowView) } : {};
  return {
    ...base,
    ...whatsappOnly,
    pending_copilot_actions: x.copilotActions.map(copilotView),
    assignable_agents: x.assignable.map((a) => assignableView(a, l.users)),
  };
}
