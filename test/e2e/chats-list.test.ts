import { expect } from 'chai';
import { type ChatTenant, chatsApi, seedChatTenant } from '../support/chats.js';
import { seedTenant } from '../support/fixtures.js';
import { openStack } from '../support/session.js';

describe('GET /chats and GET /chats/{id} through the gateway', function () {
  this.timeout(120_000);
  let s: Awaited<ReturnType<typeof openStack>>;
  let t: ChatTenant;
  let api: ReturnType<typeof chatsApi>;
  const ids = {} as Record<'maria' | 'joao' | 'replied' | 'resolved' | 'archived' | 'ig', string>;
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();

  before(async () => {
    s = await openStack();
    t = await seedChatTenant(s.call, s.stack.adminToken);
    api = chatsApi(s.call, () => t.key.key);
    const wa = (wa_contact_id: string, extra: Record<string, unknown> = {}) =>
      t.chat({ channel_type: 'WHATSAPP', whatsapp_number_id: t.number.id, wa_contact_id, ...extra });
    ids.maria = (
      await wa('5511987654321', {
        remote_profile_name: 'Maria Zap',
        person_id: t.person.id,
        last_activity_at: at(1),
        last_customer_msg_at: at(60),
        unread_count: 2,
        started_by: 'CONTACT',
      })
    ).id;
    ids.joao = (
      await wa('5521912345678', {
        remote_profile_name: 'João',
        priority: 3,
        last_activity_at: at(2),
        assigned_agent_id: t.otherAgent.agent_id,
        started_by: 'COMPANY',
        trailing_outbound_count: 3,
      })
    ).id;
    ids.replied = (
      await wa('5531999990000', {
        remote_profile_name: 'Replied',
        last_activity_at: at(3),
        started_by: 'COMPANY',
        last_customer_msg_at: at(30),
        is_manually_unread: true,
      })
    ).id;
    ids.resolved = (
      await wa('5541988887777', {
        remote_profile_name: 'Resolved',
        status: 'RESOLVED',
        last_activity_at: at(4),
        started_by: 'COMPANY',
        trailing_outbound_count: 1,
      })
    ).id;
    ids.archived = (await wa('5551977776666', { remote_profile_name: 'Archived', archived: true, last_activity_at: at(5) })).id;
    ids.ig = (
      await t.chat({
        channel_type: 'INSTAGRAM',
        instagram_account_id: t.instagram.id,
        external_contact: { id: 'igsid-1', handle: 'ana.ig', display_name: 'Ana Insta', avatar_url: 'https://cdn.example.test/a.jpg' },
        last_activity_at: at(1.5),
        unread_count: 1,
        assigned_agent_id: t.agent.agent_id,
      })
    ).id;
    const copilot = await t.admin('POST', `/companies/${t.company.id}/chats/${ids.replied}/copilot-actions`, {
      action_key: 'suggest_reply',
      confidence: 0.8,
    });
    expect(copilot.status, copilot.text).to.equal(201);
    const flow = await t.admin('POST', `/companies/${t.company.id}/chats/${ids.maria}/flow-sessions`, {
      flow_id: '0190a0a0-0000-7000-8000-000000000001',
      flow_name: 'Welcome',
      current_step: { node_id: 'n1', name: 'Greeting' },
    });
    expect(flow.status, flow.text).to.equal(201);
  });
  after(async () => {
    await s?.db.end();
    await s?.stack.stop();
  });

  const listIds = async (query: Record<string, string | number | boolean> = {}) => {
    const res = await api.list(query);
    expect(res.status, res.text).to.equal(200);
    return res.body.records.map((r: any) => r.id) as string[];
  };

  it('lists both channels in one order (last activity, newest first), archived chats left out, with total and next_cursor', async () => {
    const res = await api.list();
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.have.keys('total', 'records', 'next_cursor');
    expect(res.body.total).to.equal(5);
    expect(res.body.records.map((r: any) => r.id)).to.deep.equal([ids.maria, ids.ig, ids.joao, ids.replied, ids.resolved]);
    expect(res.body.next_cursor).to.equal(null);
    const [maria, ig] = res.body.records;
    expect(maria.channel_type).to.equal('WHATSAPP');
    expect(maria.ai_attendance).to.deep.equal({ is_active: false, whatsapp_ai_agent_id: null, ai_messages_count: 0 });
    expect(maria.phone_number).to.deep.equal({
      id: t.number.id,
      display_number: '+55 11 4000-0000',
      raw_number: '551140000000',
      phone_number_id: t.number.phone_number_id,
    });
    expect(maria.crm_person).to.include({ id: t.person.id, name: 'Maria Cliente' });
    expect(ig.channel_type).to.equal('INSTAGRAM');
    expect(ig).not.to.have.property('ai_attendance');
    expect(ig.external_contact).to.deep.equal({
      id: 'igsid-1',
      handle: 'ana.ig',
      display_name: 'Ana Insta',
      avatar_url: 'https://cdn.example.test/a.jpg',
    });
  });

  it('pages with skip and take: take defaults to 10, is capped at 50, negative skip becomes 0, take 0 is refused', async () => {
    expect(await listIds({ take: 2 })).to.deep.equal([ids.maria, ids.ig]);
    expect(await listIds({ take: 2, skip: 2 })).to.deep.equal([ids.joao, ids.replied]);
    expect(await listIds({ take: 2, skip: -5 })).to.deep.equal([ids.maria, ids.ig]);
    expect(await listIds({ take: 500 })).to.have.length(5);
    const bad = await api.list({ take: 0 });
    expect(bad.status).to.equal(400);
    expect(bad.body.message).to.match(/^take: /);
    const extra = [];
    for (let i = 0; i < 52; i++)
      extra.push(
        t.chat({
          channel_type: 'WHATSAPP',
          whatsapp_number_id: t.number.id,
          wa_contact_id: `55119000${String(i).padStart(5, '0')}`,
          last_activity_at: at(1000 + i),
        }),
      );
    const made = await Promise.all(extra);
    try {
      const page = await api.list();
      expect(page.body.records).to.have.length(10);
      const capped = await api.list({ take: 51 });
      expect(capped.body.records).to.have.length(50);
      expect(capped.body.total).to.equal(57);
    } finally {
      await s.db.query('delete from chat.chats where id = any($1::uuid[])', [made.map((c) => c.id)]);
    }
  });

  it('pages with an opaque cursor that stays stable while chats change (no repeats, no gaps of unchanged chats)', async () => {
    const first = await api.list({ take: 2 });
    expect(first.body.next_cursor).to.be.a('string');
    // A chat of the first page gets new activity: it moves to the top, and the next page neither repeats it nor skips one.
    await s.db.query('update chat.chats set last_activity_at = now() where id = $1', [ids.ig]);
    const second = await api.list({ take: 2, cursor: first.body.next_cursor });
    expect(second.body.records.map((r: any) => r.id)).to.deep.equal([ids.joao, ids.replied]);
    const third = await api.list({ take: 2, cursor: second.body.next_cursor, skip: 1 });
    expect(third.body.records.map((r: any) => r.id)).to.deep.equal([ids.resolved]);
    expect(third.body.next_cursor).to.equal(null);
    await s.db.query('update chat.chats set last_activity_at = $2 where id = $1', [ids.ig, at(1.5)]);
    const bad = await api.list({ cursor: 'not-a-cursor' });
    expect(bad.status).to.equal(400);
    expect(bad.body.message).to.match(/^cursor: /);
  });

  it('filters by channel_type, channel_account_id (Instagram without channel_type), phone_id, status, archived and priority', async () => {
    expect(await listIds({ channel_type: 'INSTAGRAM' })).to.deep.equal([ids.ig]);
    expect(await listIds({ channel_type: 'WHATSAPP' })).to.deep.equal([ids.maria, ids.joao, ids.replied, ids.resolved]);
    expect(await listIds({ channel_account_id: t.instagram.id })).to.deep.equal([ids.ig]);
    expect(await listIds({ channel_account_id: t.number.id })).to.deep.equal([]);
    expect(await listIds({ channel_account_id: t.number.id, channel_type: 'WHATSAPP' })).to.have.length(4);
    expect(await listIds({ phone_id: t.number.id })).to.deep.equal([ids.maria, ids.joao, ids.replied, ids.resolved]);
    expect(await listIds({ status: 'RESOLVED' })).to.deep.equal([ids.resolved]);
    expect(await listIds({ archived: 'only' })).to.deep.equal([ids.archived]);
    expect(await listIds({ archived: 'include' })).to.have.length(6);
    expect(await listIds({ priority: 3 })).to.deep.equal([ids.joao]);
    for (const [name, value] of [
      ['channel_type', 'SMS'],
      ['status', 'DONE'],
      ['archived', 'yes'],
      ['priority', 4],
      ['phone_id', 'x'],
      ['unread_only', 'maybe'],
    ] as const) {
      const res = await api.list({ [name]: value });
      expect(res.status, name).to.equal(400);
      expect(res.body.message).to.match(new RegExp(`^${name}: `));
    }
  });

  it('filters by responsible_user_id (WhatsApp only; a user who is not an agent gets an empty list), person_id and unread_only', async () => {
    expect(await listIds({ responsible_user_id: t.otherUser.id })).to.deep.equal([ids.joao]);
    // The integration user is the Instagram chat's agent, but the filter is WhatsApp only.
    expect(await listIds({ responsible_user_id: t.user.id })).to.deep.equal([]);
    expect(await listIds({ responsible_user_id: t.master.id })).to.deep.equal([]);
    expect(await listIds({ person_id: t.person.id })).to.deep.equal([ids.maria]);
    expect(await listIds({ unread_only: true })).to.deep.equal([ids.maria, ids.ig, ids.replied]);
  });

  it('filters by pending copilot actions and customer reply status, which keep Instagram out', async () => {
    expect(await listIds({ has_pending_copilot_actions: true })).to.deep.equal([ids.replied]);
    expect(await listIds({ has_pending_copilot_actions: false })).to.deep.equal([ids.maria, ids.ig, ids.joao, ids.resolved]);
    expect(await listIds({ customer_reply_status: 'initial_replied' })).to.deep.equal([ids.replied]);
    expect(await listIds({ customer_reply_status: 'initial_not_replied' })).to.deep.equal([ids.joao, ids.resolved]);
    expect(await listIds({ customer_reply_status: 'not_replied_last_messages' })).to.deep.equal([ids.joao, ids.resolved]);
    expect(await listIds({ customer_reply_status: 'not_replied_last_messages', customer_reply_message_count: 2 })).to.deep.equal([
      ids.joao,
    ]);
    for (const n of [0, 51, 'x']) {
      const res = await api.list({ customer_reply_status: 'not_replied_last_messages', customer_reply_message_count: n });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/^customer_reply_message_count: /);
    }
  });

  it('searches profile names, linked person names and phone numbers with or without the ninth digit', async () => {
    expect(await listIds({ search: 'joão' })).to.deep.equal([ids.joao]);
    expect(await listIds({ search: 'cliente' })).to.deep.equal([ids.maria]);
    expect(await listIds({ search: '+55 (11) 98765-4321' })).to.deep.equal([ids.maria]);
    expect(await listIds({ search: '11 8765-4321' })).to.deep.equal([ids.maria]);
    expect(await listIds({ search: '5521 1234-5678' })).to.deep.equal([ids.joao]);
    expect(await listIds({ search: 'ana' })).to.deep.equal([ids.ig]);
    expect(await listIds({ search: 'nobody here' })).to.deep.equal([]);
  });

  it('shows the WhatsApp detail with every field, the assignable agents and the 24 h session', async () => {
    const res = await api.get(ids.maria);
    expect(res.status, res.text).to.equal(200);
    const c = res.body;
    expect(c).to.include({
      id: ids.maria,
      status: 'OPEN',
      priority: 1,
      channel_type: 'WHATSAPP',
      chat_type: 'INDIVIDUAL',
      wa_contact_id: '5511987654321',
      contact_number: '+5511987654321',
      remote_profile_name: 'Maria Zap',
      unread_count: 2,
      is_manually_unread: false,
      archived_at: null,
      channel_account_id: t.number.id,
    });
    expect(c.crm_person).to.deep.include({ id: t.person.id, name: 'Maria Cliente', documents: [], address: null });
    expect(c.crm_person.contacts[0]).to.include({ type: 2, value: '+55 (11) 98765-4321' });
    expect(Date.parse(c.session_expires_at) - Date.parse(c.last_customer_msg_at)).to.equal(24 * 3600 * 1000);
    expect(c.can_send_open_message).to.equal(true);
    expect(c.channel_account).to.deep.equal({
      id: t.number.id,
      type: 'WHATSAPP',
      display_name: 'Acme Support',
      provider_status: 'CONNECTED',
    });
    expect(c.legacy).to.deep.equal({ whatsapp_chat_id: ids.maria, whatsapp_phone_id: t.number.id, wa_contact_id: '5511987654321' });
    expect(c.last_message).to.equal(null);
    expect(c.whatsapp_flow_sessions).to.have.length(1);
    expect(c.whatsapp_flow_sessions[0]).to.include({ flow_name: 'Welcome', status: 'ACTIVE', is_active: true, finished_at: null });
    expect(c.pending_copilot_actions).to.deep.equal([]);
    expect(c.has_pending_copilot_actions).to.equal(false);
    expect(c.assignable_agents.map((a: any) => a.agent_id)).to.have.members([t.agent.agent_id, t.otherAgent.agent_id]);
    const second = c.assignable_agents.find((a: any) => a.agent_id === t.otherAgent.agent_id);
    expect(second).to.deep.equal({
      agent_id: t.otherAgent.agent_id,
      status: 'ACTIVE',
      user: { id: t.otherUser.id, name: 'Second Agent', avatar: null },
    });
    for (const key of ['participants', 'assigned_agent', 'crm_marketing_lead_source', 'created_at', 'updated_at', 'last_customer_msg_at'])
      expect(c).to.have.property(key);
  });

  it('shows a chat outside its window as unable to send open messages, and its pending copilot actions', async () => {
    const joao = (await api.get(ids.joao)).body;
    expect(joao.session_expires_at).to.equal(null);
    expect(joao.can_send_open_message).to.equal(false);
    expect(joao.assigned_agent).to.deep.equal({
      agent_id: t.otherAgent.agent_id,
      user: { id: t.otherUser.id, name: 'Second Agent', avatar: null },
    });
    expect(joao.participants).to.deep.equal([joao.assigned_agent]);
    const replied = (await api.get(ids.replied)).body;
    expect(replied.has_pending_copilot_actions).to.equal(true);
    expect(replied.pending_copilot_actions_count).to.equal(1);
    expect(replied.pending_copilot_actions[0]).to.include({
      chat_id: ids.replied,
      action_key: 'suggest_reply',
      status: 'PENDING',
      confidence: 0.8,
      requires_review: true,
      company_id: t.company.id,
    });
  });

  it('shows the Instagram detail with its account and contact metadata, and its assignable agents', async () => {
    const res = await api.get(ids.ig);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.instagram_account).to.deep.equal({
      id: t.instagram.id,
      handle: 'acme',
      display_name: 'Acme IG',
      external_account_id: t.instagram.external_account_id,
    });
    expect(res.body.channel_account).to.deep.include({ type: 'INSTAGRAM', display_name: 'Acme IG' });
    for (const key of ['phone_number', 'wa_contact_id', 'legacy', 'ai_attendance', 'whatsapp_flow_sessions'])
      expect(res.body).not.to.have.property(key);
    expect(res.body.assignable_agents.map((a: any) => a.agent_id)).to.deep.equal([t.agent.agent_id]);
    const agents = await s.call('GET', api.path(`/${ids.ig}/assignable-agents`), { token: t.key.key });
    expect(agents.status).to.equal(200);
    expect(agents.body).to.deep.equal({
      total: 1,
      records: [{ agent_id: t.agent.agent_id, status: 'ACTIVE', user: { id: t.user.id, name: 'Integrator', avatar: null } }],
    });
  });

  it('answers 401 without a key, 403 without crm/chats.read, 404 for another company or a non-UUID id', async () => {
    const none = await s.call('GET', api.path(''));
    expect(none.status).to.equal(401);
    const limited = await t.admin('POST', `/companies/${t.company.id}/keys`, {
      created_by_user_id: t.user.id,
      permissions: ['crm/chats.write'],
    });
    for (const path of ['', `/${ids.maria}`, `/${ids.maria}/messages`, `/${ids.maria}/assignable-agents`]) {
      const res = await s.call('GET', api.path(path), { token: limited.body.key });
      expect(res.status, path).to.equal(403);
      expect(res.body).to.deep.equal({ statusCode: 403, message: 'The key lacks the permission crm/chats.read', error: 'Forbidden' });
    }
    const other = await seedTenant(s.call, s.stack.adminToken);
    const list = await api.list({}, other.key.key);
    expect(list.body).to.deep.equal({ total: 0, records: [], next_cursor: null });
    for (const path of [`/${ids.maria}`, `/${ids.maria}/messages`, `/${ids.maria}/assignable-agents`, '/not-a-uuid']) {
      const res = await s.call('GET', api.path(path), { token: other.key.key });
      expect(res.status, path).to.equal(404);
      expect(res.body.message).to.equal('Chat not found');
    }
  });
});
