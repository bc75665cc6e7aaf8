import http from 'node:http';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { PNG_BYTES, postMultipart } from '../support/files.js';
import { seedTenant, type Tenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';

const FILES_PER_ADDRESS = 5;
const FORM_PER_ADDRESS = 4;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** A GET sent from `localAddress` (another loopback address is another client to the gateway). */
function getFrom(localAddress: string, url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { localAddress, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: unknown = text;
        if ((res.headers['content-type'] ?? '').includes('json')) body = JSON.parse(text);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('error', reject);
  });
}

/**
 * The per-address limits of the gateway's public routes (decisions 0082, 0137): signed file downloads and the
 * satisfaction form, each counted per client address through Redis, apart from each other.
 */
describe('public routes: per-address rate limits at the gateway', () => {
  let stack: Stack;
  let t: Tenant;
  let fileUrl: string;
  let formUrl: string;

  before(async () => {
    stack = await startStack({
      gateway: {
        PUBLIC_FILES_RATE_LIMIT_PER_MINUTE: String(FILES_PER_ADDRESS),
        PUBLIC_RATE_LIMIT_PER_MINUTE: String(FORM_PER_ADDRESS),
        PUBLIC_TOKEN_RATE_LIMIT_PER_MINUTE: '1000',
      },
    });
    const { call } = client(stack.gatewayUrl);
    t = await seedTenant(call, stack.adminToken);
    const lead = (await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Limits' } })).body;
    const upload = await postMultipart(`${stack.gatewayUrl}/integrations/external/files`, t.key.key, [
      { name: 'crm_lead_id', value: lead.id },
      { name: 'file', filename: 'a.png', data: PNG_BYTES },
    ]);
    expect(upload.status, upload.text).to.equal(201);
    fileUrl = (upload.body as any).url;
    const link = await call('POST', '/integrations/external/satisfaction/links', { token: t.key.key, body: { crm_lead_id: lead.id } });
    expect(link.status, link.text).to.equal(201);
    formUrl = link.body.url;
  });
  after(async () => {
    await stack?.stop();
  });

  it(`signed downloads: ${FILES_PER_ADDRESS} a minute per address, then 429 with the error body and Retry-After; another address is unaffected`, async () => {
    for (let i = 0; i < FILES_PER_ADDRESS; i++) {
      const ok = await getFrom('127.0.0.1', fileUrl);
      expect(ok.status, `download ${i + 1}`).to.equal(200);
    }
    const limited = await getFrom('127.0.0.1', fileUrl);
    expect(limited.status).to.equal(429);
    expect(limited.body).to.deep.equal({
      statusCode: 429,
      message: 'Too many file downloads; try again later',
      error: 'Too Many Requests',
    });
    expect(Number(limited.headers['retry-after'])).to.be.within(1, 60);
    // No proxy is trusted by default: a client's own X-Forwarded-For or Forwarded changes nothing (decision 0152).
    expect((await getFrom('127.0.0.1', fileUrl, { 'x-forwarded-for': '198.51.100.1' })).status).to.equal(429);
    expect((await getFrom('127.0.0.1', fileUrl, { forwarded: 'for=198.51.100.2' })).status).to.equal(429);
    // A bad signature counts too: the limit is checked before the files service is asked.
    expect((await getFrom('127.0.0.1', `${fileUrl.split('?')[0]}?expires=1&signature=x`)).status).to.equal(429);

    const other = await getFrom('127.0.0.2', fileUrl);
    expect(other.status, 'another address').to.equal(200);
    expect(Buffer.from(other.body as string, 'latin1').length).to.be.greaterThan(0);
  });

  it(`the satisfaction form: ${FORM_PER_ADDRESS} a minute per address, counted apart from downloads; another address is unaffected`, async () => {
    // 127.0.0.1 has spent its downloads (above): its form requests have a count of their own.
    for (let i = 0; i < FORM_PER_ADDRESS; i++) expect((await getFrom('127.0.0.1', formUrl)).status, `page ${i + 1}`).to.equal(200);
    const limited = await getFrom('127.0.0.1', formUrl);
    expect(limited.status).to.equal(429);
    expect(limited.body).to.deep.equal({
      statusCode: 429,
      message: 'Too many requests to the satisfaction form; try again later',
      error: 'Too Many Requests',
    });
    expect(Number(limited.headers['retry-after'])).to.be.within(1, 60);
    expect((await getFrom('127.0.0.3', formUrl)).status, 'another address').to.equal(200);
  });
});
