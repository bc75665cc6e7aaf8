import { expect } from 'chai';
import type { InboundMessage, InboundStatus } from '../../src/providers/provider.js';
import { SECRETS, signature, startWebhookServer, type WebhookServer } from './webhook-support.js';

const PATH = '/providers/instagram/webhook';
const IG = '17841405822304914';
const IGSID = '6984134871695463';
const T = 1764072000123;

const callback = (...messaging: Record<string, unknown>[]) => ({ object: 'instagram', entry: [{ id: IG, time: T, messaging }] });
const fromCustomer = (extra: Record<string, unknown>) => ({ sender: { id: IGSID }, recipient: { id: IG }, timestamp: T, ...extra });

describe('Instagram webhook', () => {
  let server: WebhookServer;
  beforeEach(async () => {
    server = await startWebhookServer();
  });
  afterEach(() => server.stop());

  const send = (body: unknown, secret = SECRETS.INSTAGRAM_APP_SECRET) => {
    const raw = JSON.stringify(body);
    return server.post(PATH, raw, { 'x-hub-signature-256': signature(raw, secret) });
  };
  const events = () => server.sink.calls.flat();

  it('answers the verification handshake with its own verify token only', async () => {
    const ok = await fetch(`${server.url}${PATH}?hub.mode=subscribe&hub.verify_token=${SECRETS.INSTAGRAM_VERIFY_TOKEN}&hub.challenge=77`);
    expect(ok.status).to.equal(200);
    expect(await ok.text()).to.equal('77');
    const wrong = await fetch(`${server.url}${PATH}?hub.mode=subscribe&hub.verify_token=${SECRETS.WHATSAPP_VERIFY_TOKEN}&hub.challenge=77`);
    expect(wrong.status).to.equal(403);
  });

  it('checks the signature with the Instagram app secret', async () => {
    const body = callback(fromCustomer({ message: { mid: 'mid.1', text: 'x' } }));
    expect((await send(body, SECRETS.WHATSAPP_APP_SECRET)).status).to.equal(403);
    expect(server.sink.calls).to.have.length(0);
    expect((await send(body)).status).to.equal(200);
  });

  it('turns a text message into an event with the IGSID as the contact and a millisecond timestamp', async () => {
    const body = callback(
      fromCustomer({ message: { mid: 'aWdfZAG1faXRlbToxOklHTWVzc2FnZAU', text: 'Olá', reply_to: { mid: 'mid.QUOTED' } } }),
    );
    expect((await send(body)).status).to.equal(200);
    expect(events()).to.deep.equal([
      {
        kind: 'message',
        channel: 'INSTAGRAM',
        provider: 'instagram_messaging',
        accountId: IG,
        providerMessageId: 'aWdfZAG1faXRlbToxOklHTWVzc2FnZAU',
        contact: { id: IGSID },
        fromMe: false,
        type: 'text',
        text: 'Olá',
        quotedMessageId: 'mid.QUOTED',
        isForwarded: false,
        isHistory: false,
        timestamp: new Date(T),
        payload: body.entry[0]?.messaging[0],
      },
    ]);
  });

  it('reads attachments, echoes, reactions, postbacks, unsupported messages and reads', async () => {
    await send(
      callback(
        fromCustomer({
          message: {
            mid: 'mid.IMG',
            attachments: [{ type: 'image', payload: { url: 'https://lookaside.fbsbx.com/ig_messaging_cdn/?asset_id=1' } }],
          },
        }),
        fromCustomer({ message: { mid: 'mid.FILE', attachments: [{ type: 'file', payload: { url: 'https://lookaside.fbsbx.com/f' } }] } }),
        {
          sender: { id: IG },
          recipient: { id: IGSID },
          timestamp: T,
          message: { mid: 'mid.ECHO', text: 'sent from the app', is_echo: true },
        },
        fromCustomer({ reaction: { mid: 'mid.OUT', action: 'react', reaction: 'love', emoji: '❤️' } }),
        fromCustomer({ reaction: { mid: 'mid.OUT', action: 'unreact' } }),
        fromCustomer({ postback: { mid: 'mid.PB', title: 'Falar com vendas', payload: 'SALES' } }),
        fromCustomer({ message: { mid: 'mid.UNS', is_unsupported: true } }),
        fromCustomer({ message: { mid: 'mid.DEL', is_deleted: true } }),
        fromCustomer({ read: { mid: 'mid.OUT' } }),
      ),
    );
    const got = events();
    expect(got.map((e) => e.providerMessageId)).to.deep.equal([
      'mid.IMG',
      'mid.FILE',
      'mid.ECHO',
      `reaction:mid.OUT:${IGSID}:${T}`,
      `reaction:mid.OUT:${IGSID}:${T}`,
      'mid.PB',
      'mid.UNS',
      'mid.OUT',
    ]);
    const [img, file, echo, react, unreact, postback, unsupported] = got as InboundMessage[];
    expect(img).to.include({ type: 'image' });
    expect(img?.media).to.deep.equal({ url: 'https://lookaside.fbsbx.com/ig_messaging_cdn/?asset_id=1' });
    expect(file).to.include({ type: 'document' });
    expect(echo).to.include({ fromMe: true, text: 'sent from the app' });
    expect(echo?.contact).to.deep.equal({ id: IGSID });
    expect(react?.reaction).to.deep.equal({ messageId: 'mid.OUT', emoji: '❤️' });
    expect(unreact?.reaction).to.deep.equal({ messageId: 'mid.OUT' });
    expect(postback).to.include({ type: 'button', text: 'Falar com vendas' });
    expect(unsupported).to.include({ type: 'unsupported' });
    expect(got[7]).to.deep.include({ kind: 'status', status: 'read', recipientId: IGSID, errors: [] } satisfies Partial<InboundStatus>);
  });

  it('hands a repeated callback to the sink again with the same mid', async () => {
    const body = callback(fromCustomer({ message: { mid: 'mid.DUP', text: 'again' } }));
    await send(body);
    await send(body);
    expect(server.sink.calls.map((c) => c.map((e) => e.providerMessageId))).to.deep.equal([['mid.DUP'], ['mid.DUP']]);
  });

  it('refuses a callback of another object with 400', async () => {
    const res = await send({ object: 'whatsapp_business_account', entry: [] });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { message: string }).message).to.match(/^object: /);
  });
});
