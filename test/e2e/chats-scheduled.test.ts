import { chatService } from '@svc/chat';
import { type RunningService, startService } from '@svc/platform/service';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { chatsApi, openAndClosedChats, openChatStack } from '../support/chats.js';
import { seedTenant } from '../support/fixtures.js';

describe('scheduled messages: rules, cancel, list and the scheduler with two chat replicas', function () {
  this.timeout(120_000);
  let s: Awaited<ReturnType<typeof openChatStack>>;
  let api: ReturnType<typeof chatsApi>;
  let replica: RunningService;
  let open: any;
  let closed: any;
  const inSeconds = (n: number) => new Date(Date.now() + n * 1000).toISOString();
  const template = { name: 'order_update', language: 'en_US' };

  before(async () => {
    s = await openChatStack({ SCHEDULER_INTERVAL_MS: '100' });
    // A second replica of the chat service on the same database: both schedulers race for the same due rows.
    replica = await startService(chatService, {
      ...s.stack.env,
      CRM_GRPC_URL: s.stack.services.crm.grpcAddress,
      WHATSAPP_GRAPH_URL: s.graph.baseUrl,
      WHATSAPP_ACCESS_TOKEN: s.graph.token,
      SCHEDULER_INTERVAL_MS: '100',
    });
    api = chatsApi(s.call, () => s.tenant.key.key);
    ({ open, closed } = await openAndClosedChats(s));
  });
  after(async () => {
    await replica?.stop();
    await s?.stop();
  });

  const schedule = (chatId: string, body: Record<string, unknown>, key?: string) => api.post(`/${chatId}/scheduled-messages`, body, key);

  it('schedules a text inside the window as PENDING with every field of the spec', async () => {
    const res = await schedule(open.id, { scheduled_at: inSeconds(3600), body: 'later', cancel_on_inbound: true });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({
      chat_id: open.id,
      company_id: s.tenant.company.id,
      is_scheduled: true,
      status: 'PENDING',
      message_kind: 'OPEN_MESSAGE',
      cancel_on_inbound: true,
      created_by_user_id: s.tenant.user.id,
      sender_agent_id: s.tenant.agent.agent_id,
      cancel_reason: null,
      whatsapp_ai_agent_id: null,
    });
    expect(res.body.payload).to.include({ type: 'text', body: 'later' });
    expect(res.body.sent_message_ids).to.deep.equal([]);
    expect(res.body.attachments).to.deep.equal([]);
  });

  it('refuses a past or zoneless scheduled_at, text after the window, and a template with a body; takes a template after the window', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [open.id, { scheduled_at: new Date(Date.now() - 1000).toISOString(), body: 'x' }, /^scheduled_at: must be in the future/],
      [open.id, { scheduled_at: '2030-01-01T10:00:00', body: 'x' }, /^scheduled_at: must be an ISO 8601 date-time with a zone/],
      [
        open.id,
        { scheduled_at: inSeconds(2 * 24 * 3600), body: 'x' },
        /^scheduled_at: text or attachments can only be scheduled inside session_expires_at/,
      ],
      [closed.id, { scheduled_at: inSeconds(60), body: 'x' }, /^scheduled_at: text or attachments can only be scheduled/],
      [closed.id, { scheduled_at: inSeconds(60), template, body: 'x' }, /^body: must not be sent with a template/],
      [closed.id, { scheduled_at: inSeconds(60), template: { name: 'missing', language: 'en_US' } }, /^template: /],
    ];
    for (const [chatId, body, message] of cases) {
      const res = await schedule(chatId, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.message).to.match(message);
    }
    const ok = await schedule(closed.id, {
      scheduled_at: inSeconds(3600),
      template,
      template_fields: [
        { index: 1, value: '#1' },
        { index: 2, value: 'ready' },
      ],
    });
    expect(ok.status, ok.text).to.equal(201);
    expect(ok.body).to.include({ message_kind: 'TEMPLATE', status: 'PENDING' });
  });

  it('pages the scheduled-message list with take and skip (issue 23 item 8): total counts the whole list', async () => {
    const paged = await s.tenant.chat({
      channel_type: 'WHATSAPP',
      whatsapp_number_id: s.tenant.number.id,
      wa_contact_id: '5511955550000',
      last_customer_msg_at: new Date(Date.now() - 60_000).toISOString(),
    });
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const res = await schedule(paged.id, { scheduled_at: inSeconds(3600 + i * 60), body: `page ${i}` });
      expect(res.status, res.text).to.equal(201);
      ids.push(res.body.id);
    }
    const list = (query: string) => s.call('GET', api.path(`/${paged.id}/scheduled-messages${query}`), { token: s.tenant.key.key });
    const page = async (query: string) => {
      const res = await list(query);
      expect(res.status, res.text).to.equal(200);
      return { total: res.body.total, ids: res.body.records.map((r: any) => r.id) };
    };
    expect(await page('?take=2')).to.deep.equal({ total: 5, ids: ids.slice(0, 2) });
    expect(await page('?take=2&skip=2')).to.deep.equal({ total: 5, ids: ids.slice(2, 4) });
    expect(await page('?take=2&skip=4')).to.deep.equal({ total: 5, ids: ids.slice(4) });
    expect(await page('?skip=-3&take=1')).to.deep.equal({ total: 5, ids: ids.slice(0, 1) });
    expect(await page('?skip=9')).to.deep.equal({ total: 5, ids: [] });
    expect(await page('')).to.deep.equal({ total: 5, ids });
    expect(await page('?status=CANCELED&take=1')).to.deep.equal({ total: 0, ids: [] });
    for (const [query, field] of [
      ['?take=0', 'take'],
      ['?take=abc', 'take'],
      ['?skip=1.5', 'skip'],
    ]) {
      const bad = await list(query!);
      expect(bad.status, query).to.equal(400);
      expect(bad.body.message, query).to.match(new RegExp(`^${field}: `));
      expect(bad.body.details.fields[0].field, query).to.equal(field);
    }
    // Canceled, so the chat does not count among those with scheduled messages in the tests that follow.
    for (const id of ids) expect((await api.post(`/${paged.id}/scheduled-messages/${id}/cancel`, {})).status).to.equal(200);
    expect(await page('?status=CANCELED&take=3&skip=1')).to.deep.equal({ total: 5, ids: ids.slice(1, 4) });
  });

  it("cancels only PENDING with USER_REQUEST and the reason (at most 500 characters); lists the chat's scheduled messages", async () => {
    const made = (await schedule(open.id, { scheduled_at: inSeconds(3600), body: 'to cancel' })).body;
    const long = await api.post(`/${open.id}/scheduled-messages/${made.id}/cancel`, { reason: 'x'.repeat(501) });
    expect(long.status).to.equal(400);
    expect(long.body.message).to.match(/^reason: /);
    const res = await api.post(`/${open.id}/scheduled-messages/${made.id}/cancel`, { reason: 'changed my mind' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({
      status: 'CANCELED',
      cancel_reason: 'USER_REQUEST',
      cancel_reason_description: 'changed my mind',
      canceled_by_user_id: s.tenant.user.id,
    });
    expect(res.body.canceled_at).to.be.a('string');
    const again = await api.post(`/${open.id}/scheduled-messages/${made.id}/cancel`, {});
    expect(again.status).to.equal(400);
    expect(again.body.message).to.match(/^status: only PENDING/);
    const list = await s.call('GET', api.path(`/${open.id}/scheduled-messages`), { token: s.tenant.key.key });
    expect(list.body.records.map((r: any) => r.status)).to.include.members(['PENDING', 'CANCELED']);
    const canceled = await s.call('GET', api.path(`/${open.id}/scheduled-messages?status=CANCELED`), { token: s.tenant.key.key });
    expect(canceled.body.records.map((r: any) => r.id)).to.deep.equal([made.id]);
    expect((await api.list({ has_scheduled_messages: true })).body.records.map((r: any) => r.id)).to.have.members([open.id, closed.id]);
  });

  it('cancels a pending send with cancel_on_inbound when the contact writes (cancel_reason CHAT_INTERACTION)', async () => {
    const waiting = (await schedule(open.id, { scheduled_at: inSeconds(3600), body: 'nudge', cancel_on_inbound: true })).body;
    const staying = (await schedule(open.id, { scheduled_at: inSeconds(3600), body: 'stays' })).body;
    const res = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/chats/${open.id}/inbound`, {
      type: 'text',
      body_text: 'I am here',
    });
    expect(res.status, res.text).to.equal(201);
    const list = (await s.call('GET', api.path(`/${open.id}/scheduled-messages`), { token: s.tenant.key.key })).body.records;
    expect(list.find((r: any) => r.id === waiting.id)).to.include({ status: 'CANCELED', cancel_reason: 'CHAT_INTERACTION' });
    expect(list.find((r: any) => r.id === staying.id).status).to.equal('PENDING');
  });

  it('sends each due message exactly once with two replicas polling: PENDING → PROCESSING → SENT with sent_message_ids', async () => {
    const sendsBefore = s.graph.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/messages')).length;
    const due: any[] = [];
    for (let i = 0; i < 12; i++) due.push((await schedule(open.id, { scheduled_at: inSeconds(1.5), body: `due ${i}` })).body);
    const rows = await eventually(async () => {
      const { rows } = await s.db.query(`select * from chat.scheduled_messages where id = any($1::uuid[])`, [due.map((d) => d.id)]);
      return rows.every((r) => r.status === 'SENT') ? rows : undefined;
    }, 20_000).catch(async (err) => {
      const { rows } = await s.db.query(
        `select status, failure_reason, processed_at from chat.scheduled_messages where id = any($1::uuid[])`,
        [due.map((d) => d.id)],
      );
      throw new Error(`${err.message}: ${JSON.stringify(rows)}`);
    });
    for (const r of rows) {
      expect(r.sent_message_ids).to.have.length(1);
      expect(r.sent_at).to.not.equal(null);
      expect(r.processed_at).to.not.equal(null);
    }
    const { rows: msgs } = await s.db.query(
      `select body_text, count(*)::int as n from chat.messages where chat_id = $1 and body_text like 'due %' group by body_text`,
      [open.id],
    );
    expect(msgs).to.have.length(12);
    expect(msgs.every((m) => m.n === 1)).to.equal(true);
    const sendsAfter = s.graph.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/messages')).length;
    expect(sendsAfter - sendsBefore).to.equal(12);
  });

  it('fails a due template that the provider refuses, with its failure_reason', async () => {
    s.graph.failNext({ status: 400, error: { message: 'Template name does not exist in the translation', code: 132001 } });
    const made = (await schedule(closed.id, { scheduled_at: inSeconds(1), template })).body;
    const row = await eventually(async () => {
      const { rows } = await s.db.query('select * from chat.scheduled_messages where id = $1', [made.id]);
      return rows[0].status === 'FAILED' ? rows[0] : undefined;
    }, 15_000);
    expect(row.failure_reason).to.match(/Template name does not exist/);
  });

  it('answers 401, 403 without crm/chats.write, 404 for another company', async () => {
    expect((await s.call('POST', api.path(`/${open.id}/scheduled-messages`), { body: {} })).status).to.equal(401);
    const limited = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/keys`, {
      created_by_user_id: s.tenant.user.id,
      permissions: ['crm/chats.read'],
    });
    expect((await schedule(open.id, { scheduled_at: inSeconds(60), body: 'x' }, limited.body.key)).status).to.equal(403);
    const other = await seedTenant(s.call, s.stack.adminToken);
    const res = await schedule(open.id, { scheduled_at: inSeconds(60), body: 'x' }, other.key.key);
    expect(res.status).to.equal(404);
  });
});
