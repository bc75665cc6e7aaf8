import type { UserSummary } from '@svc/proto/crm/v1/records';
import { type UserView, userView } from '../people/crm-people.js';
import type { MessageRead } from './message.store.js';

/**
 * Postgres's text of a timestamptz in UTC (the pool keeps timestamps as that text), and its JSON text: years 1000 to
 * 9999, whole seconds or 1 to 6 fraction digits, offset zero. Years below 1000 are left to `Date` (it reads 0050 as 1950),
 * and so is `T…+00`, which `Date` refuses.
 */
const PG_UTC = /^[1-9]\d{3}-\d\d-\d\d(?: \d\d:\d\d:\d\d(?:\.\d{1,6})?\+00(?::00)?|T\d\d:\d\d:\d\d(?:\.\d{1,6})?\+00:00)$/;

/**
 * What `new Date(v).toISOString()` prints, without parsing a date: for Postgres's UTC text that is a rewrite of the
 * text (the fraction cut to milliseconds, as `Date` cuts it), several times cheaper per value and a page of the list
 * shows about 300 of them (decision 0250). Any other string still goes through `Date`.
 */
export function iso(v: Date | string | null | undefined): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') return v.toISOString();
  if (!PG_UTC.test(v)) return new Date(v).toISOString();
  const ms = v.charCodeAt(19) === 46 ? `${v.slice(20, v.indexOf('+'))}00`.slice(0, 3) : '000';
  return `${v.slice(0, 10)}T${v.slice(11, 19)}.${ms}Z`;
}

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
