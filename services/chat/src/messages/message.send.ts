import { type Readable, Transform } from 'node:stream';
import { inTransaction } from '@svc/platform/db/native';
import { AppError, invalid } from '@svc/platform/errors';
import type { OutboxWriter } from '@svc/platform/events/writer';
import type { UserSummary } from '@svc/proto/crm/v1/records';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { ChatActor, ChatService } from '../chats/chat.service.js';
import type { ChatRead } from '../chats/chat.store.js';
import { sessionExpiresAt } from '../chats/chat.view.js';
import { associatedRecords, messageSentPayload } from '../events/chat.events.js';
import type { CrmPeople } from '../people/crm-people.js';
import {
  type ChatProvider,
  isProviderError,
  type MediaKind,
  type ProviderName,
  type ProviderRegistry,
  type SendResult,
} from '../providers/provider.js';
import { templateFieldsToComponents } from '../providers/template-fields.js';
import { chatAfterOutbound, insertMessage, messageIdByWamid, readMessage, settleMessage } from './message.store.js';
import { messageView } from './message.view.js';
import { AUDIO_LIMIT_BYTES, FILE_LIMIT_BYTES, type SendMessageBody } from './send.schema.js';

/** A file of a multipart send, as it streams in. */
export interface IncomingFile {
  stream: Readable;
  fileName: string;
  mimeType: string;
}

export interface SendDeps {
  pool: () => Promise<Pool>;
  chats: ChatService;
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

export function providerOf(providers: ProviderRegistry, chat: ChatRead): ChatProvider {
  if (chat.channel_type === 'WHATSAPP') {
    const n = chat.number!;
    return providers.forAccount({
      provider: n.provider as ProviderName,
      channel: 'WHATSAPP',
      accountId: n.phone_number_id,
      businessAccountId: n.business_account_id ?? undefined,
    });
  }
  const i = chat.instagram!;
  return providers.forAccount({ provider: i.provider as ProviderName, channel: 'INSTAGRAM', accountId: i.external_account_id });
}

export const contactOf = (chat: ChatRead) => (chat.channel_type === 'WHATSAPP' ? chat.wa_contact_id! : chat.external_contact_id!);

interface Outcome {
  wamid: string | null;
  status: string;
  error_code: number | null;
  error_message: string | null;
}

/** A provider's answer or failure as the message's status (decision 0062). */
async function attempt(send: () => Promise<SendResult>): Promise<Outcome> {
  try {
    const r = await send();
    return { wamid: r.providerMessageId, status: r.status, error_code: null, error_message: null };
  } catch (err) {
    if (!isProviderError(err)) return { wamid: null, status: 'failed', error_code: null, error_message: (err as Error).message };
    const status = err.detail.outcomeUnknown ? 'delivery_unknown' : 'failed';
    return { wamid: null, status, error_code: err.detail.code ?? null, error_message: err.message };
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

/**
 * POST /chats/{id}/messages (spec, the seven rules): text, a template, or files, sent synchronously to the provider.
 * Each message is stored as `processing` before the provider is called and settled with its answer in the same
 * transaction as the chat's update and chat.message_sent, so a crash in between leaves a visible record.
 */
export class MessageSender {
  constructor(private readonly d: SendDeps) {}

  /** Checks what does not depend on the files (rules 2 and 6) and returns the chat and its template, if any. */
  async prepare(actor: ChatActor, chatId: string, body: SendMessageBody, now = new Date()) {
    const chat = await this.d.chats.read(actor.companyId, chatId);
    const open = (sessionExpiresAt(chat)?.getTime() ?? 0) > now.getTime();
    if (body.type === 'template') {
      if (body.body !== undefined) throw invalid('body: must not be sent with a template (its text is the template)');
      if (!body.template) throw invalid('template: is required when type is template');
      if (chat.channel_type !== 'WHATSAPP') throw invalid('type: Instagram chats have no templates');
      const pool = await this.d.pool();
      const found = await pool.query({
        name: 'templates_for_send',
        text: `select 1 from message_templates where company_id = $1 and whatsapp_number_id = $2 and name = $3 and language = $4 and status = 'APPROVED'`,
        values: [actor.companyId, chat.channel_account_id, body.template.name, body.template.language],
      });
      if (!found.rowCount) throw invalid("template: no approved template of this name and language on the chat's number");
    } else if (!open) {
      throw invalid("type: a template is required outside the 24 h window after the contact's last message");
    }
    return chat;
  }

  /** `reached` is called before the first request to the provider (what an idempotency key must not repeat). */
  async send(
    actor: ChatActor,
    chat: ChatRead,
    body: SendMessageBody,
    files: AsyncIterable<IncomingFile> = (async function* () {})(),
    reached: () => void = () => undefined,
  ) {
    const provider = announcing(providerOf(this.d.providers, chat), reached);
    const to = contactOf(chat);
    const pool = await this.d.pool();
    const agentId = await this.agentOf(pool, actor, chat);
    void this.actorUsers(actor);
    const wamid = body.reference_wamid;
    const reply = wamid ? { wamid, id: await messageIdByWamid(pool, chat.id, wamid) } : undefined;
    const ids: string[] = [];
    let sentText = false;
    const sendText = async () => {
      sentText = true;
      if (body.type !== 'text' || !body.body?.trim()) return;
      ids.push(
        await this.one(pool, actor, chat, agentId, { type: 'text', body_text: body.body, reply }, () =>
          provider.sendText({ to, body: body.body!, replyTo: body.reference_wamid }),
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
        ids.push(
          await this.one(pool, actor, chat, agentId, { type: kindOf(file.mimeType), body_text: null, media }, () =>
            Promise.reject(new Error('a template takes one file, as its header media')),
          ),
        );
        continue;
      }
      ids.push(await this.file(pool, actor, chat, agentId, provider, to, body, file));
    }
    if (!sentText) await sendText();
    if (body.type === 'template' && files_ === 0) {
      const components = templateFieldsToComponents(body.template_fields ?? []);
      ids.push(
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
    if (!ids.length) throw invalid('body: content or attachments are required');
    return { records: await this.views(actor, ids) };
  }

  private async file(
    pool: Pool,
    actor: ChatActor,
    chat: ChatRead,
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
    const id = await this.one(
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
    return id;
  }

  /** The actor's agent on the chat's account (agent_id of the message), when the key's user is one. */
  private async agentOf(pool: Pool, actor: ChatActor, chat: ChatRead): Promise<string | null> {
    const column = chat.channel_type === 'INSTAGRAM' ? 'instagram_account_ids' : 'whatsapp_number_ids';
    const { rows } = await pool.query<{ id: string }>({
      name: `agent_of_user_${column}`,
      text: `select id from agents where company_id = $1 and user_id = $2 and $3::uuid = any(${column})`,
      values: [actor.companyId, actor.userId, chat.channel_account_id],
    });
    return rows[0]?.id ?? null;
  }

  private async one(
    pool: Pool,
    actor: ChatActor,
    chat: ChatRead,
    agentId: string | null,
    content: {
      type: string;
      body_text: string | null;
      media?: Record<string, unknown>;
      content_payload?: Record<string, unknown>;
      /** The provider id of the message this one replies to (`reference_wamid`), and our id of it when we have it. */
      reply?: { wamid: string; id: string | null };
    },
    send: () => Promise<SendResult>,
    mediaAfter?: () => Record<string, unknown>,
  ): Promise<string> {
    const id = uuidv7();
    const createdAt = new Date();
    await insertMessage(pool, {
      id,
      company_id: actor.companyId,
      chat_id: chat.id,
      wamid: null,
      ref_wamid: content.reply?.wamid ?? null,
      type: content.type,
      origin: 'API_OUTBOUND',
      from_me: true,
      sent_via: 'API',
      status: 'processing',
      body_text: content.body_text,
      content_payload: content.content_payload ?? null,
      media: content.media ?? null,
      quoted_message_id: content.reply?.id ?? null,
      agent_id: agentId,
      user_id: actor.userId,
      is_history: false,
      is_forwarded: false,
      meta_timestamp: null,
      created_at: createdAt,
    });
    const outcome = await attempt(send);
    const associated = outcome.status === 'failed' ? {} : await associatedRecords(this.d.people, actor.companyId, chat.person_id);
    await inTransaction(pool, async (tx) => {
      await settleMessage(tx, id, { ...outcome, media: mediaAfter?.() ?? null });
      await chatAfterOutbound(tx, chat.id, id, createdAt);
      // Rule 5: a manual send takes an unassigned chat for the sending agent and pauses the chat's active flows.
      if (agentId) {
        await tx.query({
          name: 'chats_assign_on_send',
          text: 'update chats set assigned_agent_id = coalesce(assigned_agent_id, $2) where id = $1',
          values: [chat.id, agentId],
        });
        await tx.query({
          name: 'chat_participants_on_send',
          text: 'insert into chat_participants (chat_id, agent_id, company_id, created_at) values ($1, $2, $3, now()) on conflict do nothing',
          values: [chat.id, agentId, actor.companyId],
        });
      }
      await tx.query({
        name: 'flows_pause_on_send',
        text: `update flow_sessions set status = 'PAUSED', last_activity_at = now() where chat_id = $1 and status = 'ACTIVE'`,
        values: [chat.id],
      });
      if (outcome.status !== 'failed') {
        const m = await readMessage(tx, actor.companyId, id);
        const users = await this.actorUsers(actor);
        await this.d.outbox.write(tx, [
          { companyId: actor.companyId, eventKey: 'chat.message_sent', payload: messageSentPayload(messageView(m!, users), associated) },
        ]);
      }
    });
    if (outcome.status === 'failed' && !content.media && outcome.error_code === null) {
      throw new AppError('internal', `messaging provider unreachable: ${outcome.error_message}`);
    }
    return id;
  }

  /**
   * The users a send's messages show: the key's user, who is also the user of its agent. Asked of crm once per send,
   * while the provider is called, not inside the settle transaction.
   */
  private actorUsers(actor: ChatActor): Promise<Map<string, UserSummary>> {
    let users = this.usersByActor.get(actor);
    if (!users) {
      users = this.d.people.users(actor.companyId, [actor.userId]).catch(() => new Map<string, UserSummary>());
      this.usersByActor.set(actor, users);
    }
    return users;
  }

  private readonly usersByActor = new WeakMap<ChatActor, Promise<Map<string, UserSummary>>>();

  async views(actor: ChatActor, ids: string[]) {
    const pool = await this.d.pool();
    const [messages, users] = await Promise.all([
      Promise.all(ids.map((id) => readMessage(pool, actor.companyId, id))),
      this.actorUsers(actor),
    ]);
    return messages.map((m) => messageView(m!, users));
  }
}
