import { expect } from 'chai';
import type { InboundMessage, InboundStatus } from '../../src/providers/provider.js';
import { SECRETS, signature, startWebhookServer, type WebhookServer } from './webhook-support.js';

const PATH = '/providers/whatsapp/webhook';
const PNID = '106540352242922';
const WA_ID = '5511987654321';

/** A Graph callback of field `messages` as WhatsApp sends it. */
function callback(
  value: Record<string, unknown>,
  field = 'messages',
): { object: string; entry: { id: string; changes: { field: string; value: Record<string, unknown> }[] }[] } {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field,
            value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550783881', phone_number_id: PNID }, ...value },
          },
        ],
      },
    ],
  };
}
const contacts = [{ profile: { name: 'Ana Souza' }, wa_id: WA_ID }];
const msg = (id: string, type: string, part: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  from: WA_ID,
  id,
  timestamp: '1764072000',
  type,
  [type]: part,
  ...extra,
});

describe('WhatsApp webhook', () => {
  let server: WebhookServer;
  beforeEach(async () => {
    server = await startWebhookServer();
  });
  afterEach(() => server.stop());

  const send = (body: unknown, secret = SECRETS.WHATSAPP_APP_SECRET) => {
    const raw = JSON.stringify(body);
    return server.post(PATH, raw, { 'x-hub-signature-256': signature(raw, secret) });
  };
  const events = () => server.sink.calls.flat();

  it('answers the verification handshake with the challenge', async () => {
    const res = await fetch(
      `${server.url}${PATH}?hub.mode=subscribe&hub.verify_token=${SECRETS.WHATSAPP_VERIFY_TOKEN}&hub.challenge=1158201444`,
    );
    expect(res.status).to.equal(200);
    expect(await res.text()).to.equal('1158201444');
  });

  it('refuses the handshake with a wrong verify token or mode with 403', async () => {
    for (const query of [
      `hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1`,
      `hub.mode=unsubscribe&hub.verify_token=${SECRETS.WHATSAPP_VERIFY_TOKEN}&hub.challenge=1`,
    ]) {
      const res = await fetch(`${server.url}${PATH}?${query}`);
      expect(res.status).to.equal(403);
      expect(await res.json()).to.deep.equal({ statusCode: 403, message: 'hub.verify_token: does not match', error: 'Forbidden' });
    }
  });

  it('turns a text message into an event with the contact, the quoted wamid and the time', async () => {
    const body = callback({
      contacts,
      messages: [
        msg(
          'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABIYFjNFQjBDMA==',
          'text',
          { body: 'Oi, tudo bem?' },
          { context: { from: '15550783881', id: 'wamid.QUOTED' } },
        ),
      ],
    });
    const res = await send(body);
    expect(res.status).to.equal(200);
    expect(await res.text()).to.equal('EVENT_RECEIVED');
    expect(server.sink.calls).to.have.length(1);
    const event = events()[0] as InboundMessage;
    expect(event).to.deep.equal({
      kind: 'message',
      channel: 'WHATSAPP',
      provider: 'whatsapp_cloud',
      accountId: PNID,
      providerMessageId: 'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABIYFjNFQjBDMA==',
      contact: { id: WA_ID, profileName: 'Ana Souza' },
      fromMe: false,
      type: 'text',
      text: 'Oi, tudo bem?',
      quotedMessageId: 'wamid.QUOTED',
      isForwarded: false,
      isHistory: false,
      timestamp: new Date(1764072000 * 1000),
      payload: (body.entry[0]?.changes[0]?.value.messages as unknown[] | undefined)?.[0],
    });
  });

  it('checks the signature over the raw bytes, not a re-serialization', async () => {
    const raw = `{ "object": "whatsapp_business_account",\n  "entry": [ { "id": "1", "changes": [ { "field": "messages", "value": { "metadata": { "phone_number_id": "${PNID}" }, "messages": [ { "from": "${WA_ID}", "id": "wamid.RAW", "timestamp": "1764072000", "type": "text", "text": { "body": "caf\\u00e9 ☕" } } ] } } ] } ] }`;
    const res = await server.post(PATH, raw, { 'x-hub-signature-256': signature(raw, SECRETS.WHATSAPP_APP_SECRET) });
    expect(res.status).to.equal(200);
    expect((events()[0] as InboundMessage).text).to.equal('café ☕');
  });

  it('refuses a missing or malformed signature with 401 and a wrong one with 403, storing nothing', async () => {
    const raw = JSON.stringify(callback({ messages: [msg('wamid.X', 'text', { body: 'x' })] }));
    const missing = await server.post(PATH, raw);
    expect(missing.status).to.equal(401);
    expect(await missing.json()).to.deep.equal({
      statusCode: 401,
      message: 'x-hub-signature-256: missing or malformed',
      error: 'Unauthorized',
    });
    expect((await server.post(PATH, raw, { 'x-hub-signature-256': 'sha1=abc' })).status).to.equal(401);
    const wrongKey = await server.post(PATH, raw, { 'x-hub-signature-256': signature(raw, 'another-secret') });
    expect(wrongKey.status).to.equal(403);
    expect(((await wrongKey.json()) as { message: string }).message).to.equal('x-hub-signature-256: does not match the body');
    const tampered = await server.post(PATH, raw.replace('"x"', '"y"'), {
      'x-hub-signature-256': signature(raw, SECRETS.WHATSAPP_APP_SECRET),
    });
    expect(tampered.status).to.equal(403);
    expect(server.sink.calls).to.have.length(0);
  });

  it('refuses callbacks when no app secret is configured', async () => {
    await server.stop();
    server = await startWebhookServer({ WHATSAPP_VERIFY_TOKEN: 'v' });
    const res = await send(callback({ messages: [] }));
    expect(res.status).to.equal(403);
  });

  it('answers 400 naming the problem for malformed JSON, a foreign object or an oversized body', async () => {
    const bad = '{"object":';
    const malformed = await server.post(PATH, bad, { 'x-hub-signature-256': signature(bad, SECRETS.WHATSAPP_APP_SECRET) });
    expect(malformed.status).to.equal(400);
    expect(((await malformed.json()) as { message: string }).message).to.equal('body: malformed JSON');
    const foreign = await send({ object: 'page', entry: [] });
    expect(foreign.status).to.equal(400);
    expect(((await foreign.json()) as { message: string }).message).to.match(/^object: /);
    await server.stop();
    server = await startWebhookServer(SECRETS, 1024);
    const big = await send(callback({ messages: [msg('wamid.BIG', 'text', { body: 'x'.repeat(2000) })] }));
    expect(big.status).to.equal(400);
    expect(((await big.json()) as { message: string }).message).to.equal('body: larger than 1024 bytes');
    expect(server.sink.calls).to.have.length(0);
  });

  it('turns sent, delivered, read and failed statuses into events with the errors of a failure', async () => {
    const status = (s: string, extra: Record<string, unknown> = {}) => ({
      id: 'wamid.OUT',
      status: s,
      timestamp: '1764072100',
      recipient_id: WA_ID,
      ...extra,
    });
    await send(
      callback({
        statuses: [
          status('sent', { conversation: { id: 'c1', origin: { type: 'service' } }, pricing: { billable: true, category: 'service' } }),
          status('delivered'),
          status('read'),
          status('failed', {
            errors: [
              {
                code: 131026,
                title: 'Message undeliverable',
                message: 'Message undeliverable',
                error_data: { details: 'Recipient is not a WhatsApp user' },
              },
            ],
          }),
          status('warning'),
        ],
      }),
    );
    const got = events() as InboundStatus[];
    expect(got.map((e) => e.status)).to.deep.equal(['sent', 'delivered', 'read', 'failed']);
    expect(got[0]).to.deep.equal({
      kind: 'status',
      channel: 'WHATSAPP',
      provider: 'whatsapp_cloud',
      accountId: PNID,
      providerMessageId: 'wamid.OUT',
      status: 'sent',
      recipientId: WA_ID,
      timestamp: new Date(1764072100 * 1000),
      errors: [],
    });
    expect(got[3]?.errors).to.deep.equal([{ code: 131026, title: 'Message undeliverable', message: 'Recipient is not a WhatsApp user' }]);
  });

  it('hands a repeated callback to the sink again with the same wamid, so the sink can absorb it', async () => {
    const body = callback({ contacts, messages: [msg('wamid.DUP', 'text', { body: 'again' })] });
    expect((await send(body)).status).to.equal(200);
    expect((await send(body)).status).to.equal(200);
    expect(server.sink.calls.map((c) => c.map((e) => e.providerMessageId))).to.deep.equal([['wamid.DUP'], ['wamid.DUP']]);
  });

  it('answers 500 when the sink fails, so Meta resends, and takes the resend', async () => {
    const body = callback({ messages: [msg('wamid.RETRY', 'text', { body: 'x' })] });
    server.sink.failing = 1;
    const failed = await send(body);
    expect(failed.status).to.equal(500);
    expect(await failed.json()).to.deep.equal({
      statusCode: 500,
      message: 'the callback could not be stored',
      error: 'Internal Server Error',
    });
    expect((await send(body)).status).to.equal(200);
    expect(events().map((e) => e.providerMessageId)).to.deep.equal(['wamid.RETRY']);
  });

  it('reads media, reactions, replies to buttons, locations, forwards and unsupported messages', async () => {
    await send(
      callback({
        contacts,
        messages: [
          msg(
            'wamid.IMG',
            'image',
            { id: '1479537139650973', mime_type: 'image/jpeg', sha256: 'abc=', caption: 'recibo' },
            { context: { forwarded: true } },
          ),
          msg('wamid.DOC', 'document', { id: '77', mime_type: 'application/pdf', sha256: 'def=', filename: 'nota.pdf' }),
          msg('wamid.AUD', 'audio', { id: '88', mime_type: 'audio/ogg; codecs=opus', sha256: 'ghi=', voice: true }),
          msg('wamid.REA', 'reaction', { message_id: 'wamid.OUT', emoji: '👍' }),
          msg('wamid.UNREA', 'reaction', { message_id: 'wamid.OUT' }),
          msg('wamid.INT', 'interactive', { type: 'button_reply', button_reply: { id: 'yes', title: 'Sim' } }),
          msg('wamid.BTN', 'button', { payload: 'STOP', text: 'Parar' }),
          msg('wamid.LOC', 'location', { latitude: -23.5, longitude: -46.6, name: 'Escritório', address: 'Av. Paulista, 1000' }),
          {
            from: WA_ID,
            id: 'wamid.UNS',
            timestamp: '1764072000',
            type: 'unsupported',
            errors: [{ code: 131051, title: 'Message type unknown' }],
          },
        ],
      }),
    );
    const byId = new Map(events().map((e) => [e.providerMessageId, e as InboundMessage]));
    expect(byId.get('wamid.IMG')).to.include({ type: 'image', text: 'recibo', isForwarded: true });
    expect(byId.get('wamid.IMG')?.media).to.deep.equal({ id: '1479537139650973', mimeType: 'image/jpeg', sha256: 'abc=' });
    expect(byId.get('wamid.DOC')?.media).to.deep.equal({ id: '77', mimeType: 'application/pdf', sha256: 'def=', fileName: 'nota.pdf' });
    expect(byId.get('wamid.AUD')?.media?.id).to.equal('88');
    expect(byId.get('wamid.AUD')?.text).to.equal(undefined);
    expect(byId.get('wamid.REA')?.reaction).to.deep.equal({ messageId: 'wamid.OUT', emoji: '👍' });
    expect(byId.get('wamid.UNREA')?.reaction).to.deep.equal({ messageId: 'wamid.OUT' });
    expect(byId.get('wamid.INT')).to.include({ type: 'interactive', text: 'Sim' });
    expect(byId.get('wamid.BTN')).to.include({ type: 'button', text: 'Parar' });
    expect(byId.get('wamid.LOC')).to.include({ type: 'location', text: 'Escritório, Av. Paulista, 1000' });
    expect(byId.get('wamid.UNS')).to.include({ type: 'unsupported' });
    expect(byId.get('wamid.UNS')?.payload.errors).to.deep.equal([{ code: 131051, title: 'Message type unknown' }]);
  });

  it('reads echoes of the business app as from_me and history sync as history', async () => {
    await send(
      callback(
        {
          message_echoes: [
            { from: '15550783881', to: WA_ID, id: 'wamid.ECHO', timestamp: '1764072000', type: 'text', text: { body: 'from the phone' } },
          ],
        },
        'smb_message_echoes',
      ),
    );
    await send(
      callback(
        {
          history: [
            {
              metadata: { phase: 0, chunk_order: 1, progress: 55 },
              threads: [
                {
                  id: WA_ID,
                  messages: [
                    {
                      from: WA_ID,
                      id: 'wamid.H1',
                      timestamp: '1700000000',
                      type: 'text',
                      text: { body: 'old question' },
                      history_context: { status: 'READ' },
                    },
                    { from: '15550783881', to: WA_ID, id: 'wamid.H2', timestamp: '1700000060', type: 'text', text: { body: 'old answer' } },
                  ],
                },
              ],
            },
          ],
        },
        'history',
      ),
    );
    const [echo, h1, h2] = events() as InboundMessage[];
    expect(echo).to.include({ providerMessageId: 'wamid.ECHO', fromMe: true, text: 'from the phone', isHistory: false });
    expect(echo?.contact).to.deep.equal({ id: WA_ID });
    expect(h1).to.include({ fromMe: false, isHistory: true, text: 'old question' });
    expect(h1?.history).to.deep.equal({ phase: 0, chunkOrder: 1, progress: 55 });
    expect(h2).to.include({ fromMe: true, isHistory: true });
    expect(h2?.contact.id).to.equal(WA_ID);
  });

  it('acknowledges fields that carry no chat events without calling the sink', async () => {
    const res = await send({
      object: 'whatsapp_business_account',
      entry: [{ id: '1', changes: [{ field: 'message_template_status_update', value: { event: 'APPROVED' } }] }],
    });
    expect(res.status).to.equal(200);
    expect(server.sink.calls).to.have.length(0);
  });

  it('leaves other paths and methods to the service', async () => {
    expect((await fetch(`${server.url}/providers/whatsapp/other`)).status).to.equal(404);
    const put = await fetch(`${server.url}${PATH}`, { method: 'PUT', body: '{}' });
    expect(put.status).to.equal(404);
    expect(((await put.json()) as { message: string }).message).to.equal(`Cannot PUT ${PATH}`);
  });
});
