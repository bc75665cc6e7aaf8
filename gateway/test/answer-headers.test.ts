import http from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { expect } from 'chai';
import { GatewayResponse, ownHeader } from '../src/answer-headers.js';

type Answer = (res: http.ServerResponse) => void;

/** The whole answer as the client's socket reads it, less the Date line (it moves with the clock). */
function rawAnswer(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n'));
    let text = '';
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(text.replace(/\r\nDate: [^\r]*/, '')));
  });
}

async function answered(hold: boolean, own: [string, string][], answer: Answer): Promise<string> {
  const server = http.createServer({ ServerResponse: GatewayResponse }, (_req, res) => {
    if (hold) (res as GatewayResponse).holdOwnHeaders();
    for (const [name, value] of own) ownHeader(res, name, value);
    answer(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    return await rawAnswer((server.address() as AddressInfo).port);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}

const OWN: [string, string][] = [
  ['x-request-id', 'r-1'],
  ['RateLimit-Limit', '600'],
  ['RateLimit-Remaining', '599'],
  ['RateLimit-Reset', '42'],
];

/** The gateway's own headers held back until writeHead (decision 0255) against the same headers set at once. */
describe("gateway answer headers: held back until writeHead, the bytes of setHeader's", () => {
  const cases: [string, Answer][] = [
    [
      "a service's answer: its headers after the gateway's, its x-request-id in place of the gateway's, cookies on their own lines",
      (res) => {
        res.statusMessage = 'Fine Thanks';
        res
          .writeHead(200, {
            'content-type': 'application/json',
            'x-request-id': 'r-1-service',
            'set-cookie': ['a=1', 'b=2'],
            'content-length': '11',
          })
          .end('{"ok":true}');
      },
    ],
    ["a header of the same name in another case takes the held one's place", (res) => res.writeHead(200, { 'ratelimit-limit': '7' }).end()],
    [
      'a refusal that sets a header of its own first',
      (res) => {
        res.setHeader('Retry-After', '3');
        res.writeHead(429, { 'content-type': 'application/json; charset=utf-8' }).end('{"statusCode":429}');
      },
    ],
    ['an answer with no writeHead of its own', (res) => res.end('plain')],
    ['writeHead with a reason phrase', (res) => res.writeHead(503, 'Busy', { 'retry-after': '1' }).end()],
    [
      'writeHead with a header array that names a header twice',
      (res) => res.writeHead(200, ['x-a', '1', 'x-a', '2', 'x-request-id', 'r-2']).end(),
    ],
    ['a 204 with headers only', (res) => res.writeHead(204, { vary: 'Origin' }).end()],
  ];
  for (const [name, answer] of cases) {
    it(`writes the same bytes: ${name}`, async () => {
      const atOnce = await answered(false, OWN, answer);
      const held = await answered(true, OWN, answer);
      expect(held).to.equal(atOnce);
      expect(held).to.match(/\r\nRateLimit-Remaining: 599\r\n|\r\nratelimit-limit: 7\r\n/);
    });
  }

  it('lets the held headers be read before the answer, and keeps them in their order', async () => {
    const seen: unknown[] = [];
    const text = await answered(true, OWN, (res) => {
      seen.push(res.getHeader('ratelimit-limit'), res.hasHeader('x-request-id'), res.getHeaderNames());
      res.writeHead(200, { 'content-length': '0' }).end();
    });
    expect(seen).to.deep.equal(['600', true, ['x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']]);
    expect(text).to.match(
      /^HTTP\/1\.1 200 OK\r\nx-request-id: r-1\r\nRateLimit-Limit: 600\r\nRateLimit-Remaining: 599\r\nRateLimit-Reset: 42\r\n/,
    );
  });

  it('rejects a header value with a line break whether held or set at once, and the answer after it keeps the held ones', async () => {
    const refused: string[] = [];
    const texts: string[] = [];
    for (const hold of [false, true]) {
      const text = await answered(hold, OWN, (res) => {
        try {
          res.writeHead(200, { 'x-bad': 'a\r\nb' });
        } catch (err) {
          refused.push((err as NodeJS.ErrnoException).code ?? '');
        }
        res.writeHead(502, { 'content-length': '0' }).end();
      });
      texts.push(text);
    }
    expect(refused).to.deep.equal(['ERR_INVALID_CHAR', 'ERR_INVALID_CHAR']);
    expect(texts[1])
      .to.equal(texts[0])
      .and.match(/^HTTP\/1\.1 502 [A-Za-z ]+\r\nx-request-id: r-1\r\n/);
  });
});
