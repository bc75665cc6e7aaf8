import type { UserSummary } from '@svc/proto/crm/v1/records';
import { type UserView, userView } from '../people/crm-people.js';
import type { MessageRead } from './message.store.js';

export const iso = (v: Date | string | null | undefined): string | null =>
  v === null || v === undefined ? null : new Date(v).toISOString();

/** The users a message shows (its sender and its agent's user), for one crm call per answer. */
export function usersOf(m: MessageRead, into: Set<string>): Set<string> {
  if (m.userId) into.add(m.userId);
  if (m.agentUserId) into.add(m.agentUserId);
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
export function messageView(m: MessageRead, users: Map<string, UserSummary>, quoted: Record<string, unknown> | null = null) {
  const user: UserView | null = m.userId ? userView(users.get(m.userId), m.userId) : null;
  return {
    id: m.id,
    chat_id: m.chatId,
    type: m.type,
    origin: m.origin,
    from_me: m.fromMe,
    sent_via: m.sentVia,
    status: m.status,
    body_text: m.bodyText,
    transcription: m.transcription,
    content_payload: m.contentPayload,
    reactions: m.reactions.map((r) => ({
      id: r.id,
      emoji: r.emoji,
      actor: r.actor,
      reactor_wa_id: r.reactorWaId,
      reactor_user_id: r.reactorUserId,
      created_at: iso(r.createdAt),
    })),
    meta_timestamp: iso(m.metaTimestamp),
    created_at: iso(m.createdAt),
    is_history: m.isHistory,
    history_phase: null,
    history_chunk_order: null,
    history_progress: null,
    is_media_placeholder: false,
    is_forwarded: m.isForwarded,
    agent: m.agentId ? { id: m.agentId, user: m.agentUserId ? userView(users.get(m.agentUserId), m.agentUserId) : null } : null,
    user,
    media: mediaView(m.media),
    call: null,
    quoted_message: quoted,
    error_code: m.errorCode,
    error_message: m.errorMessage,
    whatsapp_ai_agent_id: m.whatsappAiAgentId,
  };
}
export type MessageView = ReturnType<typeof messageView>;
