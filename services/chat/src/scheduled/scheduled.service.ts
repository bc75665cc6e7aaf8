import { invalidField, notFound, requireUuid } from '@svc/platform/errors';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { agentOfUser } from '../accounts/account.store.js';
import type { ChatActor, ChatService } from '../chats/chat.service.js';
import { sessionExpiresAt } from '../chats/chat.view.js';
import { AUDIO_LIMIT_BYTES, FILE_LIMIT_BYTES } from '../outbound/outbound.schema.js';
import type { IncomingFile, MessageSender } from '../outbound/outbound.sender.js';
import { type Attachment, attachmentIds, type ScheduledFileStore } from './scheduled.files.js';
import type { ListScheduledQuery, ScheduleBody } from './scheduled.schema.js';
import { cancelByUser, insertScheduled, scheduledOfChat, statusOf } from './scheduled.store.js';
import { scheduledView } from './scheduled.view.js';

/** Scheduled messages of WhatsApp chats (spec, Scheduled message and its state table). */
export class ScheduledService {
  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly chats: ChatService,
    private readonly sender: MessageSender,
    private readonly files: ScheduledFileStore,
  ) {}

  /** Stored files are removed when anything fails. */
  async schedule(
    actor: ChatActor,
    chatId: string,
    b: ScheduleBody,
    files: AsyncIterable<IncomingFile> = (async function* () {})(),
    now = new Date(),
  ) {
    const attachments: Attachment[] = [];
    try {
      return await this.write(actor, chatId, b, files, attachments, now);
    } catch (err) {
      await this.files.remove(attachments.map((a) => a.id));
      throw err;
    }
  }

  private async write(
    actor: ChatActor,
    chatId: string,
    b: ScheduleBody,
    files: AsyncIterable<IncomingFile>,
    attachments: Attachment[],
    now: Date,
  ) {
    const chat = await this.chats.read(actor.companyId, chatId);
    if (chat.channelType !== 'WHATSAPP') throw invalidField('chat', 'only WhatsApp messages can be scheduled');
    const at = new Date(b.scheduled_at);
    if (at.getTime() <= now.getTime()) throw invalidField('scheduled_at', 'must be in the future');
    if (b.type === 'template') {
      if (b.body !== undefined) throw invalidField('body', 'must not be sent with a template (its text is the template)');
      if (!b.template) throw invalidField('template', 'is required when type is template');
      await this.sender.prepare(actor, chatId, { type: 'template', template: b.template }, now);
    } else {
      const expires = sessionExpiresAt(chat);
      if (!expires || at.getTime() > expires.getTime()) {
        throw invalidField(
          'scheduled_at',
          'text or attachments can only be scheduled inside session_expires_at; after the window a template is required',
        );
      }
    }
    for await (const f of files) {
      if (b.type === 'template') {
        f.stream.resume();
        throw invalidField('attachments', 'a scheduled template takes no files (files are open messages, sent inside the window)');
      }
      const limit = f.mimeType.startsWith('audio/') ? AUDIO_LIMIT_BYTES : FILE_LIMIT_BYTES;
      const a: Attachment = { id: uuidv7(), file_name: f.fileName, mime_type: f.mimeType, file_size: 0 };
      attachments.push(a);
      a.file_size = await this.files.put(a.id, f.stream, (bytes) => {
        if (bytes > limit) throw invalidField('attachments', `${f.fileName} is over ${limit / 1024 / 1024} MB`);
      });
    }
    if (b.type === 'text' && !b.body && !attachments.length)
      throw invalidField('body', 'is required for a text message without attachments');
    const pool = await this.pool();
    const agentId = await agentOfUser(pool, actor.companyId, actor.userId, 'WHATSAPP', chat.channelAccountId);
    const payload = {
      type: b.type,
      body: b.body ?? null,
      template: b.template ?? null,
      template_fields: (b.template_fields ?? []).map((f) => ({ component: f.component ?? 'BODY', type: f.type ?? 'TEXT', ...f })),
      reference_wamid: b.reference_wamid ?? null,
    };
    const row = await insertScheduled(pool, {
      id: uuidv7(),
      companyId: actor.companyId,
      chatId,
      status: 'PENDING',
      messageKind: b.type === 'template' ? 'TEMPLATE' : 'OPEN_MESSAGE',
      cancelOnInbound: b.cancel_on_inbound ?? false,
      scheduledAt: at,
      createdByUserId: actor.userId,
      senderAgentId: agentId,
      payload,
      attachments,
      sentMessageIds: [],
      createdAt: now,
    });
    return scheduledView(row);
  }

  async cancel(actor: ChatActor, chatId: string, id: string, reason: string | undefined) {
    await this.chats.read(actor.companyId, chatId);
    requireUuid(id, 'Scheduled message');
    const pool = await this.pool();
    const canceled = await cancelByUser(pool, { companyId: actor.companyId, chatId, id, reason: reason ?? null, userId: actor.userId });
    if (canceled) {
      await this.files.remove(attachmentIds(canceled));
      return scheduledView(canceled);
    }
    const status = await statusOf(pool, actor.companyId, chatId, id);
    if (!status) throw notFound('Scheduled message');
    throw invalidField('status', `only PENDING scheduled messages can be canceled (this one is ${status})`);
  }

  async list(actor: ChatActor, chatId: string, q: ListScheduledQuery) {
    await this.chats.read(actor.companyId, chatId);
    const page = await scheduledOfChat(await this.pool(), actor.companyId, chatId, {
      status: q.status ?? null,
      take: q.take,
      skip: q.skip,
    });
    return { total: page.total, records: page.rows.map(scheduledView) };
  }
}
