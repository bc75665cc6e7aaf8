import { invalid, notFound, requireUuid } from '@svc/platform/errors';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { ChatActor, ChatService } from '../chats/chat.service.js';
import { sessionExpiresAt } from '../chats/chat.view.js';
import type { IncomingFile, MessageSender } from '../messages/message.send.js';
import { AUDIO_LIMIT_BYTES, FILE_LIMIT_BYTES } from '../messages/send.schema.js';
import { type Attachment, attachmentIds, type ScheduledFileStore } from './scheduled.files.js';
import type { ListScheduledQuery, ScheduleBody } from './scheduled.schema.js';
import { type ScheduledRow, scheduledView } from './scheduled.view.js';

/** Scheduled messages of WhatsApp chats (spec, Scheduled message and its state table). */
export class ScheduledService {
  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly chats: ChatService,
    private readonly sender: MessageSender,
    private readonly files: ScheduledFileStore,
  ) {}

  /**
   * Checks the body, streams each file of a multipart body to the file store (decision 0067), then writes the
   * PENDING row; files already stored are removed when anything fails.
   */
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
    if (chat.channel_type !== 'WHATSAPP') throw invalid('chat: only WhatsApp messages can be scheduled');
    const at = new Date(b.scheduled_at);
    if (at.getTime() <= now.getTime()) throw invalid('scheduled_at: must be in the future');
    if (b.type === 'template') {
      if (b.body !== undefined) throw invalid('body: must not be sent with a template (its text is the template)');
      if (!b.template) throw invalid('template: is required when type is template');
      await this.sender.prepare(actor, chatId, { type: 'template', template: b.template }, now);
    } else {
      const expires = sessionExpiresAt(chat);
      if (!expires || at.getTime() > expires.getTime()) {
        throw invalid(
          'scheduled_at: text or attachments can only be scheduled inside session_expires_at; after the window a template is required',
        );
      }
    }
    for await (const f of files) {
      if (b.type === 'template') {
        f.stream.resume();
        throw invalid('attachments: a scheduled template takes no files (files are open messages, sent inside the window)');
      }
      const limit = f.mimeType.startsWith('audio/') ? AUDIO_LIMIT_BYTES : FILE_LIMIT_BYTES;
      const a: Attachment = { id: uuidv7(), file_name: f.fileName, mime_type: f.mimeType, file_size: 0 };
      attachments.push(a);
      a.file_size = await this.files.put(a.id, f.stream, (bytes) => {
        if (bytes > limit) throw invalid(`attachments: ${f.fileName} is over ${limit / 1024 / 1024} MB`);
      });
    }
    if (b.type === 'text' && !b.body && !attachments.length) throw invalid('body: is required for a text message without attachments');
    const pool = await this.pool();
    const agent = await pool.query<{ id: string }>(
      'select id from agents where company_id = $1 and user_id = $2 and $3::uuid = any(whatsapp_number_ids)',
      [actor.companyId, actor.userId, chat.channel_account_id],
    );
    const payload = {
      type: b.type,
      body: b.body ?? null,
      template: b.template ?? null,
      template_fields: (b.template_fields ?? []).map((f) => ({ component: f.component ?? 'BODY', type: f.type ?? 'TEXT', ...f })),
      reference_wamid: b.reference_wamid ?? null,
    };
    const { rows } = await pool.query<ScheduledRow>(
      `insert into scheduled_messages (id, company_id, chat_id, status, message_kind, cancel_on_inbound, scheduled_at, created_by_user_id,
         sender_agent_id, payload, attachments, sent_message_ids, created_at, updated_at)
       values ($1, $2, $3, 'PENDING', $4, $5, $6, $7, $8, $9, $11, '{}', $10, $10) returning *`,
      [
        uuidv7(),
        actor.companyId,
        chatId,
        b.type === 'template' ? 'TEMPLATE' : 'OPEN_MESSAGE',
        b.cancel_on_inbound ?? false,
        at,
        actor.userId,
        agent.rows[0]?.id ?? null,
        JSON.stringify(payload),
        now,
        JSON.stringify(attachments),
      ],
    );
    return scheduledView(rows[0]!);
  }

  async cancel(actor: ChatActor, chatId: string, id: string, reason: string | undefined) {
    await this.chats.read(actor.companyId, chatId);
    requireUuid(id, 'Scheduled message');
    const pool = await this.pool();
    const { rows } = await pool.query<ScheduledRow>(
      `update scheduled_messages set status = 'CANCELED', cancel_reason = 'USER_REQUEST', cancel_reason_description = $4,
         canceled_at = now(), canceled_by_user_id = $5, updated_at = now()
       where company_id = $1 and chat_id = $2 and id = $3 and status = 'PENDING' returning *`,
      [actor.companyId, chatId, id, reason ?? null, actor.userId],
    );
    if (rows[0]) {
      await this.files.remove(attachmentIds(rows[0]));
      return scheduledView(rows[0]);
    }
    const current = await pool.query<{ status: string }>(
      'select status from scheduled_messages where company_id = $1 and chat_id = $2 and id = $3',
      [actor.companyId, chatId, id],
    );
    if (!current.rows[0]) throw notFound('Scheduled message');
    throw invalid(`status: only PENDING scheduled messages can be canceled (this one is ${current.rows[0].status})`);
  }

  async list(actor: ChatActor, chatId: string, q: ListScheduledQuery) {
    await this.chats.read(actor.companyId, chatId);
    const { rows } = await (await this.pool()).query<ScheduledRow & { total: string }>(
      `select *, count(*) over () as total from scheduled_messages
       where company_id = $1 and chat_id = $2 and ($3::text is null or status = $3)
       order by scheduled_at, id limit $4 offset $5`,
      [actor.companyId, chatId, q.status ?? null, q.take, q.skip],
    );
    // A page past the end has no row to carry the count: count on its own then.
    const total = rows[0]
      ? Number(rows[0].total)
      : q.skip === 0
        ? 0
        : Number(
            (
              await (
                await this.pool()
              ).query<{ n: string }>(
                'select count(*) as n from scheduled_messages where company_id = $1 and chat_id = $2 and ($3::text is null or status = $3)',
                [actor.companyId, chatId, q.status ?? null],
              )
            ).rows[0]!.n,
          );
    return { total, records: rows.map(({ total: _total, ...row }) => scheduledView(row)) };
  }
}
