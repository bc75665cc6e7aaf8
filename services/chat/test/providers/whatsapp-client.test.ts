import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { GraphClient } from '../../src/providers/graph.js';
import { type ChatProvider, ProviderError, providerErrorToAppError } from '../../src/providers/provider.js';
import { templateFieldsToComponents } from '../../src/providers/template-fields.js';
import { WhatsAppCloudProvider } from '../../src/providers/whatsapp/client.js';
import { FakeGraph } from '../support/fake-graph.js';

const TO = '5511987654321';

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(ProviderError);
    return err as ProviderError;
  }
  throw new Error('expected a ProviderError');
}

describe('WhatsApp Cloud client against a fake Graph server', () => {
  let graph: FakeGraph;
  let wa: WhatsAppCloudProvider;
  const pnid = () => graph.phoneNumberIds[0] as string;
  const bodyOf = <T>(i: number) => graph.requests[i]?.json as T;
  const sent = () => graph.requests.filter((r) => r.path.endsWith('/messages'));

  beforeEach(async () => {
    graph = await new FakeGraph().start();
    wa = new WhatsAppCloudProvider(
      new GraphClient({ baseUrl: graph.baseUrl, accessToken: graph.token, timeoutMs: 2000 }),
      pnid(),
      graph.businessAccountId,
    );
  });
  afterEach(async () => {
    await graph.stop();
  });

  it('sends a text as a reply and returns the wamid and the resolved wa_id', async () => {
    const result = await wa.sendText({ to: `+${TO}`, body: 'Olá!', replyTo: 'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjQ=' });
    expect(graph.violations).to.deep.equal([]);
    const [req] = graph.requests;
    expect(req?.method).to.equal('POST');
    expect(req?.path).to.equal(`/v23.0/${pnid()}/messages`);
    expect(req?.headers.authorization).to.equal(`Bearer ${graph.token}`);
    expect(req?.json).to.deep.equal({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: `+${TO}`,
      type: 'text',
      text: { body: 'Olá!', preview_url: false },
      context: { message_id: 'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjQ=' },
    });
    expect(result.providerMessageId).to.match(/^wamid\./);
    expect(result.recipientId).to.equal(TO);
    expect(result.status).to.equal('sent');
  });

  it('sends a template with header media by URL, ordered body parameters and a quick-reply button', async () => {
    const components = templateFieldsToComponents([
      { component: 'BODY', type: 'TEXT', value: 'second', index: 2 },
      { component: 'HEADER', type: 'IMAGE', value: 'https://cdn.example.com/banner.png' },
      { component: 'BODY', type: 'TEXT', value: 'first', index: 1 },
      { component: 'BUTTON', type: 'PAYLOAD', value: 'STOP', button_index: 1 },
    ]);
    await wa.sendTemplate({ to: TO, template: { name: 'order_update', language: 'pt_BR' }, components });
    expect(graph.violations).to.deep.equal([]);
    expect(bodyOf<{ template: unknown }>(0).template).to.deep.equal({
      name: 'order_update',
      language: { code: 'pt_BR' },
      components: [
        { type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example.com/banner.png' } }] },
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'first' },
            { type: 'text', text: 'second' },
          ],
        },
        { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'STOP' }] },
      ],
    });
  });

  it('sends a carousel template with its cards', async () => {
    const components = templateFieldsToComponents([
      { component: 'BODY', value: 'Ana', index: 1 },
      { component: 'HEADER', type: 'IMAGE', value: 'https://cdn.example.com/1.png', card_index: 0 },
      { component: 'BUTTON', type: 'PAYLOAD', value: 'BUY-1', button_index: 0, card_index: 0 },
      { component: 'HEADER', type: 'IMAGE', value: 'https://cdn.example.com/2.png', card_index: 1 },
    ]);
    await wa.sendTemplate({ to: TO, template: { name: 'catalog', language: 'en_US' }, components });
    expect(graph.violations).to.deep.equal([]);
    const template = bodyOf<{ template: { components: { type: string; cards?: unknown[] }[] } }>(0).template;
    expect(template.components[1]).to.deep.equal({
      type: 'carousel',
      cards: [
        {
          card_index: 0,
          components: [
            { type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example.com/1.png' } }] },
            { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'BUY-1' }] },
          ],
        },
        {
          card_index: 1,
          components: [{ type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example.com/2.png' } }] }],
        },
      ],
    });
  });

  it('sends a template without parameters with no components key', async () => {
    await wa.sendTemplate({ to: TO, template: { name: 'hello_world', language: 'en_US' }, components: [] });
    expect(graph.violations).to.deep.equal([]);
    expect(bodyOf<{ template: object }>(0).template).to.deep.equal({ name: 'hello_world', language: { code: 'en_US' } });
  });

  it('uploads an attached header file first and sends the template with its media id', async () => {
    const bytes = Buffer.from('%PDF-1.4 invoice');
    const components = templateFieldsToComponents([{ component: 'BODY', value: 'Ana', index: 1 }], {
      from: 'stream',
      stream: Readable.from([bytes]),
      mimeType: 'application/pdf',
      fileName: 'invoice.pdf',
      size: bytes.length,
    });
    await wa.sendTemplate({ to: TO, template: { name: 'invoice', language: 'en_US' }, components });
    expect(graph.violations).to.deep.equal([]);
    const [upload] = graph.requests;
    expect(upload?.path).to.equal(`/v23.0/${pnid()}/media`);
    const header = bodyOf<{ template: { components: { type: string; parameters: { document: { id: string } }[] }[] } }>(1).template
      .components[0];
    expect(header?.type).to.equal('header');
    const document = header?.parameters[0]?.document;
    expect(document).to.deep.equal({ id: document?.id, filename: 'invoice.pdf' });
    expect(document?.id).to.match(/^\d+$/);
    expect(upload?.upload?.sha256).to.equal(createHash('sha256').update(bytes).digest('hex'));
  });

  it('sends media by URL with a caption and by an uploaded id', async () => {
    await wa.sendMedia({ to: TO, kind: 'image', media: { from: 'url', url: 'https://cdn.example.com/a.jpg' }, caption: 'look' });
    await wa.sendMedia({ to: TO, kind: 'audio', media: { from: 'provider_id', id: '1234567890' } });
    expect(graph.violations).to.deep.equal([]);
    expect(sent().map((r) => r.json)).to.deep.equal([
      {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: TO,
        type: 'image',
        image: { link: 'https://cdn.example.com/a.jpg', caption: 'look' },
      },
      { messaging_product: 'whatsapp', recipient_type: 'individual', to: TO, type: 'audio', audio: { id: '1234567890' } },
    ]);
  });

  it('streams a document of known size to /media as multipart, then sends it by id with its file name', async () => {
    const bytes = Buffer.alloc(300_000, 7);
    const result = await wa.sendMedia({
      to: TO,
      kind: 'document',
      media: {
        from: 'stream',
        stream: Readable.from([bytes.subarray(0, 100_000), bytes.subarray(100_000)]),
        mimeType: 'application/pdf',
        fileName: 'contrato "final".pdf',
        size: bytes.length,
      },
      caption: 'contrato',
    });
    expect(graph.violations).to.deep.equal([]);
    const [upload] = graph.requests;
    expect(upload?.method).to.equal('POST');
    expect(upload?.headers['content-length']).to.not.equal(undefined);
    expect(upload?.upload).to.include({
      fileField: 'file',
      mimeType: 'application/pdf',
      bytes: bytes.length,
      fileName: 'contrato %22final%22.pdf',
    });
    expect(upload?.upload?.fields).to.deep.equal({ messaging_product: 'whatsapp', type: 'application/pdf' });
    expect(upload?.upload?.sha256).to.equal(createHash('sha256').update(bytes).digest('hex'));
    const doc = bodyOf<{ document: { id: string; caption: string; filename: string } }>(1).document;
    expect(doc.caption).to.equal('contrato');
    expect(doc.filename).to.equal('contrato "final".pdf');
    expect(doc.id).to.match(/^\d+$/);
    expect(result.providerMessageId).to.match(/^wamid\./);
  });

  it('streams a file of unknown length chunked', async () => {
    async function* chunks() {
      for (let i = 0; i < 10; i++) yield Buffer.alloc(10_000, i);
    }
    await wa.sendMedia({
      to: TO,
      kind: 'video',
      media: { from: 'stream', stream: Readable.from(chunks()), mimeType: 'video/mp4', fileName: 'clip.mp4' },
    });
    expect(graph.violations).to.deep.equal([]);
    expect(graph.requests[0]?.headers['transfer-encoding']).to.equal('chunked');
    expect(graph.requests[0]?.upload?.bytes).to.equal(100_000);
  });

  it('refuses a stream longer than its declared size and sends no message', async () => {
    const err = await failure(
      wa.sendMedia({
        to: TO,
        kind: 'image',
        media: { from: 'stream', stream: Readable.from([Buffer.alloc(2000)]), mimeType: 'image/png', fileName: 'x.png', size: 1000 },
      }),
    );
    expect(err.failure).to.equal('unsupported');
    expect(err.message).to.contain('x.png');
    expect(sent()).to.have.length(0);
  });

  it('refuses a caption on audio without calling Graph', async () => {
    const err = await failure(
      wa.sendMedia({ to: TO, kind: 'audio', media: { from: 'url', url: 'https://cdn.example.com/a.ogg' }, caption: 'no' }),
    );
    expect(err.failure).to.equal('unsupported');
    expect(graph.requests).to.have.length(0);
  });

  it('marks a message read and shows typing in answer to it; hiding typing sends nothing', async () => {
    const wamid = 'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABIYFjNFQjA=';
    await wa.markRead({ to: TO, messageId: wamid });
    await wa.setTyping({ to: TO, isTyping: true, messageId: wamid });
    await wa.setTyping({ to: TO, isTyping: false, messageId: wamid });
    expect(graph.violations).to.deep.equal([]);
    expect(graph.requests.map((r) => r.json)).to.deep.equal([
      { messaging_product: 'whatsapp', status: 'read', message_id: wamid },
      { messaging_product: 'whatsapp', status: 'read', message_id: wamid, typing_indicator: { type: 'text' } },
    ]);
    const err = await failure(wa.setTyping({ to: TO, isTyping: true }));
    expect(err.failure).to.equal('unsupported');
  });

  it('refuses deletion as unsupported, which the API answers with 400', async () => {
    const err = await failure(wa.deleteMessage());
    expect(err.failure).to.equal('unsupported');
    expect(graph.requests).to.have.length(0);
    const app = providerErrorToAppError(err);
    expect(app.kind).to.equal('invalid');
    expect(app.message).to.equal('WhatsApp Cloud API cannot delete a message the business sent');
  });

  it('downloads inbound media through its Graph URL with the token', async () => {
    const bytes = Buffer.from('\xff\xd8\xff jpeg bytes');
    graph.addMedia('987654321', bytes, 'image/jpeg');
    const media = await wa.downloadMedia({ id: '987654321' });
    const chunks: Buffer[] = [];
    for await (const c of media.stream) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(bytes)).to.equal(true);
    expect(media).to.include({ mimeType: 'image/jpeg', size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    expect(graph.violations).to.deep.equal([]);
    expect(graph.requests[0]?.query).to.deep.equal({ phone_number_id: pnid() });
    expect(graph.requests[1]?.headers.authorization).to.equal(`Bearer ${graph.token}`);
  });

  it('lists templates by category and pages with the cursors', async () => {
    for (let i = 0; i < 5; i++)
      graph.templates.push({
        id: String(i),
        name: `t${i}`,
        language: 'en_US',
        status: 'APPROVED',
        category: i % 2 ? 'UTILITY' : 'MARKETING',
        components: [],
      });
    const first = await wa.listTemplates({ category: 'MARKETING', limit: 2 });
    expect(first.data.map((t) => t.name)).to.deep.equal(['t0', 't2']);
    expect(first.paging.cursors.after).to.be.a('string');
    const second = await wa.listTemplates({ category: 'MARKETING', limit: 2, after: first.paging.cursors.after ?? '' });
    expect(second.data.map((t) => t.name)).to.deep.equal(['t4']);
    expect(graph.violations).to.deep.equal([]);
    expect(graph.requests[0]?.path).to.equal(`/v23.0/${graph.businessAccountId}/message_templates`);
    expect(graph.requests[0]?.query).to.include({
      category: 'MARKETING',
      limit: '2',
      fields: 'id,name,language,status,category,components',
    });
  });

  it("turns Graph's error into a rejection with its code and subcode", async () => {
    graph.failNext({
      status: 400,
      error: {
        message: 'Re-engagement message',
        type: 'OAuthException',
        code: 131047,
        error_subcode: 2494010,
        fbtrace_id: 'Az8or2yhqkZfEZ-_4Qn_Bam',
      },
    });
    const err = await failure(wa.sendText({ to: TO, body: 'late' }));
    expect(err.failure).to.equal('rejected');
    expect(err.message).to.equal('Re-engagement message');
    expect(err.detail).to.deep.equal({ code: 131047, subcode: 2494010, httpStatus: 400, traceId: 'Az8or2yhqkZfEZ-_4Qn_Bam' });
    expect(providerErrorToAppError(err).kind).to.equal('invalid');
  });

  it('reports a Graph 5xx as unreachable with an unknown outcome (500 on the API)', async () => {
    graph.failNext({ status: 503, error: { message: 'Service temporarily unavailable', code: 2 } });
    const err = await failure(wa.sendText({ to: TO, body: 'x' }));
    expect(err.failure).to.equal('unreachable');
    expect(err.detail.outcomeUnknown).to.equal(true);
    expect(providerErrorToAppError(err).kind).to.equal('internal');
  });

  it('times out a send Graph never answers as an unknown outcome', async () => {
    const slow = new WhatsAppCloudProvider(
      new GraphClient({ baseUrl: graph.baseUrl, accessToken: graph.token, timeoutMs: 300 }),
      pnid(),
      undefined,
    );
    graph.failNext({ status: 0, hang: true });
    const err = await failure(slow.sendText({ to: TO, body: 'x' }));
    expect(err.failure).to.equal('unreachable');
    expect(err.detail.outcomeUnknown).to.equal(true);
  });

  it('reports a refused connection as unreachable and surely not sent', async () => {
    const base = graph.baseUrl;
    await graph.stop();
    const gone: ChatProvider = new WhatsAppCloudProvider(
      new GraphClient({ baseUrl: base, accessToken: 't', timeoutMs: 1000 }),
      '1',
      undefined,
    );
    const err = await failure(gone.sendText({ to: TO, body: 'x' }));
    expect(err.failure).to.equal('unreachable');
    expect(err.detail.outcomeUnknown).to.equal(false);
  });

  it("reports a token Graph refuses as our failure (500), not the caller's, and the fake records it", async () => {
    const wrong = new WhatsAppCloudProvider(
      new GraphClient({ baseUrl: graph.baseUrl, accessToken: 'stolen', timeoutMs: 1000 }),
      pnid(),
      undefined,
    );
    const err = await failure(wrong.sendText({ to: TO, body: 'x' }));
    expect(err).to.include({ failure: 'unreachable' });
    expect(err.detail).to.include({ code: 190, httpStatus: 401 });
    expect(err.detail.outcomeUnknown).to.equal(undefined);
    expect(providerErrorToAppError(err).kind).to.equal('internal');
    expect(graph.violations).to.have.length(1);
  });

  it('reports a rate limit as our failure (500)', async () => {
    graph.failNext({ status: 400, error: { message: '(#130429) Rate limit hit', type: 'OAuthException', code: 130429 } });
    const err = await failure(wa.sendText({ to: TO, body: 'x' }));
    expect(err.failure).to.equal('unreachable');
    expect(err.detail.code).to.equal(130429);
  });

  it("passes the file stream's own failure through unchanged (the caller's error) and sends no message", async () => {
    const limit = new Error('file: larger than 16 MB');
    async function* tooBig() {
      yield Buffer.alloc(1000);
      throw limit;
    }
    try {
      await wa.sendMedia({
        to: TO,
        kind: 'audio',
        media: { from: 'stream', stream: Readable.from(tooBig()), mimeType: 'audio/ogg', fileName: 'a.ogg' },
      });
      expect.fail('the upload should fail');
    } catch (err) {
      expect(err).to.equal(limit);
    }
    expect(sent()).to.have.length(0);
  });
});
