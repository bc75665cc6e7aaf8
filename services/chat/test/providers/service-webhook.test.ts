import { serviceConfigSchema } from '@svc/platform/config';
import { type RunningService, type ServiceDefinition, startService } from '@svc/platform/service';
import type { TestDatabase } from '@svc/platform/testing';
import { serviceTestEnv } from '@svc/platform/testing-suite';
import { expect } from 'chai';
import { providerConfigShape } from '../../src/providers/config.js';
import { providerWebhooks } from '../../src/providers/webhook.js';
import { chatService } from '../../src/service.js';
import { RecordingSink, SECRETS, signature } from './webhook-support.js';

/**
 * The wiring the chat service uses: provider settings in its config schema, the webhook as its unauthenticated
 * routes. Served by the real service runtime, callbacks need no identity token while every other route still does.
 */
describe('chat service: provider webhook served by the platform runtime', () => {
  const sink = new RecordingSink();
  const configSchema = serviceConfigSchema.extend(providerConfigShape);
  const def: ServiceDefinition<typeof configSchema> = {
    name: chatService.name,
    db: chatService.db,
    configSchema,
    unauthenticated: (ctx) => providerWebhooks({ config: ctx.config, sink, logger: ctx.logger }),
  };
  let running: RunningService;
  let db: TestDatabase;
  before(async () => {
    const test = await serviceTestEnv(SECRETS);
    db = test.db;
    running = await startService(def, test.env);
  });
  after(async () => {
    await running?.stop();
    await db?.drop();
  });

  it('takes a signed callback without an identity token and hands its events to the sink', async () => {
    const raw = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '1',
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { phone_number_id: '106540352242922' },
                statuses: [{ id: 'wamid.S', status: 'delivered', timestamp: '1764072000', recipient_id: '5511987654321' }],
              },
            },
          ],
        },
      ],
    });
    const res = await fetch(`${running.httpUrl}/providers/whatsapp/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature(raw, SECRETS.WHATSAPP_APP_SECRET) },
      body: raw,
    });
    expect(res.status).to.equal(200);
    expect(sink.calls.flat().map((e) => [e.kind, e.providerMessageId])).to.deep.equal([['status', 'wamid.S']]);
  });

  it('still answers every other route without an identity token with 401', async () => {
    const res = await fetch(`${running.httpUrl}/providers/whatsapp/other`, { method: 'POST', body: '{}' });
    expect(res.status).to.equal(401);
  });
});
