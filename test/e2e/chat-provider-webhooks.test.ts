import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type InboundEvent, providerConfigShape, providerWebhooks } from '@svc/chat/providers';
import { type RunningGateway, startGateway } from '@svc/gateway';
import { createLogger } from '@svc/platform/logging';
import { TEST_REDIS_URL } from '@svc/platform/testing';
import { expect } from 'chai';
import { z } from 'zod';

const SECRET = 'gateway-test-app-secret';
const VERIFY = 'gateway-test-verify';

/**
 * Meta reaches the providers' webhook through the gateway's public `/providers/*` route, with no integration
 * key. The chat side here is the real webhook handler on loopback (with a sink that records), so what is
 * checked is the gateway's part: no key asked, the raw body streamed on byte for byte (the signature holds),
 * the chat service's answers passed back, and nothing else opened up.
 */
describe('gateway: providers webhook route', () => {
  let gateway: RunningGateway;
  let chat: Server;
  const received: InboundEvent[][] = [];
  const seen: { url: string; headers: IncomingMessage['headers'] }[] = [];

  before(async () => {
    const config = z
      .object(providerConfigShape)
      .parse({ WHATSAPP_APP_SECRET: SECRET, WHATSAPP_VERIFY_TOKEN: VERIFY, INSTAGRAM_APP_SECRET: SECRET, INSTAGRAM_VERIFY_TOKEN: VERIFY });
    const handle = providerWebhooks({
      config,
      sink: { receive: async (events) => void received.push(events) },
      logger: createLogger('chat', 'silent'),
    });
    chat = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      if (!handle(req, res))
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"statusCode":404,"message":"Cannot reach","error":"Not Found"}');
    });
    await new Promise<void>((resolve) => chat.listen(0, '127.0.0.1', resolve));
    const chatUrl = `http://127.0.0.1:${(chat.address() as AddressInfo).port}`;
    const unused = 'http://127.0.0.1:9';
    gateway = await startGateway({
      PORT: '0',
      METRICS_PORT: '0',
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `t${randomBytes(4).toString('hex')}:`,
      ADMIN_TOKEN: randomBytes(16).toString('hex'),
      IDENTITY_TOKEN_SECRET: randomBytes(32).toString('hex'),
      CRM_URL: unused,
      TASKS_URL: unused,
      CHAT_URL: chatUrl,
      FILES_URL: unused,
      WEBHOOKS_URL: unused,
      CRM_GRPC_URL: '127.0.0.1:9',
      LOG_LEVEL: 'silent',
    });
  });
  after(async () => {
    await gateway?.stop();
    chat?.closeAllConnections();
    await new Promise((resolve) => chat?.close(resolve));
  });

  it('passes the verification handshake through without a key', async () => {
    const res = await fetch(`${gateway.url}/providers/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=${VERIFY}&hub.challenge=4242`);
    expect(res.status).to.equal(200);
    expect(await res.text()).to.equal('4242');
    expect(seen.at(-1)?.url).to.equal(`/providers/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=${VERIFY}&hub.challenge=4242`);
  });

  it('streams a signed callback on byte for byte, so its signature holds at the chat service', async () => {
    const raw = `{"object":"instagram",  "entry":[{"id":"17841405822304914","time":1764072000000,"messaging":[{"sender":{"id":"IGSID1"},"recipient":{"id":"17841405822304914"},"timestamp":1764072000000,"message":{"mid":"mid.GW","text":"ol\\u00e1 \u00e9"}}]}]}`;
    const res = await fetch(`${gateway.url}/providers/instagram/webhook`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`,
      },
      body: raw,
    });
    expect(res.status).to.equal(200);
    expect(await res.text()).to.equal('EVENT_RECEIVED');
    expect(received.at(-1)?.map((e) => [e.providerMessageId, e.kind === 'message' ? e.text : undefined])).to.deep.equal([
      ['mid.GW', 'olá é'],
    ]);
  });

  it("passes the chat service's refusal of a bad signature back unchanged", async () => {
    const before = received.length;
    const res = await fetch(`${gateway.url}/providers/whatsapp/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` },
      body: '{"object":"whatsapp_business_account","entry":[]}',
    });
    expect(res.status).to.equal(403);
    expect(await res.json()).to.deep.equal({
      statusCode: 403,
      message: 'x-hub-signature-256: does not match the body',
      error: 'Forbidden',
    });
    expect(received.length).to.equal(before);
  });

  it('forwards no identity and opens nothing else without a key', async () => {
    const last = seen.at(-1);
    expect(last?.headers['x-svc-identity']).to.equal('');
    const count = seen.length;
    const res = await fetch(`${gateway.url}/provider/whatsapp/webhook`);
    expect(res.status).to.equal(404);
    const external = await fetch(`${gateway.url}/integrations/external/chats`);
    expect(external.status).to.equal(401);
    expect(seen.length).to.equal(count);
  });
});
