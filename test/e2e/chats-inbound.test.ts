import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { chatsApi, deliverWhatsApp, openChatStack, whatsappCallback } from '../support/chats.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

describe('inbound messages and statuses (provider webhook and admin inbound), chat.message_received', function () {
  this.timeout(120_000);
  let s: Awaited<ReturnType<typeof openChatStack>>;
  let api: ReturnType<typeof chatsApi>;
  let receiver: WebhookReceiver;
  let route: string;
  let chat: any;
  const inbound = (chatId: string, body: Record<string, unknown>) =>
    s.tenant.admin('POST', `/companies/${s.tenant.company.id}/chats/${chatId}/inbound`, body);
  const received = () => receiver.on(route).filter((r) => r.body.event_key === 'chat.message_received');

  const callback = (value: Record<string, unknown>) => whatsappCallback(s, value);
  const deliver = (raw: string) => deliverWhatsApp(s, raw);

  before(async () => {
    s = await openChatStack();
    api = chatsApi(s.call, () => s.tenant.key.key);
    receiver = await WebhookReceiver.start();
    route = `in-${s.tenant.company.id}`;
    const sub = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/webhooks`, {
      url: receiver.route(route, () => 200),
      events: ['chat.message_received'],
    });
    expect(sub.status, sub.text).to.equal(201);
    chat = await s.tenant.chat({
      channel_type: 'WHATSAPP',
      whatsapp_number_id: s.tenant.number.id,
      wa_contact_id: '5511987654321',
      person_id: s.tenant.person.id,
    });
  });
  after(async () => {
    await receiver?.close();
    await s?.stop();
  });

  it('stores a text from the admin inbound route as the webhook would, opens the window, counts it unread and fires chat.message_received', async () => {
    const res = await inbound(chat.id, { type: 'text', body_text: 'Oi, tudo bem?', from: { profile_name: 'Maria Z' }, wamid: 'wamid.IN1' });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({
      type: 'text',
      origin: 'INBOUND',
      from_me: false,
      sent_via: 'CONTACT',
      status: 'received',
      body_text: 'Oi, tudo bem?',
    });
    const detail = (await api.get(chat.id)).body;
    expect(detail.unread_count).to.equal(1);
    expect(detail.can_send_open_message).to.equal(true);
    expect(detail.remote_profile_name).to.equal('Maria Z');
    expect(detail.last_message.id).to.equal(res.body.id);
    const event = await eventually(() => received().find((r) => r.body.payload.id === res.body.id));
    expect(event.body.payload).to.include({
      chat_id: chat.id,
      wamid: 'wamid.IN1',
      ref_wamid: null,
      type: 'text',
      origin: 'INBOUND',
      from_me: false,
      sent_via: 'CONTACT',
      body_text: 'Oi, tudo bem?',
    });
    for (const key of [
      'agent_id',
      'call_id',
      'deleted_at',
      'business_reply_actor_user_id',
      'business_reply_capture_status',
      'associated_leads',
      'associated_deals',
    ])
      expect(event.body.payload, key).to.have.property(key);
  });

  it('absorbs a repeated delivery of the same wamid: one message, one event', async () => {
    const again = await inbound(chat.id, { type: 'text', body_text: 'Oi, tudo bem?', wamid: 'wamid.IN1' });
    expect(again.status).to.equal(201);
    const { rows } = await s.db.query(`select count(*)::int as n from chat.messages where wamid = 'wamid.IN1'`);
    expect(rows[0].n).to.equal(1);
    expect((await api.get(chat.id)).body.unread_count).to.equal(1);
    const marker = await inbound(chat.id, { type: 'text', body_text: 'marker' });
    await eventually(() => received().find((r) => r.body.payload.id === marker.body.id));
    expect(received().filter((r) => r.body.payload.wamid === 'wamid.IN1')).to.have.length(1);
  });

  it('fires nothing for media on first receipt, reactions and history, yet stores them', async () => {
    const image = await inbound(chat.id, { type: 'image', media: { id: 'media-1', mime_type: 'image/jpeg' } });
    expect(image.body.media).to.include({ id: 'media-1', mime_type: 'image/jpeg', is_downloaded: false });
    const history = await inbound(chat.id, { type: 'text', body_text: 'old', is_history: true });
    expect(history.body.is_history).to.equal(true);
    const reacted = await inbound(chat.id, { type: 'reaction', reaction: { wamid: 'wamid.IN1', emoji: '👍' } });
    expect(reacted.body.reactions.map((r: any) => [r.emoji, r.actor, r.reactor_wa_id])).to.deep.equal([['👍', 'CONTACT', '5511987654321']]);
    const marker = await inbound(chat.id, { type: 'text', body_text: 'marker 2' });
    await eventually(() => received().find((r) => r.body.payload.id === marker.body.id));
    const ids = received().map((r) => r.body.payload.id);
    expect(ids).not.to.include(image.body.id);
    expect(ids).not.to.include(history.body.id);
  });

  it('links a reply to the message it quotes, with the page where the quoted message sits', async () => {
    const quoted = await inbound(chat.id, { type: 'text', body_text: 'the original', wamid: 'wamid.QUOTED' });
    for (let i = 0; i < 3; i++) await inbound(chat.id, { type: 'text', body_text: `filler ${i}` });
    const reply = await inbound(chat.id, { type: 'text', body_text: 'a reply', quoted_wamid: 'wamid.QUOTED' });
    expect(reply.status, reply.text).to.equal(201);
    const page = await api.messages(chat.id, { take: 2 });
    const listed = page.body.records.find((m: any) => m.id === reply.body.id);
    expect(listed.quoted_message).to.include({ id: quoted.body.id, body_text: 'the original' });
    // Newest first, two a page: the reply and filler 2 on page 1, fillers 1 and 0 on page 2, the original on page 3.
    expect(listed.quoted_message.page).to.equal(3);
    const asc = await api.messages(chat.id, { take: 2, order: 'asc' });
    expect(asc.body.records.every((m: any) => m.quoted_message === null || typeof m.quoted_message.page === 'number')).to.equal(true);
  });

  it('keeps a reply sent with reference_wamid linked to the contact message it answers', async () => {
    const question = await inbound(chat.id, { type: 'text', body_text: 'which size?', wamid: 'wamid.QUESTION' });
    const res = await api.send(chat.id, { body: 'size M', reference_wamid: 'wamid.QUESTION' });
    expect(res.status, res.text).to.equal(201);
    const listed = (await api.messages(chat.id, { take: 1 })).body.records[0];
    expect(listed.id).to.equal(res.body.records[0].id);
    // One a page, newest first: the reply on page 1, the question on page 2.
    expect(listed.quoted_message).to.include({ id: question.body.id, body_text: 'which size?', page: 2 });
    const sent = s.graph.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/messages')).at(-1)!.json as any;
    expect(sent.context).to.deep.equal({ message_id: 'wamid.QUESTION' });
  });

  it('takes an Instagram message through the same sink: stored, unread, chat.message_received', async () => {
    const ig = await s.tenant.chat({
      channel_type: 'INSTAGRAM',
      instagram_account_id: s.tenant.instagram.id,
      external_contact: { id: 'igsid-in', handle: 'cliente.ig' },
    });
    const res = await inbound(ig.id, { type: 'text', body_text: 'oi pelo direct', wamid: 'mid.IG1' });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({ origin: 'INBOUND', status: 'received', body_text: 'oi pelo direct' });
    const detail = (await api.get(ig.id)).body;
    expect(detail).to.include({ unread_count: 1, can_send_open_message: true });
    const event = await eventually(() => received().find((r) => r.body.payload.id === res.body.id));
    expect(event.body.payload).to.include({ chat_id: ig.id, wamid: 'mid.IG1' });
  });

  it('takes a signed provider callback through the gateway: a new contact gets a chat linked to the person with that phone', async () => {
    const person = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/persons`, {
      name: 'Pedro Novo',
      contacts: [{ type: 2, value: '+55 21 98888-7777' }],
    });
    const raw = callback({
      contacts: [{ profile: { name: 'Pedro' }, wa_id: '5521988887777' }],
      messages: [
        {
          from: '5521988887777',
          id: 'wamid.NEW1',
          timestamp: String(Math.floor(Date.now() / 1000)),
          type: 'text',
          text: { body: 'Quero comprar' },
        },
      ],
    });
    const res = await deliver(raw);
    expect(res.status).to.equal(200);
    const list = await api.list({ search: 'Pedro' });
    expect(list.body.total).to.equal(1);
    const created = list.body.records[0];
    expect(created).to.include({ wa_contact_id: '5521988887777', remote_profile_name: 'Pedro', unread_count: 1 });
    expect(created.crm_person.id).to.equal(person.body.id);
    await eventually(() => received().find((r) => r.body.payload.wamid === 'wamid.NEW1'));
  });

  it("moves a sent message forward with status callbacks, never back, and keeps a failure's error", async () => {
    const sent = await api.send(chat.id, { body: 'status me' });
    expect(sent.status, sent.text).to.equal(201);
    const { rows } = await s.db.query('select wamid from chat.messages where id = $1', [sent.body.records[0].id]);
    const wamid = rows[0].wamid;
    const status = (st: string, extra: Record<string, unknown> = {}) =>
      callback({
        statuses: [{ id: wamid, status: st, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: '5511987654321', ...extra }],
      });
    const statusOf = async () => (await api.messages(chat.id, { take: 1 })).body.records[0].status;
    expect((await deliver(status('delivered'))).status).to.equal(200);
    expect(await statusOf()).to.equal('delivered');
    await deliver(status('read'));
    await deliver(status('delivered'));
    expect(await statusOf()).to.equal('read');
    const other = await api.send(chat.id, { body: 'will fail later' });
    const w2 = (await s.db.query('select wamid from chat.messages where id = $1', [other.body.records[0].id])).rows[0].wamid;
    await deliver(
      callback({
        statuses: [
          {
            id: w2,
            status: 'failed',
            timestamp: String(Math.floor(Date.now() / 1000)),
            recipient_id: '5511987654321',
            errors: [{ code: 131026, title: 'Message undeliverable' }],
          },
        ],
      }),
    );
    const failed = (await api.messages(chat.id, { take: 1 })).body.records[0];
    expect(failed).to.include({ status: 'failed', error_code: 131026, error_message: 'Message undeliverable' });
  });

  it('refuses an unsigned callback (401) and an unknown chat on the admin route (404)', async () => {
    const raw = callback({ statuses: [] });
    const res = await fetch(`${s.stack.gatewayUrl}/providers/whatsapp/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: raw,
    });
    expect(res.status).to.equal(401);
    const missing = await inbound('0190a0a0-0000-7000-8000-000000000009', { type: 'text', body_text: 'x' });
    expect(missing.status).to.equal(404);
    const bad = await inbound(chat.id, { body_text: 'no type' });
    expect(bad.status).to.equal(400);
    expect(bad.body.message).to.match(/^type: /);
  });
});
