import net from 'node:net';
import { expect } from 'chai';
import fc from 'fast-check';
import pg from 'pg';
import type { CallResult } from '../support/client.js';
import { expectErrorBody } from '../support/errors.js';
import { pathOf, ROUTES, type RouteRow } from './route-table.js';
import { type World, world } from './support/world.js';

/** Fuzzed requests per route (CI keeps it small; RELIABILITY_FUZZ_RUNS=500 for a longer hunt). */
const RUNS = Number(process.env.RELIABILITY_FUZZ_RUNS ?? 40);

/** Strings that broke parsers, databases and sanitizers somewhere. */
const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\uffff',
  '%00',
  '\\u0000',
  '"; drop table leads; --',
  "' or '1'='1",
  '<script>alert(1)</script>',
  '{{7*7}}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the Log4Shell probe is meant as a literal string
  '${jndi:ldap://x}',
  '../../../../etc/passwd',
  'x'.repeat(70_000),
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '1e309',
  '-0',
  'NaN',
  'true',
  '2030-02-30T25:61:00Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999999Z',
  '\u202e\u0301',
];
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'];

const nastyString = fc.oneof(
  fc.constantFrom(...NASTY_STRINGS),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 300 }),
);
const nastyNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.constantFrom(0, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 1, Number.MAX_VALUE, -Number.MAX_VALUE, 1e-320),
);
const nastyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyString,
    nastyNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(nastyString, fc.constantFrom(...PROTO_KEYS)), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A body near the route's valid one: each field kept, dropped or replaced, plus unknown and prototype keys. */
const bodyNear = (valid: Record<string, unknown>) =>
  fc
    .tuple(
      fc.tuple(...Object.keys(valid).map(() => fc.constantFrom('keep', 'keep', 'drop', 'replace'))),
      fc.array(nastyValue, { minLength: Object.keys(valid).length, maxLength: Object.keys(valid).length }),
      fc.dictionary(fc.oneof(nastyString, fc.constantFrom(...PROTO_KEYS)), nastyValue, { maxKeys: 2 }),
    )
    .map(([fates, values, extra]) => {
      const body: Record<string, unknown> = {};
      Object.entries(valid).forEach(([k, v], i) => {
        if (fates[i] === 'keep') body[k] = v;
        else if (fates[i] === 'replace') body[k] = values[i];
      });
      // Own property even for __proto__ (a plain assignment would set the prototype instead).
      for (const [k, v] of Object.entries(extra))
        Object.defineProperty(body, k, { value: v, enumerable: true, writable: true, configurable: true });
      return body;
    });
const queryNear = (row: RouteRow) =>
  fc.dictionary(
    fc.oneof(fc.constantFrom(...Object.keys(row.queryIds ?? {}), 'skip', 'take', 'cursor', 'search', 'sort', ...PROTO_KEYS), nastyString),
    fc.oneof(nastyString, nastyNumber.map(String)),
    { maxKeys: 4 },
  );
const headersNear = fc.record(
  {
    'content-type': fc.constantFrom(
      'application/json',
      'application/json; charset=utf-16',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
      'application/json; charset=latin1',
    ),
    accept: fc.constantFrom('*/*', 'text/html', 'application/xml', ''),
    'x-idempotency-key': fc.oneof(fc.string({ maxLength: 300 }), fc.constantFrom('k'.repeat(300))),
    origin: fc.constantFrom('null', 'https://evil.example', 'http://[::1]'),
    'content-encoding': fc.constantFrom('gzip', 'identity', 'br'),
  },
  { requiredKeys: [] },
);

/** Tables of the records a route's 2xx may create, to prove refused requests wrote nothing. */
const CREATED_IN: Record<string, string> = { leads: 'crm.leads', deals: 'crm.deals', tasks: 'tasks.tasks' };

describe('reliability: bad input is a 4xx with the error body, never a 5xx, and writes nothing', () => {
  let w: World;
  let db: pg.Client;
  before(async function () {
    this.timeout(180_000);
    w = await world();
    db = new pg.Client({ connectionString: w.system.env.DATABASE_URL });
    await db.connect();
  });
  after(() => db?.end());

  /** A status below 500; a 4xx in the spec's error body. */
  const sane = (res: { status: number; text: string; body: unknown }, what: string) => {
    expect(res.status, `${what}: ${res.text.slice(0, 300)}`).to.be.below(500);
    if (res.status >= 400) expectErrorBody(res, what);
  };
  const countOf = async (row: RouteRow) => {
    const table = CREATED_IN[row.path.split('/')[1]!];
    if (!table || row.method !== 'POST') return undefined;
    return Number((await db.query(`select count(*) as n from ${table} where company_id = $1`, [w.own.companyId])).rows[0].n);
  };
  const raw = (row: RouteRow, body: string | Buffer, headers: Record<string, string>) =>
    fetch(w.system.gatewayUrl + pathOf(row, w.own.ids), {
      method: row.method,
      headers: { authorization: `Bearer ${w.own.key}`, ...headers },
      body,
    }).then(async (r) => {
      const text = await r.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: r.status, text, body: parsed } as CallResult;
    });

  describe("property-based (fast-check): bodies, queries and headers near each route's valid request", () => {
    for (const row of ROUTES) {
      it(`${row.method} ${row.path}: ${RUNS} fuzzed requests`, async function () {
        this.timeout(60_000 + RUNS * 1000);
        const before = await countOf(row);
        let created = 0;
        const withBody = row.method === 'POST' || row.method === 'PUT';
        await fc.assert(
          fc.asyncProperty(
            withBody && row.body ? bodyNear(row.body(w.own.ids)) : fc.constant(undefined),
            queryNear(row),
            headersNear,
            async (body, query, headers) => {
              const qs = new URLSearchParams(query as Record<string, string>).toString();
              const res = await fetch(`${w.system.gatewayUrl}${pathOf(row, w.own.ids)}${qs ? `?${qs}` : ''}`, {
                method: row.method,
                headers: { authorization: `Bearer ${w.own.key}`, ...(withBody ? headers : { accept: headers.accept ?? '*/*' }) },
                body: withBody ? JSON.stringify(body) : undefined,
              });
              const text = await res.text();
              let parsed: unknown;
              try {
                parsed = JSON.parse(text);
              } catch {
                parsed = undefined;
              }
              sane(
                { status: res.status, text, body: parsed },
                `${row.method} ${qs} ${JSON.stringify(headers)} ${JSON.stringify(body)?.slice(0, 500)}`,
              );
              if (res.status === 201) created++;
            },
          ),
          { numRuns: RUNS, endOnFailure: true },
        );
        const after = await countOf(row);
        if (before !== undefined) expect(after! - before, 'records written = 201 answers').to.equal(created);
      });
    }
  });

  describe('hand-made bad bodies on every route with a body', () => {
    const withBodies = ROUTES.filter((r) => r.body && (r.method === 'POST' || r.method === 'PUT'));
    const json = { 'content-type': 'application/json' };
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const cases: [string, (row: RouteRow) => [string | Buffer, Record<string, string>], number[]][] = [
      ['invalid JSON', () => ['{"title": "x",', json], [400]],
      ['a JSON string instead of an object', () => ['"title"', json], [400]],
      ['a JSON array instead of an object', () => ['[{"title":"x"}]', json], [400]],
      ['an empty body', () => ['', json], [400]],
      ['text/plain', (r) => [JSON.stringify(r.body!(w.own.ids)), { 'content-type': 'text/plain' }], [400, 415]],
      ['a form', () => ['title=x', { 'content-type': 'application/x-www-form-urlencoded' }], [400, 415]],
      ['no content type', (r) => [Buffer.from(JSON.stringify(r.body!(w.own.ids))), {}], [400, 415]],
      ['UTF-16 declared', (r) => [JSON.stringify(r.body!(w.own.ids)), { 'content-type': 'application/json; charset=utf-16' }], [400, 415]],
      [
        'a body over the size limit (12 MB)',
        (r) => [JSON.stringify({ ...r.body!(w.own.ids), title: 'x'.repeat(12 * 1024 * 1024) }), json],
        [413],
      ],
      ['arrays nested 100,000 deep', () => [deep(100_000), json], [400, 413]],
      ['objects nested 10,000 deep', () => [deepObject(10_000), json], [400]],
      [
        '__proto__ pollution',
        (r) => [JSON.stringify(r.body!(w.own.ids)).replace(/^\{/, '{"__proto__":{"polluted":1,"title":"p"},'), json],
        [400],
      ],
      [
        'constructor.prototype pollution',
        (r) => [JSON.stringify(r.body!(w.own.ids)).replace(/^\{/, '{"constructor":{"prototype":{"polluted":1}},'), json],
        [400],
      ],
      ['a NUL byte in the title', (r) => [JSON.stringify({ ...r.body!(w.own.ids), title: 'a\u0000b' }), json], [400]],
      ['a lone surrogate in the title', (r) => [JSON.stringify({ ...r.body!(w.own.ids), title: 'a\ud800b' }), json], [400]],
      [
        'invalid UTF-8 bytes',
        (r) => [
          Buffer.concat([Buffer.from(JSON.stringify(r.body!(w.own.ids)).slice(0, -1)), Buffer.from(',"title":"\xff\xfe"}', 'latin1')]),
          json,
        ],
        [400],
      ],
    ];
    for (const row of withBodies) {
      for (const [name, make, statuses] of cases) {
        it(`${row.method} ${row.path}: ${name} → ${statuses.join(' or ')}, nothing written`, async () => {
          const before = await countOf(row);
          const [body, headers] = make(row);
          const res = await raw(row, body, headers);
          sane(res, name);
          expect(statuses, `${res.status} ${res.text.slice(0, 300)}`).to.include(res.status);
          if (before !== undefined) expect(await countOf(row)).to.equal(before);
        });
      }
    }
    it('left no polluted prototype behind: a fresh record has no "polluted" field', async () => {
      const res = await w.call('GET', `/integrations/external/leads/${w.own.ids.lead}`, { token: w.own.key });
      expect(res.status).to.equal(200);
      expect(res.text).not.to.contain('polluted');
    });
  });

  describe("what Node's HTTP parser refuses, answered in the error body", () => {
    const rawExchange = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const port = Number(new URL(w.system.gatewayUrl).port);
        const s = net.connect(port, '127.0.0.1', () => s.write(request));
        let got = '';
        s.on('data', (c) => (got += c));
        s.on('end', () => resolve(got));
        s.on('error', reject);
      });
    const errorOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));

    it('a URL over the 16 KB header limit is 431 with the error body', async () => {
      const res = await w.call('GET', `/integrations/external/leads?search=${'x'.repeat(70_000)}`, { token: w.own.key });
      expect(res.status).to.equal(431);
      expect(res.body).to.deep.equal({
        statusCode: 431,
        message: 'The request line and headers exceed 16 KB',
        error: 'Request Header Fields Too Large',
      });
    });
    it('a malformed request line is 400 with the error body', async () => {
      const response = await rawExchange('GET /integrations/external/leads HTTP/9.9 junk\r\n\r\n');
      expect(response).to.match(/^HTTP\/1\.1 400 /);
      expect(errorOf(response)).to.deep.equal({
        statusCode: 400,
        message: 'Malformed HTTP request',
        error: 'Bad Request',
        details: { fields: [{ field: 'request', message: 'Malformed HTTP request' }] },
      });
    });
    it('a header with a NUL byte is 400 with the error body', async () => {
      const response = await rawExchange(`GET /integrations/external/leads HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n\r\n`);
      expect(response).to.match(/^HTTP\/1\.1 400 /);
      expect(errorOf(response).statusCode).to.equal(400);
    });
  });

  describe('slow and idle clients', () => {
    const sockets: net.Socket[] = [];
    after(() => {
      for (const s of sockets) s.destroy();
    });
    const open = () =>
      new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect(w.system.deployed.gateway.url.split(':').map(Number).at(-1)!, '127.0.0.1', () => resolve(s));
        s.on('error', reject);
        sockets.push(s);
      });

    it('answers others while 300 slowloris clients trickle headers and 700 connections sit idle', async function () {
      this.timeout(120_000);
      const idle = Number(process.env.RELIABILITY_IDLE_CONNECTIONS ?? 700);
      const slow = Number(process.env.RELIABILITY_SLOW_CLIENTS ?? 300);
      for (let i = 0; i < idle; i++) await open();
      const slowSockets = await Promise.all(Array.from({ length: slow }, open));
      for (const s of slowSockets)
        s.write(`POST /integrations/external/leads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.own.key}\r\n`);
      let trickles = 0;
      const trickle = setInterval(() => {
        trickles++;
        for (const s of slowSockets) if (!s.destroyed) s.write(`X-Slow-${trickles}: ${'a'.repeat(10)}\r\n`);
      }, 500);
      try {
        for (let i = 0; i < 20; i++) {
          const res = await w.call('GET', `/integrations/external/leads/${w.own.ids.lead}`, { token: w.own.key });
          expect(res.status, res.text).to.equal(200);
        }
        const created = await w.call('POST', '/integrations/external/leads', { token: w.own.key, body: { title: 'Beside the slow ones' } });
        expect(created.status, created.text).to.equal(201);
      } finally {
        clearInterval(trickle);
      }
    });
  });
});
