import { createHash } from 'node:crypto';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { chatsApi, openChatStack, seedChatTenant } from '../support/chats.js';
import { postMultipart } from '../support/files.js';
import { seedTenant } from '../support/fixtures.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

describe('POST /chats/{id}/messages through the gateway to the fake Graph server, and chat.message_sent', function () {
  this.timeout(120_000);
  let s: Awaited<ReturnType<typeof openChatStack>>;
  let api: ReturnType<typeof chatsApi>;
  let receiver: WebhookReceiver;
  let route: string;
  let open: any;
  let closed: any;
  let lead: any;

  /** A multipart send to the open chat through the gateway. */
  const postForm = (form: FormData) =>
    fetch(`${s.stack.gatewayUrl}${api.path(`/${open.id}/messages`)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.tenant.key.key}` },
      body: form,
    });

  before(async () => {
    s = await openChatStack();
    const t = s.tenant;
    api = chatsApi(s.call, () => t.key.key);
    receiver = await WebhookReceiver.start();
    route = `chat-${t.company.id}`;
    const sub = await t.admin('POST', `/companies/${t.company.id}/webhooks`, {
      url: receiver.route(route, () => 200),
      events: ['chat.message_sent'],
    });
    expect(sub.status, sub.text).to.equal(201);
    const leadRes = await s.call('POST', '/integrations/external/leads', {
      token: t.key.key,
      body: { title: 'Maria deal', persons_id: [t.person.id] },
    });
    expect(leadRes.status, leadRes.text).to.equal(201);
    lead = leadRes.body;
    open = await t.chat({
      channel_type: 'WHATSAPP',
      whatsapp_number_id: t.number.id,
      wa_contact_id: '5511987654321',
      person_id: t.person.id,
      last_customer_msg_at: new Date(Date.now() - 3600_000).toISOString(),
    });
    closed = await t.chat({ channel_type: 'WHATSAPP', whatsapp_number_id: t.number.id, wa_contact_id: '5511911112222' });
  });
  after(async () => {
    await receiver?.close();
    await s?.stop();
  });
  afterEach(() => expect(s.graph.violations).to.deep.equal([]));

  const sentEvents = () => receiver.on(route).filter((r) => r.body.event_key === 'chat.message_sent');
  const messagesOf = async (chatId: string) =>
    (await s.db.query('select * from chat.messages where chat_id = $1 order by created_at, id', [chatId])).rows;

  it('sends a text inside the window synchronously: 201 with the record, the provider called, chat.message_sent at a receiver', async () => {
    const res = await api.send(open.id, { body: 'Olá Maria!' });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.records).to.have.length(1);
    const m = res.body.records[0];
    expect(m).to.include({
      type: 'text',
      origin: 'API_OUTBOUND',
      from_me: true,
      sent_via: 'API',
      status: 'sent',
      body_text: 'Olá Maria!',
      chat_id: open.id,
    });
    expect(m.agent).to.deep.equal({ id: s.tenant.agent.agent_id, user: { id: s.tenant.user.id, name: 'Integrator', avatar: null } });
    const call = s.graph.requests.find((r) => r.method === 'POST' && r.path.endsWith(`/${s.graph.phoneNumberIds[0]}/messages`));
    expect(call?.json).to.deep.include({ messaging_product: 'whatsapp', to: '5511987654321', type: 'text' });
    const [row] = await messagesOf(open.id);
    expect(row.wamid).to.be.a('string').and.not.empty;
    const event = await eventually(() => sentEvents().find((r) => r.body.payload.id === m.id));
    expect(event.body.payload).to.include({
      type: 'text',
      origin: 'API_OUTBOUND',
      from_me: true,
      sent_via: 'API',
      status: 'sent',
      body_text: 'Olá Maria!',
    });
    for (const key of [
      'error_code',
      'error_message',
      'transcription',
      'content_payload',
      'meta_timestamp',
      'created_at',
      'is_history',
      'history_phase',
      'history_chunk_order',
      'history_progress',
      'is_media_placeholder',
      'is_forwarded',
      'whatsapp_ai_agent_id',
      'reactions',
      'agent',
      'user',
      'media',
      'call',
    ])
      expect(event.body.payload, key).to.have.property(key);
    expect(event.body.payload.associated_leads).to.deep.equal([{ id: lead.id, title: 'Maria deal', status: 1 }]);
    expect(event.body.payload.associated_deals).to.deep.equal([]);
    const detail = await api.get(open.id);
    expect(detail.body.last_message.id).to.equal(m.id);
    expect(detail.body.assigned_agent.agent_id).to.equal(s.tenant.agent.agent_id);
  });

  it('refuses a text outside the window (a template is required) and writes nothing', async () => {
    const res = await api.send(closed.id, { body: 'hello?' });
    expect(res.status).to.equal(400);
    expect(res.body.message).to.match(/^type: a template is required outside the 24 h window/);
    expect(await messagesOf(closed.id)).to.deep.equal([]);
  });

  it("writes nothing when the chat's number has no provider that serves it (an operator's mistake): no message stays processing", async () => {
    // The text's `processing` row is written by the statement that reads the chat (decision 0272); a send that
    // cannot reach a provider takes it back, as when the row came after the provider was found.
    await s.db.query(`update chat.whatsapp_numbers set provider = 'instagram_messaging' where id = $1`, [s.tenant.number.id]);
    try {
      const before = await messagesOf(open.id);
      const res = await api.send(open.id, { body: 'no provider for this one' });
      expect(res.status, res.text).to.equal(500);
      expect(await messagesOf(open.id)).to.deep.equal(before);
      expect(s.graph.requests.filter((r) => JSON.stringify(r.json ?? '').includes('no provider for this one'))).to.deep.equal([]);
    } finally {
      await s.db.query(`update chat.whatsapp_numbers set provider = 'whatsapp_cloud' where id = $1`, [s.tenant.number.id]);
    }
  });

  it('sends a template outside the window, with no body; refuses a body with it, an unknown template and the types of other routes', async () => {
    const res = await api.send(closed.id, {
      type: 'template',
      template: { name: 'order_update', language: 'en_US' },
      template_fields: [
        { component: 'BODY', type: 'TEXT', index: 1, value: '#42' },
        { component: 'BODY', type: 'TEXT', index: 2, value: 'shipped' },
      ],
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.records[0]).to.include({ type: 'template', status: 'sent', body_text: null });
    const call = s.graph.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/messages')).at(-1);
    expect((call!.json as any).template.name).to.equal('order_update');
    const cases: [unknown, RegExp][] = [
      [{ type: 'template', body: 'x', template: { name: 'order_update', language: 'en_US' } }, /^body: must not be sent with a template/],
      [{ type: 'template' }, /^template: is required/],
      [{ type: 'template', template: { name: 'nope', language: 'en_US' } }, /^template: no approved template/],
      [{ type: 'interactive', body: 'x' }, /^type: interactive messages are sent through their own route/],
      [{ type: 'location' }, /^type: location messages/],
      [{ body: 'x', extra: 1 }, /extra/],
    ];
    for (const [body, message] of cases) {
      const bad = await api.send(closed.id, body);
      expect(bad.status, JSON.stringify(body)).to.equal(400);
      expect(bad.body.message).to.match(message);
    }
    expect(await messagesOf(closed.id)).to.have.length(1);
  });

  it('needs content: an empty send is 400', async () => {
    const res = await api.send(open.id, {});
    expect(res.status).to.equal(400);
    expect(res.body.message).to.equal('body: content or attachments are required');
  });

  it('keeps a provider refusal as a failed record (201, error_code and error_message) and fires no event for it', async () => {
    s.graph.failNext({ status: 400, error: { message: 'Recipient phone number not in allowed list', code: 131030 } });
    const res = await api.send(open.id, { body: 'will fail' });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.records[0]).to.include({ status: 'failed', error_code: 131030 });
    expect(res.body.records[0].error_message).to.match(/allowed list/);
    const ok = await api.send(open.id, { body: 'after the failure' });
    await eventually(() => sentEvents().find((r) => r.body.payload.id === ok.body.records[0].id));
    // Counted by message, not by length: the template's event of the test before may still be on its way.
    expect(sentEvents().filter((r) => r.body.payload.id === res.body.records[0].id)).to.deep.equal([]);
    expect(sentEvents().filter((r) => r.body.payload.id === ok.body.records[0].id)).to.have.length(1);
  });

  it('sends text and files from a multipart body as several records, each file streamed to the provider', async () => {
    const image = Buffer.alloc(300_000, 7);
    const form = new FormData();
    form.append('body', 'see attached');
    form.append('file', new Blob([image], { type: 'image/jpeg' }), 'photo.jpg');
    form.append('file', new Blob([Buffer.from('%PDF-1.4 hello')], { type: 'application/pdf' }), 'doc.pdf');
    const res = await postForm(form);
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(201);
    expect(body.records.map((r: any) => [r.type, r.status])).to.deep.equal([
      ['text', 'sent'],
      ['image', 'sent'],
      ['document', 'sent'],
    ]);
    expect(body.records[1].media).to.include({ mime_type: 'image/jpeg', file_name: 'photo.jpg', file_size: 300_000 });
    const uploads = s.graph.requests.filter((r) => r.upload).map((r) => r.upload!);
    expect(uploads.find((u) => u.fileName === 'photo.jpg')).to.include({
      bytes: 300_000,
      sha256: createHash('sha256').update(image).digest('hex'),
    });
  });

  it("writes chat.message_sent's message as stored: each event of a text, a template and files equals the message read back", async () => {
    // The event is written by the settle statement itself (decision 0236), so it is built before that statement runs.
    const listed = await Promise.all([open.id, closed.id].map((id) => api.messages(id, { take: 100 })));
    const messages = listed.flatMap((r) => r.body.records as any[]);
    const byId = new Map(messages.map((m) => [m.id, m]));
    // The earlier sends' events travel outbox → NATS → webhooks → receiver after their answers: wait for the four kinds.
    const events = await eventually(() => {
      const arrived = sentEvents().filter((r) => byId.has(r.body.payload.id));
      expect(arrived.map((e) => byId.get(e.body.payload.id).type)).to.include.members(['text', 'template', 'image', 'document']);
      return arrived;
    });
    for (const e of events) {
      const { associated_leads, associated_deals, ...message } = e.body.payload;
      expect(associated_leads).to.be.an('array');
      expect(message).to.deep.equal(byId.get(message.id));
    }
  });

  it('refuses a multipart field or file name that breaks the text rule with a 400 naming it, sending and writing nothing', async () => {
    const url = `${s.stack.gatewayUrl}${api.path(`/${open.id}/messages`)}`;
    const [messages, calls] = [(await messagesOf(open.id)).length, s.graph.requests.length];
    const nul = await postMultipart(url, s.tenant.key.key, [{ name: 'body', value: 'hi\u0000' }]);
    expect(nul.status, nul.text).to.equal(400);
    expect((nul.body as any).message).to.equal('body: must not contain NUL characters or unpaired UTF-16 surrogates');
    const name = await postMultipart(url, s.tenant.key.key, [
      { name: 'body', value: 'see attached' },
      { name: 'file', filename: 'x.pdf', filenameStar: "UTF-8''a%0Ab.pdf", data: Buffer.from('%PDF-1.4') },
    ]);
    expect(name.status, name.text).to.equal(400);
    expect((name.body as any).message).to.equal('file.filename: must not contain control characters');
    expect((await messagesOf(open.id)).length).to.equal(messages);
    expect(s.graph.requests.length).to.equal(calls);
  });

  it('answers multipart without a boundary, or with a raw control byte in a file name, with a 400 naming it (issue 23 item 4), sending nothing', async () => {
    const url = `${s.stack.gatewayUrl}${api.path(`/${open.id}/messages`)}`;
    const [messages, calls] = [(await messagesOf(open.id)).length, s.graph.requests.length];
    const bare = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.tenant.key.key}`, 'content-type': 'multipart/form-data' },
      body: '--x\r\ncontent-disposition: form-data; name="body"\r\n\r\nhi\r\n--x--\r\n',
    });
    expect(bare.status).to.equal(400);
    expect(await bare.json()).to.deep.equal({
      statusCode: 400,
      message: 'body: must be multipart/form-data with a boundary',
      error: 'Bad Request',
      details: { fields: [{ field: 'body', message: 'must be multipart/form-data with a boundary' }] },
    });
    for (const byte of [0x01, 0x1b, 0x7f]) {
      const res = await postMultipart(url, s.tenant.key.key, [
        { name: 'body', value: 'see attached' },
        { name: 'file', filename: Buffer.from([0x61, byte, 0x2e, 0x70, 0x64, 0x66]), data: Buffer.from('%PDF-1.4') },
      ]);
      expect(res.status, res.text).to.equal(400);
      expect((res.body as any).message).to.equal('file.filename: must not contain control characters');
    }
    expect((await messagesOf(open.id)).length).to.equal(messages);
    expect(s.graph.requests.length).to.equal(calls);
  });

  it('keeps an audio file over 16 MB as a failed record while the answer stays 201', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(16 * 1024 * 1024 + 10, 1)], { type: 'audio/ogg' }), 'voice.ogg');
    const res = await postForm(form);
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(201);
    expect(body.records).to.have.length(1);
    expect(body.records[0]).to.include({ type: 'audio', status: 'failed', error_message: 'file exceeds 16 MB' });
  });

  it('sends a text in an Instagram chat through the Instagram Messaging client, with chat.message_sent', async () => {
    const account = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/instagram-accounts`, {
      handle: 'acme.real',
      display_name: 'Acme Real',
      external_account_id: s.graph.instagramAccountId,
      provider: 'instagram_messaging',
    });
    expect(account.status, account.text).to.equal(201);
    const ig = await s.tenant.chat({
      channel_type: 'INSTAGRAM',
      instagram_account_id: account.body.id,
      external_contact: { id: '987654321012345' },
      last_customer_msg_at: new Date().toISOString(),
    });
    const res = await api.send(ig.id, { body: 'Oi pelo Instagram' });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.records[0]).to.include({ type: 'text', status: 'sent', body_text: 'Oi pelo Instagram' });
    const call = s.graph.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`/${s.graph.instagramAccountId}/messages`)).at(-1);
    expect(call?.json).to.deep.include({ recipient: { id: '987654321012345' } });
    await eventually(() => sentEvents().find((r) => r.body.payload.id === res.body.records[0].id));
    const template = await api.send(ig.id, { type: 'template', template: { name: 'order_update', language: 'en_US' } });
    expect(template.status).to.equal(400);
    expect(template.body.message).to.equal('type: Instagram chats have no templates');
  });

  it('lists the messages newest first by default, asc on request, with search, total and the take cap', async () => {
    const desc = await api.messages(open.id);
    expect(desc.status).to.equal(200);
    expect(desc.body.total).to.equal((await messagesOf(open.id)).length);
    const times = desc.body.records.map((m: any) => m.created_at);
    expect([...times].sort().reverse()).to.deep.equal(times);
    const asc = await api.messages(open.id, { order: 'asc', take: 2 });
    expect(asc.body.records.map((m: any) => m.body_text)).to.deep.equal(['Olá Maria!', 'will fail']);
    const found = await api.messages(open.id, { search: 'attached' });
    expect(found.body.total).to.equal(1);
    expect((await api.messages(open.id, { take: 1000 })).status).to.equal(200);
    for (const [q, field] of [
      [{ order: 'up' }, 'order'],
      [{ take: 0 }, 'take'],
      [{ skip: 'x' }, 'skip'],
    ] as const) {
      const bad = await api.messages(open.id, q);
      expect(bad.status).to.equal(400);
      expect(bad.body.message).to.match(new RegExp(`^${field}: `));
    }
  });

  it('writes no chat.message_sent for a company outside its plan (the message is still sent)', async () => {
    const other = await seedChatTenant(s.call, s.stack.adminToken);
    const chat = await other.chat({
      channel_type: 'WHATSAPP',
      whatsapp_number_id: other.number.id,
      wa_contact_id: '5511933332222',
      last_customer_msg_at: new Date().toISOString(),
    });
    const expired = await other.admin('PATCH', `/companies/${other.company.id}`, {
      plan_valid_until: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(expired.status, expired.text).to.equal(200);
    // crm's answer about the plan is cached for 2 s: sends until one is made after the cache saw the change.
    const sent = await eventually(
      async () => {
        const res = await api.send(chat.id, { body: 'outside the plan' }, other.key.key);
        expect(res.status, res.text).to.equal(201);
        const id = res.body.records[0].id;
        const { rows } = await s.db.query(`select count(*)::int as n from chat.outbox where payload->>'id' = $1`, [id]);
        return rows[0].n === 0 ? res.body.records[0] : undefined;
      },
      10_000,
      250,
    );
    expect(sent.status).to.equal('sent');
  });

  it("answers 401 without a key, 403 without crm/chats.write, 404 for another company's chat", async () => {
    expect((await s.call('POST', api.path(`/${open.id}/messages`), { body: { body: 'x' } })).status).to.equal(401);
    const limited = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/keys`, {
      created_by_user_id: s.tenant.user.id,
      permissions: ['crm/chats.read'],
    });
    const forbidden = await api.send(open.id, { body: 'x' }, limited.body.key);
    expect(forbidden.status).to.equal(403);
    expect(forbidden.body.message).to.equal('The key lacks the permission crm/chats.write');
    const other = await seedTenant(s.call, s.stack.adminToken);
    const notFound = await api.send(open.id, { body: 'x' }, other.key.key);
    expect(notFound.status).to.equal(404);
    expect(notFound.body).to.deep.equal({ statusCode: 404, message: 'Chat not found', error: 'Not Found' });
  });
});
