import { createHmac } from 'node:crypto';
import { inTransaction, nativePool } from '@svc/platform/db/native';
import { fileUrlSecret, signFileUrl } from '@svc/platform/files/signed-url';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import pg from 'pg';
import { client } from '../support/client.js';
import { PNG_BYTES, postMultipart } from '../support/files.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { type ReceivedRequest, startReceiver } from '../support/receiver.js';
import { salesRoutes } from '../support/sales.js';
import { type Stack, startStack } from '../support/stack.js';

/**
 * Delivery rule 4 (decision 0077): a stored delivery keeps its payload, and only private file URLs are regenerated just
 * before each attempt, valid 24 hours. The event is written to an outbox the way a service writing a message with
 * media would (no service issues file references yet); relay, JetStream, the webhooks service, the gateway's public
 * download route and the files service are all real.
 */
describe('files: private file URLs in webhook deliveries', function () {
  this.timeout(60_000);
  let stack: Stack;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let db: pg.Client;
  let t: Tenant;
  let attempts = 0;

  before(async () => {
    stack = await startStack({ webhooks: { WEBHOOK_RETRY_BASE_MS: '1100' } });
    // The first attempt fails (500): the retry must carry a URL signed again, later.
    receiver = await startReceiver(() => (++attempts === 1 ? 500 : 200));
    db = new pg.Client({ connectionString: stack.db.url });
    await db.connect();
    t = await seedTenant(client(stack.gatewayUrl).call, stack.adminToken);
  });
  after(async () => {
    await receiver?.close();
    await db?.end();
    await stack?.stop();
  });

  it('regenerates the signed URL before each attempt; it downloads the file, a forged or expired one is refused', async () => {
    const { call } = client(stack.gatewayUrl);
    const admin = adminOf(call, stack.adminToken);
    const lead = await salesRoutes(call, 'leads', () => t).created({ title: 'Media' });
    const upload = await postMultipart(`${stack.gatewayUrl}/integrations/external/files`, t.key.key, [
      { name: 'crm_lead_id', value: lead.id },
      { name: 'file', filename: 'photo.png', data: PNG_BYTES },
    ]);
    expect(upload.status, upload.text).to.equal(201);
    const fileId = (upload.body as { id: string }).id;
    const sub = (
      await admin('POST', `/companies/${t.company.id}/webhooks`, {
        url: receiver.url('/media'),
        events: ['chat.message_sent'],
        max_retries: 2,
      })
    ).body;
    const ctx = stack.services.files!.ctx;
    await inTransaction(await nativePool(ctx.orm), (tx) =>
      ctx.outbox.write(tx, [
        {
          companyId: t.company.id,
          eventKey: 'chat.message_sent',
          // A whole chat.message_sent payload (the contract test checks every delivery), its media a private file.
          payload: {
            id: '01a2b3c4-0000-7000-8000-000000000001',
            chat_id: '01a2b3c4-0000-7000-8000-000000000002',
            type: 'image',
            origin: 'API_OUTBOUND',
            from_me: true,
            sent_via: 'API',
            status: 'sent',
            error_code: null,
            error_message: null,
            body_text: null,
            transcription: null,
            content_payload: null,
            meta_timestamp: null,
            created_at: new Date().toISOString(),
            is_history: false,
            history_phase: null,
            history_chunk_order: null,
            history_progress: null,
            is_media_placeholder: false,
            is_forwarded: false,
            whatsapp_ai_agent_id: null,
            reactions: [],
            agent: null,
            user: null,
            media: { id: fileId, mime_type: 'image/png', file_name: 'photo.png', is_downloaded: true, url: `svc-private-file://${fileId}` },
            call: null,
          },
        },
      ]),
    );
    const got = await eventually(() => (receiver.received.length >= 2 ? receiver.received.slice(0, 2) : undefined), 20_000);
    const urlOf = (r: ReceivedRequest) => new URL(r.body.payload.media.url);
    const [first, second] = got.map(urlOf) as [URL, URL];
    for (const [r, url] of [
      [got[0]!, first],
      [got[1]!, second],
    ] as const) {
      expect(url.origin + url.pathname).to.equal(`${stack.gatewayUrl}/public/files/${fileId}`);
      // Valid 24 hours from the attempt.
      expect(Number(url.searchParams.get('expires')) * 1000 - Date.now()).to.be.within(24 * 3600e3 - 60e3, 24 * 3600e3);
      // Signed over the body as sent, URL included.
      const mac = createHmac('sha256', sub.secret).update(r.raw).digest('hex');
      expect(r.headers['x-svc-signature']).to.equal(`sha256=${mac}`);
    }
    expect(Number(second.searchParams.get('expires'))).to.be.greaterThan(Number(first.searchParams.get('expires')));
    expect(got[1]!.body.event_id).to.equal(got[0]!.body.event_id);
    // The stored delivery keeps the reference, not a URL.
    const stored = await db.query(`select body from webhooks.deliveries where subscription_id = $1`, [sub.id]);
    expect(stored.rows[0].body).to.contain(`svc-private-file://${fileId}`);

    const download = await fetch(second);
    expect(download.status).to.equal(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(PNG_BYTES)).to.equal(true);
    const forged = new URL(second);
    forged.searchParams.set('expires', String(Number(second.searchParams.get('expires')) + 3600));
    expect((await fetch(forged)).status).to.equal(404);
    // Correctly signed, but expired: refused too.
    const secret = fileUrlSecret(undefined, stack.env.IDENTITY_TOKEN_SECRET!);
    const expired = signFileUrl(`${stack.gatewayUrl}/public/files`, secret, fileId, new Date(Date.now() - 10_000));
    expect((await fetch(expired)).status).to.equal(404);
    const fresh = signFileUrl(`${stack.gatewayUrl}/public/files`, secret, fileId, new Date(Date.now() + 60_000));
    expect((await fetch(fresh)).status).to.equal(200);
  });
});
