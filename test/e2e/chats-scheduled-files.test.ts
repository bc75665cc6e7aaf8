import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { chatsApi, openAndClosedChats, openChatStack } from '../support/chats.js';
import { type Part, postMultipart } from '../support/files.js';
import { seedTenant } from '../support/fixtures.js';

/** Scheduled messages with files: multipart through the gateway, kept in the chat's file store, sent, removed. */
describe('scheduled messages with attachments: stored until the send, the window rule, cancel removes them', function () {
  this.timeout(120_000);
  let s: Awaited<ReturnType<typeof openChatStack>>;
  let api: ReturnType<typeof chatsApi>;
  let dir: string;
  let open: any;
  let closed: any;
  const inSeconds = (n: number) => new Date(Date.now() + n * 1000).toISOString();
  const stored = async () => (await readdir(dir).catch(() => [] as string[])).sort();

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'chat-scheduled-'));
    s = await openChatStack({
      SCHEDULER_INTERVAL_MS: '100',
      SCHEDULED_FILES_DIR: dir,
      SCHEDULED_FILES_SWEEP_MS: '200',
      SCHEDULED_FILES_GRACE_MS: '60000',
    });
    api = chatsApi(s.call, () => s.tenant.key.key);
    ({ open, closed } = await openAndClosedChats(s));
  });
  after(async () => {
    await s?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const post = (chatId: string, fields: Record<string, string>, files: [Buffer, string, string][], key = s.tenant.key.key) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    for (const [bytes, type, name] of files) form.append('file', new Blob([bytes], { type }), name);
    return fetch(`${s.stack.gatewayUrl}${api.path(`/${chatId}/scheduled-messages`)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
  };

  it('schedules files with a caption, keeps them in the store, sends each to the provider when due, then removes them', async () => {
    const image = Buffer.alloc(200_000, 9);
    const pdf = Buffer.from('%PDF-1.4 scheduled');
    const res = await post(open.id, { scheduled_at: inSeconds(2), body: 'see attached' }, [
      [image, 'image/jpeg', 'photo.jpg'],
      [pdf, 'application/pdf', 'doc.pdf'],
    ]);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.include({ status: 'PENDING', message_kind: 'OPEN_MESSAGE' });
    expect(res.body.attachments.map((a: any) => [a.file_name, a.mime_type, a.file_size])).to.deep.equal([
      ['photo.jpg', 'image/jpeg', 200_000],
      ['doc.pdf', 'application/pdf', pdf.length],
    ]);
    for (const a of res.body.attachments) expect(a.id).to.be.a('string');
    expect(await stored()).to.deep.equal(res.body.attachments.map((a: any) => a.id).sort());

    const sent = await eventually(async () => {
      const list = (await api.get(`${open.id}/scheduled-messages?status=SENT`)).body;
      return list?.records?.find((r: any) => r.id === res.body.id);
    }, 20_000);
    expect(sent.status, JSON.stringify(sent)).to.equal('SENT');
    expect(sent.sent_message_ids).to.have.length(3);
    const { rows } = await s.db.query('select type, status, media from chat.messages where id = any($1::uuid[]) order by created_at, id', [
      sent.sent_message_ids,
    ]);
    expect(rows.map((r) => [r.type, r.status])).to.deep.equal([
      ['text', 'sent'],
      ['image', 'sent'],
      ['document', 'sent'],
    ]);
    const upload = s.graph.requests.map((r) => r.upload).find((u) => u?.fileName === 'photo.jpg');
    expect(upload).to.include({ bytes: 200_000, sha256: createHash('sha256').update(image).digest('hex') });
    await eventually(async () => ((await stored()).length === 0 ? true : undefined), 5_000);
  });

  it('takes files alone (no body) and removes them when the message is canceled', async () => {
    const res = await post(open.id, { scheduled_at: inSeconds(3600) }, [[Buffer.from('hello'), 'text/plain', 'note.txt']]);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.attachments).to.have.length(1);
    expect(await stored()).to.deep.equal([res.body.attachments[0].id]);
    const canceled = await api.post(`/${open.id}/scheduled-messages/${res.body.id}/cancel`, { reason: 'changed my mind' });
    expect(canceled.status, canceled.text).to.equal(200);
    expect(canceled.body.status).to.equal('CANCELED');
    expect(canceled.body.attachments).to.have.length(1);
    expect(await stored()).to.deep.equal([]);
  });

  it('removes the files of a send canceled by the contact writing (cancel_on_inbound)', async () => {
    const res = await post(open.id, { scheduled_at: inSeconds(3600), cancel_on_inbound: 'true' }, [
      [Buffer.from('x'), 'text/plain', 'x.txt'],
    ]);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(await stored()).to.have.length(1);
    const inbound = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/chats/${open.id}/inbound`, {
      type: 'text',
      body_text: 'oi',
    });
    expect(inbound.status, inbound.text).to.equal(201);
    const row = (await s.db.query('select status, cancel_reason from chat.scheduled_messages where id = $1', [res.body.id])).rows[0];
    expect(row).to.deep.equal({ status: 'CANCELED', cancel_reason: 'CHAT_INTERACTION' });
    expect(await stored()).to.deep.equal([]);
  });

  it('refuses files after the window and with a template, storing nothing; 400 names the field', async () => {
    const before = (await s.db.query('select count(*)::int as n from chat.scheduled_messages')).rows[0].n;
    const late = await post(open.id, { scheduled_at: inSeconds(2 * 24 * 3600) }, [[Buffer.from('x'), 'text/plain', 'x.txt']]);
    expect(late.status).to.equal(400);
    expect(late.body.message).to.match(/^scheduled_at: text or attachments can only be scheduled inside session_expires_at/);
    const shut = await post(closed.id, { scheduled_at: inSeconds(60) }, [[Buffer.from('x'), 'text/plain', 'x.txt']]);
    expect(shut.status).to.equal(400);
    expect(shut.body.message).to.match(/^scheduled_at: text or attachments/);
    const template = JSON.stringify({ name: 'order_update', language: 'en_US' });
    const withTemplate = await post(closed.id, { scheduled_at: inSeconds(60), template }, [[Buffer.from('x'), 'text/plain', 'x.txt']]);
    expect(withTemplate.status).to.equal(400);
    expect(withTemplate.body.message).to.match(/^attachments: a scheduled template takes no files/);
    const empty = await post(open.id, { scheduled_at: inSeconds(60) }, []);
    expect(empty.status).to.equal(400);
    expect(empty.body.message).to.match(/^body: is required for a text message without attachments/);
    expect((await s.db.query('select count(*)::int as n from chat.scheduled_messages')).rows[0].n).to.equal(before);
    expect(await stored()).to.deep.equal([]);
  });

  it('refuses a field or file name that breaks the text rule with a 400 naming it (decision 0135), storing nothing', async () => {
    const url = `${s.stack.gatewayUrl}${api.path(`/${open.id}/scheduled-messages`)}`;
    const send = (parts: Part[]) => postMultipart(url, s.tenant.key.key, parts);
    const at: Part = { name: 'scheduled_at', value: inSeconds(60) };
    const file = (filename: string | Buffer, filenameStar?: string): Part => ({
      name: 'file',
      filename,
      filenameStar,
      data: Buffer.from('x'),
    });
    const before = (await s.db.query('select count(*)::int as n from chat.scheduled_messages')).rows[0].n;
    const cases: [Part[], string][] = [
      [[at, { name: 'body', value: 'a\u0000b' }], 'body: must not contain NUL characters or unpaired UTF-16 surrogates'],
      [[at, { name: 'body', value: Buffer.from([0x61, 0xff]) }], 'body: must be UTF-8'],
      [
        [at, { name: 'template', value: '{"name":"x\\u0000","language":"en_US"}' }],
        'template.name: must not contain NUL characters or unpaired UTF-16 surrogates',
      ],
      [[at, file('x.txt', "UTF-8''a%00.txt")], 'file.filename: must not contain NUL characters or unpaired UTF-16 surrogates'],
      [[at, file('a\tb.txt')], 'file.filename: must not contain control characters'],
      [[at, file(Buffer.from([0x61, 0xe9, 0x2e, 0x74, 0x78, 0x74]))], 'file.filename: must be UTF-8'],
      [
        [at, { name: 'body', value: 'two files' }, file('ok.txt'), file('x.txt', "UTF-8''b%01.txt")],
        'file.filename: must not contain control characters',
      ],
      // Raw control bytes in the quoted name: refused, never a part left out (issue 23 item 4).
      [[at, file(Buffer.from('a\x01b.txt', 'latin1'))], 'file.filename: must not contain control characters'],
      [
        [at, { name: 'body', value: 'two files' }, file('ok.txt'), file(Buffer.from('b\x1b.txt', 'latin1'))],
        'file.filename: must not contain control characters',
      ],
    ];
    for (const [parts, message] of cases) {
      const res = await send(parts);
      expect(res.status, res.text).to.equal(400);
      expect((res.body as any).message).to.equal(message);
    }
    const bare = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.tenant.key.key}`, 'content-type': 'multipart/form-data' },
      body: '--x\r\ncontent-disposition: form-data; name="body"\r\n\r\nhi\r\n--x--\r\n',
    });
    expect(bare.status).to.equal(400);
    expect(((await bare.json()) as any).message).to.equal('body: must be multipart/form-data with a boundary');
    // A line break in a message body is text, as in a JSON body; a UTF-8 file name is kept as sent.
    const ok = await send([at, { name: 'body', value: 'line 1\nline 2' }, file('relatório.txt')]);
    expect(ok.status, ok.text).to.equal(201);
    expect((ok.body as any).attachments[0].file_name).to.equal('relatório.txt');
    expect((await s.db.query('select count(*)::int as n from chat.scheduled_messages')).rows[0].n).to.equal(before + 1);
    expect(await stored()).to.deep.equal([(ok.body as any).attachments[0].id]);
    expect((await api.post(`/${open.id}/scheduled-messages/${(ok.body as any).id}/cancel`, {})).status).to.equal(200);
  });

  it('refuses a file over its limit (audio 16 MB) with a 400 naming attachments; what was stored is removed', async () => {
    const res = await post(open.id, { scheduled_at: inSeconds(60), body: 'voice' }, [
      [Buffer.from('first'), 'text/plain', 'first.txt'],
      [Buffer.alloc(16 * 1024 * 1024 + 10, 1), 'audio/ogg', 'voice.ogg'],
    ]);
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.message).to.equal('attachments: voice.ogg is over 16 MB');
    expect(await stored()).to.deep.equal([]);
  });

  it('answers 401 without a key, 403 without crm/chats.write, 404 for another company`s chat', async () => {
    const file: [Buffer, string, string][] = [[Buffer.from('x'), 'text/plain', 'x.txt']];
    const form = new FormData();
    form.append('scheduled_at', inSeconds(60));
    expect(
      (await fetch(`${s.stack.gatewayUrl}${api.path(`/${open.id}/scheduled-messages`)}`, { method: 'POST', body: form })).status,
    ).to.equal(401);
    const limited = await s.tenant.admin('POST', `/companies/${s.tenant.company.id}/keys`, {
      created_by_user_id: s.tenant.user.id,
      permissions: ['crm/chats.read'],
    });
    expect((await post(open.id, { scheduled_at: inSeconds(60) }, file, limited.body.key)).status).to.equal(403);
    const other = await seedTenant(s.call, s.stack.adminToken);
    const notFound = await post(open.id, { scheduled_at: inSeconds(60) }, file, other.key.key);
    expect(notFound.status).to.equal(404);
    expect(await stored()).to.deep.equal([]);
  });

  it('sweeps stored files no live scheduled message names once older than the grace; keeps a pending one`s and fresh ones', async () => {
    const res = await post(open.id, { scheduled_at: inSeconds(3600) }, [[Buffer.from('keep'), 'text/plain', 'keep.txt']]);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const live = res.body.attachments[0].id;
    const [orphan, partial, fresh] = [randomUUID(), `${randomUUID()}.part`, randomUUID()];
    for (const name of [orphan, partial, fresh]) await writeFile(path.join(dir, name), 'left behind');
    const old = new Date(Date.now() - 3600_000);
    for (const name of [live, orphan, partial]) await utimes(path.join(dir, name), old, old);
    await eventually(async () => ((await stored()).length === 2 ? true : undefined), 10_000);
    expect(await stored()).to.deep.equal([live, fresh].sort());
    expect((await api.post(`/${open.id}/scheduled-messages/${res.body.id}/cancel`, {})).status).to.equal(200);
    await rm(path.join(dir, fresh));
  });
});
