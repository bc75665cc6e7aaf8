import { z } from 'zod';
import type { InboundEvent, InboundMessage, InboundStatus, MediaRef } from '../provider.js';

/** Events in the order Graph lists them; fields that carry no chat events (account updates, template reviews) are skipped. */
const message = z.looseObject({
  id: z.string().min(1),
  from: z.string().min(1),
  to: z.string().optional(),
  timestamp: z.string().regex(/^\d+$/),
  type: z.string().min(1),
});
type WaMessage = z.infer<typeof message> & Record<string, unknown>;

const status = z.looseObject({
  id: z.string().min(1),
  status: z.string(),
  timestamp: z.string().regex(/^\d+$/),
  recipient_id: z.string().optional(),
  errors: z
    .array(
      z.looseObject({
        code: z.number(),
        title: z.string().optional(),
        message: z.string().optional(),
        error_data: z.looseObject({ details: z.string().optional() }).optional(),
      }),
    )
    .optional(),
});

const value = z.looseObject({
  metadata: z.looseObject({ phone_number_id: z.string().min(1), display_phone_number: z.string().optional() }),
  contacts: z.array(z.looseObject({ wa_id: z.string(), profile: z.looseObject({ name: z.string().optional() }).optional() })).optional(),
  messages: z.array(message).optional(),
  statuses: z.array(status).optional(),
  message_echoes: z.array(message).optional(),
  history: z
    .array(
      z.looseObject({
        metadata: z.looseObject({ phase: z.number(), chunk_order: z.number(), progress: z.number() }).optional(),
        threads: z.array(z.looseObject({ id: z.string(), messages: z.array(message).optional() })).optional(),
      }),
    )
    .optional(),
});

export const whatsappCallback = z.looseObject({
  object: z.literal('whatsapp_business_account'),
  entry: z.array(z.looseObject({ id: z.string(), changes: z.array(z.looseObject({ field: z.string(), value: z.unknown() })) })),
});

const STATUSES = new Set(['sent', 'delivered', 'read', 'failed']);
const MEDIA = new Set(['image', 'video', 'audio', 'document', 'sticker']);

export function whatsappEvents(callback: z.infer<typeof whatsappCallback>): InboundEvent[] {
  const events: InboundEvent[] = [];
  for (const entry of callback.entry) {
    for (const change of entry.changes) {
      if (change.field !== 'messages' && change.field !== 'smb_message_echoes' && change.field !== 'history') continue;
      const parsed = value.safeParse(change.value);
      if (!parsed.success) continue;
      const v = parsed.data;
      const accountId = v.metadata.phone_number_id;
      const names = new Map((v.contacts ?? []).map((c) => [c.wa_id, c.profile?.name]));
      for (const m of v.messages ?? [])
        events.push(toMessage(m as WaMessage, accountId, { contactId: m.from, profileName: names.get(m.from), fromMe: false }));
      for (const m of v.message_echoes ?? []) {
        const contactId = m.to ?? '';
        if (contactId) events.push(toMessage(m as WaMessage, accountId, { contactId, profileName: names.get(contactId), fromMe: true }));
      }
      for (const chunk of v.history ?? []) {
        const history = chunk.metadata && {
          phase: chunk.metadata.phase,
          chunkOrder: chunk.metadata.chunk_order,
          progress: chunk.metadata.progress,
        };
        for (const thread of chunk.threads ?? []) {
          for (const m of thread.messages ?? []) {
            events.push(
              toMessage(m as WaMessage, accountId, {
                contactId: thread.id,
                profileName: names.get(thread.id),
                fromMe: m.from !== thread.id,
                history,
              }),
            );
          }
        }
      }
      for (const s of v.statuses ?? []) {
        if (!STATUSES.has(s.status)) continue;
        const event: InboundStatus = {
          kind: 'status',
          channel: 'WHATSAPP',
          provider: 'whatsapp_cloud',
          accountId,
          providerMessageId: s.id,
          status: s.status as InboundStatus['status'],
          recipientId: s.recipient_id,
          timestamp: seconds(s.timestamp),
          errors: (s.errors ?? []).map((e) => ({ code: e.code, title: e.title ?? '', message: e.error_data?.details ?? e.message })),
        };
        events.push(event);
      }
    }
  }
  return events;
}

interface Side {
  contactId: string;
  profileName?: string;
  fromMe: boolean;
  history?: InboundMessage['history'];
}

function toMessage(m: WaMessage, accountId: string, side: Side): InboundMessage {
  const context = obj(m.context);
  const event: InboundMessage = {
    kind: 'message',
    channel: 'WHATSAPP',
    provider: 'whatsapp_cloud',
    accountId,
    providerMessageId: m.id,
    contact: side.profileName ? { id: side.contactId, profileName: side.profileName } : { id: side.contactId },
    fromMe: side.fromMe,
    type: m.type,
    isForwarded: context.forwarded === true || context.frequently_forwarded === true,
    isHistory: side.history !== undefined,
    timestamp: seconds(m.timestamp),
    payload: m,
  };
  if (side.history) event.history = side.history;
  const text = textOf(m);
  if (text !== undefined) event.text = text;
  if (MEDIA.has(m.type)) event.media = mediaOf(obj(m[m.type]));
  if (typeof context.id === 'string') event.quotedMessageId = context.id;
  if (m.type === 'reaction') {
    const r = obj(m.reaction);
    const emoji = typeof r.emoji === 'string' && r.emoji !== '' ? r.emoji : undefined;
    event.reaction = emoji ? { messageId: String(r.message_id ?? ''), emoji } : { messageId: String(r.message_id ?? '') };
  }
  return event;
}

/** The words of a message, whatever its type carries them in. */
function textOf(m: WaMessage): string | undefined {
  const part = obj(m[m.type]);
  switch (m.type) {
    case 'text':
      return str(part.body);
    case 'image':
    case 'video':
    case 'document':
      return str(part.caption);
    case 'button':
      return str(part.text);
    case 'interactive': {
      const reply = obj(part.button_reply ?? part.list_reply ?? part.nfm_reply);
      return str(reply.title) ?? str(reply.body);
    }
    case 'reaction':
      return str(part.emoji) || undefined;
    case 'system':
      return str(part.body);
    case 'location':
      return [str(part.name), str(part.address)].filter(Boolean).join(', ') || undefined;
    default:
      return undefined;
  }
}

function mediaOf(part: Record<string, unknown>): MediaRef {
  const ref: MediaRef = {};
  if (typeof part.id === 'string') ref.id = part.id;
  if (typeof part.mime_type === 'string') ref.mimeType = part.mime_type;
  if (typeof part.sha256 === 'string') ref.sha256 = part.sha256;
  if (typeof part.filename === 'string') ref.fileName = part.filename;
  return ref;
}

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const seconds = (s: string) => new Date(Number(s) * 1000);
