/**
 * The least a Node service can do for one page of GET /chats (decision 0265): a bare node:http server that sends
 * chat's very list statement (LIST_TEXT, LIST_VALUES as JSON) over one pg pool, as a prepared statement, and answers
 * `{"records": <the rows, every column as Postgres's text>, "total": n}`. No identity, validation, views, cursor or metrics: a lower
 * bound for chat's own CPU per page, and with a bare forward in front, for the whole path. Prints `listening <port>`.
 *
 * With LIST_VIEWS=1 (LIST_TAKE records a page), the contract's data work and nothing else (decision 0273): the rows
 * typed as chat's pool types them (MikroORM's type parsers), the page cut to LIST_TAKE with its cursor, each record
 * written by chat's own `chatSummaryView`, the answer in the contract's shape. Still no Express, identity, query
 * validation, crm look-ups, request id, metrics, tracing or logs: what the service's framework costs is the
 * distance from this floor to chat.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPostgreSqlTypeParsers } from '@mikro-orm/sql';
import { chatSummaryView, encodeCursor } from '@svc/chat';
import pg from 'pg';
import array from 'postgres-array';

type Row = Parameters<typeof chatSummaryView>[0] & { listTotal: number };

const views = process.env.LIST_VIEWS === '1';
const take = Number(process.env.LIST_TAKE ?? 50);
/** Every column as Postgres's text: no Date, number or JSON parsing. */
const asText = { getTypeParser: () => (value: string) => value };
/** As MikroORM's PostgreSqlConnection sets them up for the pool chat's stores run on. */
const asChat = new pg.TypeOverrides();
for (const [oid, parser] of Object.entries(createPostgreSqlTypeParsers((s: string) => array.parse(s))))
  asChat.setTypeParser(Number(oid), parser as (value: string) => unknown);
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: 8,
  options: '-c search_path=chat',
  types: views ? asChat : asText,
});
const text = process.env.LIST_TEXT ?? '';
const values = JSON.parse(process.env.LIST_VALUES ?? '[]') as unknown[];
const noLookups = { persons: new Map(), users: new Map() };

/** The contract's answer from the typed rows (ChatService.list without its crm look-ups). */
function page(rows: Row[]): string {
  const records = rows.slice(0, take);
  const last = records[records.length - 1];
  const next = rows.length > take && last ? encodeCursor({ t: last.activityKey, i: last.id }) : null;
  return JSON.stringify({ total: rows[0]?.listTotal ?? 0, records: records.map((c) => chatSummaryView(c, noLookups)), next_cursor: next });
}

const server = http.createServer((_req, res) => {
  pool.query<Row>({ name: 'bare_list', text, values }).then(
    ({ rows }) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(views ? page(rows) : JSON.stringify({ records: rows, total: rows[0]?.listTotal ?? 0 }));
    },
    (err: Error) => {
      res.writeHead(500);
      res.end(err.message);
    },
  );
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`listening ${(server.address() as AddressInfo).port}`));
process.on('SIGTERM', () => {
  server.close();
  void pool.end();
  server.closeAllConnections();
});
