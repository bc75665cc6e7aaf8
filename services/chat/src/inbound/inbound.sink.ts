import { inTransaction } from '@svc/platform/db/native';
import type { EventPayloads } from '@svc/platform/events/payloads';
import type { OutboxWriter } from '@svc/platform/events/writer';
import type { Logger } from '@svc/platform/logging';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { phoneVariants } from '../chats/chat.list.js';
import { associatedRecords, messageReceivedPayload } from '../events/chat.events.js';
import { chatAfterInbound, chatAfterOutbound, insertMessage, messageIdByWamid, readMessage } from '../messages/message.store.js';
import { messageView, usersOf } from '../messages/message.view.js';
import type { CrmPeople } from '../people/crm-people.js';
import type { InboundEvent, InboundMessage, InboundSink, InboundStatus } from '../providers/provider.js';
import type { ScheduledFileStore } from '../scheduled/scheduled.files.js';
import { cancelOnInbound } from '../scheduled/scheduled.store.js';

/** Types that are media: chat.message_received skips them on first receipt (spec, Chat payloads). */
const MEDIA_TYPES = new Set(['image', 'audio', 'video', 'document', 'sticker']);
/** Types that never fire chat.message_received: reactions and edits. */
const SILENT_TYPES = new Set(['reaction', 'edit', 'message_edit']);

/**
 * How far a message's status has come: a late callback never takes it back (read stays read after a delayed
 * delivered), and failed is final.
 */
const STATUS_RANK: Record<string, number> = { processing: 0, delivery_unknown: 0, sent: 1, delivered: 2, read: 3, failed: 4 };
/** A callback's status applies over a status ranked below this: failed only over a message not yet delivered. */
const TARGET_RANK: Record<InboundStatus['status'], number> = { sent: 1, delivered: 2, read: 3, failed: 2 };

interface Account {
  company_id: string;
  id: string;
}

export interface InboundDeps {
  pool: () => Promise<Pool>;
  people: CrmPeople;
  outbox: OutboxWriter;
  logger: Logger;
  /** The files of scheduled messages a contact's message cancels are removed from it (decision 0067). */
  files: ScheduledFileStore;
}

/**
 * The chat service's side of the provider webhook (and of the admin API's inbound route, the same code path):
 * stores messages once per provider id, moves statuses forward, keeps chats' unread counts and windows, cancels
 * scheduled sends that wait for the contact's silence, and fires chat.message_received (decision 0064).
 */
export class ChatInbound implements InboundSink {
  constructor(private readonly d: InboundDeps) {}

  async receive(events: InboundEvent[]): Promise<void> {
    for (const e of events) {
      if (e.kind === 'message') await this.message(e);
      else await this.status(e);
    }
  }

  private async account(pool: Pool, channel: string, accountId: string): Promise<Account | null> {
    const table = channel === 'WHATSAPP' ? 'whatsapp_numbers' : 'instagram_accounts';
    const column = channel === 'WHATSAPP' ? 'phone_number_id' : 'external_account_id';
    const { rows } = await pool.query<Account>({
      name: `inbound_account_${table}`,
      text: `select company_id, id from ${table} where ${column} = $1`,
      values: [accountId],
    });
    return rows[0] ?? null;
  }

  /** The chat of the account with this contact, created on the contact's first message (linked to a person by phone). */
  private async chatFor(pool: Pool, e: InboundMessage, account: Account): Promise<{ id: string; person_id: string | null }> {
    const whatsapp = e.channel === 'WHATSAPP';
    const contactColumn = whatsapp ? 'wa_contact_id' : 'external_contact_id';
    const find = () =>
      pool.query<{ id: string; person_id: string | null }>({
        name: `inbound_chat_by_${contactColumn}`,
        text: `select id, person_id from chats where channel_account_id = $1 and ${contactColumn} = $2`,
        values: [account.id, e.contact.id],
      });
    const found = (await find()).rows[0];
    if (found) return found;
    const personId = whatsapp ? await this.d.people.personByPhone(account.company_id, phoneVariants(e.contact.id)).catch(() => null) : null;
    const now = new Date();
    await pool.query({
      name: 'inbound_chat_insert',
      text: `insert into chats (id, company_id, channel_type, chat_type, channel_account_id, wa_contact_id, contact_number, remote_profile_name,
          external_contact_id, external_contact_display_name, person_id, status, priority, unread_count, is_manually_unread, last_activity_at,
          trailing_outbound_count, ai_message_count, created_at, updated_at)
        values ($1, $2, $3, 'INDIVIDUAL', $4, $5, $6, $7, $8, $9, $10, 'OPEN', 1, 0, false, $11, 0, 0, $11, $11) on conflict do nothing`,
      values: [
        uuidv7(),
        account.company_id,
        e.channel,
        account.id,
        whatsapp ? e.contact.id : null,
        whatsapp ? `+${e.contact.id}` : null,
        e.contact.profileName ?? null,
        whatsapp ? null : e.contact.id,
        whatsapp ? null : (e.contact.profileName ?? null),
        personId,
        now,
      ],
    });
    return (await find()).rows[0]!;
  }

  private async message(e: InboundMessage): Promise<void> {
    const pool = await this.d.pool();
    const account = await this.account(pool, e.channel, e.accountId);
    if (!account) {
      // Not ours (a number removed, or another deployment's): answered 200 so the provider does not resend forever.
      this.d.logger.warn({ channel: e.channel, accountId: e.accountId }, 'inbound message for an unknown account dropped');
      return;
    }
    const chat = await this.chatFor(pool, e, account);
    if (e.reaction) return this.reaction(pool, account, chat.id, e);
    const media = e.media
      ? {
          id: e.media.id ?? null,
          mime_type: e.media.mimeType ?? null,
          file_name: e.media.fileName ?? null,
          is_downloaded: false,
          url: e.media.url ?? null,
        }
      : null;
    const fires = !e.isHistory && !SILENT_TYPES.has(e.type) && !(media || MEDIA_TYPES.has(e.type));
    const associated = fires ? await associatedRecords(this.d.people, account.company_id, chat.person_id) : {};
    let canceledFiles: string[] = [];
    await inTransaction(pool, async (tx) => {
      const quoted = e.quotedMessageId ? await messageIdByWamid(tx, chat.id, e.quotedMessageId) : null;
      const id = uuidv7();
      const inserted = await insertMessage(tx, {
        id,
        company_id: account.company_id,
        chat_id: chat.id,
        wamid: e.providerMessageId,
        ref_wamid: e.quotedMessageId ?? null,
        type: e.type,
        origin: e.fromMe ? 'MOBILE_APP_ECHO' : 'INBOUND',
        from_me: e.fromMe,
        sent_via: e.fromMe ? 'MOBILE_DEVICE' : 'CONTACT',
        status: e.fromMe ? 'sent' : 'received',
        body_text: e.text ?? null,
        content_payload: e.payload,
        media,
        quoted_message_id: quoted,
        agent_id: null,
        user_id: null,
        is_history: e.isHistory,
        is_forwarded: e.isForwarded,
        meta_timestamp: e.timestamp,
        created_at: new Date(),
      });
      if (!inserted) return; // the provider repeated a callback: stored already
      if (!e.isHistory) {
        if (e.fromMe) await chatAfterOutbound(tx, chat.id, id, e.timestamp);
        else {
          await chatAfterInbound(tx, chat.id, id, e.timestamp, e.contact.profileName ?? null);
          canceledFiles = await cancelOnInbound(tx, chat.id, new Date());
        }
      }
      if (!fires) return;
      const m = (await readMessage(tx, account.company_id, id))!;
      const users = await this.d.people.users(account.company_id, usersOf(m, new Set())).catch(() => new Map());
      const payload = messageReceivedPayload(
        messageView(m, users),
        { wamid: m.wamid, ref_wamid: m.ref_wamid, agent_id: m.agent_id },
        associated,
      );
      await this.d.outbox.write(tx, [{ companyId: account.company_id, eventKey: 'chat.message_received', payload }]);
    });
    await this.d.files.remove(canceledFiles);
  }

  /** A contact's reaction replaces the contact's earlier one on that message; no emoji removes it. */
  private async reaction(pool: Pool, account: Account, chatId: string, e: InboundMessage): Promise<void> {
    const target = await messageIdByWamid(pool, chatId, e.reaction!.messageId);
    if (!target) return;
    await inTransaction(pool, async (tx: PoolClient) => {
      await tx.query({
        name: 'reactions_replace',
        text: `delete from message_reactions where message_id = $1 and actor = 'CONTACT' and reactor_wa_id = $2`,
        values: [target, e.contact.id],
      });
      if (e.reaction!.emoji)
        await tx.query({
          name: 'reactions_insert',
          text: `insert into message_reactions (id, company_id, message_id, emoji, actor, reactor_wa_id, created_at) values ($1, $2, $3, $4, 'CONTACT', $5, $6)`,
          values: [uuidv7(), account.company_id, target, e.reaction!.emoji, e.contact.id, e.timestamp],
        });
    });
  }

  /**
   * A provider's status callback moves a message the company sent forward (never back; a failed message stays
   * failed) and fires chat.message_status_updated in the same transaction, so statuses reach subscribers once each
   * and in the order they were taken (decision 0179). The row is locked before its status is compared, so two
   * callbacks of one message racing each other fire one event per step.
   */
  private async status(e: InboundStatus): Promise<void> {
    const pool = await this.d.pool();
    const account = await this.account(pool, e.channel, e.accountId);
    if (!account) return;
    const error = e.errors[0];
    await inTransaction(pool, async (tx) => {
      const { rows } = await tx.query<{ id: string; chat_id: string; company_id: string; previous_status: string }>({
        name: 'inbound_status_update',
        text: `with current as (
            select m.id, m.status from messages m join chats c on c.id = m.chat_id
            where c.channel_account_id = $1 and m.wamid = $2 and m.from_me and m.status <> 'deleted'
            for update of m)
          update messages m set status = $3, error_code = coalesce($4, m.error_code), error_message = coalesce($5, m.error_message), updated_at = now()
          from current where m.id = current.id and (case current.status ${Object.entries(STATUS_RANK)
            .map(([k, v]) => `when '${k}' then ${v}`)
            .join(' ')} else 0 end) < $6
          returning m.id, m.chat_id, m.company_id, current.status as previous_status`,
        values: [
          account.id,
          e.providerMessageId,
          e.status,
          error?.code ?? null,
          error ? (error.message ?? error.title) : null,
          TARGET_RANK[e.status]!,
        ],
      });
      const moved = rows[0];
      if (!moved) return;
      const payload: EventPayloads['chat.message_status_updated'] = {
        message_id: moved.id,
        chat_id: moved.chat_id,
        status: e.status,
        previous_status: moved.previous_status,
        at: e.timestamp.toISOString(),
        ...(e.status === 'failed' && error ? { error: { code: error.code, title: error.title } } : {}),
      };
      await this.d.outbox.write(tx, [{ companyId: moved.company_id, eventKey: 'chat.message_status_updated', payload }]);
    });
  }
}
