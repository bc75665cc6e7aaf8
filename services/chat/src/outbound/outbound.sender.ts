import { type Readable, Transform } from 'node:stream';
import { AppError, invalidField, notFound, requireUuid } from '@svc/platform/errors';
import type { OutboxWriter } from '@svc/platform/events/writer';
import type { UserSummary } from '@svc/proto/crm/v1/records';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { hasApprovedTemplate } from '../accounts/account.store.js';
import { contactOf, providerOf } from '../chats/chat.provider.js';
import type { ChatActor } from '../chats/chat.service.js';
import { type ChatToSend, chatToSend, chatToSendOpening } from '../chats/chat.store.js';
import { sessionExpiresAt } from '../chats/chat.view.js';
import { associatedRecords, messageSentPayload } from '../events/chat.events.js';
import {
  discardMessage,
  insertMessage,
  type MessageRead,
  messageIdByWamid,
  type NewMessage,
  type Settlement,
} from '../messages/message.store.js';
import { messageView } from '../messages/message.view.js';
import type { CrmPeople } from '../people/crm-people.js';
import { type ChatProvider, isProviderError, type MediaKind, type ProviderRegistry, type SendResult } from '../providers/provider.js';
import { templateFieldsToComponents } from '../providers/template-fields.js';
import { AUDIO_LIMIT_BYTES, FILE_LIMIT_BYTES, type SendMessageBody } from './outbound.schema.js';
import { settleSend } from './send.store.js';

/** A file of a multipart send, as it streams in. */
export interface IncomingFile {
  stream: Readable;
  fileName: string;
  mimeType: string;
}

export interface SendDeps {
  pool: () => Promise<Pool>;
  people: CrmPeople;
  outbox: OutboxWriter;
  providers: ProviderRegistry;
}

const kindOf = (mime: string): MediaKind =>
  mime.startsWith('image/') ? 'image' : mime.startsWith('video/') ? 'video' : mime.startsWith('audio/') ? 'audio' : 'document';

/** Counts a file's bytes as they pass and fails the stream past its limit, so the upload to the provider stops there. */
function limited(limit: number, counted: { bytes: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      counted.bytes += chunk.length;
      if (counted.bytes > limit) done(new Error(`file exceeds ${limit / 1024 / 1024} MB`));
      else done(null, chunk);
    },
  });
}

/** A provider's answer or failure as the message's status (decision 0062). */
async function attempt(send: () => Promise<SendResult>): Promise<Settlement> {
  try {
    const r = await send();
    return { wamid: r.providerMessageId, status: r.status, errorCode: null, errorMessage: null };
  } catch (err) {
    if (!isProviderError(err)) return { wamid: null, status: 'failed', errorCode: null, errorMessage: (err as Error).message };
    const status = err.detail.outcomeUnknown ? 'delivery_unknown' : 'failed';
    return { wamid: null, status, errorCode: err.detail.code ?? null, errorMessage: err.message };
  }
}

/** The provider, calling `reached` before each send request. */
function announcing(provider: ChatProvider, reached: () => void): ChatProvider {
  const announced = Object.create(provider) as ChatProvider;
  announced.sendText = (input) => {
    reached();
    return provider.sendText(input);
  };
  announced.sendTemplate = (input) => {
    reached();
    return provider.sendTemplate(input);
  };
  announced.sendMedia = (input) => {
    reached();
    return provider.sendMedia(input);
  };
  return announced;
}

/** A chat ready to send to; with `opened`, its text message is already stored `processing` (decision 0272). */
export type PreparedChat = ChatToSend & { opened?: NewMessage };

const OUTSIDE_WINDOW = "a template is required outside the 24 h window after the contact's last message";

/** Each message is stored `processing` before the provider call, so a crash in between leaves a visible record. */
export class MessageSender {
  constructor(private readonly d: SendDeps) {}

  /** Checks what does not depend on the files (rules 2 and 6) and returns the chat and its template, if any. */
  async prepare(actor: ChatActor, chatId: string, body: SendMessageBody, now = new Date()) {
    requireUuid(chatId, 'Chat');
    const chat = await chatToSend(await this.d.pool(), actor.companyId, chatId, actor.userId);
    if (!chat) throw notFound('Chat');
    const open = (sessionExpiresAt(chat)?.getTime() ?? 0) > now.getTime();
    if (body.type === 'template') {
      if (body.body !== undefined) throw invalidField('body', 'must not be sent with a template (its text is the template)');
      if (!body.template) throw invalidField('template', 'is required when type is template');
      if (chat.channelType !== 'WHATSAPP') throw invalidField('type', 'Instagram chats have no templates');
      const found = await hasApprovedTemplate(
        await this.d.pool(),
        actor.companyId,
        chat.channelAccountId,
        body.template.name,
        body.template.language,
      );
      if (!found) throw invalidField('template', "no approved template of this name and language on the chat's number");
    } else if (!open) {
      throw invalidField('type', OUTSIDE_WINDOW);
    }
    return chat;
  }

  /**
   * `prepare` for a send without files. A text's `processing` message is inserted by the statement that reads the
   * chat, when the window is open: one round trip fewer per send (decision 0272).
   */
  async prepareWithoutFiles(actor: ChatActor, chatId: string, body: SendMessageBody, now = new Date()): Promise<PreparedChat> {
    if (body.type !== 'text' || !body.body?.trim()) return this.prepare(actor, chatId, body, now);
    requireUuid(chatId, 'Chat');
    const wamid = body.reference_wamid;
    const created = newMessage(
      actor,
      chatId,
      null,
      { type: 'text', body_text: body.body, reply: wamid ? { wamid, id: null } : undefined },
      now,
    );
    const chat = await chatToSendOpening(await this.d.pool(), created, actor.userId, now);
    if (!chat) throw notFound('Chat');
    if (!chat.opened) throw invalidField('type', OUTSIDE_WINDOW);
    const { opened, ...rest } = chat;
    return { ...rest, opened: { ...created, agentId: opened.agentId, quotedMessageId: opened.quotedMessageId } };
  }

  /** `reached` is called before the first request to the provider (what an idempotency key must not repeat). */
  async send(
    actor: ChatActor,
    chat: PreparedChat,
    body: SendMessageBody,
    files: AsyncIterable<IncomingFile> = (async function* () {})(),
    reached: () => void = () => undefined,
  ) {
    const pool = await this.d.pool();
    let provider: ChatProvider;
    try {
      provider = announcing(providerOf(this.d.providers, chat), reached);
    } catch (err) {
      // Without a provider nothing is sent, and no message is left behind, as when the insert came after this.
      if (chat.opened) await discardMessage(pool, chat.opened.id);
      throw err;
    }
    const to = contactOf(chat);
    const agentId = chat.actorAgentId;
    void this.actorUsers(actor);
    const wamid = body.reference_wamid;
    const reply = wamid && !chat.opened ? { wamid, id: await messageIdByWamid(pool, chat.id, wamid) } : undefined;
    const sent: MessageRead[] = [];
    let sentText = false;
    const sendText = async () => {
      sentText = true;
      if (body.type !== 'text' || !body.body?.trim()) return;
      sent.push(
        await this.one(
          pool,
          actor,
          chat,
          agentId,
          { type: 'text', body_text: body.body, reply },
          () => provider.sendText({ to, body: body.body!, replyTo: body.reference_wamid }),
          undefined,
          chat.opened,
        ),
      );
    };
    let files_ = 0;
    for await (const file of files) {
      files_++;
      if (!sentText) await sendText();
      if (body.type === 'template' && files_ > 1) {
        // Rule 6: a template takes one file, as its header; any further file is a failed record, not a second template.
        file.stream.resume();
        const media = { mime_type: file.mimeType, file_name: file.fileName, is_downloaded: false };
        sent.push(
          await this.one(pool, actor, chat, agentId, { type: kindOf(file.mimeType), body_text: null, media }, () =>
            Promise.reject(new Error('a template takes one file, as its header media')),
          ),
        );
        continue;
      }
      sent.push(await this.file(pool, actor, chat, agentId, provider, to, body, file));
    }
    if (!sentText) await sendText();
    if (body.type === 'template' && files_ === 0) {
      const components = templateFieldsToComponents(body.template_fields ?? []);
      sent.push(
        await this.one(
          pool,
          actor,
          chat,
          agentId,
          {
            type: 'template',
            body_text: null,
            reply,
            content_payload: { template: body.template, template_fields: body.template_fields ?? [] },
          },
          () => provider.sendTemplate({ to, template: body.template!, components, replyTo: body.reference_wamid }),
        ),
      );
    }
    if (!sent.length) throw invalidField('body', 'content or attachments are required');
    // The messages as their settle left them: no second read.
    const users = await this.actorUsers(actor);
    return { records: sent.map((m) => messageView(m, users)) };
  }

  private async file(
    pool: Pool,
    actor: ChatActor,
    chat: ChatToSend,
    agentId: string | null,
    provider: ChatProvider,
    to: string,
    body: SendMessageBody,
    f: IncomingFile,
  ) {
    const kind = kindOf(f.mimeType);
    const limit = kind === 'audio' ? AUDIO_LIMIT_BYTES : FILE_LIMIT_BYTES;
    const counted = { bytes: 0 };
    const guard = limited(limit, counted);
    // pipe, not pipeline: a file over its limit fails the upload, but the request's part must still be read to its
    // end (destroying it would stall the multipart parser before the next part).
    const ended = new Promise<void>((resolve) => {
      f.stream.once('end', resolve);
      f.stream.once('close', resolve);
    });
    f.stream.pipe(guard);
    guard.once('error', () => {
      f.stream.unpipe(guard);
      f.stream.resume();
    });
    const media = { id: null, mime_type: f.mimeType, file_name: f.fileName, is_downloaded: true, url: null } as Record<string, unknown>;
    const source = { from: 'stream' as const, stream: guard, mimeType: f.mimeType, fileName: f.fileName };
    const template = body.type === 'template';
    const settled = await this.one(
      pool,
      actor,
      chat,
      agentId,
      template
        ? {
            type: 'template',
            body_text: null,
            media,
            content_payload: { template: body.template, template_fields: body.template_fields ?? [] },
          }
        : { type: kind, body_text: null, media },
      async () => {
        try {
          return await (template
            ? provider.sendTemplate({
                to,
                template: body.template!,
                components: templateFieldsToComponents(body.template_fields ?? [], source),
                replyTo: body.reference_wamid,
              })
            : provider.sendMedia({ to, kind, media: source, replyTo: body.reference_wamid }));
        } catch (err) {
          // The upload was cut by this service at the file's limit: nothing was sent, whatever the provider client says.
          if (counted.bytes > limit) throw new Error(`file exceeds ${limit / 1024 / 1024} MB`);
          throw err;
        }
      },
      () => ({ ...media, file_size: counted.bytes }),
    );
    // Whatever the provider did, the rest of this file is read off the request so the next part can arrive.
    f.stream.unpipe(guard);
    f.stream.resume();
    await ended;
    return settled;
  }

  private async one(
    pool: Pool,
    actor: ChatActor,
    chat: ChatToSend,
    agentId: string | null,
    content: OutboundContent,
    send: () => Promise<SendResult>,
    mediaAfter?: () => Record<string, unknown>,
    /** Already stored `processing` by `prepareWithoutFiles`. */
    opened?: NewMessage,
  ): Promise<MessageRead> {
    const created = opened ?? newMessage(actor, chat.id, agentId, content, new Date());
    const id = created.id;
    if (!opened) await insertMessage(pool, created);
    const outcome = await attempt(send);
    const settlement = { ...outcome, media: mediaAfter?.() ?? null };
    const events = [];
    if (outcome.status !== 'failed') {
      const [associated, users] = await Promise.all([
        associatedRecords(this.d.people, actor.companyId, chat.personId),
        this.actorUsers(actor),
      ]);
      const m = settledAs(created, settlement, agentId ? actor.userId : null);
      events.push({
        companyId: actor.companyId,
        eventKey: 'chat.message_sent' as const,
        payload: messageSentPayload(messageView(m, users), associated),
      });
    }
    // One statement: the message, its chat, the agent, the flows and the event commit together (decision 0236).
    const part = await this.d.outbox.part(events, 11);
    const settled = await settleSend(pool, id, settlement, {
      chatId: chat.id,
      companyId: actor.companyId,
      at: created.createdAt,
      agentId,
      events: part,
    });
    if (part.issued) this.d.outbox.wake(pool);
    if (outcome.status === 'failed' && !content.media && outcome.errorCode === null) {
      throw new AppError('internal', `messaging provider unreachable: ${outcome.errorMessage}`);
    }
    return settled;
  }

  /** Asked of crm while the provider is called, not inside the settle; once per request even when crm fails. */
  private actorUsers(actor: ChatActor): Promise<Map<string, UserSummary>> {
    let users = this.usersByActor.get(actor);
    if (!users) {
      users = this.d.people.sender(actor.companyId, actor.userId).catch(() => new Map<string, UserSummary>());
      this.usersByActor.set(actor, users);
    }
    return users;
  }

  private readonly usersByActor = new WeakMap<ChatActor, Promise<Map<string, UserSummary>>>();
}

/** What one outbound message carries. */
interface OutboundContent {
  type: string;
  body_text: string | null;
  media?: Record<string, unknown>;
  content_payload?: Record<string, unknown>;
  /** The provider id of the message this one replies to (`reference_wamid`), and our id of it when we have it. */
  reply?: { wamid: string; id: string | null } | undefined;
}

/** An outbound message before its provider call. */
function newMessage(actor: ChatActor, chatId: string, agentId: string | null, content: OutboundContent, at: Date): NewMessage {
  return {
    id: uuidv7(),
    companyId: actor.companyId,
    chatId,
    wamid: null,
    refWamid: content.reply?.wamid ?? null,
    type: content.type,
    origin: 'API_OUTBOUND',
    fromMe: true,
    sentVia: 'API',
    status: 'processing',
    bodyText: content.body_text,
    contentPayload: content.content_payload ?? null,
    media: content.media ?? null,
    quotedMessageId: content.reply?.id ?? null,
    agentId,
    userId: actor.userId,
    isHistory: false,
    isForwarded: false,
    metaTimestamp: null,
    createdAt: at,
  };
}

/**
 * The message as the settle statement leaves it, for its event: the event is written by that very statement, so it is
 * built before it. jsonb stores the payload, so only the values count; a test compares them with the row read back.
 */
function settledAs(m: NewMessage, s: Settlement, agentUserId: string | null): MessageRead {
  return {
    ...m,
    wamid: s.wamid,
    status: s.status,
    errorCode: s.errorCode,
    errorMessage: s.errorMessage,
    media: s.media ?? m.media,
    transcription: null,
    whatsappAiAgentId: null,
    deletedAt: null,
    metaTimestamp: m.metaTimestamp?.toISOString() ?? null,
    createdAt: m.createdAt.toISOString(),
    updatedAt: m.createdAt.toISOString(),
    agentUserId,
    reactions: [],
  };
}
