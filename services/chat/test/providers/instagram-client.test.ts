import { Readable } from 'node:stream';
import { expect } from 'chai';
import { GraphClient } from '../../src/providers/graph.js';
import { InstagramMessagingProvider } from '../../src/providers/instagram/client.js';
import { ProviderError, providerErrorToAppError } from '../../src/providers/provider.js';
import { FakeGraph } from '../support/fake-graph.js';

const IGSID = '6984134871695463';

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(ProviderError);
    return err as ProviderError;
  }
  throw new Error('expected a ProviderError');
}

describe('Instagram Messaging client against a fake Graph server', () => {
  let graph: FakeGraph;
  let ig: InstagramMessagingProvider;

  beforeEach(async () => {
    graph = await new FakeGraph({ version: 'v23.0' }).start();
    ig = new InstagramMessagingProvider(
      new GraphClient({ baseUrl: graph.baseUrl, accessToken: graph.token, timeoutMs: 2000 }),
      graph.instagramAccountId,
    );
  });
  afterEach(async () => {
    await graph.stop();
  });

  it('sends a text as a reply to /{ig-id}/messages and returns the mid', async () => {
    const result = await ig.sendText({ to: IGSID, body: 'Oi!', replyTo: 'mid.QUOTED' });
    expect(graph.violations).to.deep.equal([]);
    const [req] = graph.requests;
    expect(req?.path).to.equal(`/v23.0/${graph.instagramAccountId}/messages`);
    expect(req?.headers.authorization).to.equal(`Bearer ${graph.token}`);
    expect(req?.json).to.deep.equal({ recipient: { id: IGSID }, message: { text: 'Oi!' }, reply_to: { mid: 'mid.QUOTED' } });
    expect(result).to.include({ recipientId: IGSID, status: 'sent' });
    expect(result.providerMessageId).to.have.length.above(10);
  });

  it('sends attachments by URL, a document as a file', async () => {
    await ig.sendMedia({ to: IGSID, kind: 'image', media: { from: 'url', url: 'https://cdn.example.com/a.png' } });
    await ig.sendMedia({ to: IGSID, kind: 'document', media: { from: 'url', url: 'https://cdn.example.com/a.pdf' } });
    expect(graph.violations).to.deep.equal([]);
    expect(graph.requests.map((r) => r.json)).to.deep.equal([
      { recipient: { id: IGSID }, message: { attachment: { type: 'image', payload: { url: 'https://cdn.example.com/a.png' } } } },
      { recipient: { id: IGSID }, message: { attachment: { type: 'file', payload: { url: 'https://cdn.example.com/a.pdf' } } } },
    ]);
  });

  it('refuses streamed files, captions, stickers, templates and deletion without calling Graph', async () => {
    const refusals = [
      () =>
        ig.sendMedia({
          to: IGSID,
          kind: 'image',
          media: { from: 'stream', stream: Readable.from([Buffer.alloc(1)]), mimeType: 'image/png', fileName: 'a.png' },
        }),
      () => ig.sendMedia({ to: IGSID, kind: 'image', media: { from: 'url', url: 'https://cdn.example.com/a.png' }, caption: 'x' }),
      () => ig.sendMedia({ to: IGSID, kind: 'sticker', media: { from: 'url', url: 'https://cdn.example.com/a.webp' } }),
      () => ig.sendTemplate(),
      () => ig.listTemplates(),
      () => ig.deleteMessage(),
    ];
    for (const refusal of refusals) {
      const err = await failure(refusal());
      expect(err.failure).to.equal('unsupported');
      expect(providerErrorToAppError(err).kind).to.equal('invalid');
    }
    expect(graph.requests).to.have.length(0);
  });

  it('marks seen and switches typing on and off with sender actions', async () => {
    await ig.markRead({ to: IGSID });
    await ig.setTyping({ to: IGSID, isTyping: true });
    await ig.setTyping({ to: IGSID, isTyping: false });
    expect(graph.violations).to.deep.equal([]);
    expect(graph.requests.map((r) => r.json)).to.deep.equal([
      { recipient: { id: IGSID }, sender_action: 'mark_seen' },
      { recipient: { id: IGSID }, sender_action: 'typing_on' },
      { recipient: { id: IGSID }, sender_action: 'typing_off' },
    ]);
  });

  it('downloads an attachment from its CDN URL without sending the token', async () => {
    const url = graph.addCdnFile('photo.jpg', Buffer.from('jpeg!'), 'image/jpeg');
    const media = await ig.downloadMedia({ url });
    const chunks: Buffer[] = [];
    for await (const c of media.stream) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).to.equal('jpeg!');
    expect(media).to.include({ mimeType: 'image/jpeg', size: 5 });
    expect(graph.violations).to.deep.equal([]);
  });

  it('reports an expired attachment URL as a rejection with its status', async () => {
    const err = await failure(ig.downloadMedia({ url: `${graph.origin}/cdn/gone.jpg` }));
    expect(err.failure).to.equal('rejected');
    expect(err.detail.httpStatus).to.equal(404);
  });

  it("turns Graph's refusal into a rejection with its code", async () => {
    graph.failNext({
      status: 400,
      error: { message: 'This message is sent outside of allowed window.', type: 'OAuthException', code: 10, error_subcode: 2534022 },
    });
    const err = await failure(ig.sendText({ to: IGSID, body: 'late' }));
    expect(err).to.include({ failure: 'rejected', message: 'This message is sent outside of allowed window.' });
    expect(err.detail).to.include({ code: 10, subcode: 2534022, httpStatus: 400 });
  });
});
