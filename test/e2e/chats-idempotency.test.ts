import { expect } from 'chai';
import { chatsApi, openChatStack } from '../support/chats.js';
import { postMultipart } from '../support/files.js';
import { seedTenant } from '../support/fixtures.js';

/**
 * `x-idempotency-key` on the chat writes (issue 22, decision 0188): POST /chats, POST /chats/{id}/messages (JSON and
 * multipart) and POST /chats/{id}/scheduled-messages run once per key; the provider is called once.
 */
describe('idempotent chat writes with x-idempotency-key', function () {
  this.timeout(120_000);
  let s: Awaited<ReturnType<typeof openChatStack>>;
  let api: ReturnType<typeof chatsApi>;
  let open: any;
  let seq = 0;
  const key = () => `idem-${Date.now()}-${++seq}`;
  const template = { name: 'order_update', language: 'en_US' };

  const post = (path: string, body: unknown, idempotencyKey?: string, token = s.tenant.key.key) =>
    s.call('POST', api.path(path), {
      token,
      body,
      headers: idempotencyKey === undefined ? {} : { 'x-idempotency-key': idempotencyKey },
    });
  const providerSends = () => s.graph.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/messages')).length;
  const count = async (sql: string, params: unknown[]) => (await s.db.query(sql, params)).rows[0].n as number;

  before(async () => {
    s = await openChatStack({ PROVIDER_TIMEOUT_MS: '1500' });
    api = chatsApi(s.call, () => s.tenant.key.key);
    open = await s.tenant.chat({
      channel_type: 'WHATSAPP',
      whatsapp_number_id: s.tenant.number.id,
      wa_contact_id: '5511987654321',
      person_id: s.tenant.person.id,
      last_customer_msg_at: new Date().toISOString(),
    });
  });
  after(() => s?.stop());

  it('answers a repeated send with the first answer, marked as replayed, and calls the provider once', async () => {
    const k = key();
    const before = providerSends();
    const first = await post(`/${open.id}/messages`, { body: 'once' }, k);
    expect(first.status, first.text).to.equal(201);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    const again = await post(`/${open.id}/messages`, { body: 'once' }, k);
    expect(again.status).to.equal(201);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(providerSends()).to.equal(before + 1);
    expect(await count(`select count(*)::int as n from chat.messages where chat_id = $1 and body_text = 'once'`, [open.id])).to.equal(1);
  });

  it('answers 409 while the first send runs; a send whose outcome the provider left unknown is replayed as such, not sent again', async () => {
    const k = key();
    s.graph.failNext({ status: 200, hang: true });
    const before = providerSends();
    const first = post(`/${open.id}/messages`, { body: 'hanging' }, k);
    await new Promise((r) => setTimeout(r, 300));
    const during = await post(`/${open.id}/messages`, { body: 'hanging' }, k);
    expect(during.status).to.equal(409);
    expect(during.body.message).to.match(/still processing/);
    const answered = await first;
    expect(answered.status, answered.text).to.equal(201);
    expect(answered.body.records[0].status).to.equal('delivery_unknown');
    const after = await post(`/${open.id}/messages`, { body: 'hanging' }, k);
    expect(after.body).to.deep.equal(answered.body);
    expect(providerSends()).to.equal(before + 1);
  });

  it('answers 409 "may have received" for a key whose attempt died after reaching the provider, and sends nothing', async () => {
    const k = key();
    await s.db.query(
      `insert into chat.idempotency_keys (company_id, key, operation, status, created_at) values ($1, $2, $3, 'processing', now() - interval '3 minutes')`,
      [s.tenant.company.id, k, `POST /chats/${open.id}/messages`],
    );
    const before = providerSends();
    const res = await post(`/${open.id}/messages`, { body: 'after a crash' }, k);
    expect(res.status).to.equal(409);
    expect(res.body.message).to.match(/may have received the message/);
    expect(providerSends()).to.equal(before);
  });

  it('frees a key whose request was refused before anything was sent: the corrected request runs with it', async () => {
    const k = key();
    const refused = await post(`/${open.id}/messages`, {}, k);
    expect(refused.status).to.equal(400);
    const missing = await post('/00000000-0000-7000-8000-000000000000/messages', { body: 'x' }, k);
    expect(missing.status).to.equal(404);
    const ok = await post(`/${open.id}/messages`, { body: 'corrected' }, k);
    expect(ok.status, ok.text).to.equal(201);
    expect(ok.body.records[0].body_text).to.equal('corrected');
  });

  it('refuses a key used for another request with 409 naming it, and refuses a key over 255 characters with 400', async () => {
    const k = key();
    expect((await post(`/${open.id}/messages`, { body: 'first use' }, k)).status).to.equal(201);
    const other = await post(
      `/${open.id}/scheduled-messages`,
      { scheduled_at: new Date(Date.now() + 3600_000).toISOString(), body: 'x' },
      k,
    );
    expect(other.status).to.equal(409);
    expect(other.body.message).to.include(`POST /chats/${open.id}/messages`);
    const long = await post(`/${open.id}/messages`, { body: 'x' }, 'k'.repeat(256));
    expect(long.status).to.equal(400);
    expect(long.body.details.fields[0].field).to.equal('x-idempotency-key');
  });

  it('keys are per company: another company’s same key runs its own request', async () => {
    const k = key();
    expect((await post(`/${open.id}/messages`, { body: 'mine' }, k)).status).to.equal(201);
    const other = await seedTenant(s.call, s.stack.adminToken);
    const theirs = await post(`/${open.id}/messages`, { body: 'mine' }, k, other.key.key);
    expect(theirs.status).to.equal(404);
  });

  it('runs a multipart send once: the file goes to the provider once and the replay reads the body away', async () => {
    const k = key();
    const parts = [
      { name: 'body', value: 'with a file' },
      { name: 'file', filename: 'note.txt', contentType: 'text/plain', data: Buffer.from('hello') },
    ];
    const url = `${s.stack.gatewayUrl}${api.path(`/${open.id}/messages`)}`;
    const upload = async () => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.tenant.key.key}`, 'x-idempotency-key': k },
        body: (() => {
          const form = new FormData();
          form.append('body', 'with a file');
          form.append('file', new Blob([Buffer.from('hello')], { type: 'text/plain' }), 'note.txt');
          return form;
        })(),
      });
      return { status: res.status, body: await res.json(), replayed: res.headers.get('idempotent-replayed') };
    };
    const uploads = () => s.graph.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/media')).length;
    const before = uploads();
    const first = await upload();
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    const again = await upload();
    expect(again).to.deep.equal({ ...first, replayed: 'true' });
    expect(uploads()).to.equal(before + 1);
    // Without the key the same multipart request runs again.
    expect((await postMultipart(url, s.tenant.key.key, parts)).status).to.equal(201);
    expect(uploads()).to.equal(before + 2);
  });

  it('schedules once per key', async () => {
    const k = key();
    const body = { scheduled_at: new Date(Date.now() + 3600_000).toISOString(), body: 'scheduled once' };
    const first = await post(`/${open.id}/scheduled-messages`, body, k);
    expect(first.status, first.text).to.equal(201);
    const again = await post(`/${open.id}/scheduled-messages`, body, k);
    expect(again.body).to.deep.equal(first.body);
    expect(
      await count(`select count(*)::int as n from chat.scheduled_messages where chat_id = $1 and payload->>'body' = 'scheduled once'`, [
        open.id,
      ]),
    ).to.equal(1);
  });

  it('creates a chat and sends its template once per key', async () => {
    const k = key();
    const before = providerSends();
    const body = { phone_id: s.tenant.number.id, wa_contact_id: '5531955554444', template };
    const first = await post('', body, k);
    expect(first.status, first.text).to.equal(201);
    const again = await post('', body, k);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(providerSends()).to.equal(before + 1);
  });
});
