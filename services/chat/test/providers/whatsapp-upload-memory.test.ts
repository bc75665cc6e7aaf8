import { Readable } from 'node:stream';
import { expect } from 'chai';
import { GraphClient } from '../../src/providers/graph.js';
import { WhatsAppCloudProvider } from '../../src/providers/whatsapp/client.js';
import { FakeGraph } from '../support/fake-graph.js';

const MB = 1024 * 1024;

/** 100 MB in 64 KiB chunks made on demand: the test holds no more of the file than the client does. */
function generated(total: number): Readable {
  let made = 0;
  return new Readable({
    highWaterMark: 64 * 1024,
    read() {
      if (made >= total) return void this.push(null);
      const size = Math.min(64 * 1024, total - made);
      const chunk = Buffer.allocUnsafe(size).fill(made % 251);
      made += size;
      this.push(chunk);
    },
  });
}

describe('WhatsApp media upload memory', function () {
  this.timeout(120_000);
  let graph: FakeGraph;
  before(async () => {
    graph = await new FakeGraph().start();
  });
  after(async () => {
    await graph.stop();
  });

  for (const known of [true, false]) {
    it(`streams a 100 MB file ${known ? 'of known size' : 'of unknown length'} with memory flat, not growing by the file`, async () => {
      const wa = new WhatsAppCloudProvider(
        new GraphClient({ baseUrl: graph.baseUrl, accessToken: graph.token, timeoutMs: 60_000 }),
        graph.phoneNumberIds[0] as string,
        undefined,
      );
      const size = 100 * MB;
      const before = process.memoryUsage();
      let peakRss = before.rss;
      let peakHeld = before.heapUsed + before.arrayBuffers;
      const sampler = setInterval(() => {
        const m = process.memoryUsage();
        peakRss = Math.max(peakRss, m.rss);
        peakHeld = Math.max(peakHeld, m.heapUsed + m.arrayBuffers);
      }, 5);
      try {
        await wa.sendMedia({
          to: '5511987654321',
          kind: 'document',
          media: {
            from: 'stream',
            stream: generated(size),
            mimeType: 'application/zip',
            fileName: 'big.zip',
            size: known ? size : undefined,
          },
        });
      } finally {
        clearInterval(sampler);
      }
      expect(graph.violations).to.deep.equal([]);
      expect(graph.requests.at(-2)?.upload?.bytes).to.equal(size);
      const rssGrowth = (peakRss - before.rss) / MB;
      const heldGrowth = (peakHeld - before.heapUsed - before.arrayBuffers) / MB;
      console.log(
        `      upload of 100 MB (${known ? 'content-length' : 'chunked'}): peak RSS +${rssGrowth.toFixed(1)} MB, peak heap+buffers +${heldGrowth.toFixed(1)} MB`,
      );
      // Buffering the file anywhere (client body, multipart, fake server) would add >= 100 MB to both.
      expect(rssGrowth).to.be.below(80);
      expect(heldGrowth).to.be.below(80);
    });
  }
});
