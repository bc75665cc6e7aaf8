import type { UserSummary } from '@svc/proto/crm/v1/records';
import { type UserView, userView } from '../people/crm-people.js';

/** A message as MESSAGE_JSON (chats/chat.store.ts) reads it: the row's columns, its reactions and its agent's user. */
export interface MessageJson {
  id: string;
  chat_id: string;
  company_id: string;
  wamid: string | null;
  ref_wamid: string | null;
  type: string;
  origin: string;
  from_me: boolean;
  sent_via: string;
  status: string;
  body_text: string | null;
  transcription: string | null;
  content_payload: Record<string, unknown> | null;
  media: Record<string, unknown> | null;
  quoted_message_id: string | null;
  agent_id: string | null;
  agent_user_id: string | null;
  user_id: string | null;
  whatsapp_ai_agent_id: string | null;
  error_code: number | null;
  error_message: string | null;
  is_history: boolean;
  is_forwarded: boolean;
  meta_timestamp: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
  reactions: {
    id: string;
    emoji: string;
    actor: string;
    reactor_wa_id: string | null;
    reactor_user_id: string | null;
    created_at: string;
  }[];
}

export const iso = (v: Date | string | null | undefined): string | null =>
  v === null || v === undefined ? null : new Date(v).toISOString();

/** The users a message shows (its sender and its agent's user), for one crm call per answer. */
export function usersOf(m: MessageJson, into: Set<string>): Set<string> {
  if (m.user_id) into.add(m.user_id);
  if (m.agent_user_id) into.add(m.agent_user_id);
  return into;
}

function mediaView(media: Record<string, unknown> | null) {
  if (!media) return null;
  return {
    id: media.id ?? null,
    mime_type: media.mime_type ?? null,
    file_name: media.file_name ?? null,
    file_size: media.file_size ?? null,
    is_downloaded: media.is_downloaded ?? false,
    url: media.url ?? null,
  };
}

/** The spec's Chat message. `quoted` is the quoted message's own view with its `page`, when there is one. */
export function messageView(m: MessageJson, users: Map<string, UserSummary>, quoted: Record<string, unknown> | null = null) {
  const user: UserView | null = m.user_id ? userView(users.get(m.user_id), m.user_id) : null;
  return {
    id: m.id,
    chat_id: m.chat_id,
    type: m.type,
    origin: m.origin,
    from_me: m.from_me,
    sent_via: m.sent_via,
    status: m.status,
    body_text: m.body_text,
    transcription: m.transcription,
    content_payload: m.content_payload,
    reactions: m.reactions.map((r) => ({ ...r, created_at: iso(r.created_at) })),
    meta_timestamp: iso(m.meta_timestamp),
    created_at: iso(m.created_at),
    is_history: m.is_history,
    history_phase: null,
    history_chunk_order: null,
    history_progress: null,
    is_media_placeholder: false,
    is_forwarded: m.is_forwarded,
    agent: m.agent_id ? { id: m.agent_id, user: m.agent_user_id ? userView(users.get(m.agent_user_id), m.agent_user_id) : null } : null,
    user,
    media: mediaView(m.media),
    call: null,
    quoted_message: quoted,
    error_code: m.error_code,
    error_message: m.error_message,
    whatsapp_ai_agent_id: m.whatsapp_ai_agent_id,
  };
}
export type MessageView = ReturnType<typeof messageView>;
