import { expect } from 'chai';
import pg from 'pg';
import { archivedChat, type ChatTenant, seedChatTenant, seedPersonChats } from '../support/chats.js';
import { client } from '../support/client.js';
import { startReceiver } from '../support/receiver.js';
import { deliveredPayload, salesEventKeys } from '../support/sales.js';
import { type Stack, startStack } from '../support/stack.js';

/**
 * The lead and deal snapshots of webhook events (decision 0130): `proposals` are the record's proposal summaries, read
 * in the transaction that writes the event; `channel_chats` the multichannel summaries of its persons' chats and
 * `whatsapp_chats` the webhook's own snapshot of the open WhatsApp chats (chat_id and a nested phone_number), asked of
 * the chat service before that transaction. Chat runs as its own process here, so the last tests can stop it.
 */
describe('lead and deal event snapshots: proposals from crm, chats from the chat service', function () {
  this.timeout(180_000);
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let t: ChatTenant;
  let other: ChatTenant;
  let wa: any;
  let ig: any;
  let resolved: any;
  let foreign: any;

  const external = async (method: string, path: string, body?: unknown, status = 200) => {
    const res = await call(method, `/integrations/external${path}`, { token: t.key.key, body });
    expect(res.status, `${method} ${path}: ${res.text}`).to.equal(status);
    return res.body;
  };
  const action = async (method: string, rest: string, body?: unknown) => {
    const res = await t.admin(method, `/companies/${t.company.id}/${rest}`, body);
    expect(res.status, `${method} ${rest}: ${res.text}`).to.equal(200);
    return res.body;
  };
  /** The chat fields of the detail (the HTTP routes' shape) and the proposals, as the events must match them. */
  const detailOf = (kind: 'lead' | 'deal', id: string) => external('GET', `/${kind}s/${id}`);
  /** The WhatsApp chat `chat` as events show it (WebhookWhatsappChat). */
  const eventShape = (chat: any, over: Record<string, unknown> = {}) => ({
    chat_id: chat.id,
    status: 'OPEN',
    chat_type: 'INDIVIDUAL',
    person_id: t.person.id,
    person_name: 'Maria Cliente',
    wa_contact_id: chat.wa_contact_id,
    contact_name: null,
    contact_number: `+${chat.wa_contact_id}`,
    remote_profile_name: chat.remote_profile_name,
    unread_count: chat.unread_count,
    phone_number: {
      id: t.number.id,
      display_number: t.number.display_number,
      raw_number: t.number.raw_number,
      phone_number_id: t.number.phone_number_id,
    },
    ...over,
  });

  before(async () => {
    stack = await startStack({ processes: ['chat'] });
    call = client(stack.gatewayUrl).call;
    receiver = await startReceiver();
    t = await seedChatTenant(call, stack.adminToken);
    other = await seedChatTenant(call, stack.adminToken);
    for (const tenant of [t, other]) {
      const sub = await tenant.admin('POST', `/companies/${tenant.company.id}/webhooks`, {
        url: receiver.url(`/${tenant.company.id}`),
        events: [...salesEventKeys('lead'), ...salesEventKeys('deal')],
      });
      expect(sub.status, sub.text).to.equal(201);
    }
    ({ wa, ig } = await seedPersonChats(t));
    resolved = await t.chat({
      channel_type: 'WHATSAPP',
      whatsapp_number_id: t.number.id,
      wa_contact_id: '5511900000002',
      person_id: t.person.id,
      status: 'RESOLVED',
      last_activity_at: new Date(Date.now() - 120_000).toISOString(),
    });
    await archivedChat(t);
    // Another company's open chat, pointed at this company's person in chat's own table: it must never show.
    foreign = await other.chat({ channel_type: 'WHATSAPP', whatsapp_number_id: other.number.id, wa_contact_id: '5511900000009' });
    const c = new pg.Client({ connectionString: stack.db.url });
    await c.connect();
    await c.query('update chat.chats set person_id = $1 where id = $2', [t.person.id, foreign.id]);
    await c.end();
  });
  after(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  it('lead.created of a lead created with the person carries its chats: the summaries, and the open WhatsApp chat in the webhook shape', async () => {
    const lead = await external('POST', '/leads', { title: 'Created with a person', persons_id: [t.person.id] }, 201);
    const created = await deliveredPayload(receiver, 'lead', lead.id, 'lead.created');
    const detail = await detailOf('lead', lead.id);
    expect(created.lead.proposals).to.deep.equal([]);
    expect(created.lead.has_channel_chat).to.equal(true);
    expect(created.lead.channel_chats.map((c: any) => c.chat_id)).to.deep.equal([wa.id, ig.id, resolved.id]);
    expect(created.lead.channel_chats).to.deep.equal(detail.channel_chats);
    expect(created.lead.has_whatsapp_chat).to.equal(true);
    expect(created.lead.whatsapp_chats).to.deep.equal([eventShape(wa)]);
    // The detail keeps the HTTP routes' alias.
    expect(detail.whatsapp_chats).to.deep.equal(detail.channel_chats);
  });

  it('lead.stage_changed and lead.updated carry the proposal summary of the detail and the chats in their event shape', async () => {
    const lead = await external('POST', '/leads', { title: 'With a proposal', persons_id: [t.person.id] }, 201);
    const proposal = await external(
      'POST',
      '/proposals',
      { crm_lead_id: lead.id, title: 'Offer', items: [{ name: 'Seat', quantity: 2, unit_price: 10 }] },
      201,
    );
    await action('POST', `leads/${lead.id}/move`, { user_id: t.user.id, stage_id: t.pipeline.stages[1].id });
    const moved = await deliveredPayload(receiver, 'lead', lead.id, 'lead.stage_changed');
    const updated = await deliveredPayload(receiver, 'lead', lead.id, 'lead.updated');
    const detail = await detailOf('lead', lead.id);
    expect(detail.proposals.map((p: any) => p.id)).to.deep.equal([proposal.id]);
    for (const snapshot of [moved.lead, updated]) {
      expect(snapshot.proposals).to.deep.equal(detail.proposals);
      expect(snapshot.proposals[0]).to.include({ id: proposal.id, title: 'Offer', total: 20, is_primary: true, status: 1 });
      expect(snapshot.channel_chats).to.deep.equal(detail.channel_chats);
      expect(snapshot.channel_chats[0].chat_responsible).to.deep.equal({ id: t.otherUser.id, name: 'Second Agent', avatar: null });
      expect(snapshot.whatsapp_chats).to.deep.equal([eventShape(wa)]);
      expect(snapshot).to.include({ has_channel_chat: true, has_whatsapp_chat: true });
    }
  });

  it('deal.created (a person found by deduplication) and deal.updated carry the deal’s proposal and chats; GET /deals/{id} shows them too', async () => {
    const person = {
      name: 'Maria',
      contacts: [{ type: 2, value: '+55 11 98765-4321' }],
      avoid_duplicate: true,
      duplicate_check_types: [2],
    };
    const deal = await external('POST', '/deals', { title: 'Deal with chats', person }, 201);
    const created = await deliveredPayload(receiver, 'deal', deal.id, 'deal.created');
    expect(created.deal.participants.map((p: any) => p.person.id)).to.deep.equal([t.person.id]);
    expect(created.deal.whatsapp_chats).to.deep.equal([eventShape(wa)]);
    const proposal = await external('POST', '/proposals', { crm_deal_id: deal.id, title: 'Deal offer' }, 201);
    await external('PUT', `/deals/${deal.id}`, { title: 'Deal with chats, renamed' });
    const updated = await deliveredPayload(receiver, 'deal', deal.id, 'deal.updated');
    const detail = await detailOf('deal', deal.id);
    expect(updated.proposals.map((p: any) => p.id)).to.deep.equal([proposal.id]);
    expect(updated.proposals).to.deep.equal(detail.proposals);
    expect(detail.channel_chats.map((c: any) => c.chat_id)).to.deep.equal([wa.id, ig.id, resolved.id]);
    expect(detail.whatsapp_chats).to.deep.equal(detail.channel_chats);
    expect(updated.channel_chats).to.deep.equal(detail.channel_chats);
    expect(updated.whatsapp_chats).to.deep.equal([eventShape(wa)]);
  });

  it('a PUT that links the person shows its chats in lead.updated; unlinking it empties them', async () => {
    const lead = await external('POST', '/leads', { title: 'Linked later' }, 201);
    await external('PUT', `/leads/${lead.id}`, { title: 'Linked later', persons_id: [{ person_id: t.person.id }] });
    const linked = await deliveredPayload(receiver, 'lead', lead.id, 'lead.updated', 1);
    expect(linked.whatsapp_chats).to.deep.equal([eventShape(wa)]);
    await external('PUT', `/leads/${lead.id}`, { title: 'Linked later', persons_id: [{ person_id: t.person.id, delete: true }] });
    const unlinked = await deliveredPayload(receiver, 'lead', lead.id, 'lead.updated', 2);
    expect(unlinked).to.include({ has_channel_chat: false, has_whatsapp_chat: false });
    expect(unlinked.channel_chats).to.deep.equal([]);
    expect(unlinked.whatsapp_chats).to.deep.equal([]);
  });

  it("never shows another company's chat, even one pointing at this company's person", async () => {
    const ids = receiver.received
      .filter((r) => r.path === `/${t.company.id}`)
      .flatMap((r) => {
        const s = r.body.payload.lead ?? r.body.payload.deal ?? r.body.payload;
        return [...(s.channel_chats ?? []), ...(s.whatsapp_chats ?? [])].map((c: any) => c.chat_id);
      });
    expect(ids).to.include(wa.id);
    expect(ids).not.to.include(foreign.id);
    const lead = await external('POST', '/leads', { title: 'Checked', persons_id: [t.person.id] }, 201);
    expect((await detailOf('lead', lead.id)).channel_chats.map((c: any) => c.chat_id)).not.to.include(foreign.id);
  });

  it('GET /leads and GET /deals list records carry the proposals and leave the chat fields out', async () => {
    const lead = await external('POST', '/leads', { title: 'Listed', persons_id: [t.person.id] }, 201);
    const proposal = await external('POST', '/proposals', { crm_lead_id: lead.id, title: 'Listed offer' }, 201);
    const page = await external('GET', `/leads?person_id=${t.person.id}&search=Listed`);
    expect(page.records.map((r: any) => r.id)).to.deep.equal([lead.id]);
    expect(page.records[0].proposals.map((p: any) => p.id)).to.deep.equal([proposal.id]);
    expect(page.records[0].proposals).to.deep.equal((await detailOf('lead', lead.id)).proposals);
    for (const key of ['has_channel_chat', 'channel_chats', 'has_whatsapp_chat', 'whatsapp_chats'])
      expect(page.records[0]).not.to.have.property(key);
    const deals = await external('GET', `/deals?person_id=${t.person.id}`);
    expect(deals.records).not.to.be.empty;
    expect(deals.records[0]).to.have.property('proposals');
    expect(deals.records[0]).not.to.have.property('channel_chats');
  });

  it('with the chat service stopped, the event is still delivered, with its proposals and empty chat fields', async () => {
    const lead = await external('POST', '/leads', { title: 'Chat down', persons_id: [t.person.id] }, 201);
    const proposal = await external('POST', '/proposals', { crm_lead_id: lead.id, title: 'Offer while down' }, 201);
    await stack.processes.chat!.stop();
    const started = Date.now();
    await action('PUT', `leads/${lead.id}/quality`, { user_id: t.user.id, quality_rating: 3 });
    expect(Date.now() - started, 'the action does not wait for chat past its deadline').to.be.below(5_000);
    const updated = await deliveredPayload(receiver, 'lead', lead.id, 'lead.updated');
    expect(updated.proposals.map((p: any) => p.id)).to.deep.equal([proposal.id]);
    expect(updated).to.include({ has_channel_chat: false, has_whatsapp_chat: false, quality_rating: 3 });
    expect(updated.channel_chats).to.deep.equal([]);
    expect(updated.whatsapp_chats).to.deep.equal([]);
    const created = await external('POST', '/deals', { title: 'Deal while down', persons_id: [t.person.id] }, 201);
    const dealCreated = await deliveredPayload(receiver, 'deal', created.id, 'deal.created');
    expect(dealCreated.deal).to.include({ has_channel_chat: false, has_whatsapp_chat: false });
    const detail = await detailOf('lead', lead.id);
    expect(detail).to.include({ has_channel_chat: false, has_whatsapp_chat: false });
  });
});
