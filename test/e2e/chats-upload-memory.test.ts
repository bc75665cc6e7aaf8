import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { FakeGraph } from '@svc/chat/testing';
import { expect } from 'chai';
import { type ChatTenant, chatsApi, seedChatTenant } from '../support/chats.js';
import { client } from '../support/client.js';
import { type Stack, startStack } from '../support/stack.js';

const MB = 1024 * 1024;

/** The resident memory of a process, from /proc (Linux), in bytes. */
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

/** A multipart body of one file of `size` bytes, produced as it is read (the test holds no more than a chunk either). */
function multipartStream(boundary: string, size: number): Readable {
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(256 * 1024, 0x25);
  let left = size;
  let started = false;
  return new Readable({
    read() {
      if (!started) {
        started = true;
        this.push(head);
        return;
      }
      if (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
        return;
      }
      this.push(tail);
      this.push(null);
    },
  });
}

describe("a 100 MB file sent through the gateway keeps the chat service's memory flat (chat in its own process)", function () {
  this.timeout(180_000);
  let graph: FakeGraph;
  let stack: Stack;
  let t: ChatTenant;
  let chat: any;

  before(async () => {
    graph = await new FakeGraph().start();
    stack = await startStack({ processes: ['chat'], chat: { WHATSAPP_GRAPH_URL: graph.baseUrl, WHATSAPP_ACCESS_TOKEN: graph.token } });
    const call = client(stack.gatewayUrl).call;
    t = await seedChatTenant(call, stack.adminToken, {
      provider: 'whatsapp_cloud',
      phone_number_id: graph.phoneNumberIds[0],
      business_account_id: graph.businessAccountId,
    });
    chat = await t.chat({
      channel_type: 'WHATSAPP',
      whatsapp_number_id: t.number.id,
      wa_contact_id: '5511987654321',
      last_customer_msg_at: new Date().toISOString(),
    });
  });
  after(async () => {
    await stack?.stop();
    await graph?.stop();
  });

  it('streams the file to the provider: sent, every byte uploaded, the resident memory grows by far less than the file', async () => {
    const pid = stack.processes.chat!.child.proc.pid!;
    const baseline = rssOf(pid);
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssOf(pid));
    }, 20);
    const size = 100 * MB;
    const boundary = `----chatupload${Date.now()}`;
    try {
      const res = await fetch(
        `${stack.gatewayUrl}${chatsApi(client(stack.gatewayUrl).call, () => t.key.key).path(`/${chat.id}/messages`)}`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${t.key.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
          body: Readable.toWeb(multipartStream(boundary, size)) as ReadableStream,
          duplex: 'half',
        } as RequestInit,
      );
      const body = (await res.json()) as any;
      expect(res.status, JSON.stringify(body)).to.equal(201);
      expect(body.records[0]).to.include({ type: 'document', status: 'sent' });
      expect(body.records[0].media.file_size).to.equal(size);
    } finally {
      clearInterval(sampler);
    }
    const upload = graph.requests.find((r) => r.upload?.fileName === 'big.pdf')?.upload;
    expect(upload?.bytes).to.equal(size);
    const grown = peak - baseline;
    console.log(
      `      chat RSS: baseline ${(baseline / MB).toFixed(1)} MB, peak ${(peak / MB).toFixed(1)} MB, grown ${(grown / MB).toFixed(1)} MB for a ${size / MB} MB file`,
    );
    // Buffered whole, the file alone would add 100 MB; streamed, what grows is buffers in flight and garbage not yet collected.
    expect(grown).to.be.below(size / 2);
  });
});
