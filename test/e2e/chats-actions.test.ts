import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { chatsApi, openChatStack } from '../support/chats.js';
import { seedTenant } from '../support/fixtures.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

describe('chat actions: create with a template, responsible, participants, read, typing, delete, templates, unread summary', function () {
  this.timeout(120_000);
  let s: Awaited<ReturnType<typeof openChatStack>>;
  let api: ReturnType<typeof chatsApi>;
  let receiver: WebhookReceiver;
  let route: string;
  let chat: any;
  let sandboxNumber: any;
  const template = { name: 'order_update', language: 'en_US' };
  const call = (method: string, path: string, body?: unknown, key = s.tenant.key.key) =>
    s.call(method, api.path(path), { token: key, body });

  before(async () => {
    s = await openChatStack();
    api = chatsApi(s.call, () => s.tenant.key.key);
    receiver = await WebhookReceiver.start();
    route = `act-${s.tenant.company.id}`;
    await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/webhooks`, {
      url: receiver.route(route, () => 200),
      events: ['lead.updated'],
    });
    chat = await s.tenant.chat({
      channel_type: 'WHATSAPP',
      whatsapp_number_id: s.tenant.number.id,
      wa_contact_id: '5511987654321',
      person_id: s.tenant.person.id,
      last_customer_msg_at: new Date().toISOString(),
      unread_count: 3,
      is_manually_unread: true,
    });
    sandboxNumber = (
      await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/whatsapp-numbers`, {
        display_number: '+55 11 3000-0000',
        raw_number: '551130000000',
        phone_number_id: `sandbox-${s.tenant.company.id}`,
      })
    ).body;
  });
  after(async () => {
    await receiver?.close();
    await s?.stop();
  });

  it('POST /chats creates the chat of a crm phone contact and sends the initial template (201, chat summary); the same contact reuses it', async () => {
    const person = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/persons`, {
      name: 'Carla',
      contacts: [{ type: 2, value: '+55 31 97777-6666' }],
    });
    const contactId = person.body.contacts[0].id;
    const res = await api.create({
      phone_id: s.tenant.number.id,
      person_contact_id: contactId,
      template,
      template_fields: [{ component: 'HEADER', type: 'IMAGE', value: 'https://cdn.example.test/banner.png' }],
      assigned_agent_id: s.tenant.otherAgent.agent_id,
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({ wa_contact_id: '5531977776666', channel_type: 'WHATSAPP' });
    expect(res.body.crm_person.id).to.equal(person.body.id);
    expect(res.body.assigned_agent.agent_id).to.equal(s.tenant.otherAgent.agent_id);
    expect(res.body.last_message).to.include({ type: 'template', status: 'sent' });
    const sent = s.graph.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/messages')).at(-1)!.json as any;
    expect(sent.template.components[0]).to.deep.include({ type: 'header' });
    const again = await api.create({ phone_id: s.tenant.number.id, wa_contact_id: '5531977776666', template });
    expect(again.status).to.equal(201);
    expect(again.body.id).to.equal(res.body.id);
    const { rows } = await s.db.query(`select count(*)::int as n from chat.messages where chat_id = $1`, [res.body.id]);
    expect(rows[0].n).to.equal(2);
  });

  it('POST /chats refuses both or neither contact, a user id as agent, an unknown number and files; needs crm/chats.create', async () => {
    const cases: [unknown, RegExp][] = [
      [{ phone_id: s.tenant.number.id, template }, /^wa_contact_id: send exactly one/],
      [
        { phone_id: s.tenant.number.id, wa_contact_id: '5511900000000', person_contact_id: s.tenant.person.contacts[0].id, template },
        /^wa_contact_id: send exactly one/,
      ],
      [
        { phone_id: s.tenant.number.id, wa_contact_id: '5511900000000', template, assigned_agent_id: s.tenant.user.id },
        /^assigned_agent_id: /,
      ],
      [{ phone_id: s.tenant.instagram.id, wa_contact_id: '5511900000000', template }, /^phone_id: /],
      [{ phone_id: s.tenant.number.id, wa_contact_id: '5511900000000' }, /^template: /],
    ];
    for (const [body, message] of cases) {
      const res = await api.create(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.message).to.match(message);
    }
    const limited = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/keys`, {
      created_by_user_id: s.tenant.user.id,
      permissions: ['crm/chats.write'],
    });
    expect(
      (await api.create({ phone_id: s.tenant.number.id, wa_contact_id: '5511900000000', template }, limited.body.key)).status,
    ).to.equal(403);
  });

  it("PATCH responsible assigns the user's agent and, with update_leads, makes the user responsible of the person's open leads through crm", async () => {
    const lead = await s.call('POST', '/integrations/external/leads', {
      token: s.tenant.key.key,
      body: { title: 'Chat lead', persons_id: [s.tenant.person.id] },
    });
    expect(lead.status, lead.text).to.equal(201);
    const res = await call('PATCH', `/${chat.id}/responsible`, { user_id: s.tenant.otherUser.id, update_leads: true });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.assigned_agent).to.deep.equal({
      agent_id: s.tenant.otherAgent.agent_id,
      user: { id: s.tenant.otherUser.id, name: 'Second Agent', avatar: null },
    });
    const after = await s.call('GET', `/integrations/external/leads/${lead.body.id}`, { token: s.tenant.key.key });
    expect(after.body.responsible.id).to.equal(s.tenant.otherUser.id);
    await eventually(() => receiver.on(route).find((r) => r.body.payload.id === lead.body.id || r.body.payload.lead?.id === lead.body.id));
    const noLeadPermission = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/keys`, {
      created_by_user_id: s.tenant.user.id,
      permissions: ['crm/chats.update'],
    });
    const forbidden = await call(
      'PATCH',
      `/${chat.id}/responsible`,
      { user_id: s.tenant.user.id, update_leads: true },
      noLeadPermission.body.key,
    );
    expect(forbidden.status).to.equal(403);
    expect(forbidden.body.message).to.equal('The key lacks the permission crm/lead.update');
    expect(
      (await call('PATCH', `/${chat.id}/responsible`, { user_id: s.tenant.user.id, update_deals: true }, noLeadPermission.body.key)).status,
    ).to.equal(403);
    const notAgent = await call('PATCH', `/${chat.id}/responsible`, { user_id: s.tenant.master.id });
    expect(notAgent.status).to.equal(400);
    expect(notAgent.body.message).to.match(/^user_id: the user is not an agent/);
    const other = await seedTenant(s.call, s.stack.adminToken);
    const foreignUser = await call('PATCH', `/${chat.id}/responsible`, { user_id: other.user.id });
    expect(foreignUser.status).to.equal(400);
    expect((await call('PATCH', `/${chat.id}/responsible`, { user_id: 'x' })).body.message).to.match(/^user_id: /);
  });

  it('a 400 of a chat route`s schema lists the bad fields in details.fields, and so does a business-rule 400; a 404 has none (decisions 0141, 0163)', async () => {
    const bad = await call('PATCH', `/${chat.id}/responsible`, { user_id: 'x', update_leads: 'yes' });
    expect(bad.status, bad.text).to.equal(400);
    expect(bad.body).to.include({ statusCode: 400, error: 'Bad Request' });
    expect(bad.body.details.fields.map((f: { field: string }) => f.field)).to.have.members(['user_id', 'update_leads']);
    for (const f of bad.body.details.fields) expect(bad.body.message).to.contain(`${f.field}: ${f.message}`);
    const query = await s.call('GET', `${api.path('')}?take=x`, { token: s.tenant.key.key });
    expect(query.status, query.text).to.equal(400);
    expect(query.body.details).to.deep.equal({ fields: [{ field: 'take', message: 'must be an integer' }] });
    const rule = await call('PATCH', `/${chat.id}/responsible`, { user_id: s.tenant.master.id });
    expect(rule.status).to.equal(400);
    expect(rule.body).to.have.all.keys('statusCode', 'message', 'error', 'details');
    expect(rule.body.details.fields.map((f: { field: string }) => f.field)).to.deep.equal(['user_id']);
    const missing = await call('PATCH', '/00000000-0000-7000-8000-000000000000/responsible', { user_id: s.tenant.user.id });
    expect(missing.status).to.equal(404);
    expect(missing.body).to.have.all.keys('statusCode', 'message', 'error');
  });

  it("DELETE participants removes the user's agent (404 when not a participant)", async () => {
    const res = await call('DELETE', `/${chat.id}/participants/${s.tenant.otherUser.id}`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.participants.map((p: any) => p.agent_id)).not.to.include(s.tenant.otherAgent.agent_id);
    expect(res.body.assigned_agent).to.equal(null);
    expect((await call('DELETE', `/${chat.id}/participants/${s.tenant.otherUser.id}`)).status).to.equal(404);
  });

  it('POST read zeroes unread_count and the manual mark, and the unread summary counts per account and in total', async () => {
    await s.tenant.chat({
      channel_type: 'INSTAGRAM',
      instagram_account_id: s.tenant.instagram.id,
      external_contact: { id: 'ig-unread' },
      unread_count: 2,
    });
    const before = await call('GET', '/unread-summary');
    expect(before.status, before.text).to.equal(200);
    expect(before.body.total).to.deep.equal({ unread_chats: 2, unread_messages: 5 });
    expect(before.body.channel_accounts).to.deep.include({
      channel_account_id: s.tenant.number.id,
      channel_type: 'WHATSAPP',
      display_name: 'Acme Support',
      unread_chats: 1,
      unread_messages: 3,
    });
    const res = await call('POST', `/${chat.id}/read`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ unread_count: 0, is_manually_unread: false });
    const after = await call('GET', '/unread-summary');
    expect(after.body.total).to.deep.equal({ unread_chats: 1, unread_messages: 2 });
  });

  it('POST typing reaches the provider and answers {chat_id, is_typing, reference_wamid, dispatched_at}; reference_wamid is at most 200', async () => {
    const res = await call('POST', `/${chat.id}/messages/typing`, { is_typing: true, reference_wamid: 'wamid.REF' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ chat_id: chat.id, is_typing: true, reference_wamid: 'wamid.REF' });
    expect(Date.parse(res.body.dispatched_at)).to.be.closeTo(Date.now(), 10_000);
    const typed = s.graph.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/messages')).at(-1)!.json as any;
    expect(typed).to.deep.include({ status: 'read', message_id: 'wamid.REF' });
    expect((await call('POST', `/${chat.id}/messages/typing`, { reference_wamid: 'x' })).body.message).to.match(/^is_typing: /);
    expect(
      (await call('POST', `/${chat.id}/messages/typing`, { is_typing: true, reference_wamid: 'x'.repeat(201) })).body.message,
    ).to.match(/^reference_wamid: /);
  });

  it("DELETE a message: 400 when WhatsApp Cloud refuses, 400 for a contact's message, deleted on a provider that accepts", async () => {
    const sent = (await api.send(chat.id, { body: 'to delete' })).body.records[0];
    const refused = await call('DELETE', `/${chat.id}/messages/${sent.id}`);
    expect(refused.status).to.equal(400);
    const inbound = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/chats/${chat.id}/inbound`, {
      type: 'text',
      body_text: 'mine',
    });
    const contact = await call('DELETE', `/${chat.id}/messages/${inbound.body.id}`);
    expect(contact.status).to.equal(400);
    expect(contact.body.message).to.match(/company's own messages/);
    const sandboxChat = await s.tenant.chat({
      channel_type: 'WHATSAPP',
      whatsapp_number_id: sandboxNumber.id,
      wa_contact_id: '5511955554444',
      last_customer_msg_at: new Date().toISOString(),
    });
    const own = (await api.send(sandboxChat.id, { body: 'sandbox' })).body.records[0];
    const res = await call('DELETE', `/${sandboxChat.id}/messages/${own.id}`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ id: own.id, status: 'deleted' });
    const limited = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/keys`, {
      created_by_user_id: s.tenant.user.id,
      permissions: ['crm/chats.write'],
    });
    expect((await call('DELETE', `/${sandboxChat.id}/messages/${own.id}`, undefined, limited.body.key)).status).to.equal(403);
    expect((await call('DELETE', `/${chat.id}/messages/${own.id}`)).status).to.equal(404);
  });

  it("GET templates lists the number's approved templates by category with paging cursors", async () => {
    await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/message-templates`, {
      whatsapp_number_id: s.tenant.number.id,
      name: 'promo',
      language: 'en_US',
      category: 'MARKETING',
      components: [],
    });
    await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/message-templates`, {
      whatsapp_number_id: s.tenant.number.id,
      name: 'welcome',
      language: 'en_US',
      category: 'UTILITY',
      components: [],
    });
    const all = await call('GET', `/${chat.id}/templates`);
    expect(all.status, all.text).to.equal(200);
    expect(all.body.data.map((t: any) => t.name)).to.deep.equal(['order_update', 'promo', 'welcome']);
    const utility = await call('GET', `/${chat.id}/templates?category=UTILITY`);
    expect(utility.body.data.map((t: any) => t.name)).to.deep.equal(['order_update', 'welcome']);
    const first = await call('GET', `/${chat.id}/templates?limit=1`);
    expect(first.body.data.map((t: any) => t.name)).to.deep.equal(['order_update']);
    const next = await call('GET', `/${chat.id}/templates?limit=1&after=${first.body.paging.cursors.after}`);
    expect(next.body.data.map((t: any) => t.name)).to.deep.equal(['promo']);
    const back = await call('GET', `/${chat.id}/templates?limit=1&before=${next.body.paging.cursors.before}`);
    expect(back.body.data.map((t: any) => t.name)).to.deep.equal(['order_update']);
    expect((await call('GET', `/${chat.id}/templates?category=OTHER`)).body.message).to.match(/^category: /);
  });

  it('answers 401 and 404 for another company on every action route', async () => {
    const other = await seedTenant(s.call, s.stack.adminToken);
    const routes: [string, string, unknown][] = [
      ['PATCH', `/${chat.id}/responsible`, { user_id: s.tenant.user.id }],
      ['DELETE', `/${chat.id}/participants/${s.tenant.user.id}`, undefined],
      ['POST', `/${chat.id}/read`, undefined],
      ['POST', `/${chat.id}/messages/typing`, { is_typing: false }],
      ['GET', `/${chat.id}/templates`, undefined],
    ];
    for (const [method, path, body] of routes) {
      expect((await s.call(method, api.path(path), { body })).status, path).to.equal(401);
      const res = await call(method, path, body, other.key.key);
      expect(res.status, path).to.equal(404);
    }
  });
});
