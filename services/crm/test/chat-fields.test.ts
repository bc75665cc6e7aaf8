import net from 'node:net';
import { createLogger } from '@svc/platform/logging';
import type { PersonChat } from '@svc/proto/chat/v1/chat';
import { expect } from 'chai';
import type { PoolClient } from 'pg';
import { ChatLinks } from '../src/chats/chat-links.js';
import { ChatPrefetch, type ChatSource, detailChatFields, eventChatFields, type LinkedChat } from '../src/sales/sales.chats.js';

const maria = { id: '0190aaaa-0000-7000-8000-000000000001', name: 'Maria' };
const joao = { id: '0190aaaa-0000-7000-8000-000000000002', name: 'João' };
const number = {
  id: '0190bbbb-0000-7000-8000-000000000001',
  display_number: '+55 11 4000-0000',
  raw_number: '551140000000',
  phone_number_id: 'pn-1',
};

const chat = (id: string, over: Partial<LinkedChat> = {}): LinkedChat => ({
  chat_id: `0190cccc-0000-7000-8000-00000000000${id}`,
  title: `Chat ${id}`,
  person_id: maria.id,
  channel_account_id: number.id,
  chat_type: 'INDIVIDUAL',
  channel_type: 'WHATSAPP',
  unread_count: 1,
  channel_account_name: 'Acme',
  status: 'OPEN',
  whatsapp_number: number,
  wa_contact_id: '5511987654321',
  contact_number: '+5511987654321',
  responsible: null,
  ...over,
});

describe('the chat fields of lead and deal events and details (decision 0130)', () => {
  it('events: every chat of the persons as a summary; whatsapp_chats the open WhatsApp ones (OPEN or SNOOZED) with a nested phone_number', () => {
    const chats = [
      chat('1'),
      chat('2', { status: 'SNOOZED' }),
      chat('3', { status: 'RESOLVED' }),
      chat('4', { channel_type: 'INSTAGRAM', whatsapp_number: undefined, wa_contact_id: undefined }),
      chat('5', { person_id: joao.id }),
    ];
    const fields = eventChatFields(chats, [maria]);
    expect(fields.channel_chats.map((c) => c.title)).to.deep.equal(['Chat 1', 'Chat 2', 'Chat 3', 'Chat 4']);
    expect(fields.whatsapp_chats.map((c) => c.chat_id)).to.deep.equal([chats[0]!.chat_id, chats[1]!.chat_id]);
    expect(fields.whatsapp_chats[0]).to.deep.equal({
      chat_id: chats[0]!.chat_id,
      status: 'OPEN',
      chat_type: 'INDIVIDUAL',
      person_id: maria.id,
      person_name: 'Maria',
      wa_contact_id: '5511987654321',
      contact_name: null,
      contact_number: '+5511987654321',
      remote_profile_name: null,
      unread_count: 1,
      phone_number: number,
    });
    expect(fields).to.include({ has_channel_chat: true, has_whatsapp_chat: true });
    const igOnly = eventChatFields([chats[3]!], [maria]);
    expect(igOnly).to.include({ has_channel_chat: true, has_whatsapp_chat: false });
    expect(eventChatFields([], [maria])).to.deep.equal({
      has_channel_chat: false,
      channel_chats: [],
      has_whatsapp_chat: false,
      whatsapp_chats: [],
    });
  });

  it('details: whatsapp_chats is the alias of channel_chats (the HTTP routes)', () => {
    const fields = detailChatFields([chat('1'), chat('4', { channel_type: 'INSTAGRAM' })], [maria]);
    expect(fields.whatsapp_chats).to.equal(fields.channel_chats);
    expect(fields.channel_chats).to.have.length(2);
  });

  it('prefetch: no call for persons asked before or created by the change; one call, for all, when another person appears', async () => {
    const calls: string[][] = [];
    const source: ChatSource = {
      personChats: async (_company, ids) => {
        calls.push(ids);
        return ids.map((id, i) => ({ ...chat(String(i + 1)), person_id: id, responsible_user_id: undefined }) as PersonChat);
      },
    };
    const logger = createLogger('test', 'silent');
    const db = {} as PoolClient;
    expect(await ChatPrefetch.none.of(db, [maria.id])).to.deep.equal([]);
    const nobody = await ChatPrefetch.start(source, {} as never, 'company', [], logger);
    expect(calls).to.deep.equal([]);
    expect(await nobody.of(db, [])).to.deep.equal([]);
    const prefetch = await ChatPrefetch.start(source, {} as never, 'company', [maria.id, maria.id], logger);
    expect(calls).to.deep.equal([[maria.id]]);
    expect((await prefetch.of(db, [maria.id], new Set([joao.id]))).map((c) => c.person_id)).to.deep.equal([maria.id]);
    expect((await prefetch.of(db, [maria.id, joao.id], new Set([joao.id]))).map((c) => c.person_id)).to.deep.equal([maria.id]);
    expect(await prefetch.of(db, [])).to.deep.equal([]);
    expect(calls).to.have.length(1);
    const both = await prefetch.of(db, [maria.id, joao.id]);
    expect(calls).to.deep.equal([[maria.id], [maria.id, joao.id]]);
    expect(both.map((c) => c.person_id)).to.deep.equal([maria.id, joao.id]);
  });

  it('ChatLinks: chat not listening answers no chats within its deadline, with a warning', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise((r) => server.close(r));
    const lines: string[] = [];
    const logger = createLogger('crm', 'warn', { write: (line: string) => void lines.push(line) });
    const links = new ChatLinks(`127.0.0.1:${port}`, logger);
    try {
      const started = Date.now();
      expect(await links.personChats('0190dddd-0000-7000-8000-000000000001', [maria.id])).to.deep.equal([]);
      expect(Date.now() - started).to.be.below(2_000);
      expect(lines.map((l) => JSON.parse(l))).to.satisfy((xs: { level: number; msg: string }[]) =>
        xs.some((x) => x.level === 40 && x.msg.includes('chat did not answer')),
      );
      expect(await new ChatLinks(undefined, logger).personChats('c', [maria.id])).to.deep.equal([]);
    } finally {
      links.close();
    }
  });
});
