import { inTransaction } from '@svc/platform/db/native';
import type { EventPayloads } from '@svc/platform/events/payloads';
import type { OutboxWriter } from '@svc/platform/events/writer';
import type { Logger } from '@svc/platform/logging';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { accountByProviderId } from '../accounts/account.store.js';
import { phoneVariants } from '../chats/chat.list.js';
import { chatAfterInbound, chatAfterOutbound, chatOfContact, insertChat, newChat } from '../chats/chat.store.js';
import { associatedRecords, messageReceivedPayload } from '../events/chat.events.js';
import { insertMessage, messageIdByWamid, moveStatus, readMessage, replaceContactReaction } from '../messages/message.store.js';
import { messageView, usersOf } from '../messages/message.view.js';
import type { CrmPeople } from '../people/crm-people.js';
import type { InboundEvent, InboundMessage, InboundSink, InboundStatus } from '../providers/provider.js';
import type { ScheduledFileStore } from '../scheduled/scheduled.files.js';
import { cancelOnInbound } from '../scheduled/scheduled.store.js';

/** Types that are media: chat.message_received skips them on first receipt (spec, Chat payloads). */
const MEDIA_TYPES = new Set(['image', 'audio', 'video', 'document', 'sticker']);
/** Types that never fire chat.message_received: reactions and edits. */
const SILENT_TYPES = new Set(['reaction', 'edit', 'message_edit']);

/** A late callback never moves a status back, and failed is final. */
const STATUS_RANK: Record<string, number> = { processing: 0, delivery_unknown: 0, sent: 1, delivered: 2, read: 3, failed: 4 };
/** A callback's status applies over a status ranked below this: failed only over a message not yet delivered. */
const TARGET_RANK: Record<InboundStatus['status'], number> = { sent: 1, delivered: 2, read: 3, failed: 2 };

type Account = NonNullable<Awaited<ReturnType<typeof accountByProviderId>>>;

export interface InboundDeps {
  pool: () => Promise<Pool>;
  people: CrmPeople;
  outbox: OutboxWriter;
  logger: Logger;
  /** The files of scheduled messages a contact's message cancels are removed from it (decision 0067). */
  files: ScheduledFileStore;
}

/** Provider webhook side (decision 0064): stores messages once per provider id and moves statuses only forward. */
export class ChatInbound implements InboundSink {
  constructor(private readonly d: InboundDeps) {}

  async receive(events: InboundEvent[]): Promise<void> {
    for (const e of events) {
      if (e.kind === 'message') await this.message(e);
      else await this.status(e);
    }
  }

  /** The chat of the account with this contact, created on the contact's first message (linked to a person by phone). */
  private async chatFor(pool: Pool, e: InboundMessage, account: Account) {
    const whatsapp = e.channel === 'WHATSAPP';
    const found = await chatOfContact(pool, e.channel, account.id, e.contact.id);
    if (found) return found;
    const personId = whatsapp ? await this.d.people.personByPhone(account.companyId, phoneVariants(e.contact.id)).catch(() => null) : null;
    const chat = newChat({
      id: uuidv7(),
      companyId: account.companyId,
      channelType: e.channel,
      channelAccountId: account.id,
      waContactId: whatsapp ? e.contact.id : null,
      contactNumber: whatsapp ? `+${e.contact.id}` : null,
      remoteProfileName: e.contact.profileName ?? null,
      externalContactId: whatsapp ? null : e.contact.id,
      externalContactDisplayName: whatsapp ? null : (e.contact.profileName ?? null),
      personId,
    });
    // Two callbacks of a new contact racing each other: one inserts, both read the same chat.
    await insertChat(pool, chat, true);
    return (await chatOfContact(pool, e.channel, account.id, e.contact.id))!;
  }

  private async message(e: InboundMessage): Promise<void> {
    const pool = await this.d.pool();
    const account = await accountByProviderId(pool, e.channel, e.accountId);
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
    const associated = fires ? await associatedRecords(this.d.people, account.companyId, chat.personId) : {};
    let canceledFiles: string[] = [];
    await inTransaction(pool, async (tx) => {
      const quoted = e.quotedMessageId ? await messageIdByWamid(tx, chat.id, e.quotedMessageId) : null;
      const id = uuidv7();
      const inserted = await insertMessage(tx, {
        id,
        companyId: account.companyId,
        chatId: chat.id,
        wamid: e.providerMessageId,
        refWamid: e.quotedMessageId ?? null,
        type: e.type,
        origin: e.fromMe ? 'MOBILE_APP_ECHO' : 'INBOUND',
        fromMe: e.fromMe,
        sentVia: e.fromMe ? 'MOBILE_DEVICE' : 'CONTACT',
        status: e.fromMe ? 'sent' : 'received',
        bodyText: e.text ?? null,
        contentPayload: e.payload,
        media,
        quotedMessageId: quoted,
        agentId: null,
        userId: null,
        isHistory: e.isHistory,
        isForwarded: e.isForwarded,
        metaTimestamp: e.timestamp,
        createdAt: new Date(),
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
      const m = (await readMessage(tx, account.companyId, id))!;
      const users = await this.d.people.users(account.companyId, usersOf(m, new Set())).catch(() => new Map());
      const payload = messageReceivedPayload(
        messageView(m, users),
        { wamid: m.wamid, ref_wamid: m.refWamid, agent_id: m.agentId },
        associated,
      );
      await this.d.outbox.write(tx, [{ companyId: account.companyId, eventKey: 'chat.message_received', payload }]);
    });
    await this.d.files.remove(canceledFiles);
  }

  /** A contact's reaction replaces the contact's earlier one on that message; no emoji removes it. */
  private async reaction(pool: Pool, account: Account, chatId: string, e: InboundMessage): Promise<void> {
    const target = await messageIdByWamid(pool, chatId, e.reaction!.messageId);
    if (!target) return;
    await inTransaction(pool, (tx) =>
      replaceContactReaction(tx, {
        id: uuidv7(),
        companyId: account.companyId,
        messageId: target,
        reactorWaId: e.contact.id,
        emoji: e.reaction!.emoji,
        createdAt: e.timestamp,
      }),
    );
  }

  /** Fires chat.message_status_updated in the same transaction, with the row locked, so each step reaches subscribers once and in order (decision 0179). */
  private async status(e: InboundStatus): Promise<void> {
    const pool = await this.d.pool();
    const account = await accountByProviderId(pool, e.channel, e.accountId);
    if (!account) return;
    const error = e.errors[0];
    await inTransaction(pool, async (tx) => {
      const moved = await moveStatus(tx, STATUS_RANK, {
        accountId: account.id,
        wamid: e.providerMessageId,
        status: e.status,
        errorCode: error?.code ?? null,
        errorMessage: error ? (error.message ?? error.title) : null,
        rankBelow: TARGET_RANK[e.status]!,
      });
      if (!moved) return;
      const payload: EventPayloads['chat.message_status_updated'] = {
        message_id: moved.id,
        chat_id: moved.chatId,
        status: e.status,
        previous_status: moved.previousStatus,
        at: e.timestamp.toISOString(),
        ...(e.status === 'failed' && error ? { error: { code: error.code, title: error.title } } : {}),
      };
      await this.d.outbox.write(tx, [{ companyId: moved.companyId, eventKey: 'chat.message_status_updated', payload }]);
    });
  }
}
