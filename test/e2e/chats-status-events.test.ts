import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { chatsApi, deliverWhatsApp, openChatStack, whatsappCallback } from '../support/chats.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * chat.message_status_updated (issue 21 item 4, decision 0179): WhatsApp Cloud API status callbacks, signed and sent
 * through the gateway's providers route to the real chat service, reach a subscriber through the outbox, JetStream
 * and webhooks, once per step forward and never back.
 */
describe('chat.message_status_updated: provider status callbacks reach subscribers in order, never back', function () {
  this.timeout(120_000);
  let s: Awaited<ReturnType<typeof openChatStack>>;
  let api: ReturnType<typeof chatsApi>;
  let receiver: WebhookReceiver;
  let route: string;
  let chat: any;

  const deliver = (statuses: Record<string, unknown>[]) => deliverWhatsApp(s, whatsappCallback(s, { statuses }));
  /** A status object as the Cloud API sends it (`timestamp` in Unix seconds, a conversation and pricing on sends). */
  const status = (wamid: string, st: string, at: number, extra: Record<string, unknown> = {}) => ({
    id: wamid,
    status: st,
    timestamp: String(at),
    recipient_id: '5511987654321',
    ...(st === 'failed'
      ? {}
      : {
          conversation: { id: 'CONVERSATION_ID', origin: { type: 'service' } },
          pricing: { billable: true, pricing_model: 'CBP', category: 'service' },
        }),
    ...extra,
  });
  /** A message sent through the API and its wamid at the provider. */
  const sent = async (body: string) => {
    const res = await api.send(chat.id, { body });
    expect(res.status, res.text).to.equal(201);
    const id = res.body.records[0].id as string;
    const { rows } = await s.db.query('select wamid from chat.messages where id = $1', [id]);
    return { id, wamid: rows[0].wamid as string };
  };
  /** The status events of message `id`, in the order they were fired (event ids are the outbox's, time-ordered). */
  const eventsOf = (id: string) =>
    receiver
      .on(route)
      .filter((r) => r.body.event_key === 'chat.message_status_updated' && r.body.payload.message_id === id)
      .sort((a, b) => (a.body.event_id < b.body.event_id ? -1 : 1));
  const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);
  const T0 = '2026-11-26T12:00:00.000Z';

  before(async () => {
    s = await openChatStack();
    api = chatsApi(s.call, () => s.tenant.key.key);
    receiver = await WebhookReceiver.start();
    route = `status-${s.tenant.company.id}`;
    const sub = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/webhooks`, {
      url: receiver.route(route, () => 200),
      events: ['chat.message_status_updated', 'chat.message_received'],
    });
    expect(sub.status, sub.text).to.equal(201);
    expect(sub.body.events).to.include('chat.message_status_updated');
    chat = await s.tenant.chat({
      channel_type: 'WHATSAPP',
      whatsapp_number_id: s.tenant.number.id,
      wa_contact_id: '5511987654321',
      person_id: s.tenant.person.id,
    });
    // The contact writes first: the 24 h window is open for free-form sends.
    const opened = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/chats/${chat.id}/inbound`, {
      type: 'text',
      body_text: 'hello',
      wamid: 'wamid.OPEN',
    });
    expect(opened.status, opened.text).to.equal(201);
  });
  after(async () => {
    await receiver?.close();
    await s?.stop();
  });

  it('a delivered-then-read status callback fires two status events in order', async () => {
    const m = await sent('status me');
    expect((await deliver([status(m.wamid, 'delivered', unix(T0))])).status).to.equal(200);
    expect((await deliver([status(m.wamid, 'read', unix(T0) + 5)])).status).to.equal(200);
    const events = await eventually(() => (eventsOf(m.id).length >= 2 ? eventsOf(m.id) : undefined));
    expect(events.map((e) => e.body.payload)).to.deep.equal([
      { message_id: m.id, chat_id: chat.id, status: 'delivered', previous_status: 'sent', at: T0 },
      { message_id: m.id, chat_id: chat.id, status: 'read', previous_status: 'delivered', at: '2026-11-26T12:00:05.000Z' },
    ]);
    expect(events[0]!.headers['x-svc-event']).to.equal('chat.message_status_updated');
    expect((await api.messages(chat.id, { take: 1 })).body.records[0].status).to.equal('read');
  });

  it('a read arriving before delivered does not go back: one event, and the late delivered (or a repeat) fires none', async () => {
    const m = await sent('read first');
    // One callback holding both, out of order, as the provider may batch them.
    expect((await deliver([status(m.wamid, 'read', unix(T0) + 10), status(m.wamid, 'delivered', unix(T0) + 9)])).status).to.equal(200);
    expect((await deliver([status(m.wamid, 'read', unix(T0) + 10)])).status).to.equal(200);
    // Deliveries are not ordered (decision 0030): wait for this message's event, then a later message's event shows
    // the relay got past this one's callbacks, so a second event would have had its time to come.
    await eventually(() => eventsOf(m.id)[0]);
    const marker = await sent('marker');
    await deliver([status(marker.wamid, 'delivered', unix(T0))]);
    await eventually(() => eventsOf(marker.id)[0]);
    expect(eventsOf(m.id).map((e) => e.body.payload)).to.deep.equal([
      { message_id: m.id, chat_id: chat.id, status: 'read', previous_status: 'sent', at: '2026-11-26T12:00:10.000Z' },
    ]);
    expect((await api.messages(chat.id, { take: 2 })).body.records.find((r: any) => r.id === m.id).status).to.equal('read');
  });

  it('callbacks of one message racing each other fire one chain: each previous_status is the status before it', async () => {
    const messages = await Promise.all([sent('race 1'), sent('race 2'), sent('race 3')]);
    await Promise.all(
      messages.flatMap((m) => ['delivered', 'read', 'delivered', 'read'].map((st, i) => deliver([status(m.wamid, st, unix(T0) + i)]))),
    );
    // Each chain complete (it ends at read, after a delivered unless read came first) before the marker.
    const chainOf = (id: string) => eventsOf(id).map((e) => [e.body.payload.previous_status, e.body.payload.status]);
    await eventually(() =>
      messages.every((m) => {
        const chain = chainOf(m.id);
        const read = chain.find(([, st]) => st === 'read');
        return read && (read[0] === 'sent' || chain.some(([, st]) => st === 'delivered'));
      }),
    );
    const marker = await sent('race marker');
    await deliver([status(marker.wamid, 'delivered', unix(T0))]);
    await eventually(() => eventsOf(marker.id)[0]);
    for (const m of messages) {
      const chain = chainOf(m.id);
      // Whichever callback took the row first, the statuses go forward once each and end at read.
      expect(
        [
          [
            ['sent', 'delivered'],
            ['delivered', 'read'],
          ],
          [['sent', 'read']],
        ],
        m.id,
      ).to.deep.include(chain);
    }
  });

  it("failed carries the provider's error {code, title}, and a failed message stays failed", async () => {
    const m = await sent('will fail');
    const failure = {
      errors: [
        {
          code: 131026,
          title: 'Message undeliverable',
          message: 'Message undeliverable',
          error_data: { details: 'Message Undeliverable.' },
        },
      ],
    };
    expect((await deliver([status(m.wamid, 'failed', unix(T0), failure)])).status).to.equal(200);
    await deliver([status(m.wamid, 'delivered', unix(T0) + 1)]);
    await eventually(() => eventsOf(m.id)[0]);
    const marker = await sent('marker 2');
    await deliver([status(marker.wamid, 'delivered', unix(T0))]);
    await eventually(() => eventsOf(marker.id)[0]);
    expect(eventsOf(m.id).map((e) => e.body.payload)).to.deep.equal([
      {
        message_id: m.id,
        chat_id: chat.id,
        status: 'failed',
        previous_status: 'sent',
        at: T0,
        error: { code: 131026, title: 'Message undeliverable' },
      },
    ]);
    const stored = (await api.messages(chat.id, { take: 3 })).body.records.find((r: any) => r.id === m.id);
    expect(stored).to.include({ status: 'failed', error_code: 131026 });
  });

  it("fires nothing for a status of a contact's message: statuses only of messages the company sent", async () => {
    const inbound = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/chats/${chat.id}/inbound`, {
      type: 'text',
      body_text: 'from the contact',
      wamid: 'wamid.CONTACT1',
    });
    expect(inbound.status, inbound.text).to.equal(201);
    expect((await deliver([status('wamid.CONTACT1', 'read', unix(T0))])).status).to.equal(200);
    const marker = await sent('marker 3');
    await deliver([status(marker.wamid, 'delivered', unix(T0))]);
    await eventually(() => eventsOf(marker.id)[0]);
    expect(eventsOf(inbound.body.id)).to.deep.equal([]);
  });
});
