import { Readable } from 'node:stream';
import { expect } from 'chai';
import { z } from 'zod';
import { providerConfigShape } from '../../src/providers/config.js';
import { InstagramMessagingProvider } from '../../src/providers/instagram/client.js';
import { ProviderError } from '../../src/providers/provider.js';
import { createProviderRegistry } from '../../src/providers/registry.js';
import { SANDBOX_TEMPLATES, SandboxProvider } from '../../src/providers/sandbox.js';
import { WhatsAppCloudProvider } from '../../src/providers/whatsapp/client.js';

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(ProviderError);
    return err as ProviderError;
  }
  throw new Error('expected a ProviderError');
}
const config = (env: Record<string, string> = {}) => z.object(providerConfigShape).parse(env);

describe('sandbox provider', () => {
  const wa = new SandboxProvider('WHATSAPP');

  it('accepts sends with a fresh wamid each time', async () => {
    const a = await wa.sendText({ to: '5511987654321', body: 'hi' });
    const b = await wa.sendMedia({ to: '5511987654321', kind: 'image', media: { from: 'url', url: 'https://cdn.example.com/a.png' } });
    expect(a.providerMessageId).to.match(/^wamid\.sandbox\./);
    expect(a.providerMessageId).to.not.equal(b.providerMessageId);
    expect(a).to.include({ status: 'sent', recipientId: '5511987654321' });
    expect((await new SandboxProvider('INSTAGRAM').sendText({ to: 'IGSID', body: 'x' })).providerMessageId).to.match(/^mid\.sandbox\./);
  });

  it('reads a streamed file to its end and refuses one shorter than declared', async () => {
    let read = 0;
    const stream = Readable.from([Buffer.alloc(1000), Buffer.alloc(500)]).on('data', (c: Buffer) => (read += c.length));
    await wa.sendMedia({
      to: '1',
      kind: 'document',
      media: { from: 'stream', stream, mimeType: 'application/pdf', fileName: 'a.pdf', size: 1500 },
    });
    expect(read).to.equal(1500);
    const err = await failure(
      wa.sendMedia({
        to: '1',
        kind: 'document',
        media: { from: 'stream', stream: Readable.from([Buffer.alloc(10)]), mimeType: 'application/pdf', fileName: 'b.pdf', size: 20 },
      }),
    );
    expect(err.failure).to.equal('unsupported');
  });

  it('accepts deletes, reads and typing', async () => {
    await wa.deleteMessage();
    await wa.markRead();
    await wa.setTyping();
  });

  it('sends a template of its catalog and refuses another with Graph code 132001', async () => {
    const known = SANDBOX_TEMPLATES[0];
    expect(known).to.not.equal(undefined);
    await wa.sendTemplate({ to: '1', template: { name: known?.name ?? '', language: known?.language ?? '' }, components: [] });
    const err = await failure(wa.sendTemplate({ to: '1', template: { name: 'nope', language: 'en_US' }, components: [] }));
    expect(err).to.include({ failure: 'rejected' });
    expect(err.detail.code).to.equal(132001);
  });

  it('lists its templates by category with working cursors in both directions', async () => {
    const utility = SANDBOX_TEMPLATES.filter((t) => t.category === 'UTILITY').map((t) => t.name);
    const first = await wa.listTemplates({ category: 'UTILITY', limit: 2 });
    expect(first.data.map((t) => t.name)).to.deep.equal(utility.slice(0, 2));
    expect(first.paging.cursors.before).to.equal(null);
    const second = await wa.listTemplates({ category: 'UTILITY', limit: 2, after: first.paging.cursors.after ?? '' });
    expect(second.data.map((t) => t.name)).to.deep.equal(utility.slice(2, 4));
    expect(second.paging.cursors.after).to.equal(null);
    const back = await wa.listTemplates({ category: 'UTILITY', limit: 2, before: second.paging.cursors.before ?? '' });
    expect(back.data.map((t) => t.name)).to.deep.equal(utility.slice(0, 2));
    expect(second.data[0]).to.include({ status: 'APPROVED', category: 'UTILITY' });
    expect((await failure(wa.listTemplates({ after: 'garbage' }))).failure).to.equal('rejected');
  });

  it('refuses templates on Instagram', async () => {
    const ig = new SandboxProvider('INSTAGRAM');
    expect((await failure(ig.listTemplates({}))).failure).to.equal('unsupported');
    expect(
      (await failure(ig.sendTemplate({ to: '1', template: { name: 'hello_world', language: 'en_US' }, components: [] }))).failure,
    ).to.equal('unsupported');
  });
});

describe('provider registry', () => {
  it('gives the sandbox to sandbox numbers without any credentials', () => {
    const registry = createProviderRegistry(config());
    expect(registry.forAccount({ provider: 'sandbox', channel: 'WHATSAPP', accountId: 'n1' })).to.be.instanceOf(SandboxProvider);
    expect(registry.forAccount({ provider: 'sandbox', channel: 'INSTAGRAM', accountId: 'a1' }).channel).to.equal('INSTAGRAM');
  });

  it('gives the Graph clients to numbers and accounts configured for them', () => {
    const registry = createProviderRegistry(config({ WHATSAPP_ACCESS_TOKEN: 'wa', INSTAGRAM_ACCESS_TOKEN: 'ig' }));
    expect(
      registry.forAccount({ provider: 'whatsapp_cloud', channel: 'WHATSAPP', accountId: '1', businessAccountId: '2' }),
    ).to.be.instanceOf(WhatsAppCloudProvider);
    expect(registry.forAccount({ provider: 'instagram_messaging', channel: 'INSTAGRAM', accountId: '3' })).to.be.instanceOf(
      InstagramMessagingProvider,
    );
  });

  it('names the missing variable when a provider is used without credentials', () => {
    const registry = createProviderRegistry(config());
    expect(() => registry.forAccount({ provider: 'whatsapp_cloud', channel: 'WHATSAPP', accountId: '1' })).to.throw(
      ProviderError,
      'whatsapp_cloud is not configured: WHATSAPP_ACCESS_TOKEN is not set',
    );
    expect(() => registry.forAccount({ provider: 'instagram_messaging', channel: 'INSTAGRAM', accountId: '1' })).to.throw(
      ProviderError,
      'INSTAGRAM_ACCESS_TOKEN',
    );
  });

  it('refuses a provider on the other channel', () => {
    const registry = createProviderRegistry(config({ WHATSAPP_ACCESS_TOKEN: 'wa' }));
    expect(() => registry.forAccount({ provider: 'whatsapp_cloud', channel: 'INSTAGRAM', accountId: '1' })).to.throw(
      ProviderError,
      'does not serve INSTAGRAM',
    );
  });

  it('defaults the Graph URLs to versioned Meta hosts and refuses a malformed one', () => {
    expect(config()).to.include({
      WHATSAPP_GRAPH_URL: 'https://graph.facebook.com/v23.0',
      INSTAGRAM_GRAPH_URL: 'https://graph.instagram.com/v23.0',
      PROVIDER_TIMEOUT_MS: 30_000,
    });
    expect(() => config({ WHATSAPP_GRAPH_URL: 'graph.facebook.com' })).to.throw();
  });
});
