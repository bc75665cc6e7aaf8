import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { interleaved } from './interleaved.js';

/** Three servers that record which of them answered, in order. */
async function servers(order: string[]): Promise<{ urls: Record<string, string>; close(): Promise<void> }> {
  const started = await Promise.all(
    ['a', 'b', 'c'].map(async (name) => {
      const server = http.createServer((_req, res) => {
        order.push(name);
        res.end('ok');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return { name, server };
    }),
  );
  return {
    urls: Object.fromEntries(started.map(({ name, server }) => [name, `http://127.0.0.1:${(server.address() as AddressInfo).port}/`])),
    close: async () => {
      await Promise.all(started.map(({ server }) => new Promise<void>((r) => server.close(() => r()))));
    },
  };
}

const predecessors = (order: string[]) => {
  const counts = new Map<string, number>();
  for (let i = 1; i < order.length; i++) counts.set(`${order[i - 1]}${order[i]}`, (counts.get(`${order[i - 1]}${order[i]}`) ?? 0) + 1);
  return counts;
};

/** bench:all's 1c figure takes turns request by request (decisions 0242, 0256). */
describe('bench interleaved requests', () => {
  for (const shuffled of [false, true]) {
    it(`gives each target one request per turn and a median per round (${shuffled ? 'order drawn anew' : 'rotating order'})`, async () => {
      const order: string[] = [];
      const { urls, close } = await servers(order);
      try {
        const targets = Object.fromEntries(Object.entries(urls).map(([n, url]) => [n, { url, headers: {} }])) as Record<
          'a' | 'b' | 'c',
          { url: string; headers: Record<string, string> }
        >;
        const rounds = await interleaved(targets, 2, 0.3, 0.1, shuffled);
        expect(rounds).to.have.length(2);
        for (const r of rounds) expect(Object.keys(r).sort()).to.deep.equal(['a', 'b', 'c']);
        for (let t = 0; t + 3 <= order.length; t += 3) expect([...order.slice(t, t + 3)].sort()).to.deep.equal(['a', 'b', 'c']);
        const after = predecessors(order);
        if (shuffled) {
          // Each target follows each other one: no pair of the six is missing over hundreds of turns.
          for (const pair of ['ab', 'ac', 'ba', 'bc', 'ca', 'cb']) expect(after.get(pair) ?? 0, pair).to.be.greaterThan(0);
        } else {
          // Rotating: b follows a in two of three transitions into b, the bias decision 0256 measured.
          expect(after.get('ab') ?? 0).to.be.greaterThan(1.5 * (after.get('cb') ?? 0));
        }
      } finally {
        await close();
      }
    });
  }
});
